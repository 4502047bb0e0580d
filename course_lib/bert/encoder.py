"""Assignment 05, "your encoder, BERT's weights": the visible checks of BertEmbedding and BertEncoder, and the
helpers that build a learner's layers without tracing them (shared with the weight loader's checks).

The checks set every weight from a seeded NumPy generator and compare with values generated from the
reference (`course_lib/expected/05_bert.json`, written by `python -m autograde.expected`). BertEncoder is
checked with a test double in place of its BertEmbedding, so a mistake in one exercise never fails the
check of the other.
"""

from __future__ import annotations

import numpy as np

from course_lib.checking import (
    CheckFailed,
    call_layer,
    expect_close,
    expect_deterministic,
    expect_dropout_in_training,
    expect_shape,
    make_layer,
    parts_replaced,
    passed,
    stored_mistakes,
    to_array,
    to_tensor,
)
from course_lib.expected import load as load_expected
from course_lib.keras_weights import bert_variables, seed_variables, set_unit_norm

STEM = "05_bert"
ENCODER_ARGS = ("vocabulary_size", "num_layers", "num_heads", "hidden_dim", "intermediate_dim", "dropout",
                "max_sequence_length", "num_segments")

# ----------------------------------------------------------------------------------------------
# Building a learner's layers without calling them


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


EMBEDDING_HINT = ("If this is an index error: positions are 0, 1, ..., seq_len - 1 (tf.range(seq_len)), not the "
                  "token ids, and segment ids index the segment table")
ENCODER_HINT = ("If this is a shape error: EncoderLayer wants an attention mask broadcastable to (batch, seq, seq); "
                "turn padding_mask (batch, seq) into (batch, 1, seq) with padding_mask[:, tf.newaxis, :]")

# ----------------------------------------------------------------------------------------------
# BertEmbedding

EMBEDDING_CONFIG = {"vocabulary_size": 10, "hidden_dim": 4, "max_sequence_length": 6, "num_segments": 2}
EMBEDDING_INPUTS = {"token_ids": [[2, 5, 3], [4, 1, 0]], "segment_ids": [[0, 0, 1], [0, 1, 1]]}
EMBEDDING_SEED = 51


def make_embedding(BertEmbedding):  # noqa: N803
    """The visible check's BertEmbedding, built, with every weight set from EMBEDDING_SEED; returns (layer, weights)."""
    config = EMBEDDING_CONFIG
    layer = make_layer(BertEmbedding, config["vocabulary_size"], config["hidden_dim"],
                       max_sequence_length=config["max_sequence_length"], num_segments=config["num_segments"],
                       dropout=0.5, layernorm_eps=1e-12)
    prebuild(layer, config)
    return layer, seed_variables(bert_variables(layer, config, part="embedding"), EMBEDDING_SEED)


def check_bert_embedding(BertEmbedding) -> None:  # noqa: N803
    """BertEmbedding (vocabulary 10, hidden 4, 6 positions, 2 segments) on two sentences, seeded weights."""
    expected = load_expected(STEM, "encoder", "embedding")
    layer, _ = make_embedding(BertEmbedding)
    ids, segments = (to_tensor(EMBEDDING_INPUTS[k], "int32") for k in ("token_ids", "segment_ids"))
    output, again, training = (call_layer(layer, ids, segments, training=training, hint=EMBEDDING_HINT)
                               for training in (False, False, True))
    name = "BertEmbedding output"
    expect_shape(to_array(output, name), (2, 3, 4), name)
    expect_deterministic(output, again, name)
    expect_close(output, expected["output"], name, atol=1e-5, rtol=1e-5,
                 mistakes=stored_mistakes(expected["mistakes"]))
    expect_dropout_in_training(output, training, name)
    set_unit_norm(layer.layer_norm)
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
ENCODER_SEED = 52
_DOUBLE_CALLS: list[dict] = []

# The double's output: 0.1 * token id * TOKEN_PATTERN + segment id * SEGMENT_PATTERN + OFFSET (hidden 4).
TOKEN_PATTERN, SEGMENT_PATTERN, OFFSET = [1.0, -1.0, 0.5, 2.0], [0.3, 0.0, -0.4, 0.1], [0.0, 0.2, 0.0, -0.5]


def embedding_double_output(token_ids, segment_ids) -> np.ndarray:
    """What the BertEmbedding double returns: a fixed pattern of the token and segment ids (hidden 4)."""
    token_ids, segment_ids = np.asarray(token_ids, np.float64), np.asarray(segment_ids, np.float64)
    return (0.1 * token_ids[..., None] * np.array(TOKEN_PATTERN) + segment_ids[..., None] * np.array(SEGMENT_PATTERN)
            + np.array(OFFSET))


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
            return (0.1 * ids * tf.constant(TOKEN_PATTERN) + segments * tf.constant(SEGMENT_PATTERN)
                    + tf.constant(OFFSET))

    return BertEmbeddingDouble


def make_encoder_with_double(BertEncoder):  # noqa: N803
    """The visible check's BertEncoder with the double as its embedding, its layers' weights set from
    ENCODER_SEED; returns (encoder, weights)."""
    config = ENCODER_CONFIG
    _DOUBLE_CALLS.clear()
    with parts_replaced(BertEncoder.__init__, BertEmbedding=_embedding_double()):
        encoder = make_layer(BertEncoder, config["vocabulary_size"], config["num_layers"], config["num_heads"],
                             config["hidden_dim"], config["intermediate_dim"], dropout=0.5,
                             max_sequence_length=config["max_sequence_length"], num_segments=config["num_segments"])
    prebuild(encoder, config)
    return encoder, seed_variables(bert_variables(encoder, config, part="layers"), ENCODER_SEED)


def check_bert_encoder(BertEncoder) -> None:  # noqa: N803
    """BertEncoder (2 layers, hidden 4, 2 heads) on three padded sentences, with a double as its embedding."""
    expected = load_expected(STEM, "encoder", "encoder")
    encoder, _ = make_encoder_with_double(BertEncoder)
    inputs = [to_tensor(ENCODER_INPUTS[k], "int32") for k in ("token_ids", "segment_ids", "padding_mask")]
    output, again, training = (call_layer(encoder, *inputs, training=training, hint=ENCODER_HINT)
                               for training in (False, False, True))
    if not any(call.get("called") for call in _DOUBLE_CALLS):
        raise CheckFailed("BertEncoder never calls self.embedding: start with x = self.embedding(token_ids, "
                          "segment_ids, training=training)")
    name = "BertEncoder output (with a test double as its BertEmbedding)"
    expect_shape(to_array(output, name), (3, 3, 4), name)
    expect_deterministic(output, again, name)
    expect_close(output, expected["output"], name, atol=1e-4, rtol=1e-4,
                 mistakes=stored_mistakes(expected["mistakes"]))
    expect_dropout_in_training(output, training, name)
    passed("BertEncoder: embedding, then every layer in order with the (batch, 1, seq) attention mask")
