"""Assignment 04 (the Transformer's layers): the given feed-forward block, access to a layer's weights
by attribute name, and the visible checks.

The checks build the learner's layer on a small fixed configuration, SET every weight from a seeded
NumPy generator (not Keras's random initialisers), and compare the output with numbers written out
below; they also test properties that hold whatever the weights: shapes, deterministic inference,
attention rows summing to 1, exactly zero weight on masked positions, and a post-norm output with
mean 0 and variance 1 per position.
"""

from __future__ import annotations

import functools

import numpy as np

from course_lib.checking import (
    CheckFailed,
    call_learner,
    expect_close,
    expect_shape,
    parts_replaced,
    passed,
    to_array,
)
from course_lib.keras_weights import seed_weights, set_unit_norm

# ----------------------------------------------------------------------------------------------
# Given building block


def FullyConnected(embedding_dim: int, fully_connected_dim: int, activation="relu"):  # noqa: N802  (a layer)
    """Position-wise feed-forward network: Dense(fully_connected_dim, activation) then Dense(embedding_dim).

    ReLU as in Vaswani et al. (2017); BERT (assignment 05) uses GELU.
    """
    import keras

    return keras.Sequential([
        keras.layers.Dense(fully_connected_dim, activation=activation),
        keras.layers.Dense(embedding_dim),
    ])


# ----------------------------------------------------------------------------------------------
# Calling a learner's layer


KEYWORD_HINT = (
    "Keras 3 accepts only tensors as positional arguments: pass the others by keyword, "
    "e.g. layer(x, training=training, mask=mask)"
)


def call_layer(layer, *args, hint: str = "", **kwargs):
    """Call a learner's layer; add a hint to a crash (Keras's positional-argument rule, shapes)."""
    try:
        return call_learner(layer, *args, **kwargs)
    except CheckFailed as error:
        message = str(error)
        if "positional arguments" in message:
            message += f". {KEYWORD_HINT}"
        elif hint:
            message += f". {hint}"
        raise CheckFailed(f"{type(layer).__name__}: {message}") from error


def make_layer(cls, *args, **kwargs):
    """Construct the learner's layer (its __init__ is given, so this only fails if it was changed)."""
    return call_learner(cls, *args, **kwargs)


def expect_deterministic(first, second, name: str) -> None:
    """Two calls with training=False must agree: dropout is off at inference."""
    if not np.allclose(to_array(first, name), to_array(second, name), atol=1e-6):
        raise CheckFailed(
            f"{name} changes between two calls with training=False: dropout is active at inference. Pass "
            "training=training to the MultiHeadAttention and Dropout layers (never training=True)"
        )


def expect_unit_norm_rows(output, name: str) -> None:
    """With the last layer norm at gamma = 1, beta = 0, every position has mean 0 and variance 1."""
    output = to_array(output, name)
    if not (np.allclose(output.mean(axis=-1), 0.0, atol=1e-4) and np.allclose(output.var(axis=-1), 1.0, atol=1e-2)):
        raise CheckFailed(
            f"{name}: with the last layer norm set to gamma = 1, beta = 0, every position should have mean 0 "
            "and variance 1 (post-norm: the block ends with LayerNorm(h + Sublayer(h)))"
        )


def expect_attention_weights(weights, shape, allowed, name: str) -> np.ndarray:
    """Attention weights: shape, rows sum to 1, exactly 0 where `allowed` is False."""
    weights = to_array(weights, name)
    expect_shape(weights, shape, name)
    if not np.allclose(weights.sum(axis=-1), 1.0, atol=1e-4):
        raise CheckFailed(f"{name} do not sum to 1 over the keys (last axis)")
    blocked = np.where(np.broadcast_to(allowed, weights.shape), 0.0, weights)
    if np.any(blocked != 0):
        raise CheckFailed(f"{name} put weight {blocked.max():.3g} on a masked position: pass the mask to this "
                          f"attention as attention_mask=... {QUERY_MASK_NOTE}")
    return weights


# ----------------------------------------------------------------------------------------------
# Visible checks: fixed configurations, seeded weights, expected numbers written out

_BLOCK = {"embedding_dim": 4, "num_heads": 2, "fully_connected_dim": 8}


def _inputs(seed: int, shape) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _tf(array):
    import tensorflow as tf

    return tf.constant(np.asarray(array, dtype=np.float32))


def _ids(rows):
    import tensorflow as tf

    return tf.constant(np.asarray(rows, dtype=np.int32))


# >>> expected values (generated once with autograde.reference.transformer.layers; do not edit by hand)
_EXPECTED = {'encoder_layer': {'mask': [[[1.0, 1.0, 0.0]], [[1.0, 1.0, 1.0]]],
                   'output': [[[-0.252129, -1.258596, -0.088885, 1.186843],
                               [-1.535891, -0.809275, 0.041828, 0.475751],
                               [1.158889, -1.522986, -0.124277, 0.908294]],
                              [[-0.547315, 0.522282, -0.225064, 0.995155],
                               [1.436187, 1.14267, -0.115755, -1.487999],
                               [0.253543, 0.835184, -0.261412, 0.59051]]],
                   'pre_norm': [[[-3.208024, -2.648637, -0.951455, 1.651816],
                                 [-3.790933, -2.668411, -1.222884, -1.43034],
                                 [-1.491389, -2.643474, -0.535596, 3.676164]],
                                [[-0.146584, -0.292371, -1.603968, 0.906439],
                                 [1.63213, 1.961205, 0.932836, -2.133068],
                                 [-0.434734, 0.556227, -1.699638, 0.078548]]],
                   'no_residual_attention': [[[0.621008, -1.757421, -0.038583, 0.705815],
                                              [1.776131, -1.780315, -0.066865, 0.314328],
                                              [0.845998, -1.813266, -0.027888, 0.540842]],
                                             [[-0.226688, 1.044719, -0.246684, 0.566162],
                                              [0.383493, 0.872891, -0.264523, 0.513036],
                                              [-0.073055, 0.787619, -0.251162, 0.727102]]],
                   'no_residual_ffn': [[[1.669057, -1.296705, -0.167584, 0.791003],
                                        [0.627568, -1.424504, -0.118983, 1.078822],
                                        [2.214221, -1.20341, -0.177338, 0.492353]],
                                       [[-1.898294, 0.972428, 0.016736, -0.575079],
                                        [-0.233339, 1.067197, 0.002132, -1.454483],
                                        [2.293646, -1.521375, -0.124606, 0.282704]]],
                   'norms_swapped': [[[-0.742867, -0.838085, -0.076901, 1.393051],
                                      [-1.009165, -0.885241, 0.422285, 1.27234],
                                      [0.159328, -1.256222, -0.321092, 1.186391]],
                                     [[-1.451505, 1.379573, 0.265497, -0.199171],
                                      [0.689891, 0.464338, 0.577186, -1.444533],
                                      [-0.054151, 0.970902, -1.56432, 0.393839]]],
                   'residual_outside_norm': [[[-0.940216, -1.150193, 1.715404, 0.99101],
                                              [-0.933486, -1.189396, 2.016089, -0.704625],
                                              [-0.641191, -2.752514, 1.082663, 1.309158]],
                                             [[-1.074958, 1.598257, -1.874247, 1.640942],
                                              [0.683201, 0.885372, -1.771794, -1.213911],
                                              [-2.156984, 2.125563, -1.783858, 0.922038]]],
                   'no_mask': [[[-0.483553, -0.785281, -0.13755, 1.320956],
                                [-2.047407, -0.113499, -0.046945, 0.906503],
                                [1.046378, -1.491064, -0.125901, 0.957504]],
                               [[-0.547315, 0.522282, -0.225064, 0.995155],
                                [1.436187, 1.14267, -0.115755, -1.487999],
                                [0.253543, 0.835184, -0.261412, 0.59051]]]},
 'decoder_layer': {'mask': [[[1.0, 1.0, 1.0, 0.0]], [[1.0, 1.0, 1.0, 1.0]]],
                   'output': [[[0.255568, -1.20118, 1.356162, -0.194707],
                               [0.405023, -1.100112, 1.367233, -0.404113],
                               [0.114241, -1.237352, 1.355604, -0.059156]],
                              [[-0.619958, -1.018215, 0.072333, 1.271869],
                               [-0.003743, -1.355118, 1.143462, 0.300282],
                               [0.11701, -1.289136, 1.285789, 0.041171]]],
                   'self_weights_1': [[[1.0, 0.0, 0.0], [0.375351, 0.624649, 0.0],
                                       [0.405402, 0.29965, 0.294948]],
                                      [[1.0, 0.0, 0.0], [0.812144, 0.187856, 0.0],
                                       [0.612028, 0.171384, 0.216588]]],
                   'cross_weights_0': [[[0.456983, 0.305129, 0.237888, 0.0],
                                        [0.39959, 0.320661, 0.279749, 0.0],
                                        [0.484483, 0.299692, 0.215825, 0.0]],
                                       [[0.773269, 0.177365, 0.049366, 0.0],
                                        [0.979874, 0.015261, 0.004864, 0.0],
                                        [0.461214, 0.419017, 0.119769, 0.0]]],
                   'pre_norm': [[[6.538441, -5.817705, 8.226333, -1.029132],
                                 [4.782798, -6.295038, 6.93934, -0.905393],
                                 [6.790188, -5.818327, 8.066737, 0.371527]],
                                [[-4.589416, -4.898197, -5.108589, 3.137457],
                                 [-4.563041, -7.214495, -3.81518, 3.296783],
                                 [-5.281774, -7.251334, -3.73327, 3.319661]]],
                   'no_look_ahead_mask': [[[0.023772, -1.254186, 1.345678, 0.029281],
                                           [0.365742, -1.131055, 1.366928, -0.347079],
                                           [0.114241, -1.237352, 1.355604, -0.059156]],
                                          [[-0.316638, 1.363892, 0.156112, -1.206308],
                                           [0.039566, -1.274933, 1.314375, 0.061505],
                                           [0.11701, -1.289136, 1.285789, 0.041171]]],
                   'no_padding_mask': [[[0.400833, -0.707005, 1.45198, -0.829491],
                                        [0.533477, -0.080559, 1.164499, -1.277123],
                                        [0.195384, -1.043711, 1.483192, -0.39579]],
                                       [[-0.619958, -1.018215, 0.072333, 1.271869],
                                        [-0.003743, -1.355118, 1.143462, 0.300282],
                                        [0.11701, -1.289136, 1.285789, 0.041171]]],
                   'cross_query_is_x': [[[0.062216, -1.209483, 1.396116, -0.07905],
                                         [0.42082, -1.087753, 1.366186, -0.426056],
                                         [0.042472, -1.237477, 1.366115, -0.01557]],
                                        [[-0.840545, 1.119788, -1.500073, 0.691704],
                                         [-0.688556, -0.367715, -0.860671, 1.45209],
                                         [-0.952321, -0.063739, -0.934042, 1.419493]]],
                   'no_residual_self': [[[0.687827, -0.921424, 1.265023, -0.692433],
                                         [0.678921, -0.934046, 1.268692, -0.677263],
                                         [0.376999, -1.168852, 1.336079, -0.296237]],
                                        [[-0.51807, -1.134268, 0.237889, 1.175844],
                                         [-0.367327, -1.273515, 0.505034, 0.98651],
                                         [-0.253592, -1.345482, 0.741923, 0.785533]]],
                   'no_residual_cross': [[[1.125361, -1.350603, 0.5014, -0.014809],
                                          [1.56443, -1.137201, 0.009476, -0.142747],
                                          [0.461718, -1.402713, 0.985328, 0.132578]],
                                         [[-0.115165, -1.373935, 0.986692, 0.520527],
                                          [0.116496, -1.290626, 1.283568, 0.044651],
                                          [0.141824, -1.268646, 1.31133, -0.015558]]],
                   'no_residual_ffn': [[[-2.004132, 0.040758, 0.709119, 0.795236],
                                        [-2.069083, 0.378813, 0.281784, 0.864986],
                                        [-1.88122, -0.185506, 0.896654, 0.768386]],
                                       [[-0.299997, -1.271022, 0.375356, 1.037178],
                                        [-0.018171, -1.166829, 1.451665, -0.103898],
                                        [0.358251, -1.108329, 1.384, -0.375974]]]}}
# <<< expected values

QUERY_MASK_NOTE = "(in Keras 3 the fourth positional argument of MultiHeadAttention is query_mask, not attention_mask)"
ENCODER_LAYER_MISTAKES = {
    "pre_norm": "it looks pre-norm (x + Sublayer(LayerNorm(x))); this Transformer is post-norm: "
                "LayerNorm(x + Sublayer(x)), the layer norm comes after the residual sum",
    "no_residual_attention": "the residual connection around the self-attention is missing: "
                             "layernorm1(x + attention), not layernorm1(attention)",
    "no_residual_ffn": "the residual connection around the feed-forward block is missing: "
                       "layernorm2(h + ffn(h)), not layernorm2(ffn(h))",
    "norms_swapped": "layernorm1 and layernorm2 are swapped: layernorm1 follows the attention, layernorm2 the "
                     "feed-forward block",
    "residual_outside_norm": "the residual is added after the layer norm (x + LayerNorm(Sublayer(x))); "
                             "add first, then normalise: LayerNorm(x + Sublayer(x))",
    "no_mask": "the mask is not used: pass it to the self-attention by keyword, "
               "self.mha(x, x, x, attention_mask=mask) " + QUERY_MASK_NOTE,
}
EMBEDDING_MISTAKES = {
    "not_scaled": "the embeddings are not multiplied by sqrt(embedding_dim) before the positional encoding is added",
    "scaled_by_d": "the embeddings are multiplied by embedding_dim; the factor is sqrt(embedding_dim)",
    "divided_by_sqrt_d": "the embeddings are divided by sqrt(embedding_dim); multiply instead",
    "no_positional_encoding": "the positional encoding is not added: x += self.pos_encoding[:, :seq_len, :]",
    "scaled_after_adding": "the positional encoding is scaled too: multiply the embeddings by sqrt(embedding_dim) "
                           "first, then add the positional encoding",
}
ENCODER_MISTAKES = {
    **EMBEDDING_MISTAKES,
    "no_mask": "the mask is not passed on: call every encoder layer with mask=mask",
    "only_first_layer": "only the first encoder layer is applied: loop over all of self.enc_layers, feeding each "
                        "one the previous one's output",
}
DECODER_LAYER_MISTAKES = {
    "pre_norm": "it looks pre-norm; this Transformer is post-norm: each block is LayerNorm(h + Sublayer(h))",
    "masks_swapped": "the masks are swapped: look_ahead_mask goes to the self-attention mha1, padding_mask to "
                     "the cross-attention mha2",
    "no_look_ahead_mask": "the self-attention (mha1) is not masked: pass attention_mask=look_ahead_mask "
                          + QUERY_MASK_NOTE,
    "no_padding_mask": "the cross-attention (mha2) is not masked: pass attention_mask=padding_mask " + QUERY_MASK_NOTE,
    "cross_query_is_x": "the cross-attention's query is x; it must be the first block's output, "
                        "mha2(query=out1, value=enc_output, key=enc_output)",
    "no_residual_self": "the residual around the self-attention is missing: layernorm1(x + attention)",
    "no_residual_cross": "the residual around the cross-attention is missing: layernorm2(out1 + attention)",
    "no_residual_ffn": "the residual around the feed-forward block is missing: layernorm3(out2 + ffn(out2))",
}
DECODER_MISTAKES = {
    **EMBEDDING_MISTAKES,
    "masks_swapped": "the masks are swapped: pass look_ahead_mask=look_ahead_mask and padding_mask=padding_mask "
                     "to every decoder layer",
    "no_look_ahead_mask": "the look-ahead mask is not passed on to the decoder layers",
    "no_padding_mask": "the padding mask is not passed on to the decoder layers",
}
TRANSFORMER_MISTAKES = {
    "softmax": "these are probabilities; return the final layer's logits (no softmax): the loss takes "
               "from_logits=True",
    "no_encoder_mask": "the encoder is not given enc_padding_mask",
    "decoder_masks_swapped": "the decoder's masks are swapped: look_ahead_mask=look_ahead_mask, "
                             "padding_mask=dec_padding_mask",
}
DECODER_MASK_HINT = (
    "If this is a shape error: look_ahead_mask (1, T, T) belongs to the self-attention mha1 and padding_mask "
    "(batch, 1, S) to the cross-attention mha2, whose query is the decoder's and key and value the encoder's"
)
POSITION_HINT = "If this is a shape error: slice the positional encoding to the sequence, pos_encoding[:, :seq_len, :]"


def _mistakes(expected: dict, messages: dict) -> list[tuple[object, str]]:
    return [(np.asarray(expected[name]), message) for name, message in messages.items() if name in expected]


def _expect_values(actual, expected: dict, messages: dict, name: str, hint: str = "") -> None:
    expect_close(actual, np.asarray(expected["output"]), name, atol=1e-4, rtol=1e-4,
                 mistakes=_mistakes(expected, messages), hint=hint or None)


def _outputs(result, count: int, name: str, what: str):
    if not isinstance(result, (tuple, list)) or len(result) != count:
        raise CheckFailed(f"{name} should return {what}, got {type(result).__name__}")
    return result


def check_encoder_layer(EncoderLayer) -> None:  # noqa: N803
    """EncoderLayer (d 4, 2 heads, fc 8) on a batch of two with a padding mask, seeded weights."""
    expected = _EXPECTED["encoder_layer"]
    x, mask = _tf(_inputs(41, (2, 3, 4))), _tf(expected["mask"])
    layer = make_layer(EncoderLayer, 4, 2, 8, dropout_rate=0.5, layernorm_eps=1e-6)
    call_layer(layer, x, training=False, mask=mask)
    seed_weights(layer, "encoder_layer", _BLOCK, seed=4)
    output = call_layer(layer, x, training=False, mask=mask)
    expect_shape(to_array(output, "EncoderLayer output"), (2, 3, 4), "EncoderLayer output")
    expect_deterministic(output, call_layer(layer, x, training=False, mask=mask), "EncoderLayer output")
    _expect_values(output, expected, ENCODER_LAYER_MISTAKES, "EncoderLayer output")
    set_unit_norm(layer.layernorm2)
    expect_unit_norm_rows(call_layer(layer, x, training=False, mask=mask), "EncoderLayer output")
    passed("EncoderLayer: self-attention, add & norm, feed-forward, add & norm, with the mask")


def check_decoder_layer(DecoderLayer) -> None:  # noqa: N803
    """DecoderLayer (d 4, 2 heads) with 3 target and 4 source positions, look-ahead and padding masks."""
    expected = _EXPECTED["decoder_layer"]
    x, enc_output = _tf(_inputs(42, (2, 3, 4))), _tf(_inputs(43, (2, 4, 4)))
    look_ahead, padding = _tf(np.tril(np.ones((3, 3)))[np.newaxis]), _tf(expected["mask"])
    layer = make_layer(DecoderLayer, 4, 2, 8, dropout_rate=0.5, layernorm_eps=1e-6)
    kwargs = dict(training=False, look_ahead_mask=look_ahead, padding_mask=padding, hint=DECODER_MASK_HINT)
    call_layer(layer, x, enc_output, **kwargs)
    seed_weights(layer, "decoder_layer", _BLOCK, seed=6)
    what = "a tuple (output, self_attention_weights, cross_attention_weights)"
    output, w1, w2 = _outputs(call_layer(layer, x, enc_output, **kwargs), 3, "DecoderLayer", what)
    expect_shape(to_array(output, "DecoderLayer output"), (2, 3, 4), "DecoderLayer output")
    again = _outputs(call_layer(layer, x, enc_output, **kwargs), 3, "DecoderLayer", what)[0]
    expect_deterministic(output, again, "DecoderLayer output")
    w1 = expect_attention_weights(w1, (2, 2, 3, 3), np.tril(np.ones((3, 3))) > 0,
                                  "self-attention weights (mha1, with look_ahead_mask)")
    w2 = expect_attention_weights(w2, (2, 2, 3, 4), np.asarray(expected["mask"])[:, None] > 0,
                                  "cross-attention weights (mha2, with padding_mask)")
    _expect_values(output, expected, DECODER_LAYER_MISTAKES, "DecoderLayer output")
    expect_close(w1[1], expected["self_weights_1"], "self-attention weights of sentence 2", atol=1e-4, rtol=1e-4)
    expect_close(w2[0], expected["cross_weights_0"], "cross-attention weights of sentence 1", atol=1e-4, rtol=1e-4)
    set_unit_norm(layer.layernorm3)
    expect_unit_norm_rows(call_layer(layer, x, enc_output, **kwargs)[0], "DecoderLayer output")
    passed("DecoderLayer: masked self-attention, cross-attention and feed-forward, each with add & norm")




# ----------------------------------------------------------------------------------------------
# Composites are checked with test doubles in place of their parts, so that a mistake in
# EncoderLayer or DecoderLayer never makes the Encoder's or Decoder's check fail. A double has the
# part's constructor and call signature, no weights, and a simple output that is easy to predict;
# it records how it was called.

_CALLS: list[dict] = []


@functools.cache
def _doubles() -> dict:
    import keras
    import tensorflow as tf

    class EncoderLayerDouble(keras.layers.Layer):
        """Adds 1 to its input and records the mask it was given."""

        def __init__(self, embedding_dim=None, num_heads=None, fully_connected_dim=None, dropout_rate=0.1,
                     layernorm_eps=1e-6):
            super().__init__()
            self.index = sum(1 for call in _CALLS if call.get("created") == "EncoderLayer")
            _CALLS.append({"created": "EncoderLayer"})

        def compute_mask(self, inputs, previous_mask=None):
            return None

        def call(self, x, training=None, mask=None):
            _CALLS.append({"called": "EncoderLayer", "index": self.index, "mask": mask})
            return x + 1.0

    class DecoderLayerDouble(keras.layers.Layer):
        """Adds the mean encoder vector; its attention weights are filled with 10 * layer + block."""

        def __init__(self, embedding_dim=None, num_heads=None, fully_connected_dim=None, dropout_rate=0.1,
                     layernorm_eps=1e-6):
            super().__init__()
            self.index = sum(1 for call in _CALLS if call.get("created") == "DecoderLayer")
            _CALLS.append({"created": "DecoderLayer"})

        def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
            _CALLS.append({"called": "DecoderLayer", "index": self.index, "look_ahead_mask": look_ahead_mask,
                           "padding_mask": padding_mask})
            batch, target, source = tf.shape(x)[0], tf.shape(x)[1], tf.shape(enc_output)[1]
            label = 10.0 * (self.index + 1)
            return (x + tf.reduce_mean(enc_output, axis=1, keepdims=True),
                    tf.fill([batch, 1, target, target], label + 1.0), tf.fill([batch, 1, target, source], label + 2.0))

    class EncoderDouble(keras.layers.Layer):
        """Token id times (0.1, 0.2, ...) along the embedding axis; records the mask."""

        def __init__(self, num_layers=None, embedding_dim=4, num_heads=None, fully_connected_dim=None,
                     input_vocab_size=None, maximum_position_encoding=None, dropout_rate=0.1, layernorm_eps=1e-6):
            super().__init__()
            self.scale = tf.constant(0.1 * np.arange(1, embedding_dim + 1), tf.float32)

        def compute_mask(self, inputs, previous_mask=None):
            return None

        def call(self, x, training=None, mask=None):
            _CALLS.append({"called": "Encoder", "mask": mask})
            return tf.cast(x, tf.float32)[..., tf.newaxis] * self.scale

    class DecoderDouble(keras.layers.Layer):
        """0.2 * token id plus the mean encoder vector; attention weights filled with 11 and 12."""

        def __init__(self, num_layers=None, embedding_dim=4, num_heads=None, fully_connected_dim=None,
                     target_vocab_size=None, maximum_position_encoding=None, dropout_rate=0.1, layernorm_eps=1e-6):
            super().__init__()

        def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
            _CALLS.append({"called": "Decoder", "look_ahead_mask": look_ahead_mask, "padding_mask": padding_mask})
            batch, target, source = tf.shape(x)[0], tf.shape(x)[1], tf.shape(enc_output)[1]
            output = 0.2 * tf.cast(x, tf.float32)[..., tf.newaxis] + tf.reduce_mean(enc_output, axis=1, keepdims=True)
            return output, {"decoder_layer1_block1_self_att": tf.fill([batch, 1, target, target], 11.0),
                            "decoder_layer1_block2_decenc_att": tf.fill([batch, 1, target, source], 12.0)}

    return {"EncoderLayer": EncoderLayerDouble, "DecoderLayer": DecoderLayerDouble, "Encoder": EncoderDouble,
            "Decoder": DecoderDouble}


def _build_with_doubles(cls, names: list[str], *args, **kwargs):
    doubles = _doubles()
    _CALLS.clear()
    with parts_replaced(cls.__init__, **{name: doubles[name] for name in names}):
        return make_layer(cls, *args, **kwargs)


def _calls(kind: str) -> list[dict]:
    return [call for call in _CALLS if call.get("called") == kind]


def _same_mask(received, expected) -> bool:
    if received is None:
        return expected is None
    received = np.asarray(received, dtype=np.float64)
    return received.shape == np.shape(expected) and np.array_equal(received, expected)


def _expect_mask_passed(received, expected, what: str, others: dict) -> None:
    if _same_mask(received, expected):
        return
    if received is None:
        raise CheckFailed(f"{what} received no mask")
    for name, other in others.items():
        if _same_mask(received, other):
            raise CheckFailed(f"{what} received {name}")
    raise CheckFailed(f"{what} received a mask of shape {np.shape(received)} that is not the one given")


_ENCODER = {"num_layers": 2, **_BLOCK, "input_vocab_size": 10}
_ENCODER_PADDING = np.array([[[1, 1, 1, 0]], [[1, 1, 1, 1]]], dtype=np.float32)


def check_encoder(Encoder) -> None:  # noqa: N803
    """Encoder (2 layers, d 4, vocabulary 10) with test doubles as its EncoderLayers (they add 1)."""
    expected = _EXPECTED_COMPOSITES["encoder"]
    ids = _ids([[3, 7, 1, 0], [2, 5, 9, 4]])
    encoder = _build_with_doubles(Encoder, ["EncoderLayer"], 2, 4, 2, 8, 10, 6, dropout_rate=0.5,
                                  layernorm_eps=1e-6)
    call_layer(encoder, ids, training=False, mask=_tf(_ENCODER_PADDING), hint=POSITION_HINT)
    seed_weights(encoder, "encoder_embedding", _ENCODER, seed=5)
    del _CALLS[:]
    output = call_layer(encoder, ids, training=False, mask=_tf(_ENCODER_PADDING), hint=POSITION_HINT)
    expect_shape(to_array(output, "Encoder output"), (2, 4, 4), "Encoder output")
    calls = _calls("EncoderLayer")
    if [call["index"] for call in calls] != [0, 1]:
        raise CheckFailed(f"the encoder layers were called in the order {[call['index'] for call in calls]}; "
                          "call each of self.enc_layers once, in order, on the previous layer's output")
    for call in calls:
        _expect_mask_passed(call["mask"], _ENCODER_PADDING, f"encoder layer {call['index']}", {})
    expect_deterministic(output, call_layer(encoder, ids, training=False, mask=_tf(_ENCODER_PADDING)),
                         "Encoder output")
    _expect_values(output, expected, ENCODER_MISTAKES, "Encoder output (each test-double layer adds 1)")
    passed("Encoder: scaled embeddings plus positions, then every encoder layer in order with the mask")


_DECODER = {"num_layers": 2, **_BLOCK, "target_vocab_size": 12}
_DECODER_LOOK_AHEAD = np.tril(np.ones((3, 3), dtype=np.float32))[np.newaxis]


def _expect_attention_dict(weights, num_layers: int, name: str) -> None:
    """Keys decoder_layer{i}_block1_self_att / _block2_decenc_att, each holding that layer's weights."""
    if not isinstance(weights, dict):
        raise CheckFailed(f"{name} should return a dict of attention weights, got {type(weights).__name__}")
    keys = []
    for i in range(1, num_layers + 1):
        keys += [f"decoder_layer{i}_block1_self_att", f"decoder_layer{i}_block2_decenc_att"]
    if sorted(weights) != sorted(keys):
        raise CheckFailed(f"{name}'s attention dict has keys {sorted(weights)}, expected {keys} "
                          "(layers numbered from 1)")
    for i in range(1, num_layers + 1):
        for block in (1, 2):
            key = keys[2 * (i - 1) + block - 1]
            value = to_array(weights[key], f"weights[{key!r}]")
            label = float(value.flat[0]) if value.size else -1.0
            if label != 10 * i + block:
                layer, got_block = int(label // 10), int(label % 10)
                raise CheckFailed(f"weights[{key!r}] holds the {'self' if got_block == 1 else 'cross'}-attention "
                                  f"weights of decoder layer {layer}, not those of layer {i}, block {block}")


def check_decoder(Decoder) -> None:  # noqa: N803
    """Decoder (2 layers, d 4, vocabulary 12) with test doubles as its DecoderLayers."""
    expected = _EXPECTED_COMPOSITES["decoder"]
    ids = _ids([[1, 5, 7], [2, 11, 0]])
    enc_output = _tf(_inputs(44, (2, 4, 4)))
    decoder = _build_with_doubles(Decoder, ["DecoderLayer"], 2, 4, 2, 8, 12, 6, dropout_rate=0.5,
                                  layernorm_eps=1e-6)
    kwargs = dict(training=False, look_ahead_mask=_tf(_DECODER_LOOK_AHEAD), padding_mask=_tf(_ENCODER_PADDING),
                  hint=POSITION_HINT)
    call_layer(decoder, ids, enc_output, **kwargs)
    seed_weights(decoder, "decoder_embedding", _DECODER, seed=7)
    del _CALLS[:]
    output, weights = _outputs(call_layer(decoder, ids, enc_output, **kwargs), 2, "Decoder", "a pair (x, weights)")
    expect_shape(to_array(output, "Decoder output"), (2, 3, 4), "Decoder output")
    calls = _calls("DecoderLayer")
    if [call["index"] for call in calls] != [0, 1]:
        raise CheckFailed(f"the decoder layers were called in the order {[call['index'] for call in calls]}; "
                          "call each of self.dec_layers once, in order, on the previous layer's output")
    masks = {"look_ahead_mask": _DECODER_LOOK_AHEAD, "padding_mask": _ENCODER_PADDING}
    for call in calls:
        for name, mask in masks.items():
            _expect_mask_passed(call[name], mask, f"decoder layer {call['index']}'s {name}",
                                {other: value for other, value in masks.items() if other != name})
    _expect_attention_dict(weights, 2, "Decoder")
    expect_deterministic(output, call_layer(decoder, ids, enc_output, **kwargs)[0], "Decoder output")
    _expect_values(output, expected, DECODER_MISTAKES,
                   "Decoder output (each test-double layer adds the mean encoder vector)")
    passed("Decoder: scaled embeddings plus positions, every decoder layer with both masks, the attention dict")


_TRANSFORMER = {"num_layers": 1, **_BLOCK, "input_vocab_size": 10, "target_vocab_size": 7}
# Different padding masks for the encoder and the decoder's cross-attention (in practice both come from
# the input sentence), so that the check sees where each one goes.
_DEC_PADDING = np.array([[[1, 1, 0, 0]], [[1, 1, 1, 1]]], dtype=np.float32)


def check_transformer(Transformer) -> None:  # noqa: N803
    """Transformer (vocabularies 10 and 7) with test doubles as Encoder and Decoder: masks, logits, dict."""
    expected = _EXPECTED_COMPOSITES["transformer"]
    inputs, targets = _ids([[3, 7, 1, 0], [2, 5, 9, 4]]), _ids([[1, 5, 6], [2, 4, 0]])
    model = _build_with_doubles(Transformer, ["Encoder", "Decoder"], 1, 4, 2, 8, 10, 7, 6, 5, dropout_rate=0.5,
                                layernorm_eps=1e-6)
    masks = {"enc_padding_mask": _ENCODER_PADDING, "look_ahead_mask": _DECODER_LOOK_AHEAD,
             "dec_padding_mask": _DEC_PADDING}
    kwargs = dict(training=False, **{name: _tf(mask) for name, mask in masks.items()})
    call_layer(model, inputs, targets, **kwargs)
    seed_weights(model, "final_layer", _TRANSFORMER, seed=8)
    del _CALLS[:]
    logits, weights = _outputs(call_layer(model, inputs, targets, **kwargs), 2, "Transformer",
                               "a pair (logits, attention_weights)")
    logits = to_array(logits, "Transformer logits")
    if logits.shape == (2, 3, 4):
        raise CheckFailed("Transformer output has shape (2, 3, 4), the decoder's: apply self.final_layer to get "
                          "one logit per target-vocabulary word, (2, 3, 7)")
    expect_shape(logits, (2, 3, 7), "Transformer logits")
    encoder_calls, decoder_calls = _calls("Encoder"), _calls("Decoder")
    if len(encoder_calls) != 1 or len(decoder_calls) != 1:
        raise CheckFailed(f"the encoder was called {len(encoder_calls)} times and the decoder "
                          f"{len(decoder_calls)} times; call each once")
    others = {name: value for name, value in masks.items()}
    _expect_mask_passed(encoder_calls[0]["mask"], _ENCODER_PADDING, "the encoder's mask", others)
    _expect_mask_passed(decoder_calls[0]["look_ahead_mask"], _DECODER_LOOK_AHEAD, "the decoder's look_ahead_mask",
                        others)
    _expect_mask_passed(decoder_calls[0]["padding_mask"], _DEC_PADDING, "the decoder's padding_mask", others)
    _expect_attention_dict(weights, 1, "Transformer")
    expected_logits = np.asarray(expected["output"])
    probabilities = np.exp(expected_logits) / np.exp(expected_logits).sum(axis=-1, keepdims=True)
    expect_close(logits, expected_logits, "Transformer logits", atol=1e-4, rtol=1e-4,
                 mistakes=[(probabilities, TRANSFORMER_MISTAKES["softmax"])],
                 hint="the decoder's output goes through self.final_layer, and the decoder gets the encoder's output")
    passed("Transformer: encoder, decoder with the right masks, final Dense layer giving logits (2, 3, 7)")


# >>> expected composite values (generated once with autograde.reference.transformer.layers; do not edit by hand)
_EXPECTED_COMPOSITES = {'encoder': {'output': [[[1.041735, 4.600019, 2.202882, 1.267865],
                         [1.860724, 2.367147, 0.720581, 3.02064],
                         [4.045344, 1.69356, 1.467351, 2.21502],
                         [1.339189, -0.314351, 1.781634, 3.419995]],
                        [[2.748746, 4.634783, 2.272769, 1.766671],
                         [2.128158, 3.093681, 1.946914, 2.410519],
                         [1.817969, 0.228644, 2.244784, 1.89045],
                         [2.057424, -0.153219, 1.400707, 2.511544]]],
             'not_scaled': [[[1.520867, 3.80001, 2.101441, 2.133933],
                             [2.351097, 2.453725, 1.36529, 3.010295],
                             [3.477321, 1.638706, 1.743675, 2.60741],
                             [1.740154, 0.347828, 1.905815, 3.209773]],
                            [[2.374373, 3.817392, 2.136384, 2.383336],
                             [2.484814, 2.816992, 1.978457, 2.705234],
                             [2.363633, 0.906249, 2.132392, 2.445125],
                             [2.099272, 0.428394, 1.715351, 2.755547]]],
             'scaled_by_d': [[[0.08347, 6.200038, 2.405765, -0.46427],
                              [0.879976, 2.193992, -0.568838, 3.041331],
                              [5.18139, 1.803266, 0.914704, 1.430239],
                              [0.537257, -1.63871, 1.533272, 3.840441]],
                             [[3.497492, 6.269566, 2.545538, 0.533343],
                              [1.414844, 3.647059, 1.883828, 1.821087],
                              [0.72664, -1.126564, 2.46957, 0.7811],
                              [1.973728, -1.316445, 0.771419, 2.023538]]],
             'divided_by_sqrt_d': [[[1.760434, 3.400005, 2.050721, 2.566966],
                                    [2.596284, 2.497013, 1.687645, 3.005123],
                                    [3.193309, 1.61128, 1.881837, 2.803605],
                                    [1.940637, 0.678918, 1.967905, 3.104661]],
                                   [[2.187186, 3.408696, 2.068192, 2.691668],
                                    [2.663143, 2.678647, 1.994228, 2.852592],
                                    [2.636465, 1.245051, 2.076195, 2.722463],
                                    [2.120196, 0.719201, 1.872673, 2.877549]]],
             'no_positional_encoding': [[[1.041735, 3.600019, 2.202882, 0.267865],
                                         [1.019253, 1.826845, 0.710581, 2.02069],
                                         [3.136047, 2.109706, 1.447353, 1.21522],
                                         [1.198069, 0.675641, 1.751638, 2.420445]],
                                        [[2.748746, 3.634783, 2.272769, 0.766671],
                                         [1.286687, 2.553378, 1.936914, 1.410569],
                                         [0.908671, 0.644791, 2.224786, 0.89065],
                                         [1.916304, 0.836774, 1.370712, 1.511994]]],
             'scaled_after_adding': [[[1.041735, 5.600019, 2.202882, 2.267865],
                                      [2.702195, 2.907449, 0.730581, 4.02059],
                                      [4.954641, 1.277413, 1.48735, 3.21482],
                                      [1.480309, -1.304344, 1.811629, 4.419545]],
                                     [[2.748746, 5.634783, 2.272769, 2.766671],
                                      [2.969629, 3.633983, 1.956914, 3.410469],
                                      [2.727266, -0.187502, 2.264783, 2.89025],
                                      [2.198544, -1.143211, 1.430703, 3.511094]]]},
 'decoder': {'output': [[[0.49587, 0.226867, 0.802142, 2.593397],
                         [-0.049723, 0.523725, -0.515448, 1.524396],
                         [1.811337, -0.084324, -0.768138, 0.775228]],
                        [[-0.649643, 0.412934, -0.151207, 2.001706],
                         [2.042858, -0.973434, 0.228333, 1.764123],
                         [0.753091, -0.083993, -0.895189, 0.754027]]],
             'not_scaled': [[[0.723205, 0.72269, 0.772071, 1.923289],
                             [0.871144, 0.64127, 0.118275, 1.388764],
                             [1.835588, -0.140979, -0.00307, 1.014105]],
                            [[-0.40354, 0.723171, -0.396128, 1.823262],
                             [1.363446, -0.199861, -0.201358, 1.704446],
                             [0.752476, -0.233365, -0.75812, 1.199323]]],
             'scaled_by_d': [[[0.041199, -0.764779, 0.862286, 3.933612],
                              [-1.891458, 0.288634, -1.782894, 1.79566],
                              [1.762836, 0.028985, -2.298274, 0.297475]],
                             [[-1.14185, -0.207541, 0.338635, 2.358593],
                              [3.401681, -2.520578, 1.087716, 1.883477],
                              [0.754321, 0.214753, -1.169326, -0.136565]]],
             'divided_by_sqrt_d': [[[0.836873, 0.970602, 0.757035, 1.588236],
                                    [1.331578, 0.700043, 0.435137, 1.320948],
                                    [1.847713, -0.169306, 0.379463, 1.133543]],
                                   [[-0.280488, 0.87829, -0.518589, 1.734041],
                                    [1.02374, 0.186925, -0.416204, 1.674607],
                                    [0.752168, -0.308052, -0.689585, 1.421971]]],
             'no_positional_encoding': [[[0.49587, -0.773133, 0.802142, 1.593397],
                                         [-0.891194, -0.016577, -0.525448, 0.524446],
                                         [0.90204, 0.331823, -0.788137, -0.224572]],
                                        [[-0.649643, -0.587066, -0.151207, 1.001706],
                                         [1.201387, -1.513736, 0.218333, 0.764173],
                                         [-0.156207, 0.332154, -0.915187, -0.245773]]],
             'scaled_after_adding': [[[0.49587, 1.226867, 0.802142, 3.593397],
                                      [0.791748, 1.064027, -0.505448, 2.524346],
                                      [2.720635, -0.500471, -0.74814, 1.775028]],
                                     [[-0.649643, 1.412934, -0.151207, 3.001706],
                                      [2.884329, -0.433131, 0.238333, 2.764073],
                                      [1.662388, -0.500139, -0.87519, 1.753827]]]},
 'transformer': {'output': [[[-0.73068, -0.756713, 0.444308, 0.849642, -1.747198, 0.324603,
                              0.894145],
                             [-1.47477, -1.602049, 0.653488, 1.892066, -3.812551, 0.453032,
                              1.571883],
                             [-1.660793, -1.813383, 0.705783, 2.152671, -4.328889, 0.485139,
                              1.741317]],
                            [[-1.065103, -1.668307, 0.958305, 1.958956, -3.25719, 0.357527,
                              1.741387],
                             [-1.437148, -2.090975, 1.062895, 2.480168, -4.289866, 0.421742,
                              2.080255],
                             [-0.693057, -1.245639, 0.853715, 1.437745, -2.224514, 0.293313,
                              1.402518]]]}}
# <<< expected composite values
