"""Assignment 03 (masked multi-head attention): the visible checks.

The checks run the learner's functions and layer on small hand-made inputs and compare with values
generated from the reference (`course_lib/expected/03_multi_head_attention.json`, written by
`python -m autograde.expected`), name the usual mistakes, and print a line starting with a check mark
when all is well. The diagnostics (`inspect_multi_head_result`, `expect_multi_head_values`,
`expect_copied_weights`, ...) are shared with the hidden checks in autograde.checks.multi_head_attention.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping, Sequence

import numpy as np

from course_lib.checking import (
    CheckFailed,
    call_learner,
    expect_close,
    expect_shape,
    expect_tensor,
    matches,
    passed,
    plain_message,
    quiet,
    stored_mistakes,
    to_array,
    to_tensor,
)
from course_lib.expected import load as load_expected

PROJECTIONS = ("wq", "wk", "wv", "wo")
STEM = "03_multi_head_attention"

MASK_IGNORED = (
    "the mask is ignored: blocked positions (mask 0) get the same weights as without a mask; pass "
    "attention_mask (with a head axis) to scaled_dot_product_attention"
)


# ----------------------------------------------------------------------------------------------
# Shared diagnostics (also used by the hidden checks)

TRACED = ("in a tf.function whose batch and sequence sizes are unknown until it runs, as when Keras calls a layer "
          "in fit")
TRACED_HINT = "use TensorFlow operations, and tf.shape(x) rather than x.shape for the batch and sequence sizes"


def call_traced(fn, x, *args, unknown: Sequence[int]):
    """`fn(x, *args)` inside a tf.function whose input signature leaves the axes `unknown` of x unknown; the result,
    or a failed check that says how the call failed (the eager calls come first, so a NotImplementedError here is
    TensorFlow's, about NumPy on a symbolic tensor, not an unfinished exercise)."""
    import tensorflow as tf

    x = tf.convert_to_tensor(x)
    shape = [None if axis in unknown else size for axis, size in enumerate(x.shape)]
    traced = tf.function(lambda tensor: fn(tensor, *args), input_signature=[tf.TensorSpec(shape, x.dtype)])
    name = getattr(fn, "__name__", None) or type(fn).__name__
    try:
        with quiet():
            return traced(x)
    except Exception as error:
        kind = type(error).__name__
        lines = [line.strip() for line in plain_message(error).splitlines() if line.strip()]
        last = lines[-1].removeprefix(f"{kind}: ").rstrip(" .;") if lines else ""
        raise CheckFailed(f"{name} raised {kind} {TRACED}: {last}; {TRACED_HINT}") from None


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


def set_projection_weights(layer, weights: Mapping[str, tuple]) -> None:
    """Give the layer's Dense projections wq, wk, wv, wo the (kernel, bias) of `weights`, building them if needed."""
    for name in PROJECTIONS:
        dense = getattr(layer, name, None)
        if dense is None:
            raise CheckFailed(f"the layer has no attribute {name}: keep the Dense layers of the given __init__")
        kernel, bias = (np.asarray(a, np.float32) for a in weights[name])
        try:
            if not dense.built:
                dense.build((None, kernel.shape[0]))
            dense.set_weights([kernel, bias])
        except Exception as error:  # a changed __init__: say so rather than crash
            raise CheckFailed(f"could not set the weights of {name} ({type(error).__name__}: {error}); keep "
                              "the given __init__ (wq, wk, wv, wo are Dense(d_model))") from None


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
# Visible checks: hand-made inputs, generated answers and mistakes


def check_split_heads(split_heads) -> None:
    """Split (2, 3, 4) numbers 0..23 into 2 heads, and (1, 2, 6) into 3 heads; then the first again in a tf.function
    whose batch and sequence sizes are unknown."""
    case = load_expected(STEM, "split_heads")
    expect_heads(call_learner(split_heads, to_tensor(case["x"]), 2), case["expected"], "split_heads(x, 2)",
                 mistakes=stored_mistakes(case["mistakes"]), shape_hints=split_shape_hints(2, 3, 2, 2))
    three = case["three_heads"]
    expect_heads(call_learner(split_heads, to_tensor(three["x"]), 3), three["expected"], "split_heads(x, 3)",
                 shape_hints=split_shape_hints(1, 2, 3, 2))
    expect_heads(call_traced(split_heads, to_tensor(case["x"]), 2, unknown=(0, 1)), case["expected"],
                 f"split_heads(x, 2) {TRACED}")
    passed("split_heads: (batch, seq, d_model) -> (batch, heads, seq, depth), head h holds features "
           "h*depth..(h+1)*depth-1")


def check_merge_heads(merge_heads) -> None:
    """Merge (2, 2, 3, 2) numbers 0..23, also in a tf.function whose batch and sequence sizes are unknown, and undo
    the split of the split_heads check."""
    case = load_expected(STEM, "merge_heads")
    expect_heads(call_learner(merge_heads, to_tensor(case["x"])), case["expected"], "merge_heads(x)",
                 mistakes=stored_mistakes(case["mistakes"]), shape_hints=merge_shape_hints(2, 2, 3, 2))
    expect_heads(call_traced(merge_heads, to_tensor(case["x"]), unknown=(0, 2)), case["expected"],
                 f"merge_heads(x) {TRACED}")
    split = load_expected(STEM, "split_heads")
    expect_heads(call_learner(merge_heads, to_tensor(split["expected"])), split["x"],
                 "merge_heads of the split heads (should give back the input)",
                 shape_hints=merge_shape_hints(2, 2, 3, 2))
    passed("merge_heads: (batch, heads, seq, depth) -> (batch, seq, heads*depth), the inverse of split_heads")


def _parts_not_ready(layer_class) -> list[str]:
    """The notebook's split_heads / merge_heads (found through call's globals) that fail their own check."""
    namespace = getattr(getattr(layer_class, "call", None), "__globals__", None) or {}
    failing = []
    for name, check in (("split_heads", check_split_heads), ("merge_heads", check_merge_heads)):
        if callable(namespace.get(name)):
            try:  # silently: only the verdict matters here (and nothing may reach stderr)
                with contextlib.redirect_stdout(io.StringIO()), quiet():
                    check(namespace[name])
            except (CheckFailed, NotImplementedError):
                failing.append(name)
    return failing


def _pairs(entries: Mapping[str, Mapping]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"wq": {"kernel": ..., "bias": ...}, ...} from a generated file as {"wq": (kernel, bias), ...}."""
    return {name: (entry["kernel"], entry["bias"]) for name, entry in entries.items()}


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
    inputs = load_expected(STEM, "call")
    layer = call_learner(layer_class, 4, 2)
    set_projection_weights(layer, _pairs(inputs["weights"]))
    x = to_tensor(inputs["x"])
    for case in inputs["cases"].values():
        queries = x[:, :case["queries"]]
        mask = case.get("mask")
        try:
            result = call_learner(layer.call, *((queries, x, x) if mask is None else (queries, x, x, to_tensor(mask))))
            weight_mistakes = stored_mistakes(case["weight_mistakes"])
            output, attention = inspect_multi_head_result(
                result, batch=2, heads=2, n_q=case["queries"], n_k=3, d_model=4, mask=mask,
                unmasked_weights=case.get("unmasked_weights"), mask_mistakes=weight_mistakes)
            expect_multi_head_values(output, attention, case["output"], case["weights"],
                                     weight_mistakes=weight_mistakes,
                                     output_mistakes=stored_mistakes(case["output_mistakes"]))
        except CheckFailed as failure:
            raise CheckFailed(f"[{case['description']}] {failure}") from None
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


def check_copy_keras_weights(copy_keras_weights) -> None:
    """Copy a keras.layers.MultiHeadAttention (d_model 4, 2 heads) with numbered weights into four Dense layers."""
    import keras

    case = load_expected(STEM, "copy_keras_weights")
    keras_blocks = _pairs(case["keras_blocks"])
    keras_layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=2)
    x = to_tensor(np.zeros((1, 1, 4)))
    keras_layer(x, x)
    for name, sublayer in [("wq", keras_layer.query_dense), ("wk", keras_layer.key_dense),
                           ("wv", keras_layer.value_dense), ("wo", keras_layer.output_dense)]:
        sublayer.set_weights([np.asarray(a, np.float32) for a in keras_blocks[name]])
    target = _Projections(4)
    before = projection_weights(target)
    call_learner(copy_keras_weights, keras_layer, target)
    expect_copied_weights(target, _pairs(case["expected"]), before, keras_blocks)
    passed("copy_keras_weights: query, key, value and output kernels and biases reshaped into wq, wk, wv, wo")
