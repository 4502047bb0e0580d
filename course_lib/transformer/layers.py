"""Assignment 04 (the Transformer's layers): the given feed-forward block and the visible checks of
EncoderLayer and DecoderLayer.

The checks build the learner's layer on a small fixed configuration, SET every weight from a seeded
NumPy generator (not Keras's random initialisers), and compare the output with values generated from the
reference (`course_lib/expected/04_transformer.json`, key "layers"); they also test properties that hold
whatever the weights: shapes, deterministic inference, attention rows summing to 1, exactly zero weight on
masked positions, and a post-norm output with mean 0 and variance 1 per position.
"""

from __future__ import annotations

import numpy as np

from course_lib.checking import (
    CheckFailed,
    call_layer,
    expect_close,
    expect_deterministic,
    expect_shape,
    make_layer,
    passed,
    stored_mistakes,
    to_array,
    to_tensor,
)
from course_lib.expected import load as load_expected
from course_lib.keras_weights import seed_weights, set_unit_norm

STEM = "04_transformer"

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
# Messages shared with the hidden checks and the named mistakes

TRAINING_ADVICE = "Pass training=training to the MultiHeadAttention and Dropout layers (never training=True)"
QUERY_MASK_NOTE = "(in Keras 3 the fourth positional argument of MultiHeadAttention is query_mask, not attention_mask)"
DECODER_MASK_HINT = (
    "If this is a shape error: look_ahead_mask (1, T, T) belongs to the self-attention mha1 and padding_mask "
    "(batch, 1, S) to the cross-attention mha2, whose query is the decoder's and key and value the encoder's"
)


# ----------------------------------------------------------------------------------------------
# Properties that hold whatever the weights


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


def outputs_of(result, count: int, name: str, what: str):
    """The tuple a layer returns, or a failed check if it is not `count` values."""
    if not isinstance(result, (tuple, list)) or len(result) != count:
        raise CheckFailed(f"{name} should return {what}, got {type(result).__name__}")
    return result


def expect_values(actual, expected: dict, name: str) -> None:
    """`actual` against the generated "output", naming a stored mistake when it matches one."""
    expect_close(actual, expected["output"], name, atol=1e-4, rtol=1e-4,
                 mistakes=stored_mistakes(expected.get("mistakes", {})))


# ----------------------------------------------------------------------------------------------
# The visible checks' fixed layers: the generator of the expected values builds the reference with these too

BLOCK = {"embedding_dim": 4, "num_heads": 2, "fully_connected_dim": 8}
ENCODER_LAYER_MASK = np.array([[[1, 1, 0]], [[1, 1, 1]]], dtype=np.float32)
DECODER_LAYER_PADDING = np.array([[[1, 1, 1, 0]], [[1, 1, 1, 1]]], dtype=np.float32)
DECODER_LAYER_LOOK_AHEAD = np.tril(np.ones((3, 3), dtype=np.float32))[np.newaxis]


def fixed_inputs(seed: int, shape) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def seeded_encoder_layer(EncoderLayer):  # noqa: N803
    """EncoderLayer (d 4, 2 heads, fc 8) called once, weights set from seed 4: (layer, weights, x, mask)."""
    x, mask = to_tensor(fixed_inputs(41, (2, 3, 4))), to_tensor(ENCODER_LAYER_MASK)
    layer = make_layer(EncoderLayer, 4, 2, 8, dropout_rate=0.5, layernorm_eps=1e-6)
    call_layer(layer, x, training=False, mask=mask)
    return layer, seed_weights(layer, "encoder_layer", BLOCK, seed=4), x, mask


def decoder_layer_arguments() -> tuple[list, dict]:
    """The decoder layer's inputs (x, enc_output) and masks, as tensors."""
    inputs = [to_tensor(fixed_inputs(42, (2, 3, 4))), to_tensor(fixed_inputs(43, (2, 4, 4)))]
    return inputs, {"look_ahead_mask": to_tensor(DECODER_LAYER_LOOK_AHEAD),
                    "padding_mask": to_tensor(DECODER_LAYER_PADDING)}


def seeded_decoder_layer(DecoderLayer):  # noqa: N803
    """DecoderLayer (d 4, 2 heads, fc 8) called once, weights set from seed 6: (layer, weights)."""
    inputs, masks = decoder_layer_arguments()
    layer = make_layer(DecoderLayer, 4, 2, 8, dropout_rate=0.5, layernorm_eps=1e-6)
    call_layer(layer, *inputs, training=False, hint=DECODER_MASK_HINT, **masks)
    return layer, seed_weights(layer, "decoder_layer", BLOCK, seed=6)


# ----------------------------------------------------------------------------------------------
# Visible checks


def check_encoder_layer(EncoderLayer) -> None:  # noqa: N803
    """EncoderLayer (d 4, 2 heads, fc 8) on a batch of two with a padding mask, seeded weights."""
    expected = load_expected(STEM, "layers", "encoder_layer")
    layer, _, x, mask = seeded_encoder_layer(EncoderLayer)
    output = call_layer(layer, x, training=False, mask=mask)
    expect_shape(to_array(output, "EncoderLayer output"), (2, 3, 4), "EncoderLayer output")
    expect_deterministic(output, call_layer(layer, x, training=False, mask=mask), "EncoderLayer output",
                         advice=TRAINING_ADVICE)
    expect_values(output, expected, "EncoderLayer output")
    set_unit_norm(layer.layernorm2)
    expect_unit_norm_rows(call_layer(layer, x, training=False, mask=mask), "EncoderLayer output")
    passed("EncoderLayer: self-attention, add & norm, feed-forward, add & norm, with the mask")


def check_decoder_layer(DecoderLayer) -> None:  # noqa: N803
    """DecoderLayer (d 4, 2 heads) with 3 target and 4 source positions, look-ahead and padding masks."""
    expected = load_expected(STEM, "layers", "decoder_layer")
    layer, _ = seeded_decoder_layer(DecoderLayer)
    inputs, masks = decoder_layer_arguments()

    def run():
        what = "a tuple (output, self_attention_weights, cross_attention_weights)"
        return outputs_of(call_layer(layer, *inputs, training=False, hint=DECODER_MASK_HINT, **masks), 3,
                          "DecoderLayer", what)

    output, w1, w2 = run()
    expect_shape(to_array(output, "DecoderLayer output"), (2, 3, 4), "DecoderLayer output")
    expect_deterministic(output, run()[0], "DecoderLayer output", advice=TRAINING_ADVICE)
    w1 = expect_attention_weights(w1, (2, 2, 3, 3), DECODER_LAYER_LOOK_AHEAD > 0,
                                  "self-attention weights (mha1, with look_ahead_mask)")
    w2 = expect_attention_weights(w2, (2, 2, 3, 4), DECODER_LAYER_PADDING[:, None] > 0,
                                  "cross-attention weights (mha2, with padding_mask)")
    expect_values(output, expected, "DecoderLayer output")
    expect_close(w1[1], expected["self_weights_1"], "self-attention weights of sentence 2", atol=1e-4, rtol=1e-4)
    expect_close(w2[0], expected["cross_weights_0"], "cross-attention weights of sentence 1", atol=1e-4, rtol=1e-4)
    set_unit_norm(layer.layernorm3)
    expect_unit_norm_rows(run()[0], "DecoderLayer output")
    passed("DecoderLayer: masked self-attention, cross-attention and feed-forward, each with add & norm")
