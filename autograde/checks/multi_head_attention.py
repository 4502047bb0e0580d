"""Hidden checks of assignment 03: split_heads, merge_heads, the from-scratch layer's call and the
weight copy, against the reference on seeded random inputs of several shapes.

`call` is graded with the notebook's split_heads and merge_heads pointed at reference versions, and
the weight copy is graded by copying into the reference layer, so each mistake costs points once.
Each `grade_<name>` raises `CheckFailed` with a diagnosis or prints one success line (stdout only).
"""

from __future__ import annotations

import numpy as np

from autograde.reference import multi_head_attention as ref
from autograde.reference.scaled_dot_product_attention import look_ahead_mask
from course_lib.checking import CheckFailed, call_learner, expect_close, parts_replaced, passed, quiet
from course_lib.multi_head_attention import (
    DEPTH_FIRST_SPLIT,
    MASK_WITHOUT_HEAD_AXIS,
    NO_OUTPUT_PROJECTION,
    NO_TRANSPOSE_MERGE,
    NO_TRANSPOSE_SPLIT,
    SCALED_BY_D_MODEL,
    expect_copied_weights,
    expect_heads,
    expect_multi_head_values,
    inspect_multi_head_result,
    merge_shape_hints,
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


def _tf(array, dtype="float32"):
    import tensorflow as tf

    return tf.constant(np.asarray(array).astype(dtype))


def _quietly(fn, *args):
    with quiet():
        return call_learner(fn, *args)


def grade_split_heads(split_heads) -> None:
    rng = np.random.default_rng(31)
    for batch, seq, d_model, heads in HEAD_SHAPES:
        x = rng.standard_normal((batch, seq, d_model)).astype(np.float32).astype(np.float64)
        depth = d_model // heads
        mistakes = [(x.reshape(batch, heads, seq, depth), NO_TRANSPOSE_SPLIT),
                    (x.reshape(batch, seq, depth, heads).transpose(0, 3, 1, 2), DEPTH_FIRST_SPLIT)]
        expect_heads(_quietly(split_heads, _tf(x), heads), ref.split_heads(x, heads),
                     f"split_heads for x of shape {x.shape} and {heads} heads",
                     mistakes=mistakes if heads > 1 and seq > 1 else [],
                     shape_hints=split_shape_hints(batch, seq, heads, depth))
    passed(f"split_heads matches the reference for {len(HEAD_SHAPES)} shapes")


def grade_merge_heads(merge_heads) -> None:
    rng = np.random.default_rng(32)
    for batch, seq, d_model, heads in HEAD_SHAPES:
        depth = d_model // heads
        x = rng.standard_normal((batch, heads, seq, depth)).astype(np.float32).astype(np.float64)
        mistakes = [(x.reshape(batch, seq, d_model), NO_TRANSPOSE_MERGE)] if heads > 1 and seq > 1 else []
        expect_heads(_quietly(merge_heads, _tf(x)), ref.merge_heads(x),
                     f"merge_heads for x of shape {x.shape}", mistakes=mistakes,
                     shape_hints=merge_shape_hints(batch, heads, seq, depth))
        original = rng.standard_normal((batch, seq, d_model)).astype(np.float32).astype(np.float64)
        expect_heads(_quietly(merge_heads, _tf(ref.split_heads(original, heads))), original,
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


def _call_mistakes(q, k, v, weights, heads, mask, scores_shape):
    def weights_of(**options):
        return ref.multi_head_attention(q, k, v, weights, heads, mask, **options)[1]

    d_model = weights["wq"][0].shape[1]
    weight_mistakes = []
    if heads > 1:
        weight_mistakes.append((weights_of(scale_depth=d_model), SCALED_BY_D_MODEL))
    if mask is not None:
        if mask.ndim == 3 and mask.shape[0] > 1:
            try:
                if np.broadcast_shapes(mask.shape, scores_shape) == scores_shape:
                    weight_mistakes.append((weights_of(mask_transform=lambda m: m), MASK_WITHOUT_HEAD_AXIS))
            except ValueError:
                pass
    swapped = dict(weights, wq=weights["wk"], wk=weights["wq"])
    weight_mistakes.append((ref.multi_head_attention(q, k, v, swapped, heads, mask)[1],
                            "the queries go through wk and the keys through wq: project q with self.wq, "
                            "k with self.wk"))
    concatenated = ref.multi_head_attention(q, k, v, weights, heads, mask, output_projection=False)[0]
    output_mistakes = [(concatenated, NO_OUTPUT_PROJECTION)]
    return weight_mistakes, output_mistakes


def grade_multi_head_attention_call(layer_class) -> None:
    """The layer's call on seeded inputs and weights; split_heads and merge_heads are the reference's."""
    call = getattr(layer_class, "call", None)
    rng = np.random.default_rng(33)
    for batch, n_q, n_k, d_model, heads, kind in CALL_CASES:
        description = (f"batch {batch}, {n_q} queries, {n_k} keys, d_model {d_model}, {heads} heads, "
                       f"mask: {kind}")
        weights = ref.random_weights(rng, d_model, d_model)
        weights = {name: tuple(a.astype(np.float32).astype(np.float64) for a in pair)
                   for name, pair in weights.items()}
        k = rng.standard_normal((batch, n_k, d_model)).astype(np.float32).astype(np.float64)
        q = k if n_q == n_k else rng.standard_normal((batch, n_q, d_model)).astype(np.float32).astype(np.float64)
        v = k
        mask = _mask(rng, kind, batch, n_q, n_k)
        try:
            with quiet(), parts_replaced(call, split_heads=ref.tf_split_heads, merge_heads=ref.tf_merge_heads):
                layer = call_learner(layer_class, d_model, heads)
                _set_weights(layer, weights)
                args = [_tf(q), _tf(k), _tf(v)] + ([] if mask is None else [_tf(mask)])
                result = _call_layer(layer, args, mask)
            weight_mistakes, output_mistakes = _call_mistakes(q, k, v, weights, heads, mask,
                                                              (batch, heads, n_q, n_k))
            output, attention = inspect_multi_head_result(
                result, batch=batch, heads=heads, n_q=n_q, n_k=n_k, d_model=d_model, mask=mask,
                unmasked_weights=ref.multi_head_attention(q, k, v, weights, heads)[1],
                mask_mistakes=weight_mistakes)
            expected_output, expected_weights = ref.multi_head_attention(q, k, v, weights, heads, mask)
            expect_multi_head_values(output, attention, expected_output, expected_weights,
                                     weight_mistakes=weight_mistakes, output_mistakes=output_mistakes,
                                     atol=2e-5)
        except CheckFailed as failure:
            raise CheckFailed(f"[{description}] {failure}") from None
    passed(f"call matches the reference in {len(CALL_CASES)} cases (self- and cross-attention, 1 to 4 heads, "
           "no mask, padding, look-ahead and both)")


def _set_weights(layer, weights) -> None:
    for name in ref.PROJECTIONS:
        dense = getattr(layer, name, None)
        if dense is None:
            raise CheckFailed(f"the layer has no attribute {name}: keep the Dense layers of the given __init__")
        kernel, bias = weights[name]
        try:
            if not dense.built:
                dense.build((None, kernel.shape[0]))
            dense.set_weights([kernel.astype(np.float32), bias.astype(np.float32)])
        except Exception as error:  # a changed __init__: say so rather than crash
            raise CheckFailed(f"could not set the weights of {name} ({type(error).__name__}: {error}); keep "
                              "the given __init__ (wq, wk, wv, wo are Dense(d_model))") from None


def _call_layer(layer, args, mask):
    try:
        return call_learner(layer, *args)
    except CheckFailed as failure:
        message = str(failure)
        if mask is not None and ("ncompatible" in message or "broadcast" in message.lower()):
            raise CheckFailed(f"{message}\nHint: {MASK_WITHOUT_HEAD_AXIS}") from None
        raise


COPY_CASES = [(4, 1), (8, 2), (12, 3), (32, 4)]  # (d_model, heads)


def grade_copy_keras_weights(copy_keras_weights) -> None:
    """Copy random Keras weights into the reference layer; its weights, then its outputs, must match Keras's."""
    import keras

    rng = np.random.default_rng(34)
    for d_model, heads in COPY_CASES:
        depth = d_model // heads
        description = f"d_model {d_model}, {heads} heads"
        keras_layer = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=depth)
        layer = ref.reference_layer(d_model, heads)
        x = rng.standard_normal((2, 5, d_model)).astype(np.float32)
        keras_layer(_tf(x), _tf(x))
        layer(_tf(x), _tf(x), _tf(x))
        ref.set_keras_weights(keras_layer, ref.random_weights(rng, d_model, d_model), heads)
        ref.set_layer_weights(layer, ref.random_weights(rng, d_model, d_model))  # something else to overwrite
        keras_blocks = {"wq": keras_layer.query_dense.get_weights(), "wk": keras_layer.key_dense.get_weights(),
                        "wv": keras_layer.value_dense.get_weights(), "wo": keras_layer.output_dense.get_weights()}
        before = ref.layer_weights(layer)
        try:
            with quiet():
                call_learner(copy_keras_weights, keras_layer, layer)
            expect_copied_weights(layer, ref.keras_weights(keras_layer), before, keras_blocks)
            _expect_same_outputs(keras_layer, layer, rng, d_model)
        except CheckFailed as failure:
            raise CheckFailed(f"[{description}] {failure}") from None
    passed(f"copy_keras_weights: the copied layer computes what keras.layers.MultiHeadAttention computes "
           f"({len(COPY_CASES)} sizes, masks none, padding, look-ahead and both)")


def _expect_same_outputs(keras_layer, layer, rng, d_model: int) -> None:
    batch, n = 3, 6
    x = _tf(rng.standard_normal((batch, n, d_model)))
    for kind in ("none", "padding", "look-ahead", "both"):
        mask = _mask(rng, kind, batch, n, n)
        if mask is None:
            expected, expected_weights = keras_layer(x, x, x, return_attention_scores=True)
            output, weights = layer(x, x, x)
        else:
            expected, expected_weights = keras_layer(x, x, x, attention_mask=_tf(mask), return_attention_scores=True)
            output, weights = layer(x, x, x, _tf(mask))
        expect_close(weights, expected_weights, f"attention weights after the copy (mask: {kind})", atol=1e-5,
                     hint="the copied layer's attention differs from Keras's: check how wq and wk are copied")
        expect_close(output, expected, f"output after the copy (mask: {kind})", atol=1e-5,
                     hint="the copied layer's output differs from Keras's")
