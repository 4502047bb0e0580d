"""Assignment 05, "your encoder, BERT's weights": weights read by attribute name, small keras-hub
backbones with known weights, and the visible checks of BertEmbedding, BertEncoder and load_bert_weights.

The checks set every weight from a seeded NumPy generator and compare with numbers written out below.
BertEncoder is checked with a test double in place of its BertEmbedding, and load_bert_weights with an
empty encoder built here, so a mistake in one exercise never fails the check of another. The weight
loader's check knows the checkpoint's weights only through "fingerprints" (sum and sum of squares of
each weight), and names the backbone weight a wrong one came from.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from course_lib.checking import CheckFailed, call_learner, expect_close, expect_shape, parts_replaced, passed, to_array
from course_lib.keras_weights import (
    backbone_variables,
    bert_variables,
    fingerprint,
    same_fingerprint,
    seed_variables,
    seeded_value,
)
from course_lib.transformer.layers import call_layer as transformer_call_layer

# The checkpoint shipped with the course (all-MiniLM-L6-v2), as `load_bert().config` gives it.
SHIPPED_CONFIG = {"vocabulary_size": 30522, "num_layers": 6, "num_heads": 12, "hidden_dim": 384,
                  "intermediate_dim": 1536, "max_sequence_length": 512, "num_segments": 2}
ENCODER_ARGS = ("vocabulary_size", "num_layers", "num_heads", "hidden_dim", "intermediate_dim", "dropout",
                "max_sequence_length", "num_segments")

# ----------------------------------------------------------------------------------------------
# Weights (by attribute path: course_lib.keras_weights)


def build_unused(layer, config: dict) -> None:
    """Build the sublayers that a learner's `call` never used (a BertEmbedding's tables and layer norm, a
    BertEncoder's layers), so that the checks can set their weights and name the mistake by its values."""
    d = config["hidden_dim"]
    embedding = getattr(layer, "embedding", layer)
    for attr in ("token_embedding", "position_embedding", "segment_embedding", "layer_norm"):
        sublayer = getattr(embedding, attr, None)
        if sublayer is not None and not sublayer.weights:
            if attr == "layer_norm":
                sublayer.build((None, d))
            else:
                sublayer.build()
    for block in getattr(layer, "enc_layers", []):
        if not block.weights:
            build_encoder_layer(block, d)


def prebuild(layer, config: dict) -> None:
    """Create every weight of a learner's BertEmbedding or BertEncoder before its first call: Keras traces a
    layer without a `build` method on its first call, which costs about a second for a small encoder."""
    build_unused(layer, config)
    embedding = getattr(layer, "embedding", None)
    if embedding is not None and embedding.weights:
        embedding.built = True
    layer.built = True


def build_encoder_layer(block, d: int) -> None:
    """Create the weights of an EncoderLayer without calling it (calling a layer the first time traces it)."""
    shape = (None, None, d)
    block.mha.build(shape, shape)
    block.ffn.build(shape)
    block.layernorm1.build(shape)
    block.layernorm2.build(shape)
    block.built = True


def make_backbone(config: dict, seed: int):
    """A keras-hub BertBackbone of the given sizes with every weight set from a seeded generator."""
    import keras_hub

    backbone = keras_hub.models.BertBackbone(**{k: config[k] for k in ENCODER_ARGS if k in config})
    rng = np.random.default_rng(seed)
    for variable in backbone.weights:
        variable.assign(seeded_value(variable.path, tuple(variable.shape), rng).astype(np.float32))
    return backbone


def padded_batch(rng, config: dict, batch: int, seq: int):
    """Random token ids (0 after each row's length), segment ids 0 then 1, and the padding mask (int32)."""
    lengths = rng.integers(1, seq + 1, size=batch)
    lengths[0] = seq  # one full row
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int32)
    ids = rng.integers(1, config["vocabulary_size"], size=(batch, seq)) * mask
    split = rng.integers(0, seq + 1, size=batch)
    segments = ((np.arange(seq)[None, :] >= split[:, None]) * mask).astype(np.int32)
    segments = np.minimum(segments, config["num_segments"] - 1)
    return ids.astype(np.int32), segments, mask


# ----------------------------------------------------------------------------------------------
# Calling a learner's layer


EMBEDDING_HINT = ("If this is an index error: positions are 0, 1, ..., seq_len - 1 (tf.range(seq_len)), not the "
                  "token ids, and segment ids index the segment table")
ENCODER_HINT = ("If this is a shape error: EncoderLayer wants an attention mask broadcastable to (batch, seq, seq); "
                "turn padding_mask (batch, seq) into (batch, 1, seq) with padding_mask[:, tf.newaxis, :]")


def call_layer(layer, *args, hint: str = "", **kwargs):
    """Assignment 04's `call_layer` (hints for Keras's positional-argument rule and for crashes), with
    Keras's warnings about the learner's layer (an unused sublayer, say) silenced: the check says more."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformer_call_layer(layer, *args, hint=hint, **kwargs)


def expect_deterministic(first, second, name: str) -> None:
    if not np.allclose(to_array(first, name), to_array(second, name), atol=1e-6):
        raise CheckFailed(f"{name} changes between two calls with training=False: dropout is active at inference. "
                          "Pass training=training to the dropout (never training=True)")


def expect_dropout_in_training(inference, training, name: str) -> None:
    if np.allclose(to_array(inference, name), to_array(training, name), atol=1e-6):
        raise CheckFailed(f"{name} is the same with training=True as with training=False: dropout never acts. "
                          "Apply the dropout layers with training=training")


def _tf(array, dtype="float32"):
    import tensorflow as tf

    return tf.constant(np.asarray(array).astype(dtype))


EMBEDDING_MISTAKES = {
    "scaled": "the token embeddings are multiplied by sqrt(hidden_dim): assignment 04 did that, BERT does not "
              "(its position table is learned, on the same scale as the token table)",
    "no_positions": "the position embeddings are missing: add self.position_embedding(tf.range(seq_len))",
    "positions_from_token_ids": "the position embeddings are looked up with the token ids; look up the positions "
                                "0, 1, ..., seq_len - 1: self.position_embedding(tf.range(seq_len))",
    "no_segments": "the segment embeddings are missing: add self.segment_embedding(segment_ids)",
    "no_layer_norm": "the layer norm is missing: E = LayerNorm(token + position + segment)",
    "norm_before_sum": "the layer norm is applied to the token embeddings alone; add the three embeddings first, "
                       "then normalise the sum",
}
ENCODER_MISTAKES = {
    "no_mask": "the padding mask is not used: give every layer mask=... (the attention mask made from padding_mask)",
    "mask_not_expanded": "the layers get padding_mask (batch, seq) as it is, which Keras reads as a (query, key) "
                         "mask; give them padding_mask[:, tf.newaxis, :], shape (batch, 1, seq)",
    "mask_wrong_axis": "the mask has shape (batch, seq, 1): it blocks padding queries instead of padding keys; "
                       "use padding_mask[:, tf.newaxis, :], shape (batch, 1, seq)",
    "only_first_layer": "only the first layer is applied: loop over all of self.enc_layers",
    "only_last_layer": "only the last layer counts (was every layer given the embeddings?): each layer takes the "
                       "previous one's output, x = layer(x, ...)",
    "layers_reversed": "the layers run in reverse order: self.enc_layers[0] comes first",
}


def _mistakes(expected: dict, messages: dict) -> list[tuple[object, str]]:
    return [(np.asarray(expected[name]), message) for name, message in messages.items() if name in expected]


# ----------------------------------------------------------------------------------------------
# Expected values (generated once with autograde.reference.bert.encoder; do not edit by hand)

# >>> expected values
_EXPECTED = {'embedding': {'output': [[[0.806931, 0.363357, -1.560809, 0.214021],
                           [0.250581, 2.002695, -1.285226, 0.001749],
                           [-0.189602, 2.013198, 0.626517, -0.535478]],
                          [[0.990292, 0.708396, -1.258862, -0.115877],
                           [-0.821126, 2.109801, -0.382667, 0.246719],
                           [-0.860298, 1.460559, 1.234607, -0.235823]]],
               'scaled': [[[0.817471, -0.301727, -1.513097, 0.364138],
                           [0.058329, 2.236449, -1.146596, -0.001489],
                           [-0.077273, 2.083511, 0.441742, -0.544955]],
                          [[1.113242, 0.487174, -1.017252, -0.23337],
                           [-0.744998, 0.795139, -0.656389, 0.664259],
                           [-1.164814, 0.679104, 1.262049, 0.14542]]],
               'no_positions': [[[0.998021, -2.146161, -0.755574, 0.425979],
                                 [0.484503, 1.482805, -1.478322, 0.078445],
                                 [-0.349169, 2.235778, 0.496994, -0.443103]],
                                [[1.360859, -0.930038, -0.637272, -0.167308],
                                 [-1.153033, 0.665069, 0.357205, 0.521716],
                                 [-1.191247, 0.964415, 0.995404, 0.19767]]],
               'positions_from_token_ids': [[[1.377181, -1.461325, -0.436078, -0.120641],
                                             [0.78919, 0.909154, -1.477565, 0.044993],
                                             [0.096975, 1.889362, 0.445121, -0.600872]],
                                            [[1.152811, 0.046335, -1.197883, -0.064617],
                                             [-0.821126, 2.109801, -0.382667, 0.246719],
                                             [-0.528499, 2.440962, -0.631685, 0.085238]]],
               'no_segments': [[[0.405805, 1.287595, -1.56215, 0.213338],
                                [-0.220113, 2.507887, -0.80675, -0.046725],
                                [0.247775, 1.759497, 0.366736, -0.625271]],
                               [[0.751134, 1.464757, -1.109206, -0.233931],
                                [-0.202237, 0.623737, -1.285651, 0.64355],
                                [-0.765304, -0.634145, 2.011864, -0.063762]]],
               'no_layer_norm': [[[0.568206, 0.007421, -2.160409, -0.135633],
                                  [-0.225475, 1.129016, -2.15986, -0.700937],
                                  [0.089629, 2.590201, 1.090828, -1.335373]],
                                 [[1.497841, 0.742739, -1.859264, -0.624285],
                                  [-0.5456, 1.561157, -0.057143, 0.698439],
                                  [-0.341477, 1.347636, 1.226654, 0.063686]]],
               'norm_before_sum': [[[0.874114, -2.370257, -1.579133, 0.389966],
                                    [-0.028566, 2.842737, -2.167007, -0.392357],
                                    [0.141455, 3.777291, 1.184096, -1.096334]],
                                   [[1.941592, 0.085587, -1.824632, -0.80855],
                                    [-0.44284, 0.234974, -0.061037, 0.659747],
                                    [-0.575529, -0.197074, 1.513805, 0.256657]]]},
 'encoder': {'output': [[[-0.204778, -0.881347, 0.754742, 1.331949],
                         [0.508845, -1.167664, 0.614458, 0.987691],
                         [-0.436708, -0.699058, 0.623717, 1.517937]],
                        [[0.182909, -1.075119, 0.764102, 1.101346],
                         [-0.27819, -0.831348, 0.729131, 1.383683],
                         [0.658786, -1.185609, 0.450243, 1.011528]],
                        [[-0.037094, -0.972442, 0.688189, 1.327663],
                         [-0.264389, -0.827461, 0.623041, 1.486004],
                         [-0.264389, -0.827461, 0.623041, 1.486004]]],
             'no_mask': [[[-0.101346, -0.944742, 0.823167, 1.209643],
                          [0.807245, -1.179858, 0.247578, 1.046929],
                          [-0.670694, -0.487422, 0.648209, 1.476018]],
                         [[0.182909, -1.075119, 0.764102, 1.101346],
                          [-0.27819, -0.831348, 0.729131, 1.383683],
                          [0.658786, -1.185609, 0.450243, 1.011528]],
                         [[-0.215683, -0.848241, 0.553784, 1.535659],
                          [-0.722251, -0.433938, 0.662424, 1.44575],
                          [-0.722251, -0.433938, 0.662424, 1.44575]]],
             'mask_not_expanded': [[[-0.130935, -0.928366, 0.858267, 1.182052],
                                    [0.737462, -1.185526, 0.344155, 1.033264],
                                    [-0.403015, -0.693116, 0.470226, 1.647205]],
                                   [[0.002386, -0.99038, 0.661776, 1.3341],
                                    [-0.266987, -0.833601, 0.679865, 1.431034],
                                    [0.185341, -1.070993, 0.637403, 1.243049]],
                                   [[-0.211759, -0.852583, 0.563376, 1.525636],
                                    [-0.788144, -0.352532, 0.640225, 1.435263],
                                    [-0.221661, -0.863972, 0.68308, 1.413365]]],
             'mask_wrong_axis': [[[-0.407556, -0.73355, 0.698453, 1.442742],
                                  [0.665958, -1.173628, 0.331922, 1.124876],
                                  [0.400808, -0.76019, 1.421579, -0.456509]],
                                 [[0.182909, -1.075119, 0.764102, 1.101346],
                                  [-0.27819, -0.831348, 0.729131, 1.383683],
                                  [0.658786, -1.185609, 0.450243, 1.011528]],
                                 [[-0.214656, -0.849028, 0.55438, 1.534787],
                                  [0.400808, -0.76019, 1.421579, -0.456509],
                                  [0.400808, -0.76019, 1.421579, -0.456509]]],
             'only_first_layer': [[[-0.904769, -0.112223, 1.796969, -0.720767],
                                   [1.588274, -0.821592, 0.521373, -0.761539],
                                   [-1.714304, 0.559924, 1.423883, -0.450931]],
                                  [[0.310505, -0.741441, 1.570922, -0.811461],
                                   [-1.182506, -0.062908, 1.775376, -0.547575],
                                   [1.918227, -0.507884, -0.205538, -0.674581]],
                                  [[0.243299, -0.743141, 1.599389, -0.785534],
                                   [-1.764691, 1.361229, 0.477903, -0.362556],
                                   [-1.764691, 1.361229, 0.477903, -0.362556]]],
             'only_last_layer': [[[0.810409, -1.19234, 0.631689, 0.603255],
                                  [1.142555, -1.146605, 0.068633, 0.762976],
                                  [0.844207, -1.142172, 0.834203, 0.239569]],
                                 [[0.770651, -1.198055, 0.553244, 0.758626],
                                  [0.731547, -1.184718, 0.712627, 0.599986],
                                  [1.076378, -1.155028, 0.075229, 0.856156]],
                                 [[0.389765, -1.140629, 0.663525, 1.046291],
                                  [0.437553, -1.136854, 0.877735, 0.721109],
                                  [0.437553, -1.136854, 0.877735, 0.721109]]],
             'layers_reversed': [[[-0.487925, -0.723675, 1.774843, -0.424228],
                                  [-0.206179, -0.831344, 1.714668, -0.474823],
                                  [-0.460656, -0.607325, 1.795081, -0.571713]],
                                 [[-0.457547, -0.783877, 1.754587, -0.371786],
                                  [-0.467473, -0.730319, 1.772044, -0.43036],
                                  [-0.189999, -0.859674, 1.70275, -0.449464]],
                                 [[-0.545965, -0.874928, 1.707744, -0.181117],
                                  [-0.424583, -0.767072, 1.758794, -0.41524],
                                  [-0.424583, -0.767072, 1.758794, -0.41524]]]},
 'small_backbone': {'embedding.token_embedding.embeddings': (6.07522127655102, 199.011545333686),
                    'embedding.position_embedding.embeddings': (1.20221647103244, 39.4771380980507),
                    'embedding.segment_embedding.embeddings': (-0.95273257617373, 1.81664555409215),
                    'embedding.layer_norm.gamma': (43.2144922912121, 43.8122203265293),
                    'embedding.layer_norm.beta': (0.0727835614234209, 2.08230305003627),
                    'enc_layers[0].mha.query_dense.kernel': (24.6253592880967, 102.861677402659),
                    'enc_layers[0].mha.query_dense.bias': (0.735250373138115, 1.34082262649339),
                    'enc_layers[0].mha.key_dense.kernel': (-0.938837806557444, 108.44274578605),
                    'enc_layers[0].mha.key_dense.bias': (1.72293437505141, 2.71072051574828),
                    'enc_layers[0].mha.value_dense.kernel': (2.78191610050544, 108.804927025005),
                    'enc_layers[0].mha.value_dense.bias': (0.739948525559157, 1.87968076628635),
                    'enc_layers[0].mha.output_dense.kernel': (-4.57859817184362, 108.447915733092),
                    'enc_layers[0].mha.output_dense.bias': (-3.36966003105044, 2.2185957248467),
                    'enc_layers[0].ffn.layers[0].kernel': (-8.39089116367177, 216.1744718892),
                    'enc_layers[0].ffn.layers[0].bias': (0.634006102220155, 3.34739826210489),
                    'enc_layers[0].ffn.layers[1].kernel': (4.2730827608666, 108.325219402688),
                    'enc_layers[0].ffn.layers[1].bias': (-0.506557733751833, 1.61538937973958),
                    'enc_layers[0].layernorm1.gamma': (50.3392116725445, 56.0281660594706),
                    'enc_layers[0].layernorm1.beta': (-4.21171604664414, 1.94263534931329),
                    'enc_layers[0].layernorm2.gamma': (49.8139536920935, 58.0127019284827),
                    'enc_layers[0].layernorm2.beta': (-0.385437032906339, 2.15607348737639),
                    'enc_layers[1].mha.query_dense.kernel': (5.10117487885873, 110.744750349466),
                    'enc_layers[1].mha.query_dense.bias': (-0.0269449045881629, 2.1977153537646),
                    'enc_layers[1].mha.key_dense.kernel': (9.41221945940924, 107.17148959142),
                    'enc_layers[1].mha.key_dense.bias': (-0.653213336947374, 1.64445216430993),
                    'enc_layers[1].mha.value_dense.kernel': (-15.2090670081379, 109.757062522143),
                    'enc_layers[1].mha.value_dense.bias': (-1.38914125598967, 1.53948599281882),
                    'enc_layers[1].mha.output_dense.kernel': (15.2952842934465, 106.492474017343),
                    'enc_layers[1].mha.output_dense.bias': (2.60084409452975, 2.38271574522852),
                    'enc_layers[1].ffn.layers[0].kernel': (-16.2300956592517, 211.468279350902),
                    'enc_layers[1].ffn.layers[0].bias': (-2.9847684209235, 4.23106600134414),
                    'enc_layers[1].ffn.layers[1].kernel': (1.58043017451246, 105.385268180367),
                    'enc_layers[1].ffn.layers[1].bias': (-0.966366681590443, 1.80303896789676),
                    'enc_layers[1].layernorm1.gamma': (47.5514234602451, 50.5509553122498),
                    'enc_layers[1].layernorm1.beta': (-0.0458620544523001, 1.64733378610902),
                    'enc_layers[1].layernorm2.gamma': (45.0617094039917, 45.0009555304802),
                    'enc_layers[1].layernorm2.beta': (-1.09232837241143, 2.75540878249334)},
 'shipped_checkpoint': {'embedding.token_embedding.embeddings': (138.050722149236, 36262.5528803781),
                        'embedding.position_embedding.embeddings': (42.5529358140756, 119.488888137969),
                        'embedding.segment_embedding.embeddings': (0.499034824972114, 0.449601305612417),
                        'embedding.layer_norm.gamma': (236.8543523103, 146.768449871332),
                        'embedding.layer_norm.beta': (4.18701987198074, 5.19114635412379),
                        'enc_layers[0].mha.query_dense.kernel': (13.5281940886364, 1343.63877516189),
                        'enc_layers[0].mha.query_dense.bias': (7.6932342518121, 44.4109523214218),
                        'enc_layers[0].mha.key_dense.kernel': (-36.8792169809096, 1260.38587058909),
                        'enc_layers[0].mha.key_dense.bias': (0.00597825414354247, 0.000139739791534949),
                        'enc_layers[0].mha.value_dense.kernel': (-0.0435888874424961, 284.143520955119),
                        'enc_layers[0].mha.value_dense.bias': (1.05593193046298, 2.83311345112767),
                        'enc_layers[0].mha.output_dense.kernel': (1.94404457556044, 277.707574401732),
                        'enc_layers[0].mha.output_dense.bias': (-0.213617637753487, 2.39439949795708),
                        'enc_layers[0].ffn.layers[0].kernel': (-1197.98555730591, 2445.48978964397),
                        'enc_layers[0].ffn.layers[0].bias': (-124.71490418147, 38.3364290311534),
                        'enc_layers[0].ffn.layers[1].kernel': (19.4734908780653, 1210.37494752215),
                        'enc_layers[0].ffn.layers[1].bias': (-0.151399896574731, 2.12834008439275),
                        'enc_layers[0].layernorm1.gamma': (220.3336622715, 130.525542271722),
                        'enc_layers[0].layernorm1.beta': (12.7200058029484, 13.4589743428133),
                        'enc_layers[0].layernorm2.gamma': (237.018257439137, 147.431732834205),
                        'enc_layers[0].layernorm2.beta': (11.6246395450435, 1.35980752194082),
                        'enc_layers[1].mha.query_dense.kernel': (-59.5214853426231, 1060.84767294386),
                        'enc_layers[1].mha.query_dense.bias': (-2.29011799430009, 34.8041526830262),
                        'enc_layers[1].mha.key_dense.kernel': (-38.9413358620803, 1054.61791359931),
                        'enc_layers[1].mha.key_dense.bias': (0.00618260393616765, 0.000361614657671169),
                        'enc_layers[1].mha.value_dense.kernel': (30.8508866068822, 493.180503685926),
                        'enc_layers[1].mha.value_dense.bias': (0.633141972543854, 0.390431012815362),
                        'enc_layers[1].mha.output_dense.kernel': (-0.159234675066614, 335.413809720911),
                        'enc_layers[1].mha.output_dense.bias': (-0.237683891697088, 2.06514820098324),
                        'enc_layers[1].ffn.layers[0].kernel': (-293.41530111131, 3072.54796960184),
                        'enc_layers[1].ffn.layers[0].bias': (-128.149922976896, 37.6153224189054),
                        'enc_layers[1].ffn.layers[1].kernel': (2.614022608515, 1314.42825432869),
                        'enc_layers[1].ffn.layers[1].bias': (0.0509429785452085, 1.04055422236452),
                        'enc_layers[1].layernorm1.gamma': (225.913603127003, 136.754117367867),
                        'enc_layers[1].layernorm1.beta': (3.86532526901283, 3.85827815472686),
                        'enc_layers[1].layernorm2.gamma': (234.655984938145, 145.169779443014),
                        'enc_layers[1].layernorm2.beta': (7.02467955807515, 1.42543782069966),
                        'enc_layers[2].mha.query_dense.kernel': (7.45961249806004, 985.08235038803),
                        'enc_layers[2].mha.query_dense.bias': (-0.751882728363853, 25.6202834199685),
                        'enc_layers[2].mha.key_dense.kernel': (11.2021030606265, 982.9079093766),
                        'enc_layers[2].mha.key_dense.bias': (0.00380617823321927, 0.000311188185308175),
                        'enc_layers[2].mha.value_dense.kernel': (-1.78923033395927, 615.58751878471),
                        'enc_layers[2].mha.value_dense.bias': (0.368759484990733, 0.56202276713784),
                        'enc_layers[2].mha.output_dense.kernel': (1.53274007574817, 397.308971596335),
                        'enc_layers[2].mha.output_dense.bias': (-0.641579532966716, 1.47782885478276),
                        'enc_layers[2].ffn.layers[0].kernel': (434.53360795119, 3065.51633882862),
                        'enc_layers[2].ffn.layers[0].bias': (-103.294451839283, 25.5925254742446),
                        'enc_layers[2].ffn.layers[1].kernel': (-17.2040021086672, 1381.59283477169),
                        'enc_layers[2].ffn.layers[1].bias': (-0.0184142666184925, 1.47489911803724),
                        'enc_layers[2].layernorm1.gamma': (229.874956816435, 142.239177236361),
                        'enc_layers[2].layernorm1.beta': (-2.15834591556631, 4.27329375848877),
                        'enc_layers[2].layernorm2.gamma': (247.746063172817, 162.008346863797),
                        'enc_layers[2].layernorm2.beta': (3.85152132656367, 0.790230455931217),
                        'enc_layers[3].mha.query_dense.kernel': (20.9046654080219, 996.304812289476),
                        'enc_layers[3].mha.query_dense.bias': (-7.18154070536548, 15.1466597353044),
                        'enc_layers[3].mha.key_dense.kernel': (-0.64122630808879, 943.74745936496),
                        'enc_layers[3].mha.key_dense.bias': (-0.00069593945397628, 0.000265491400291326),
                        'enc_layers[3].mha.value_dense.kernel': (10.8234614881103, 742.849429106622),
                        'enc_layers[3].mha.value_dense.bias': (-0.190751954221923, 0.190450275167584),
                        'enc_layers[3].mha.output_dense.kernel': (-5.78685973169178, 466.292971977472),
                        'enc_layers[3].mha.output_dense.bias': (-0.0955534024251392, 1.1363442742347),
                        'enc_layers[3].ffn.layers[0].kernel': (229.815094886886, 2472.58170453064),
                        'enc_layers[3].ffn.layers[0].bias': (-74.3347971479197, 16.2811373448698),
                        'enc_layers[3].ffn.layers[1].kernel': (-39.591147153786, 1133.7902606242),
                        'enc_layers[3].ffn.layers[1].bias': (-0.201343354798155, 1.03611028709095),
                        'enc_layers[3].layernorm1.gamma': (223.246823787689, 135.057753416127),
                        'enc_layers[3].layernorm1.beta': (-0.446478842612123, 1.58493328809613),
                        'enc_layers[3].layernorm2.gamma': (274.66286110878, 200.080843987898),
                        'enc_layers[3].layernorm2.beta': (-3.28462746384321, 0.270110203431781),
                        'enc_layers[4].mha.query_dense.kernel': (-0.329291891609955, 947.734952914541),
                        'enc_layers[4].mha.query_dense.bias': (-2.37560869321169, 11.7637747940544),
                        'enc_layers[4].mha.key_dense.kernel': (-24.8229735931288, 868.307019693469),
                        'enc_layers[4].mha.key_dense.bias': (0.0056736684580585, 0.000230605282333729),
                        'enc_layers[4].mha.value_dense.kernel': (-3.2945821332728, 656.10863524432),
                        'enc_layers[4].mha.value_dense.bias': (-0.871001427891315, 0.326639524084147),
                        'enc_layers[4].mha.output_dense.kernel': (9.75668678551574, 387.402462265402),
                        'enc_layers[4].mha.output_dense.bias': (-0.28972819098999, 1.04898398427921),
                        'enc_layers[4].ffn.layers[0].kernel': (-339.592971143846, 2287.5070331705),
                        'enc_layers[4].ffn.layers[0].bias': (-60.1627053215775, 13.2023317048365),
                        'enc_layers[4].ffn.layers[1].kernel': (-21.6149116342669, 1130.17443940029),
                        'enc_layers[4].ffn.layers[1].bias': (-0.352834279707167, 0.732375303475103),
                        'enc_layers[4].layernorm1.gamma': (199.829220205545, 111.191997979646),
                        'enc_layers[4].layernorm1.beta': (1.95206421292824, 0.919381225178819),
                        'enc_layers[4].layernorm2.gamma': (262.228455483913, 181.574725170483),
                        'enc_layers[4].layernorm2.beta': (-9.67086829487016, 0.714430262695102),
                        'enc_layers[5].mha.query_dense.kernel': (69.4554813629131, 853.699318814604),
                        'enc_layers[5].mha.query_dense.bias': (-2.77313479948862, 4.55102405583633),
                        'enc_layers[5].mha.key_dense.kernel': (49.1623278196128, 804.821006352728),
                        'enc_layers[5].mha.key_dense.bias': (0.000505635788698555, 0.000110690007860844),
                        'enc_layers[5].mha.value_dense.kernel': (-0.976785933848305, 579.575401643905),
                        'enc_layers[5].mha.value_dense.bias': (0.484369761715243, 0.0536934692840447),
                        'enc_layers[5].mha.output_dense.kernel': (7.5709313372713, 396.090039031234),
                        'enc_layers[5].mha.output_dense.bias': (-0.214244590766612, 0.498705769343217),
                        'enc_layers[5].ffn.layers[0].kernel': (177.490876676756, 1836.79508205925),
                        'enc_layers[5].ffn.layers[0].bias': (-11.9328588502067, 2.95075953106514),
                        'enc_layers[5].ffn.layers[1].kernel': (-53.1984910744649, 886.644513961944),
                        'enc_layers[5].ffn.layers[1].bias': (1.16439509740849, 0.571878383486937),
                        'enc_layers[5].layernorm1.gamma': (211.533117890358, 120.518226300124),
                        'enc_layers[5].layernorm1.beta': (-3.41991473367489, 1.57183454692073),
                        'enc_layers[5].layernorm2.gamma': (245.77615535109, 159.584616074399),
                        'enc_layers[5].layernorm2.beta': (7.21051143009655, 0.37020368327522)}}
# <<< expected values


# ----------------------------------------------------------------------------------------------
# BertEmbedding

EMBEDDING_CONFIG = {"vocabulary_size": 10, "hidden_dim": 4, "max_sequence_length": 6, "num_segments": 2}
EMBEDDING_INPUTS = {"token_ids": [[2, 5, 3], [4, 1, 0]], "segment_ids": [[0, 0, 1], [0, 1, 1]]}


def _make(cls, *args, **kwargs):
    return call_learner(cls, *args, **kwargs)


def _embedding_outputs(BertEmbedding, seed: int):  # noqa: N803
    config = EMBEDDING_CONFIG
    layer = _make(BertEmbedding, config["vocabulary_size"], config["hidden_dim"],
                  max_sequence_length=config["max_sequence_length"], num_segments=config["num_segments"],
                  dropout=0.5, layernorm_eps=1e-12)
    ids, segments = _tf(EMBEDDING_INPUTS["token_ids"], "int32"), _tf(EMBEDDING_INPUTS["segment_ids"], "int32")
    prebuild(layer, config)
    weights = seed_variables(bert_variables(layer, config, part="embedding"), seed)
    outputs = [call_layer(layer, ids, segments, training=training, hint=EMBEDDING_HINT)
               for training in (False, False, True)]
    return layer, weights, outputs


def check_bert_embedding(BertEmbedding) -> None:  # noqa: N803
    """BertEmbedding (vocabulary 10, hidden 4, 6 positions, 2 segments) on two sentences, seeded weights."""
    expected = _EXPECTED["embedding"]
    layer, _, (output, again, training) = _embedding_outputs(BertEmbedding, seed=51)
    name = "BertEmbedding output"
    expect_shape(to_array(output, name), (2, 3, 4), name)
    expect_deterministic(output, again, name)
    expect_close(output, expected["output"], name, atol=1e-5, rtol=1e-5,
                 mistakes=_mistakes(expected, EMBEDDING_MISTAKES))
    expect_dropout_in_training(output, training, name)
    layer.layer_norm.gamma.assign(np.ones(4, np.float32))
    layer.layer_norm.beta.assign(np.zeros(4, np.float32))
    ids, segments = _tf(EMBEDDING_INPUTS["token_ids"], "int32"), _tf(EMBEDDING_INPUTS["segment_ids"], "int32")
    normed = to_array(call_layer(layer, ids, segments, training=False), name)
    if not (np.allclose(normed.mean(-1), 0, atol=1e-4) and np.allclose(normed.var(-1), 1, atol=1e-2)):
        raise CheckFailed(f"{name}: with the layer norm set to gamma = 1, beta = 0, every position should have "
                          "mean 0 and variance 1: the layer norm comes last (before dropout)")
    passed("BertEmbedding: token + position + segment embeddings, layer norm, dropout only in training")


# ----------------------------------------------------------------------------------------------
# BertEncoder, checked with a test double in place of BertEmbedding

ENCODER_CONFIG = {"vocabulary_size": 12, "num_layers": 2, "num_heads": 2, "hidden_dim": 4, "intermediate_dim": 8,
                  "max_sequence_length": 8, "num_segments": 2}
ENCODER_INPUTS = {"token_ids": [[3, 7, 0], [5, 2, 9], [4, 0, 0]], "segment_ids": [[0, 1, 0], [0, 0, 1], [0, 0, 0]],
                  "padding_mask": [[1, 1, 0], [1, 1, 1], [1, 0, 0]]}
_DOUBLE_CALLS: list[dict] = []


def embedding_double_output(token_ids, segment_ids) -> np.ndarray:
    """What the BertEmbedding double returns: a fixed pattern of the token and segment ids (hidden 4)."""
    token_ids, segment_ids = np.asarray(token_ids, np.float64), np.asarray(segment_ids, np.float64)
    return (0.1 * token_ids[..., None] * np.array([1.0, -1.0, 0.5, 2.0])
            + segment_ids[..., None] * np.array([0.3, 0.0, -0.4, 0.1]) + np.array([0.0, 0.2, 0.0, -0.5]))


def _embedding_double():
    import keras
    import tensorflow as tf

    class BertEmbeddingDouble(keras.layers.Layer):
        """Stands in for BertEmbedding: no weights, a predictable output, records how it was called."""

        def __init__(self, *args, **kwargs):
            super().__init__()
            _DOUBLE_CALLS.append({"created": True})

        def call(self, token_ids, segment_ids, training=None):
            _DOUBLE_CALLS.append({"called": True, "training": training})
            ids, segments = tf.cast(token_ids, tf.float32)[..., None], tf.cast(segment_ids, tf.float32)[..., None]
            return (0.1 * ids * tf.constant([1.0, -1.0, 0.5, 2.0]) + segments * tf.constant([0.3, 0.0, -0.4, 0.1])
                    + tf.constant([0.0, 0.2, 0.0, -0.5]))

    return BertEmbeddingDouble


def _encoder_with_double(BertEncoder, seed: int):  # noqa: N803
    config = ENCODER_CONFIG
    _DOUBLE_CALLS.clear()
    with parts_replaced(BertEncoder.__init__, BertEmbedding=_embedding_double()):
        encoder = _make(BertEncoder, config["vocabulary_size"], config["num_layers"], config["num_heads"],
                        config["hidden_dim"], config["intermediate_dim"], dropout=0.5,
                        max_sequence_length=config["max_sequence_length"], num_segments=config["num_segments"])
    inputs = [_tf(ENCODER_INPUTS[k], "int32") for k in ("token_ids", "segment_ids", "padding_mask")]
    prebuild(encoder, config)
    weights = seed_variables(bert_variables(encoder, config, part="layers"), seed)
    outputs = [call_layer(encoder, *inputs, training=training, hint=ENCODER_HINT) for training in (False, False, True)]
    return weights, outputs


def check_bert_encoder(BertEncoder) -> None:  # noqa: N803
    """BertEncoder (2 layers, hidden 4, 2 heads) on three padded sentences, with a double as its embedding."""
    expected = _EXPECTED["encoder"]
    _, (output, again, training) = _encoder_with_double(BertEncoder, seed=52)
    if not any(call.get("called") for call in _DOUBLE_CALLS):
        raise CheckFailed("BertEncoder never calls self.embedding: start with x = self.embedding(token_ids, "
                          "segment_ids, training=training)")
    name = "BertEncoder output (with a test double as its BertEmbedding)"
    expect_shape(to_array(output, name), (3, 3, 4), name)
    expect_deterministic(output, again, name)
    expect_close(output, expected["output"], name, atol=1e-4, rtol=1e-4,
                 mistakes=_mistakes(expected, ENCODER_MISTAKES))
    expect_dropout_in_training(output, training, name)
    passed("BertEncoder: embedding, then every layer in order with the (batch, 1, seq) attention mask")


# ----------------------------------------------------------------------------------------------
# load_bert_weights, checked on an empty encoder built here

SMALL_CONFIG = {"vocabulary_size": 200, "num_layers": 2, "num_heads": 4, "hidden_dim": 48, "intermediate_dim": 96,
                "max_sequence_length": 40, "num_segments": 2}
SIZES_HINT = ("The backbone passed here has {num_layers} layers, hidden size {hidden_dim} and a vocabulary of "
              "{vocabulary_size}: take the sizes from the encoder or the backbone (len(backbone.transformer_layers), "
              "zip(...)), never hard-code them")
SHAPE_HINT = ("A shape mismatch means a weight went to the wrong place, for example the token table "
              "(vocabulary_size, hidden_dim) and the position table (max_sequence_length, hidden_dim), or the "
              "intermediate dense layer (hidden_dim -> intermediate_dim) and the output one (back to hidden_dim)")
ROLES = {
    "embedding.token_embedding": "the token table has one row per vocabulary entry",
    "embedding.position_embedding": "the position table has one row per position",
    "embedding.segment_embedding": "the segment table has one row per segment",
    "embedding.layer_norm": "embedding.layer_norm normalises the sum of the three embeddings",
    "mha": "mha is the self-attention",
    "layernorm1": "layernorm1 follows the attention",
    "layernorm2": "layernorm2 follows the feed-forward block",
    "ffn.layers[0]": "ffn.layers[0] widens hidden_dim to intermediate_dim (with GELU)",
    "ffn.layers[1]": "ffn.layers[1] maps intermediate_dim back to hidden_dim",
}


def role(label: str) -> str:
    """What the encoder weight at `label` ("enc_layers[2].layernorm1.gamma") is for."""
    sublayer = re.sub(r"^enc_layers\[\d+\]\.", "", label)
    return next((text for prefix, text in ROLES.items() if sublayer.startswith(prefix + ".")), "")


def encoder_skeleton(config: dict):
    """An empty encoder with the template's attributes (no `call`), built, every weight zero."""
    import keras

    from course_lib.layers import EncoderLayer

    class EmbeddingSkeleton(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            d = config["hidden_dim"]
            self.token_embedding = keras.layers.Embedding(config["vocabulary_size"], d)
            self.position_embedding = keras.layers.Embedding(config["max_sequence_length"], d)
            self.segment_embedding = keras.layers.Embedding(config["num_segments"], d)
            self.layer_norm = keras.layers.LayerNormalization(epsilon=1e-12)
            for table in (self.token_embedding, self.position_embedding, self.segment_embedding):
                table.build()
            self.layer_norm.build((None, d))

    class EncoderSkeleton(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.embedding = EmbeddingSkeleton()
            self.enc_layers = [EncoderLayer(config["hidden_dim"], config["num_heads"], config["intermediate_dim"],
                                            layernorm_eps=1e-12) for _ in range(config["num_layers"])]
            for layer in self.enc_layers:
                build_encoder_layer(layer, config["hidden_dim"])

    encoder = EncoderSkeleton()
    for variable in bert_variables(encoder, config).values():
        variable.assign(np.zeros(variable.shape, np.float32))
    return encoder


def call_loader(load_bert_weights, encoder, backbone, config: dict) -> None:
    """Run the learner's loader; a crash becomes a failed check with a hint about sizes or shapes."""
    try:
        call_learner(load_bert_weights, encoder, backbone)
    except CheckFailed as error:
        message = str(error)
        if "IndexError" in message or "list index" in message:
            message += ". " + SIZES_HINT.format(**config)
        elif "shape" in message.lower() or "ValueError" in message:
            message += f". {SHAPE_HINT}. " + SIZES_HINT.format(**config)
        raise CheckFailed(message) from error


def expect_backbone_unchanged(before: dict, backbone) -> None:
    for label, variable in backbone_variables(backbone).items():
        if not same_fingerprint(fingerprint(variable), before[label]):
            raise CheckFailed(f"load_bert_weights changed the backbone: backbone.{label} has other values "
                              "afterwards. Copy from the backbone into the encoder, never the other way round "
                              "(and reload the pretrained model, bert = load_bert(), whose weights may be damaged)")


def describe_wrong_weight(label: str, value, backbone_prints: dict, expected_source: str | None = None) -> str:
    """Why the encoder weight at `label` is wrong: left untouched, or whose values it holds instead."""
    array = to_array(value, label)
    where = f"encoder.{label}"
    if not np.any(array):
        message = f"{where} still holds the zeros the check put there: it was never copied"
    else:
        found = [source for source, prints in backbone_prints.items()
                 if same_fingerprint(fingerprint(array), prints)]
        message = (f"{where} has the values of backbone.{found[0]}" if found
                   else f"{where} holds none of the backbone's weights")
        layer = re.match(r"enc_layers\[(\d+)\]", label)
        source_layer = re.match(r"transformer_layers\[(\d+)\]", found[0]) if found else None
        if layer and source_layer and layer[1] != source_layer[1]:
            message += f"; enc_layers[{layer[1]}] takes the weights of transformer_layers[{layer[1]}]"
    if expected_source:
        message += f"; it should get those of backbone.{expected_source}"
    hint = role(label)
    return message + (f" ({hint})" if hint else "")


def _check_loaded(load_bert_weights, backbone, config: dict, expected_prints: dict | None) -> int:
    encoder = encoder_skeleton(config)
    before = {label: fingerprint(v) for label, v in backbone_variables(backbone).items()}
    call_loader(load_bert_weights, encoder, backbone, config)
    expect_backbone_unchanged(before, backbone)
    variables = bert_variables(encoder, config)
    for label, variable in variables.items():
        value = to_array(variable, f"encoder.{label}")
        if not np.any(value) or (expected_prints is not None
                                 and not same_fingerprint(fingerprint(value), expected_prints[label])):
            raise CheckFailed(describe_wrong_weight(label, value, before))
        if expected_prints is None and not any(same_fingerprint(fingerprint(value), p) for p in before.values()):
            raise CheckFailed(describe_wrong_weight(label, value, before))
    return len(variables)


def check_load_bert_weights(load_bert_weights, backbone=None) -> None:
    """load_bert_weights into an empty encoder: from a small random backbone (2 layers, hidden 48), then from
    `backbone`, the pretrained one; every weight is compared with the checkpoint's."""
    small = make_backbone(SMALL_CONFIG, seed=53)
    count = _check_loaded(load_bert_weights, small, SMALL_CONFIG, _EXPECTED["small_backbone"])
    message = f"load_bert_weights: all {count} weights of a small random backbone (2 layers, hidden 48)"
    if backbone is not None:
        config = {k: backbone.get_config()[k] for k in SHIPPED_CONFIG}
        prints = _EXPECTED["shipped_checkpoint"]
        shipped = config == SHIPPED_CONFIG and same_fingerprint(
            fingerprint(backbone.token_embedding.embeddings), prints["embedding.token_embedding.embeddings"])
        if not shipped:
            print("Note: this is not the checkpoint shipped with the course, so the weights are only checked to "
                  "come from the backbone, not to be in the right places; the hidden tests use the shipped one.")
        count = _check_loaded(load_bert_weights, backbone, config, prints if shipped else None)
        message += f" and all {count} of the pretrained one ({config['num_layers']} layers, hidden " \
                   f"{config['hidden_dim']})"
    passed(message + " are in their places")
