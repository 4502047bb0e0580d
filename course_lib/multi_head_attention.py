"""Assignment 03 (masked multi-head attention): the visible checks.

The checks run the learner's functions and layer on small inputs whose answers are written out as
numbers below, look for the usual mistakes, and print a line starting with a check mark when all is
well. The diagnostics (`inspect_multi_head_result`, `expect_multi_head_values`, `expect_copied_weights`)
are shared with the hidden checks in autograde.checks.multi_head_attention.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Sequence

import numpy as np

from course_lib.checking import (
    CheckFailed,
    call_learner,
    expect_close,
    expect_shape,
    expect_tensor,
    matches,
    passed,
    to_array,
)

PROJECTIONS = ("wq", "wk", "wv", "wo")

NO_TRANSPOSE_SPLIT = (
    "the heads are interleaved wrongly: reshaping straight to (batch, heads, seq, depth) mixes positions "
    "into the heads; reshape to (batch, seq, heads, depth) first, then transpose with perm (0, 2, 1, 3)"
)
DEPTH_FIRST_SPLIT = (
    "the features are dealt out to the heads one by one; head h must get the contiguous block of features "
    "h*depth .. (h+1)*depth-1: reshape to (batch, seq, heads, depth), not (batch, seq, depth, heads)"
)
NO_TRANSPOSE_MERGE = (
    "the heads are merged in the wrong order: reshaping (batch, heads, seq, depth) straight to "
    "(batch, seq, heads*depth) mixes positions; transpose with perm (0, 2, 1, 3) first, then reshape"
)
NO_OUTPUT_PROJECTION = (
    "the output projection is missing: after merging the heads, apply self.wo to the (batch, n_q, d_model) "
    "concatenation"
)
SCALED_BY_D_MODEL = (
    "the scores are divided by sqrt(d_model); each head works in depth = d_model / num_heads dimensions, "
    "so divide by sqrt(depth) (scaled_dot_product_attention does it when it gets the split heads)"
)
MASK_WITHOUT_HEAD_AXIS = (
    "the mask is given to the attention without a head axis: a mask (batch, n_q, n_k) or (batch, 1, n_k) "
    "must become (batch, 1, n_q, n_k) (e.g. mask[:, tf.newaxis, :, :]) to broadcast over the heads"
)
MASK_IGNORED = (
    "the mask is ignored: blocked positions (mask 0) get the same weights as without a mask; pass "
    "attention_mask (with a head axis) to scaled_dot_product_attention"
)

# ----------------------------------------------------------------------------------------------
# Fixtures: inputs and answers written out as numbers (d_model 4, 2 heads of depth 2).

_SPLIT_X = np.array(
    [[[ 0.,  1.,  2.,  3.],
      [ 4.,  5.,  6.,  7.],
      [ 8.,  9., 10., 11.]],
     [[12., 13., 14., 15.],
      [16., 17., 18., 19.],
      [20., 21., 22., 23.]]]
)

_SPLIT_EXPECTED = np.array(
    [[[[ 0.,  1.],
       [ 4.,  5.],
       [ 8.,  9.]],
      [[ 2.,  3.],
       [ 6.,  7.],
       [10., 11.]]],
     [[[12., 13.],
       [16., 17.],
       [20., 21.]],
      [[14., 15.],
       [18., 19.],
       [22., 23.]]]]
)

_SPLIT_NO_TRANSPOSE = np.array(
    [[[[ 0.,  1.],
       [ 2.,  3.],
       [ 4.,  5.]],
      [[ 6.,  7.],
       [ 8.,  9.],
       [10., 11.]]],
     [[[12., 13.],
       [14., 15.],
       [16., 17.]],
      [[18., 19.],
       [20., 21.],
       [22., 23.]]]]
)

_SPLIT_DEPTH_FIRST = np.array(
    [[[[ 0.,  2.],
       [ 4.,  6.],
       [ 8., 10.]],
      [[ 1.,  3.],
       [ 5.,  7.],
       [ 9., 11.]]],
     [[[12., 14.],
       [16., 18.],
       [20., 22.]],
      [[13., 15.],
       [17., 19.],
       [21., 23.]]]]
)

_SPLIT3_X = np.array(
    [[[ 0.,  1.,  2.,  3.,  4.,  5.],
      [ 6.,  7.,  8.,  9., 10., 11.]]]
)

_SPLIT3_EXPECTED = np.array(
    [[[[ 0.,  1.],
       [ 6.,  7.]],
      [[ 2.,  3.],
       [ 8.,  9.]],
      [[ 4.,  5.],
       [10., 11.]]]]
)

_MERGE_X = np.array(
    [[[[ 0.,  1.],
       [ 2.,  3.],
       [ 4.,  5.]],
      [[ 6.,  7.],
       [ 8.,  9.],
       [10., 11.]]],
     [[[12., 13.],
       [14., 15.],
       [16., 17.]],
      [[18., 19.],
       [20., 21.],
       [22., 23.]]]]
)

_MERGE_EXPECTED = np.array(
    [[[ 0.,  1.,  6.,  7.],
      [ 2.,  3.,  8.,  9.],
      [ 4.,  5., 10., 11.]],
     [[12., 13., 18., 19.],
      [14., 15., 20., 21.],
      [16., 17., 22., 23.]]]
)

_MERGE_NO_TRANSPOSE = np.array(
    [[[ 0.,  1.,  2.,  3.],
      [ 4.,  5.,  6.,  7.],
      [ 8.,  9., 10., 11.]],
     [[12., 13., 14., 15.],
      [16., 17., 18., 19.],
      [20., 21., 22., 23.]]]
)

_WQ_KERNEL = np.array(
    [[1., 0., 0., 0.],
     [0., 1., 0., 0.],
     [0., 0., 1., 0.],
     [0., 0., 0., 1.]]
)
_WQ_BIAS = np.array(
    [0., 0., 0., 0.]
)

_WK_KERNEL = np.array(
    [[1., 0., 0., 0.],
     [0., 1., 0., 0.],
     [0., 0., 0., 1.],
     [0., 0., 1., 0.]]
)
_WK_BIAS = np.array(
    [0. , 0. , 0.5, 0. ]
)

_WV_KERNEL = np.array(
    [[2., 0., 0., 0.],
     [0., 2., 0., 0.],
     [0., 0., 2., 0.],
     [0., 0., 0., 2.]]
)
_WV_BIAS = np.array(
    [0., 1., 0., 0.]
)

_WO_KERNEL = np.array(
    [[1., 1., 0., 0.],
     [0., 1., 0., 0.],
     [0., 0., 2., 0.],
     [0., 0., 0., 1.]]
)
_WO_BIAS = np.array(
    [ 0.5,  0. ,  0. , -0.5]
)

_X = np.array(
    [[[ 1.,  0.,  1.,  0.],
      [ 0.,  2.,  0.,  1.],
      [ 1.,  1.,  0., -1.]],
     [[ 0.,  1.,  2.,  0.],
      [ 1.,  0.,  0.,  1.],
      [ 2., -1.,  1.,  0.]]]
)

_NO_MASK_OUTPUT = np.array(
    [[[ 2.10444837,  4.19777581,  1.13598164,  0.3718922 ],
      [ 0.96416413,  4.90922327,  2.01395937, -0.5       ],
      [ 1.69777581,  4.60444837,  0.79110326, -0.5       ]],
     [[ 1.6281078 ,  3.        ,  1.96294921,  0.8456836 ],
      [ 3.3718922 ,  3.        ,  5.7437844 , -0.21994151],
      [ 4.23795304,  3.        ,  2.97906094,  0.50697969]]]
)
_NO_MASK_WEIGHTS = np.array(
    [[[[0.40111209, 0.19777581, 0.40111209],
       [0.04538836, 0.76791794, 0.1866937 ],
       [0.19777581, 0.40111209, 0.40111209]],
      [[0.28399541, 0.57597535, 0.14002925],
       [0.50348984, 0.24825508, 0.24825508],
       [0.19777581, 0.40111209, 0.40111209]]],
     [[[0.57597535, 0.28399541, 0.14002925],
       [0.14002925, 0.28399541, 0.57597535],
       [0.01266889, 0.1056857 , 0.88164541]],
      [[0.1635791 , 0.6728418 , 0.1635791 ],
       [0.57597535, 0.14002925, 0.28399541],
       [0.24825508, 0.50348984, 0.24825508]]]]
)

_NO_MASK_CONCAT = np.array(
    [[[ 1.60444837,  2.59332744,  0.56799082,  0.8718922 ],
      [ 0.46416413,  4.44505915,  1.00697969,  0.        ],
      [ 1.19777581,  3.40667256,  0.39555163,  0.        ]],
     [[ 1.1281078 ,  1.8718922 ,  0.9814746 ,  1.3456836 ],
      [ 2.8718922 ,  0.1281078 ,  2.8718922 ,  0.28005849],
      [ 3.73795304, -0.73795304,  1.48953047,  1.00697969]]]
)

_NO_MASK_BY_D_MODEL = np.array(
    [[[[0.38365173, 0.23269654, 0.38365173],
       [0.09003057, 0.66524096, 0.24472847],
       [0.23269654, 0.38365173, 0.38365173]],
      [[0.30719589, 0.50648039, 0.18632372],
       [0.45186276, 0.27406862, 0.27406862],
       [0.23269654, 0.38365173, 0.38365173]]],
     [[[0.50648039, 0.30719589, 0.18632372],
       [0.18632372, 0.30719589, 0.50648039],
       [0.03911257, 0.17529039, 0.78559703]],
      [[0.21194156, 0.57611688, 0.21194156],
       [0.50648039, 0.18632372, 0.30719589],
       [0.27406862, 0.45186276, 0.27406862]]]]
)

_PADDING_OUTPUT = np.array(
    [[[ 2.10444837,  4.19777581,  1.13598164,  0.3718922 ],
      [ 0.96416413,  4.90922327,  2.01395937, -0.5       ],
      [ 1.69777581,  4.60444837,  0.79110326, -0.5       ]],
     [[ 1.1604769 ,  3.        ,  1.56456254,  1.10885937],
      [ 1.8395231 ,  3.        ,  6.43543746, -0.10885937],
      [ 2.2859164 ,  3.        ,  2.64190761,  0.8395231 ]]]
)
_PADDING_WEIGHTS = np.array(
    [[[[0.40111209, 0.19777581, 0.40111209],
       [0.04538836, 0.76791794, 0.1866937 ],
       [0.19777581, 0.40111209, 0.40111209]],
      [[0.28399541, 0.57597535, 0.14002925],
       [0.50348984, 0.24825508, 0.24825508],
       [0.19777581, 0.40111209, 0.40111209]]],
     [[[0.66976155, 0.33023845, 0.        ],
       [0.33023845, 0.66976155, 0.        ],
       [0.1070418 , 0.8929582 , 0.        ]],
      [[0.19557032, 0.80442968, 0.        ],
       [0.80442968, 0.19557032, 0.        ],
       [0.33023845, 0.66976155, 0.        ]]]]
)

_PADDING_NO_HEAD_AXIS = np.array(
    [[[[0.40111209, 0.19777581, 0.40111209],
       [0.04538836, 0.76791794, 0.1866937 ],
       [0.19777581, 0.40111209, 0.40111209]],
      [[0.33023845, 0.66976155, 0.        ],
       [0.66976155, 0.33023845, 0.        ],
       [0.33023845, 0.66976155, 0.        ]]],
     [[[0.57597535, 0.28399541, 0.14002925],
       [0.14002925, 0.28399541, 0.57597535],
       [0.01266889, 0.1056857 , 0.88164541]],
      [[0.19557032, 0.80442968, 0.        ],
       [0.80442968, 0.19557032, 0.        ],
       [0.33023845, 0.66976155, 0.        ]]]]
)

_CAUSAL_OUTPUT = np.array(
    [[[ 2.5       ,  3.        ,  4.        , -0.5       ],
      [ 0.61161444,  4.88838556,  2.6790462 ,  0.1604769 ],
      [ 1.69777581,  4.60444837,  0.79110326, -0.5       ]],
     [[ 0.5       ,  3.        ,  8.        , -0.5       ],
      [ 1.8395231 ,  3.        ,  6.43543746, -0.10885937],
      [ 4.23795304,  3.        ,  2.97906094,  0.50697969]]]
)
_CAUSAL_WEIGHTS = np.array(
    [[[[1.        , 0.        , 0.        ],
       [0.05580722, 0.94419278, 0.        ],
       [0.19777581, 0.40111209, 0.40111209]],
      [[1.        , 0.        , 0.        ],
       [0.66976155, 0.33023845, 0.        ],
       [0.19777581, 0.40111209, 0.40111209]]],
     [[[1.        , 0.        , 0.        ],
       [0.33023845, 0.66976155, 0.        ],
       [0.01266889, 0.1056857 , 0.88164541]],
      [[1.        , 0.        , 0.        ],
       [0.80442968, 0.19557032, 0.        ],
       [0.24825508, 0.50348984, 0.24825508]]]]
)

_CROSS_OUTPUT = np.array(
    [[[ 2.10444837,  4.19777581,  1.13598164,  0.3718922 ],
      [ 0.96416413,  4.90922327,  2.01395937, -0.5       ]],
     [[ 1.1604769 ,  3.        ,  1.56456254,  1.10885937],
      [ 1.8395231 ,  3.        ,  6.43543746, -0.10885937]]]
)
_CROSS_WEIGHTS = np.array(
    [[[[0.40111209, 0.19777581, 0.40111209],
       [0.04538836, 0.76791794, 0.1866937 ]],
      [[0.28399541, 0.57597535, 0.14002925],
       [0.50348984, 0.24825508, 0.24825508]]],
     [[[0.66976155, 0.33023845, 0.        ],
       [0.33023845, 0.66976155, 0.        ]],
      [[0.19557032, 0.80442968, 0.        ],
       [0.80442968, 0.19557032, 0.        ]]]]
)


# ----------------------------------------------------------------------------------------------
# Shared diagnostics (also used by the hidden checks)


def expect_heads(result, expected, name: str, *, mistakes: Sequence[tuple[object, str]] = (),
                 shape_hints: Sequence[tuple[tuple[int, ...], str]] = ()) -> None:
    """A tf.Tensor of the expected shape and values; recognised shapes and values get their explanation."""
    expect_tensor(result, name)
    actual = to_array(result, name)
    expected = np.asarray(expected, dtype=np.float64)
    for shape, hint in shape_hints:
        if actual.shape == tuple(shape) and actual.shape != expected.shape:
            raise CheckFailed(f"{name} has shape {actual.shape}, expected {expected.shape}: {hint}")
    expect_close(actual, expected, name, atol=1e-5, rtol=1e-5, mistakes=mistakes)


def split_shape_hints(batch: int, seq: int, heads: int, depth: int) -> list[tuple[tuple[int, ...], str]]:
    return [((batch, seq, heads, depth), "the transpose is missing: after the reshape to (batch, seq, heads, "
                                         "depth), swap the seq and heads axes with perm (0, 2, 1, 3)"),
            ((batch, heads, depth, seq), "the axes are transposed in the wrong order: use perm (0, 2, 1, 3), "
                                         "which gives (batch, heads, seq, depth)"),
            ((batch, seq, heads * depth), "the result still has the input's shape: reshape to (batch, seq, "
                                          "heads, depth), then transpose")]


def merge_shape_hints(batch: int, heads: int, seq: int, depth: int) -> list[tuple[tuple[int, ...], str]]:
    return [((batch, seq, heads, depth), "the final reshape is missing: after the transpose, reshape to "
                                         "(batch, seq, heads*depth)"),
            ((batch, heads, seq, depth), "nothing was merged: transpose to (batch, seq, heads, depth), then "
                                         "reshape to (batch, seq, heads*depth)")]


def inspect_multi_head_result(result, *, batch: int, heads: int, n_q: int, n_k: int, d_model: int,
                              mask=None, unmasked_weights=None,
                              mask_mistakes: Sequence[tuple[object, str]] = ()) -> tuple[np.ndarray, np.ndarray]:
    """Structural checks of what `call` returns; gives back (output, weights) as float64 arrays.

    In this order: a pair of float32 tensors, the weights' shape (batch, heads, n_q, n_k), the output's
    shape (batch, n_q, d_model), weights summing to 1 over the keys, and (with a mask, which broadcasts
    to (batch, n_q, n_k)) exactly zero weight where the mask is 0; weights equal to one of
    `mask_mistakes` get its explanation.
    """
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise CheckFailed(f"call should return a pair (output, attention_weights), got {type(result).__name__}")
    output, weights = result
    expect_tensor(output, "output", "float32")
    expect_tensor(weights, "attention_weights", "float32")
    output = to_array(output, "output")
    weights = to_array(weights, "attention_weights")
    depth = d_model // heads
    if output.shape == (batch, heads, n_q, n_k) and weights.shape == (batch, n_q, d_model):
        raise CheckFailed("output and attention_weights seem swapped; return (output, attention_weights)")
    if weights.shape == (batch, n_q, n_k):
        raise CheckFailed(f"attention_weights has shape {weights.shape}: return the weights of every head, "
                          f"shape (batch, heads, n_q, n_k) = {(batch, heads, n_q, n_k)}")
    expect_shape(weights, (batch, heads, n_q, n_k), "attention_weights")
    if output.shape == (batch, heads, n_q, depth) != (batch, n_q, d_model):
        raise CheckFailed(f"output has shape {output.shape}: the heads are not merged back; apply merge_heads "
                          "to the attention output, then self.wo")
    if output.shape == (batch, heads, n_q, d_model):
        raise CheckFailed(f"output has shape {output.shape}: the heads are not merged back before the output "
                          "projection; apply merge_heads first, then self.wo")
    expect_shape(output, (batch, n_q, d_model), "output")
    sums = weights.sum(axis=-1)
    if not np.allclose(sums, 1.0, atol=1e-4):
        raise CheckFailed("attention_weights do not sum to 1 over the keys (last axis): sums range from "
                          f"{sums.min():.4g} to {sums.max():.4g}; use the provided scaled_dot_product_attention")
    if mask is not None:
        allowed = np.broadcast_to(to_array(mask, "mask")[..., np.newaxis, :, :] > 0, weights.shape)
        blocked = np.where(allowed, 0.0, weights)
        if np.any(blocked != 0):
            if unmasked_weights is not None and matches(weights, unmasked_weights, atol=1e-5, rtol=1e-4):
                raise CheckFailed(MASK_IGNORED)
            for candidate, message in mask_mistakes:
                if matches(weights, candidate, atol=1e-5, rtol=1e-4):
                    raise CheckFailed(message)
            raise CheckFailed(
                "blocked positions (mask 0) must get exactly zero weight, but the largest weight on a blocked "
                f"position is {float(blocked.max()):.3g}: give attention_mask, with a head axis, to "
                "scaled_dot_product_attention (1 = attend, 0 = blocked)")
    return output, weights


def expect_multi_head_values(output: np.ndarray, weights: np.ndarray, expected_output, expected_weights, *,
                             weight_mistakes: Sequence[tuple[object, str]] = (),
                             output_mistakes: Sequence[tuple[object, str]] = (), atol: float = 1e-5) -> None:
    """The weights first (their mistakes named), then the output (given the weights are right)."""
    expect_close(weights, expected_weights, "attention_weights", atol=atol, rtol=1e-4, mistakes=weight_mistakes,
                 hint="the weights of head h are softmax(q_h k_h^T / sqrt(depth)) with q_h = split_heads(wq(q))"
                      "[:, h] and k_h = split_heads(wk(k))[:, h]")
    expect_close(output, expected_output, "output", atol=10 * atol, rtol=1e-4, mistakes=output_mistakes,
                 hint="the weights are right: the output is wo(merge_heads(attention_weights @ split_heads(wv(v))))")


def projection_weights(layer) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(kernel, bias) of each projection wq, wk, wv, wo of a layer, as float64 arrays."""
    found = {}
    for name in PROJECTIONS:
        dense = getattr(layer, name, None)
        if dense is None:
            raise CheckFailed(f"the layer has no attribute {name}: keep the Dense layers wq, wk, wv, wo of __init__")
        values = dense.get_weights()
        if len(values) != 2:
            raise CheckFailed(f"{name} should hold a kernel and a bias, found {len(values)} arrays")
        found[name] = (to_array(values[0], f"{name} kernel"), to_array(values[1], f"{name} bias"))
    return found


def expect_copied_weights(layer, expected, before, keras_blocks) -> None:
    """Compare the layer's projections with `expected` after a copy; name the usual mistakes.

    `before` holds the weights before the copy (to spot what was not copied); `keras_blocks` the
    Keras arrays {"wq": (kernel (m, heads, key_dim), bias (heads, key_dim)), ..., "wo": (kernel
    (heads, key_dim, d_model), bias (d_model,))}, from which wrong reshapes are rebuilt.
    """
    actual = projection_weights(layer)
    sources = {"wq": "query", "wk": "key", "wv": "value", "wo": "output"}
    for name in PROJECTIONS:
        for index, part in enumerate(("kernel", "bias")):
            got, want = actual[name][index], expected[name][index]
            label = f"{name}'s {part}"
            expect_shape(got, want.shape, label)
            if matches(got, want, atol=1e-6, rtol=1e-6):
                continue
            keras_array = np.asarray(keras_blocks[name][index], dtype=np.float64)
            mistakes = [(before[name][index], f"it was not changed: copy the Keras layer's {sources[name]} "
                                              f"{part} into {name}")]
            for other in PROJECTIONS:
                if other != name and expected[other][index].shape == want.shape:
                    mistakes.append((expected[other][index], f"it holds the Keras {sources[other]} {part}; "
                                                             f"{name} takes the {sources[name]} {part}"))
            if part == "kernel" and name != "wo":
                mistakes.append((np.swapaxes(keras_array, 1, 2).reshape(want.shape),
                                 "the heads and depth axes are swapped: reshape the (d_model, heads, key_dim) "
                                 "kernel to (d_model, heads*key_dim) without transposing"))
            if part == "kernel" and name == "wo":
                mistakes.append((np.swapaxes(keras_array, 0, 1).reshape(want.shape),
                                 "the heads and depth axes are swapped: reshape the (heads, key_dim, d_model) "
                                 "kernel to (heads*key_dim, d_model) without transposing"))
            if part == "kernel" and want.shape[0] == want.shape[1]:
                mistakes.append((want.T, "the kernel is transposed: a Dense kernel is (inputs, outputs)"))
            if part == "bias" and name != "wo":
                mistakes.append((np.swapaxes(keras_array, 0, 1).reshape(want.shape),
                                 "the bias's heads and depth axes are swapped: reshape (heads, key_dim) to "
                                 "(heads*key_dim,) without transposing"))
            expect_close(got, want, label, atol=1e-6, rtol=1e-6, mistakes=mistakes)


# ----------------------------------------------------------------------------------------------
# Visible checks


def _tf(array):
    import tensorflow as tf

    return tf.constant(np.asarray(array, dtype=np.float32))


def check_split_heads(split_heads) -> None:
    """Split (2, 3, 4) numbers 0..23 into 2 heads, and (1, 2, 6) into 3 heads."""
    expect_heads(call_learner(split_heads, _tf(_SPLIT_X), 2), _SPLIT_EXPECTED, "split_heads(x, 2)",
                 mistakes=[(_SPLIT_NO_TRANSPOSE, NO_TRANSPOSE_SPLIT), (_SPLIT_DEPTH_FIRST, DEPTH_FIRST_SPLIT)],
                 shape_hints=split_shape_hints(2, 3, 2, 2))
    expect_heads(call_learner(split_heads, _tf(_SPLIT3_X), 3), _SPLIT3_EXPECTED, "split_heads(x, 3)",
                 shape_hints=split_shape_hints(1, 2, 3, 2))
    passed("split_heads: (batch, seq, d_model) -> (batch, heads, seq, depth), head h holds features "
           "h*depth..(h+1)*depth-1")


def check_merge_heads(merge_heads) -> None:
    """Merge (2, 2, 3, 2) numbers 0..23, and undo the split of the split_heads check."""
    expect_heads(call_learner(merge_heads, _tf(_MERGE_X)), _MERGE_EXPECTED, "merge_heads(x)",
                 mistakes=[(_MERGE_NO_TRANSPOSE, NO_TRANSPOSE_MERGE)], shape_hints=merge_shape_hints(2, 2, 3, 2))
    expect_heads(call_learner(merge_heads, _tf(_SPLIT_EXPECTED)), _SPLIT_X,
                 "merge_heads of the split heads (should give back the input)",
                 shape_hints=merge_shape_hints(2, 2, 3, 2))
    passed("merge_heads: (batch, heads, seq, depth) -> (batch, seq, heads*depth), the inverse of split_heads")


def _layer_with_weights(layer_class, d_model: int, num_heads: int, weights) -> object:
    layer = call_learner(layer_class, d_model, num_heads)
    for name in PROJECTIONS:
        dense = getattr(layer, name, None)
        if dense is None:
            raise CheckFailed(f"the layer has no attribute {name}: keep the Dense layers of the given __init__")
        kernel, bias = weights[name]
        if not dense.built:
            dense.build((None, kernel.shape[0]))
        dense.set_weights([np.asarray(kernel, np.float32), np.asarray(bias, np.float32)])
    return layer


def _parts_not_ready(layer_class) -> list[str]:
    """The notebook's split_heads / merge_heads (found through call's globals) that fail their own check."""
    namespace = getattr(getattr(layer_class, "call", None), "__globals__", None) or {}
    failing = []
    for name, check in (("split_heads", check_split_heads), ("merge_heads", check_merge_heads)):
        if callable(namespace.get(name)):
            try:  # silently: only the verdict matters here (and nothing may reach stderr)
                with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    check(namespace[name])
            except (CheckFailed, NotImplementedError):
                failing.append(name)
    return failing


def check_multi_head_attention_call(layer_class) -> None:
    """d_model 4, 2 heads, batch 2, 3 positions, hand-set projections: no mask, a padding mask
    (2, 1, 3), a look-ahead mask (1, 3, 3), and cross-attention of 2 queries over 3 keys.

    `call` uses the notebook's split_heads and merge_heads; while one of them fails its own check,
    `call` is not checked here (the grader checks it with reference versions of both), so a mistake
    in a part never counts against `call`.
    """
    failing = _parts_not_ready(layer_class)
    if failing:
        print(f"call was not checked: {' and '.join(failing)} must pass {'its' if len(failing) == 1 else 'their'} "
              "check first (call uses them). When grading, call is checked with reference versions of both.")
        return
    weights = {"wq": (_WQ_KERNEL, _WQ_BIAS), "wk": (_WK_KERNEL, _WK_BIAS), "wv": (_WV_KERNEL, _WV_BIAS),
               "wo": (_WO_KERNEL, _WO_BIAS)}
    layer = _layer_with_weights(layer_class, 4, 2, weights)
    padding = np.array([[[1, 1, 1]], [[1, 1, 0]]], dtype=np.float32)
    causal = np.tril(np.ones((3, 3), dtype=np.float32))[np.newaxis]
    x = _tf(_X)
    cases = [
        ("no mask", x, None, _NO_MASK_OUTPUT, _NO_MASK_WEIGHTS,
         [(_NO_MASK_BY_D_MODEL, SCALED_BY_D_MODEL)], [(_NO_MASK_CONCAT, NO_OUTPUT_PROJECTION)]),
        ("padding mask (2, 1, 3)", x, padding, _PADDING_OUTPUT, _PADDING_WEIGHTS,
         [(_PADDING_NO_HEAD_AXIS, MASK_WITHOUT_HEAD_AXIS)], []),
        ("look-ahead mask (1, 3, 3)", x, causal, _CAUSAL_OUTPUT, _CAUSAL_WEIGHTS, [], []),
        ("cross-attention, 2 queries, 3 keys, padding mask", x[:, :2], padding, _CROSS_OUTPUT, _CROSS_WEIGHTS,
         [], []),
    ]
    for description, queries, mask, expected_output, expected_weights, weight_mistakes, output_mistakes in cases:
        try:
            args = (queries, x, x) if mask is None else (queries, x, x, _tf(mask))
            result = call_learner(layer.call, *args)
            output, attention = inspect_multi_head_result(
                result, batch=2, heads=2, n_q=queries.shape[1], n_k=3, d_model=4, mask=mask,
                unmasked_weights=None if mask is None else _NO_MASK_WEIGHTS[:, :, :queries.shape[1]],
                mask_mistakes=weight_mistakes)
            expect_multi_head_values(output, attention, expected_output, expected_weights,
                                     weight_mistakes=weight_mistakes, output_mistakes=output_mistakes)
        except CheckFailed as failure:
            raise CheckFailed(f"[{description}] {failure}") from None
    passed("call: projections, split heads, masked attention per head, merge and output projection "
           "(no mask, padding, look-ahead, cross-attention)")


class _Projections:
    """Stands in for the notebook's layer: four built Dense layers wq, wk, wv, wo."""

    def __init__(self, d_model: int):
        import keras

        for index, name in enumerate(PROJECTIONS):
            dense = keras.layers.Dense(d_model)
            dense.build((None, d_model))
            dense.set_weights([np.full((d_model, d_model), 7.0 + index, np.float32),
                               np.full(d_model, -7.0 - index, np.float32)])
            setattr(self, name, dense)


# Keras's weights for d_model 4, 2 heads of key_dim 2, numbered so that every entry is different.
_KERAS_BLOCKS = {
    "wq": (np.arange(16).reshape(4, 2, 2) / 16, np.arange(4).reshape(2, 2) / 4 + 1),
    "wk": (np.arange(16, 32).reshape(4, 2, 2) / 16, np.arange(4, 8).reshape(2, 2) / 4 + 1),
    "wv": (np.arange(32, 48).reshape(4, 2, 2) / 16, np.arange(8, 12).reshape(2, 2) / 4 + 1),
    "wo": (np.arange(48, 64).reshape(2, 2, 4) / 16, np.arange(12, 16) / 4 + 1),
}
# The same numbers in the Dense layout: kernels (4, 4) row by row, biases (4,).
_DENSE_EXPECTED = {
    "wq": (np.array([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]) / 16,
           np.array([1.0, 1.25, 1.5, 1.75])),
    "wk": (np.array([[16, 17, 18, 19], [20, 21, 22, 23], [24, 25, 26, 27], [28, 29, 30, 31]]) / 16,
           np.array([2.0, 2.25, 2.5, 2.75])),
    "wv": (np.array([[32, 33, 34, 35], [36, 37, 38, 39], [40, 41, 42, 43], [44, 45, 46, 47]]) / 16,
           np.array([3.0, 3.25, 3.5, 3.75])),
    "wo": (np.array([[48, 49, 50, 51], [52, 53, 54, 55], [56, 57, 58, 59], [60, 61, 62, 63]]) / 16,
           np.array([4.0, 4.25, 4.5, 4.75])),
}


def check_copy_keras_weights(copy_keras_weights) -> None:
    """Copy a keras.layers.MultiHeadAttention (d_model 4, 2 heads) with numbered weights into four Dense layers."""
    import keras

    keras_layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=2)
    x = _tf(np.zeros((1, 1, 4)))
    keras_layer(x, x)
    for name, sublayer in [("wq", keras_layer.query_dense), ("wk", keras_layer.key_dense),
                           ("wv", keras_layer.value_dense), ("wo", keras_layer.output_dense)]:
        sublayer.set_weights([np.asarray(a, np.float32) for a in _KERAS_BLOCKS[name]])
    target = _Projections(4)
    before = projection_weights(target)
    call_learner(copy_keras_weights, keras_layer, target)
    expect_copied_weights(target, _DENSE_EXPECTED, before, _KERAS_BLOCKS)
    passed("copy_keras_weights: query, key, value and output kernels and biases reshaped into wq, wk, wv, wo")
