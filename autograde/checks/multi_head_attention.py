"""Hidden checks of assignment 03: split_heads, merge_heads, the from-scratch layer's call and the
weight copy, against the reference on seeded random inputs of several shapes.

`call` is graded with the notebook's split_heads and merge_heads pointed at reference versions, and
the weight copy is graded by copying into the reference layer, so each mistake costs points once. The
learner's code runs in the student's kernel (autograde/remote.py): the Keras layer it copies from and the
layer it copies into are made there, and every expected value comes from the NumPy reference with the
weights chosen here, never from values read back from the kernel.
Each `grade_<name>` raises `CheckFailed` with a diagnosis or prints one success line (stdout only).
"""

from __future__ import annotations

import keras
import numpy as np

from autograde.checks import rng as draw
from autograde.mistakes import multi_head_attention as mistakes
from autograde.mistakes import results
from autograde.reference import multi_head_attention as ref
from autograde.reference.multi_head_attention import keras_layers
from autograde.reference.scaled_dot_product_attention import look_ahead_mask
from autograde.remote import library, part, run_there, with_parts
from course_lib.checking import CheckFailed, call_learner, expect_close, passed, quiet, quietly, to_tensor
from course_lib.multi_head_attention import (
    TRACED,
    call_traced,
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


# The shape of the traced calls: (batch, seq, d_model, heads), batch and seq unknown to the tf.function.
TRACED_SHAPE = (3, 5, 8, 2)


def grade_split_heads(split_heads) -> None:
    rng = draw(31)
    for batch, seq, d_model, heads in HEAD_SHAPES:
        x = _float32(rng.standard_normal((batch, seq, d_model)))
        expect_heads(quietly(split_heads, to_tensor(x), heads), ref.split_heads(x, heads),
                     f"split_heads for x of shape {x.shape} and {heads} heads",
                     mistakes=results(mistakes.SPLIT_HEADS, x, heads),
                     shape_hints=split_shape_hints(batch, seq, heads, d_model // heads))
    batch, seq, d_model, heads = TRACED_SHAPE
    x = _float32(rng.standard_normal((batch, seq, d_model)))
    expect_heads(run_there(split_heads, call_traced, split_heads, to_tensor(x), heads, unknown=(0, 1)),
                 ref.split_heads(x, heads), f"split_heads for x of shape {x.shape} and {heads} heads, {TRACED}")
    passed(f"split_heads matches the reference for {len(HEAD_SHAPES)} shapes, and in a tf.function whose batch and "
           "sequence sizes are unknown")


SIZES_BEFORE_TRANSPOSE = (
    "the heads are still the second axis: transpose with perm (0, 2, 1, 3) to (batch, seq, heads, depth) "
    "first, then reshape to (batch, seq, heads*depth)"
)


def grade_merge_heads(merge_heads) -> None:
    rng = draw(32)
    for batch, seq, d_model, heads in HEAD_SHAPES:
        depth = d_model // heads
        x = _float32(rng.standard_normal((batch, heads, seq, depth)))
        hints = [*merge_shape_hints(batch, heads, seq, depth), ((batch, heads, seq * depth), SIZES_BEFORE_TRANSPOSE)]
        expect_heads(quietly(merge_heads, to_tensor(x)), ref.merge_heads(x), f"merge_heads for x of shape {x.shape}",
                     mistakes=results(mistakes.MERGE_HEADS, x), shape_hints=hints)
        original = _float32(rng.standard_normal((batch, seq, d_model)))
        expect_heads(quietly(merge_heads, to_tensor(ref.split_heads(original, heads))), original,
                     f"merge_heads(split_heads(x)) for x of shape {original.shape} (should give back x)",
                     shape_hints=merge_shape_hints(batch, heads, seq, depth))
    batch, seq, d_model, heads = TRACED_SHAPE
    x = _float32(rng.standard_normal((batch, heads, seq, d_model // heads)))
    expect_heads(run_there(merge_heads, call_traced, merge_heads, to_tensor(x), unknown=(0, 2)), ref.merge_heads(x),
                 f"merge_heads for x of shape {x.shape}, {TRACED}")
    passed(f"merge_heads matches the reference and undoes split_heads for {len(HEAD_SHAPES)} shapes, and runs in a "
           "tf.function whose batch and sequence sizes are unknown")


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


# The notebook's names that `call` uses, pointed at the reference while it is graded.
REFERENCE_PARTS = {"split_heads": keras_layers.split_heads, "merge_heads": keras_layers.merge_heads}


def grade_multi_head_attention_call(layer_class) -> None:
    """The layer's call on seeded inputs and weights; split_heads and merge_heads are the reference's."""
    # The parts are swapped where `call` finds them: in a notebook, call's globals (the class's own
    # __init__ may come from elsewhere, a subclass of the reference, say).
    call = getattr(layer_class, "call", None)
    rng = draw(33)
    with quiet(), with_parts(layer_class if call is None else call, **REFERENCE_PARTS):
        for case in CALL_CASES:
            _grade_call_case(layer_class, rng, *case)
    passed(f"call matches the reference in {len(CALL_CASES)} cases (self- and cross-attention, 1 to 4 heads, "
           "no mask, padding, look-ahead and both)")


def _grade_call_case(layer_class, rng, batch, n_q, n_k, d_model, heads, kind) -> None:
    description = f"batch {batch}, {n_q} queries, {n_k} keys, d_model {d_model}, {heads} heads, mask: {kind}"
    weights = _float32_weights(ref.random_weights(rng, d_model, d_model))
    k = _float32(rng.standard_normal((batch, n_k, d_model)))
    q = k if n_q == n_k else _float32(rng.standard_normal((batch, n_q, d_model)))
    v = k
    mask = _mask(rng, kind, batch, n_q, n_k)
    inputs = (q, k, v, weights, heads, mask)
    try:
        layer = call_learner(layer_class, d_model, heads)
        set_projection_weights(layer, weights)
        result = _call_layer(layer, [to_tensor(a) for a in (q, k, v)] + ([] if mask is None else [to_tensor(mask)]),
                             mask)
        weight_mistakes = results(mistakes.CALL_WEIGHTS, *inputs)
        try:
            output, attention = inspect_multi_head_result(
                result, batch=batch, heads=heads, n_q=n_q, n_k=n_k, d_model=d_model, mask=mask,
                unmasked_weights=ref.multi_head_attention(q, k, v, weights, heads)[1],
                mask_mistakes=weight_mistakes)
        except CheckFailed:
            if isinstance(result, (tuple, list)) and len(result) == 2:
                _expect_mask_not_inverted(result[1], mask)
            raise
        expected_output, expected_weights = ref.multi_head_attention(*inputs)
        expect_multi_head_values(output, attention, expected_output, expected_weights,
                                 weight_mistakes=weight_mistakes,
                                 output_mistakes=results(mistakes.CALL_OUTPUT, *inputs), atol=2e-5)
    except CheckFailed as failure:
        raise CheckFailed(f"[{description}] {failure}") from None


MASK_INVERTED = (
    "the mask looks inverted: the blocked positions (mask 0) get all the weight and the others none; give "
    "scaled_dot_product_attention the mask as it is (1 = attend, 0 = blocked), with a head axis"
)


def _expect_mask_not_inverted(weights, mask) -> None:
    """Called once the weights failed their structural check: name an inverted mask when, in every row that
    mixes allowed and blocked keys, the allowed keys get no weight (such rows always exist here)."""
    if mask is None:
        return
    weights = np.asarray(getattr(weights, "numpy", lambda: weights)(), dtype=np.float64)
    if weights.ndim != 4:
        return
    try:
        allowed = np.broadcast_to(np.asarray(mask)[..., np.newaxis, :, :] > 0, weights.shape)
    except ValueError:  # the weights have another shape: the structural message says so
        return
    mixed = allowed.any(axis=-1) & ~allowed.all(axis=-1)
    if mixed.any() and np.all(np.where(allowed, weights, 0.0).sum(axis=-1)[mixed] < 1e-6):
        raise CheckFailed(MASK_INVERTED)


def _float32_weights(weights) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The weights as the layers hold them (float32), so that the reference computes with the same numbers."""
    return {name: tuple(_float32(a) for a in pair) for name, pair in weights.items()}


def _call_layer(layer, args, mask):
    try:
        return call_learner(layer, *args)
    except CheckFailed as failure:
        message = str(failure)
        if mask is not None and ("ncompatible" in message or "broadcast" in message.lower()):
            raise CheckFailed(f"{message}\nHint: {mistakes.MASK_WITHOUT_HEAD_AXIS}") from None
        raise


COPY_CASES = [(4, 1), (8, 2), (12, 3), (32, 4)]  # (d_model, heads)


def _keras_blocks(weights, heads: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Dense-layout weights in keras.layers.MultiHeadAttention's layout (the head axis kept): what
    `ref.set_keras_weights` puts in the Keras layer, computed here rather than read back from the kernel."""
    blocks = {}
    for name in ("wq", "wk", "wv"):
        kernel, bias = weights[name]
        blocks[name] = (kernel.reshape(kernel.shape[0], heads, -1), bias.reshape(heads, -1))
    kernel, bias = weights["wo"]
    blocks["wo"] = (kernel.reshape(heads, -1, kernel.shape[-1]), bias)
    return blocks


def grade_copy_keras_weights(copy_keras_weights) -> None:
    """Copy random Keras weights into the reference layer; its weights, then its outputs, must match Keras's."""
    # Both layers are made where the learner's code runs; the grader keeps the weights it gave them.
    keras_attention = library(copy_keras_weights, keras.layers.MultiHeadAttention)
    reference_layer = part(copy_keras_weights, keras_layers.ScratchMultiHeadAttention)
    rng = draw(34)
    for d_model, heads in COPY_CASES:
        description = f"d_model {d_model}, {heads} heads"
        keras_layer = keras_attention(num_heads=heads, key_dim=d_model // heads)
        layer = reference_layer(d_model, heads)
        x = to_tensor(rng.standard_normal((2, 5, d_model)))
        keras_layer(x, x)
        layer(x, x, x)
        copied = _float32_weights(ref.random_weights(rng, d_model, d_model))
        before = _float32_weights(ref.random_weights(rng, d_model, d_model))  # something else to overwrite
        ref.set_keras_weights(keras_layer, copied, heads)
        ref.set_layer_weights(layer, before)
        try:
            quietly(copy_keras_weights, keras_layer, layer)
            expect_copied_weights(layer, copied, before, _keras_blocks(copied, heads))
            _expect_same_outputs(layer, copied, heads, rng, d_model)
        except CheckFailed as failure:
            raise CheckFailed(f"[{description}] {failure}") from None
    passed(f"copy_keras_weights: the copied layer computes what keras.layers.MultiHeadAttention computes "
           f"({len(COPY_CASES)} sizes, masks none, padding, look-ahead and both)")


def _expect_same_outputs(layer, copied, heads: int, rng, d_model: int) -> None:
    """The copied layer against the NumPy reference with the Keras layer's weights (which equals Keras's
    layer: tests/test_03_multi_head_attention.py)."""
    batch, n = 3, 6
    x = _float32(rng.standard_normal((batch, n, d_model)))
    for kind in ("none", "padding", "look-ahead", "both"):
        mask = _mask(rng, kind, batch, n, n)
        expected, expected_weights = ref.multi_head_attention(x, x, x, copied, heads, mask)
        inputs = [to_tensor(x)] * 3 + ([] if mask is None else [to_tensor(mask)])
        output, weights = quietly(layer, *inputs)
        expect_close(weights, expected_weights, f"attention weights after the copy (mask: {kind})", atol=1e-5,
                     hint="the copied layer's attention differs from Keras's: check how wq and wk are copied")
        expect_close(output, expected, f"output after the copy (mask: {kind})", atol=1e-5,
                     hint="the copied layer's output differs from Keras's")
