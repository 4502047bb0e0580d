"""Hidden checks of assignment 03: split_heads, merge_heads, the from-scratch layer's call and the
weight copy, against the reference on seeded random inputs of several shapes.

`call` is graded with the notebook's split_heads and merge_heads pointed at reference versions, and
the weight copy is graded by copying into the reference layer, so each mistake costs points once.
Each `grade_<name>` raises `CheckFailed` with a diagnosis or prints one success line (stdout only).
"""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.mistakes import multi_head_attention as mistakes
from autograde.mistakes import results
from autograde.reference import multi_head_attention as ref
from autograde.reference.multi_head_attention import keras_layers
from autograde.reference.scaled_dot_product_attention import look_ahead_mask
from course_lib.checking import (
    CheckFailed,
    call_learner,
    expect_close,
    parts_replaced,
    passed,
    quiet,
    quietly,
    to_tensor,
)
from course_lib.multi_head_attention import (
    expect_copied_weights,
    expect_heads,
    expect_multi_head_values,
    inspect_multi_head_result,
    merge_shape_hints,
    set_projection_weights,
    split_shape_hints,
)

# (batch, seq, d_model, heads) for split and merge: seq, heads and depth differ where they can.
HEAD_SHAPES = [(1, 1, 4, 1), (2, 5, 8, 2), (3, 7, 12, 3), (2, 9, 32, 4), (1, 6, 6, 3), (3, 4, 16, 4)]

# (batch, n_q, n_k, d_model, heads, mask): self-attention when n_q == n_k, cross-attention otherwise.
# batch == heads in some masked cases, so that a mask without a head axis broadcasts (wrongly).
CALL_CASES = [
    (1, 1, 1, 4, 1, "none"),
    (2, 5, 5, 8, 2, "none"),
    (2, 6, 6, 8, 2, "padding"),
    (3, 7, 7, 12, 3, "look-ahead"),
    (3, 9, 9, 12, 3, "both"),
    (2, 4, 7, 16, 4, "padding"),
    (1, 9, 3, 32, 4, "padding"),
    (3, 6, 6, 6, 1, "padding"),
    (2, 8, 8, 32, 4, "both"),
]


def _float32(array) -> np.ndarray:
    """Rounded to float32 and back, so that the reference sees exactly what the learner's code sees."""
    return np.asarray(array).astype(np.float32).astype(np.float64)


def grade_split_heads(split_heads) -> None:
    rng = draw(31)
    for batch, seq, d_model, heads in HEAD_SHAPES:
        x = _float32(rng.standard_normal((batch, seq, d_model)))
        expect_heads(quietly(split_heads, to_tensor(x), heads), ref.split_heads(x, heads),
                     f"split_heads for x of shape {x.shape} and {heads} heads",
                     mistakes=results(mistakes.SPLIT_HEADS, x, heads),
                     shape_hints=split_shape_hints(batch, seq, heads, d_model // heads))
    passed(f"split_heads matches the reference for {len(HEAD_SHAPES)} shapes")


def grade_merge_heads(merge_heads) -> None:
    rng = draw(32)
    for batch, seq, d_model, heads in HEAD_SHAPES:
        depth = d_model // heads
        x = _float32(rng.standard_normal((batch, heads, seq, depth)))
        expect_heads(quietly(merge_heads, to_tensor(x)), ref.merge_heads(x), f"merge_heads for x of shape {x.shape}",
                     mistakes=results(mistakes.MERGE_HEADS, x), shape_hints=merge_shape_hints(batch, heads, seq, depth))
        original = _float32(rng.standard_normal((batch, seq, d_model)))
        expect_heads(quietly(merge_heads, to_tensor(ref.split_heads(original, heads))), original,
                     f"merge_heads(split_heads(x)) for x of shape {original.shape} (should give back x)",
                     shape_hints=merge_shape_hints(batch, heads, seq, depth))
    passed(f"merge_heads matches the reference and undoes split_heads for {len(HEAD_SHAPES)} shapes")


def _padding(rng, batch: int, n_k: int) -> np.ndarray:
    """(batch, 1, n_k): sentence 0 unpadded, the others padded at random (at least one real token)."""
    lengths = rng.integers(1, n_k + 1, size=batch)
    lengths[0] = n_k
    if batch > 1:
        lengths[1] = max(1, n_k // 2)
    return (np.arange(n_k)[None, :] < lengths[:, None]).astype(np.float64)[:, None, :]


def _mask(rng, kind: str, batch: int, n_q: int, n_k: int):
    if kind == "none":
        return None
    if kind == "padding":
        return _padding(rng, batch, n_k)
    if kind == "look-ahead":
        return look_ahead_mask(n_q)
    return _padding(rng, batch, n_k) * look_ahead_mask(n_q)  # "both": (batch, n_q, n_k)


def grade_multi_head_attention_call(layer_class) -> None:
    """The layer's call on seeded inputs and weights; split_heads and merge_heads are the reference's."""
    call = getattr(layer_class, "call", None)
    rng = draw(33)
    for batch, n_q, n_k, d_model, heads, kind in CALL_CASES:
        description = (f"batch {batch}, {n_q} queries, {n_k} keys, d_model {d_model}, {heads} heads, "
                       f"mask: {kind}")
        weights = {name: tuple(_float32(a) for a in pair)
                   for name, pair in ref.random_weights(rng, d_model, d_model).items()}
        k = _float32(rng.standard_normal((batch, n_k, d_model)))
        q = k if n_q == n_k else _float32(rng.standard_normal((batch, n_q, d_model)))
        v = k
        mask = _mask(rng, kind, batch, n_q, n_k)
        inputs = (q, k, v, weights, heads, mask)
        try:
            with quiet(), parts_replaced(call, split_heads=keras_layers.split_heads,
                                         merge_heads=keras_layers.merge_heads):
                layer = call_learner(layer_class, d_model, heads)
                set_projection_weights(layer, weights)
                result = _call_layer(layer, [to_tensor(a) for a in (q, k, v)] + ([] if mask is None else
                                                                                 [to_tensor(mask)]), mask)
            weight_mistakes = results(mistakes.CALL_WEIGHTS, *inputs)
            output, attention = inspect_multi_head_result(
                result, batch=batch, heads=heads, n_q=n_q, n_k=n_k, d_model=d_model, mask=mask,
                unmasked_weights=ref.multi_head_attention(q, k, v, weights, heads)[1], mask_mistakes=weight_mistakes)
            expected_output, expected_weights = ref.multi_head_attention(*inputs)
            expect_multi_head_values(output, attention, expected_output, expected_weights,
                                     weight_mistakes=weight_mistakes,
                                     output_mistakes=results(mistakes.CALL_OUTPUT, *inputs), atol=2e-5)
        except CheckFailed as failure:
            raise CheckFailed(f"[{description}] {failure}") from None
    passed(f"call matches the reference in {len(CALL_CASES)} cases (self- and cross-attention, 1 to 4 heads, "
           "no mask, padding, look-ahead and both)")


def _call_layer(layer, args, mask):
    try:
        return call_learner(layer, *args)
    except CheckFailed as failure:
        message = str(failure)
        if mask is not None and ("ncompatible" in message or "broadcast" in message.lower()):
            raise CheckFailed(f"{message}\nHint: {mistakes.MASK_WITHOUT_HEAD_AXIS}") from None
        raise


COPY_CASES = [(4, 1), (8, 2), (12, 3), (32, 4)]  # (d_model, heads)


def grade_copy_keras_weights(copy_keras_weights) -> None:
    """Copy random Keras weights into the reference layer; its weights, then its outputs, must match Keras's."""
    import keras

    rng = draw(34)
    for d_model, heads in COPY_CASES:
        description = f"d_model {d_model}, {heads} heads"
        keras_layer = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=d_model // heads)
        layer = keras_layers.ScratchMultiHeadAttention(d_model, heads)
        x = to_tensor(rng.standard_normal((2, 5, d_model)))
        keras_layer(x, x)
        layer(x, x, x)
        ref.set_keras_weights(keras_layer, ref.random_weights(rng, d_model, d_model), heads)
        ref.set_layer_weights(layer, ref.random_weights(rng, d_model, d_model))  # something else to overwrite
        keras_blocks = ref.keras_blocks(keras_layer)
        before = ref.layer_weights(layer)
        try:
            quietly(copy_keras_weights, keras_layer, layer)
            expect_copied_weights(layer, ref.dense_layout(keras_blocks), before, keras_blocks)
            _expect_same_outputs(keras_layer, layer, rng, d_model)
        except CheckFailed as failure:
            raise CheckFailed(f"[{description}] {failure}") from None
    passed(f"copy_keras_weights: the copied layer computes what keras.layers.MultiHeadAttention computes "
           f"({len(COPY_CASES)} sizes, masks none, padding, look-ahead and both)")


def _expect_same_outputs(keras_layer, layer, rng, d_model: int) -> None:
    batch, n = 3, 6
    x = to_tensor(rng.standard_normal((batch, n, d_model)))
    for kind in ("none", "padding", "look-ahead", "both"):
        mask = to_tensor(_mask(rng, kind, batch, n, n))
        expected, expected_weights = keras_layer(x, x, x, attention_mask=mask, return_attention_scores=True)
        output, weights = layer(x, x, x) if mask is None else layer(x, x, x, mask)
        expect_close(weights, expected_weights, f"attention weights after the copy (mask: {kind})", atol=1e-5,
                     hint="the copied layer's attention differs from Keras's: check how wq and wk are copied")
        expect_close(output, expected, f"output after the copy (mask: {kind})", atol=1e-5,
                     hint="the copied layer's output differs from Keras's")
