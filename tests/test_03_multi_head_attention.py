"""Assignment 03: the reference splits, merges and attends as written out by hand and equals
keras.layers.MultiHeadAttention after a weight copy; the visible checks (course_lib.multi_head_attention)
and hidden checks (autograde.checks.multi_head_attention) accept correct code and name the usual mistakes."""

from __future__ import annotations

import ast
import inspect
import textwrap
import types

import keras
import nbformat
import numpy as np
import pytest
import tensorflow as tf

from autograde.checks import multi_head_attention as hidden  # noqa: E402
from autograde.reference import multi_head_attention as ref  # noqa: E402
from autograde.reference.multi_head_attention import keras_layers  # noqa: E402
from autograde.reference.multi_head_attention.keras_layers import ScratchMultiHeadAttention  # noqa: E402
from course_lib import multi_head_attention as visible  # noqa: E402
from course_lib.checking import CheckFailed  # noqa: E402
from course_lib.layers import create_look_ahead_mask, create_padding_mask, scaled_dot_product_attention  # noqa: E402

from conftest import AlwaysEqual, solution_path  # noqa: E402

STEM = "03_multi_head_attention"

# ------------------------------------------------------------------------------------------------
# The reference, against numbers written out by hand


def test_reference_split_and_merge_by_hand():
    x = np.arange(8.0).reshape(1, 2, 4)  # two positions, features 0..3 and 4..7
    split = ref.split_heads(x, 2)
    np.testing.assert_array_equal(split, [[[[0, 1], [4, 5]], [[2, 3], [6, 7]]]])  # head 0 gets features 0, 1
    np.testing.assert_array_equal(ref.merge_heads(split), x)
    np.testing.assert_array_equal(ref.split_heads(x, 1), x[:, None])
    np.testing.assert_array_equal(ref.split_heads(x, 4)[0, :, 1, 0], [4, 5, 6, 7])


def test_reference_tf_split_and_merge_agree_with_numpy():
    x = np.random.default_rng(0).standard_normal((3, 5, 12))
    split = keras_layers.split_heads(tf.constant(x, tf.float32), 3)
    np.testing.assert_allclose(split.numpy(), ref.split_heads(x, 3), atol=1e-6)
    np.testing.assert_allclose(keras_layers.merge_heads(split).numpy(), x, atol=1e-6)


def test_reference_forward_pass_with_identity_weights():
    # One head, identity projections, zero biases: plain scaled dot-product attention of x with itself.
    x = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    eye = (np.eye(2), np.zeros(2))
    output, weights = ref.multi_head_attention(x, x, x, dict.fromkeys(ref.PROJECTIONS, eye), 1)
    big, small = np.exp(1 / np.sqrt(2)), 1.0
    top = big / (big + small)
    np.testing.assert_allclose(weights, [[[[top, 1 - top], [1 - top, top]]]])
    np.testing.assert_allclose(output, [[[top, 1 - top], [1 - top, top]]])
    # A padding mask that blocks the second key: everything comes from the first position.
    output, weights = ref.multi_head_attention(x, x, x, dict.fromkeys(ref.PROJECTIONS, eye), 1,
                                               np.array([[[1.0, 0.0]]]))
    np.testing.assert_array_equal(weights, [[[[1, 0], [1, 0]]]])
    np.testing.assert_array_equal(output, [[[1, 0], [1, 0]]])


def test_reference_two_heads_equal_two_separate_attentions():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 6))
    weights = ref.random_weights(rng, 6, 6)
    output, attention = ref.multi_head_attention(x, x, x, weights, 2)
    per_head = []
    for h in range(2):
        cols = slice(3 * h, 3 * h + 3)
        q, k, v = (x @ weights[n][0][:, cols] + weights[n][1][cols] for n in ("wq", "wk", "wv"))
        scores = q @ np.swapaxes(k, 1, 2) / np.sqrt(3)
        soft = np.exp(scores - scores.max(-1, keepdims=True))
        soft /= soft.sum(-1, keepdims=True)
        np.testing.assert_allclose(attention[:, h], soft)
        per_head.append(soft @ v)
    np.testing.assert_allclose(output, np.concatenate(per_head, -1) @ weights["wo"][0] + weights["wo"][1])


def test_reference_layer_rejects_indivisible_sizes():
    with pytest.raises(ValueError, match="divisible"):
        ScratchMultiHeadAttention(6, 4)


def _init_without_docstring(source: str, class_name: str) -> ast.FunctionDef:
    """The `__init__` of `class_name` in `source`, its docstring (if any) removed."""
    for node in ast.walk(ast.parse(textwrap.dedent(source))):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            init = next(item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__")
            if init.body and isinstance(init.body[0], ast.Expr) and isinstance(init.body[0].value, ast.Constant):
                init.body = init.body[1:]
            return init
    raise AssertionError(f"no class {class_name} in the source")


def test_notebook_init_is_the_reference_init():
    """The learner is given __init__ (attribute names and sublayers): the reference layer must have the same one."""
    notebook = nbformat.read(solution_path(STEM), as_version=4)
    name = ScratchMultiHeadAttention.__name__
    cells = [cell.source for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == name]
    assert len(cells) == 1, f"{STEM}: expected one solution cell with grade id {name}"
    notebook_init = _init_without_docstring(cells[0], name)
    reference_init = _init_without_docstring(inspect.getsource(ScratchMultiHeadAttention), name)
    assert ast.dump(notebook_init) == ast.dump(reference_init), (
        f"{name}.__init__ differs between the solution notebook and autograde/reference/multi_head_attention/"
        "keras_layers.py: change both")


@pytest.mark.parametrize("d_model, heads, n_q, n_k", [(8, 2, 5, 5), (12, 3, 4, 7), (32, 4, 6, 6)])
def test_keras_layer_equals_reference_layer_after_copy(d_model, heads, n_q, n_k):
    """The fact the notebook teaches: Keras's layer, its weights reshaped, is our layer."""
    rng = np.random.default_rng(d_model)
    keras_layer = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=d_model // heads)
    layer = ScratchMultiHeadAttention(d_model, heads)
    q = tf.constant(rng.standard_normal((3, n_q, d_model)), tf.float32)
    kv = tf.constant(rng.standard_normal((3, n_k, d_model)), tf.float32)
    keras_layer(q, kv)
    layer(q, kv, kv)
    ref.copy_keras_weights(keras_layer, layer)
    ids = tf.constant([[1] * n_k, [1] * (n_k - 2) + [0, 0], [1] + [0] * (n_k - 1)])
    masks = [None, create_padding_mask(ids)]
    if n_q == n_k:
        masks += [create_look_ahead_mask(n_q), create_padding_mask(ids) * create_look_ahead_mask(n_q)]
    for mask in masks:
        expected, expected_weights = keras_layer(q, kv, kv, attention_mask=mask, return_attention_scores=True)
        output, weights = layer(q, kv, kv, mask)
        assert np.max(np.abs(output.numpy() - expected.numpy())) <= 1e-5
        assert np.max(np.abs(weights.numpy() - expected_weights.numpy())) <= 1e-5
        numpy_output, numpy_weights = ref.multi_head_attention(q, kv, kv, ref.layer_weights(layer), heads, mask)
        np.testing.assert_allclose(output, numpy_output, atol=1e-5)
        np.testing.assert_allclose(weights, numpy_weights, atol=1e-6)


def test_set_keras_weights_inverts_keras_weights():
    rng = np.random.default_rng(5)
    keras_layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)
    x = tf.zeros((1, 2, 6))
    keras_layer(x, x)
    weights = ref.random_weights(rng, 6, 6)
    ref.set_keras_weights(keras_layer, weights, 2)
    for name in ref.PROJECTIONS:
        for got, want in zip(ref.keras_weights(keras_layer)[name], weights[name], strict=True):
            np.testing.assert_allclose(got, want, atol=1e-6)


# ------------------------------------------------------------------------------------------------
# Correct learner code (TensorFlow, written the ways a learner might)


def split_heads(x, num_heads):
    batch, seq = tf.shape(x)[0], tf.shape(x)[1]
    return tf.transpose(tf.reshape(x, (batch, seq, num_heads, x.shape[-1] // num_heads)), (0, 2, 1, 3))


def split_heads_minus_one(x, num_heads):
    return tf.transpose(tf.reshape(x, (-1, tf.shape(x)[1], num_heads, x.shape[-1] // num_heads)), perm=[0, 2, 1, 3])


def merge_heads(x):
    x = tf.transpose(x, (0, 2, 1, 3))
    return tf.reshape(x, (tf.shape(x)[0], tf.shape(x)[1], x.shape[2] * x.shape[3]))


def merge_heads_with_concat(x):
    return tf.concat(tf.unstack(x, axis=1), axis=-1)


def make_layer_class(*, no_wo=False, by_d_model=False, ignore_mask=False, no_head_axis=False,
                     unmerged=False, swap_qk=False):
    """The reference layer with one deliberate change in its call (the defaults give a correct one, written as
    a learner might, with this module's split_heads and merge_heads)."""

    class Layer(ScratchMultiHeadAttention):
        def call(self, q, k, v, attention_mask=None):
            wq, wk = (self.wk, self.wq) if swap_qk else (self.wq, self.wk)
            hq, hk, hv = (split_heads(w(t), self.num_heads) for w, t in ((wq, q), (wk, k), (self.wv, v)))
            if by_d_model:
                hq = hq * tf.sqrt(tf.cast(self.depth, tf.float32)) / tf.sqrt(tf.cast(self.d_model, tf.float32))
            mask = attention_mask
            if mask is not None and not no_head_axis:
                mask = mask[:, tf.newaxis]
            attended, weights = scaled_dot_product_attention(hq, hk, hv, None if ignore_mask else mask)
            if unmerged:
                return attended, weights
            merged = merge_heads(attended)
            return (merged if no_wo else self.wo(merged)), weights

    return Layer


def in_notebook(namespace, call=ScratchMultiHeadAttention.call):
    """The layer as a notebook defines it: its `call` reads split_heads, merge_heads, scaled_dot_product_attention
    and tf from `namespace` (the notebook's globals), where the checks look for them and replace them."""
    notebook_call = types.FunctionType(call.__code__, namespace, call.__name__, call.__defaults__, call.__closure__)
    return type("ScratchMultiHeadAttention", (ScratchMultiHeadAttention,), {"call": notebook_call})


def copy_keras_weights(keras_layer, layer):
    for source, target in [(keras_layer.query_dense, layer.wq), (keras_layer.key_dense, layer.wk),
                           (keras_layer.value_dense, layer.wv)]:
        kernel, bias = source.get_weights()
        target.set_weights([kernel.reshape(kernel.shape[0], -1), bias.reshape(-1)])
    kernel, bias = keras_layer.output_dense.get_weights()
    layer.wo.set_weights([kernel.reshape(-1, kernel.shape[-1]), bias])


def copy_keras_weights_with_assign(keras_layer, layer):
    for source, target in [(keras_layer.query_dense, layer.wq), (keras_layer.key_dense, layer.wk),
                           (keras_layer.value_dense, layer.wv), (keras_layer.output_dense, layer.wo)]:
        target.kernel.assign(tf.reshape(source.kernel, target.kernel.shape))
        target.bias.assign(tf.reshape(source.bias, target.bias.shape))


def make_copy(*, transpose_heads=False, skip_bias=False, skip_wo=False, swap_qk=False, transpose_kernel=False):
    """copy_keras_weights with one deliberate change."""

    def copy(keras_layer, layer):
        sources = [keras_layer.query_dense, keras_layer.key_dense, keras_layer.value_dense]
        if swap_qk:
            sources[0], sources[1] = sources[1], sources[0]
        for source, target in zip(sources, [layer.wq, layer.wk, layer.wv], strict=True):
            kernel, bias = source.get_weights()
            if transpose_heads:
                kernel = kernel.transpose(0, 2, 1)
            kernel = kernel.reshape(kernel.shape[0], -1)
            if transpose_kernel:
                kernel = kernel.T
            target.set_weights([kernel, target.get_weights()[1] if skip_bias else bias.reshape(-1)])
        if not skip_wo:
            kernel, bias = keras_layer.output_dense.get_weights()
            layer.wo.set_weights([kernel.reshape(-1, kernel.shape[-1]), bias])

    return copy


CORRECT = {
    "split_heads": [split_heads, split_heads_minus_one],
    "merge_heads": [merge_heads, merge_heads_with_concat],
    "multi_head_attention_call": [ScratchMultiHeadAttention, make_layer_class()],
    "copy_keras_weights": [copy_keras_weights, copy_keras_weights_with_assign],
}


def checks(name):
    return getattr(visible, f"check_{name}"), getattr(hidden, f"grade_{name}")


def expect_both_fail(name, fn, *fragments):
    """Both the visible and the hidden check reject `fn` with a message containing `fragments`."""
    for check in checks(name):
        with pytest.raises(CheckFailed) as failure:
            check(fn)
        message = str(failure.value)
        for fragment in fragments:
            assert fragment in message, f"{check.__module__}.{check.__name__}: {message}"


@pytest.mark.thorough
@pytest.mark.parametrize("name, index", [(name, i) for name, fns in CORRECT.items() for i in range(len(fns))])
def test_correct_implementations_pass(name, index, capsys):
    for check in checks(name):
        check(CORRECT[name][index])
    out = capsys.readouterr()
    assert out.out.count("\N{CHECK MARK}") == 2
    assert out.err == ""


# ------------------------------------------------------------------------------------------------
# split_heads and merge_heads


def test_split_without_transpose():
    expect_both_fail("split_heads", lambda x, h: tf.reshape(x, (x.shape[0], h, x.shape[1], -1)),
                     "heads are interleaved wrongly")


def test_split_depth_before_heads():
    def depth_first(x, h):
        return tf.transpose(tf.reshape(x, (x.shape[0], x.shape[1], -1, h)), (0, 3, 1, 2))

    expect_both_fail("split_heads", depth_first, "contiguous block")


def test_split_transpose_missing():
    expect_both_fail("split_heads", lambda x, h: tf.reshape(x, (x.shape[0], x.shape[1], h, -1)),
                     "transpose is missing")


def test_split_wrong_transpose_order():
    def wrong_order(x, h):
        return tf.transpose(tf.reshape(x, (x.shape[0], x.shape[1], h, -1)), (0, 2, 3, 1))

    expect_both_fail("split_heads", wrong_order, "wrong order: use perm (0, 2, 1, 3)")


def test_split_returns_numpy():
    expect_both_fail("split_heads", lambda x, h: split_heads(x, h).numpy(), "should be a tf.Tensor")


def test_split_with_the_sizes_of_x_shape():
    """Right eagerly; in a tf.function the batch and sequence sizes of x.shape are None."""
    def static_sizes(x, num_heads):
        return tf.transpose(tf.reshape(x, (*x.shape[:2], num_heads, -1)), perm=[0, 2, 1, 3])

    expect_both_fail("split_heads", static_sizes, "raised TypeError in a tf.function whose batch and sequence sizes")


def test_merge_with_the_sizes_of_x_shape():
    def static_sizes(x):
        batch, heads, seq, depth = x.shape
        return tf.reshape(tf.transpose(x, (0, 2, 1, 3)), (batch, seq, heads * depth))

    expect_both_fail("merge_heads", static_sizes, "raised TypeError in a tf.function whose batch and sequence sizes")


def test_merge_without_transpose():
    expect_both_fail("merge_heads", lambda x: tf.reshape(x, (x.shape[0], x.shape[2], -1)),
                     "merged in the wrong order")


def test_merge_sizes_read_before_the_transpose():
    def sizes_first(x):  # the solution's reshape with its transpose left out: seq is read from the heads axis
        return tf.reshape(x, (tf.shape(x)[0], tf.shape(x)[1], x.shape[2] * x.shape[3]))

    with pytest.raises(CheckFailed, match="heads are still the second axis"):
        hidden.grade_merge_heads(sizes_first)


def test_merge_reshape_missing():
    expect_both_fail("merge_heads", lambda x: tf.transpose(x, (0, 2, 1, 3)), "final reshape is missing")


def test_merge_is_not_the_inverse():
    def almost(x):  # right shape, but head order reversed
        return merge_heads(x[:, ::-1])

    expect_both_fail("merge_heads", almost, "merge_heads")


# ------------------------------------------------------------------------------------------------
# The layer's call


def test_call_without_output_projection():
    expect_both_fail("multi_head_attention_call", make_layer_class(no_wo=True), "output projection is missing")


def test_call_scaled_by_d_model():
    expect_both_fail("multi_head_attention_call", make_layer_class(by_d_model=True), "sqrt(d_model)")


def test_call_mask_ignored():
    expect_both_fail("multi_head_attention_call", make_layer_class(ignore_mask=True), "mask is ignored")


def test_call_mask_without_head_axis():
    expect_both_fail("multi_head_attention_call", make_layer_class(no_head_axis=True), "without a head axis")


def test_call_heads_not_merged():
    expect_both_fail("multi_head_attention_call", make_layer_class(unmerged=True), "not merged back")


def test_call_queries_and_keys_swapped():
    expect_both_fail("multi_head_attention_call", make_layer_class(swap_qk=True), "the queries go through wk")


def test_call_wrong_split_in_notebook_is_not_charged_to_call(capsys):
    """Grading call swaps the notebook's split_heads and merge_heads for reference versions; the visible
    check does not run call while they fail their own checks, so the test cell of call cannot fail."""
    namespace = {"tf": tf, "scaled_dot_product_attention": scaled_dot_product_attention,
                 "split_heads": lambda x, h: tf.reshape(x, (x.shape[0], h, x.shape[1], -1)),  # wrong
                 "merge_heads": lambda x: tf.reshape(x, (x.shape[0], x.shape[2], -1))}  # wrong
    layer_class = in_notebook(namespace)
    hidden.grade_multi_head_attention_call(layer_class)
    assert namespace["split_heads"].__name__ == "<lambda>"  # restored afterwards
    visible.check_multi_head_attention_call(layer_class)
    assert "call was not checked: split_heads and merge_heads must pass their check first" in capsys.readouterr().out
    # Once the parts are right, the visible check does check call.
    namespace["split_heads"], namespace["merge_heads"] = split_heads, merge_heads
    visible.check_multi_head_attention_call(layer_class)
    namespace["merge_heads"] = lambda x: merge_heads(x[:, ::-1])  # still wrong: call is not checked
    visible.check_multi_head_attention_call(layer_class)
    assert "merge_heads must pass its check first" in capsys.readouterr().out


def test_call_checked_when_parts_pass():
    namespace = {"tf": tf, "scaled_dot_product_attention": scaled_dot_product_attention,
                 "split_heads": split_heads, "merge_heads": merge_heads}
    layer_class = in_notebook(namespace, call=make_layer_class(no_wo=True).call)
    expect_both_fail("multi_head_attention_call", layer_class, "output projection is missing")


def test_call_returns_weights_without_heads():
    class Layer(ScratchMultiHeadAttention):
        def call(self, q, k, v, attention_mask=None):
            output, weights = super().call(q, k, v, attention_mask)
            return output, tf.reduce_mean(weights, axis=1)

    expect_both_fail("multi_head_attention_call", Layer, "return the weights of every head")


def test_call_returns_a_single_tensor():
    class Layer(ScratchMultiHeadAttention):
        def call(self, q, k, v, attention_mask=None):
            return super().call(q, k, v, attention_mask)[0]

    expect_both_fail("multi_head_attention_call", Layer, "should return a pair")


def test_call_inverted_mask_is_named():
    class Layer(ScratchMultiHeadAttention):
        def call(self, q, k, v, attention_mask=None):
            return super().call(q, k, v, None if attention_mask is None else 1.0 - attention_mask)

    with pytest.raises(CheckFailed, match="mask looks inverted"):
        hidden.grade_multi_head_attention_call(Layer)


def test_call_crash_with_padding_mask_gets_a_hint():
    # batch != heads: a mask without a head axis does not broadcast at all.
    with pytest.raises(CheckFailed, match="head axis"):
        hidden.grade_multi_head_attention_call(make_layer_class(no_head_axis=True))


# ------------------------------------------------------------------------------------------------
# The weight copy


def test_copy_heads_and_depth_swapped():
    expect_both_fail("copy_keras_weights", make_copy(transpose_heads=True), "heads and depth axes are swapped")


def test_copy_bias_missing():
    expect_both_fail("copy_keras_weights", make_copy(skip_bias=True), "bias", "it was not changed")


def test_copy_output_projection_missing():
    expect_both_fail("copy_keras_weights", make_copy(skip_wo=True), "wo's kernel", "not changed")


def test_copy_query_and_key_swapped():
    expect_both_fail("copy_keras_weights", make_copy(swap_qk=True), "it holds the Keras key kernel")


def test_copy_kernel_transposed():
    expect_both_fail("copy_keras_weights", make_copy(transpose_kernel=True), "transposed")


# ------------------------------------------------------------------------------------------------
# Objects that claim to equal everything, unfinished work, crashes


def test_always_equal_objects_fail():
    expect_both_fail("split_heads", lambda x, h: AlwaysEqual(), "tf.Tensor")
    expect_both_fail("merge_heads", lambda x: AlwaysEqual(), "tf.Tensor")

    class Layer(ScratchMultiHeadAttention):
        def call(self, q, k, v, attention_mask=None):
            return AlwaysEqual(), AlwaysEqual()

    expect_both_fail("multi_head_attention_call", Layer, "tf.Tensor")
    expect_both_fail("copy_keras_weights", lambda keras_layer, layer: AlwaysEqual(), "not changed")


def test_not_implemented_propagates():
    def stub(*args):
        raise NotImplementedError()

    class Layer(ScratchMultiHeadAttention):
        def call(self, q, k, v, attention_mask=None):
            raise NotImplementedError()

    for name, fn in [("split_heads", stub), ("merge_heads", stub), ("copy_keras_weights", stub),
                     ("multi_head_attention_call", Layer)]:
        for check in checks(name):
            with pytest.raises(NotImplementedError):
                check(fn)


def test_learner_exception_becomes_check_failure():
    expect_both_fail("split_heads", lambda x, h: tf.reshape(x, (7, 7)), "raised")
