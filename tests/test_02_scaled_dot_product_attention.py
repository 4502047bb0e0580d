"""Assignment 02: the reference reproduces the lecture's numbers, and the visible checks
(course_lib.scaled_dot_product_attention) and hidden checks (autograde.checks.scaled_dot_product_attention)
accept correct functions and reject the usual mistakes with the right diagnosis."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from autograde.checks import scaled_dot_product_attention as hidden  # noqa: E402
from autograde.reference import scaled_dot_product_attention as ref  # noqa: E402
from course_lib import scaled_dot_product_attention as visible  # noqa: E402
from course_lib.checking import CheckFailed  # noqa: E402

from conftest import AlwaysEqual  # noqa: E402

# ------------------------------------------------------------------------------------------------
# Reference against the lecture notes


def test_thinking_machines_numbers():
    q = np.ones((1, 64))
    k = np.stack([np.full(64, 1.75), np.full(64, 1.5)])
    np.testing.assert_allclose(ref.dot_score(q, k), [[112, 96]])
    np.testing.assert_allclose(ref.scaled_dot_score(q, k), [[14, 12]])
    _, weights = ref.scaled_dot_product_attention(q, k, np.eye(2))
    np.testing.assert_allclose(weights.round(2), [[0.88, 0.12]])


def test_key_value_example():
    queries = np.eye(3)[:2]  # man, woman
    keys = np.array([[0.7, 0.0, 0.5], [0.0, 0.7, 0.5]])  # boy, girl
    values = np.array([[1, 0, 1], [1, 1, 0]])  # (child, female, male)
    similarity = ref.dot_score(queries, keys)
    np.testing.assert_allclose(similarity, [[0.7, 0.0], [0.0, 0.7]])
    np.testing.assert_allclose(similarity @ values, [[0.7, 0.0, 0.7], [0.7, 0.7, 0.0]])
    soft = ref.softmax(similarity) @ values
    top = 1 / (1 + np.exp(-0.7))
    np.testing.assert_allclose(soft, [[1, 1 - top, top], [1, top, 1 - top]])


def test_reference_masks_and_softmax():
    np.testing.assert_array_equal(ref.padding_mask(np.array([[3, 0]])), [[[1, 0]]])
    np.testing.assert_array_equal(ref.look_ahead_mask(3)[0], np.tril(np.ones((3, 3))))
    np.testing.assert_allclose(ref.softmax(np.array([1000.0, 0.0])), [1.0, 0.0])  # no overflow
    np.testing.assert_array_equal(ref.softmax(np.array([-np.inf, -np.inf])), [0.0, 0.0])
    _, weights = ref.scaled_dot_product_attention(np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 1)),
                                                  np.array([[1, 1, 0]]))
    assert np.all(weights[:, 2] == 0)


# ------------------------------------------------------------------------------------------------
# Correct implementations (TensorFlow, as a learner would write them)


def dot_score(queries, keys):
    return tf.matmul(queries, keys, transpose_b=True)


def scaled_dot_score(queries, keys):
    return dot_score(queries, keys) / tf.sqrt(tf.cast(tf.shape(keys)[-1], tf.float32))


def general_score(queries, keys, weight):
    return queries @ weight @ tf.transpose(keys)


def additive_score(queries, keys, w_query, w_key, v):
    hidden_layer = tf.tanh(tf.expand_dims(queries @ w_query, 1) + tf.expand_dims(keys @ w_key, 0))
    return tf.tensordot(hidden_layer, v, axes=1)


def cosine_score(queries, keys):
    return dot_score(tf.math.l2_normalize(queries, -1), tf.math.l2_normalize(keys, -1))


def create_padding_mask(token_ids):
    return tf.cast(token_ids != 0, tf.float32)[:, tf.newaxis, :]


def create_look_ahead_mask(sequence_length):
    rows = tf.range(sequence_length)[:, tf.newaxis]
    return tf.cast(tf.range(sequence_length)[tf.newaxis, :] <= rows, tf.float32)[tf.newaxis]


def make_attention(*, scale="sqrt", blocked=-1e9, inverted=False, axis=-1, post=None):
    """An attention function with one deliberate change (the defaults give a correct one)."""

    def attention(q, k, v, mask):
        d_k = tf.cast(tf.shape(k)[-1], tf.float32)
        scores = tf.matmul(q, k, transpose_b=True)
        if scale == "sqrt":
            scores /= tf.sqrt(d_k)
        elif scale == "d":
            scores /= d_k
        elif scale == "sqrt_d_v":
            scores /= tf.sqrt(tf.cast(tf.shape(v)[-1], tf.float32))
        if mask is not None:
            blocked_where = mask if inverted else 1.0 - mask
            scores += blocked_where * blocked
        weights = tf.nn.softmax(scores, axis=axis)
        output = tf.matmul(weights, v)
        return post(output, weights) if post else (output, weights)

    return attention


def attention_with_tf_where(q, k, v, mask):
    scores = tf.matmul(q, k, transpose_b=True) / tf.sqrt(tf.cast(tf.shape(k)[-1], tf.float32))
    if mask is not None:
        scores = tf.where(tf.broadcast_to(mask, tf.shape(scores)) > 0, scores, -np.inf)
    weights = tf.nn.softmax(scores)
    return weights @ v, weights


CORRECT = {
    "dot_score": dot_score,
    "scaled_dot_score": scaled_dot_score,
    "general_score": general_score,
    "additive_score": additive_score,
    "cosine_score": cosine_score,
    "create_padding_mask": create_padding_mask,
    "create_look_ahead_mask": create_look_ahead_mask,
    "scaled_dot_product_attention": make_attention(),
}


def run_both(name, fn):
    getattr(visible, f"check_{name}")(fn)
    getattr(hidden, f"grade_{name}")(fn)


def expect_both_fail(name, fn, *fragments):
    """Both the visible and the hidden check reject `fn` with a message containing `fragments`."""
    for check in (getattr(visible, f"check_{name}"), getattr(hidden, f"grade_{name}")):
        with pytest.raises(CheckFailed) as failure:
            check(fn)
        message = str(failure.value)
        for fragment in fragments:
            assert fragment in message, f"{check.__module__}.{check.__name__}: {message}"


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_implementations_pass(name, capsys):
    run_both(name, CORRECT[name])
    out = capsys.readouterr()
    assert out.out.count("\N{CHECK MARK}") == 2
    assert out.err == ""


def test_attention_with_tf_where_passes():
    run_both("scaled_dot_product_attention", attention_with_tf_where)


# ------------------------------------------------------------------------------------------------
# Deliberately wrong attention functions


def test_attention_without_scaling():
    expect_both_fail("scaled_dot_product_attention", make_attention(scale=None), "scaling is missing")


def test_attention_scaled_by_d_k():
    expect_both_fail("scaled_dot_product_attention", make_attention(scale="d"), "not by d_k")


def test_attention_scaled_by_d_v():
    expect_both_fail("scaled_dot_product_attention", make_attention(scale="sqrt_d_v"), "not sqrt(d_v)")


def test_attention_mask_inverted():
    expect_both_fail("scaled_dot_product_attention", make_attention(inverted=True),
                     "mask looks inverted: 1 must mean attend")


def test_attention_softmax_over_wrong_axis():
    expect_both_fail("scaled_dot_product_attention", make_attention(axis=-2),
                     "do not sum to 1 over the last axis")


@pytest.mark.parametrize("blocked", [-1e4, -30.0])
def test_attention_blocked_weight_not_exactly_zero(blocked):
    # "Exactly zero" means the float32 weight compares equal to 0.0. A constant of -1e4 gets there for
    # ordinary scores but not when a blocked key scores 2e4 (the large-score cases); -30 leaves weights
    # of about 1e-13 everywhere. (TensorFlow flushes subnormals to zero, so -100 would pass.)
    expect_both_fail("scaled_dot_product_attention", make_attention(blocked=blocked), "exactly zero")


def test_attention_mask_ignored():
    expect_both_fail("scaled_dot_product_attention", make_attention(blocked=0.0), "mask is ignored")


def test_attention_wrong_shape():
    expect_both_fail("scaled_dot_product_attention",
                     make_attention(post=lambda output, weights: (output[..., :1], weights)),
                     "output has shape")


def test_attention_pair_swapped():
    expect_both_fail("scaled_dot_product_attention",
                     make_attention(post=lambda output, weights: (weights, output)), "swapped")


def test_attention_not_a_tensor():
    expect_both_fail("scaled_dot_product_attention",
                     make_attention(post=lambda output, weights: (output.numpy(), weights.numpy())),
                     "should be a tf.Tensor")


def test_attention_float64():
    def attention(q, k, v, mask):
        output, weights = make_attention()(q, k, v, mask)
        return tf.cast(output, tf.float64), tf.cast(weights, tf.float64)

    expect_both_fail("scaled_dot_product_attention", attention, "dtype float32")


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_always_equal_object_fails(name):
    if name == "scaled_dot_product_attention":
        def fn(*args):
            return AlwaysEqual(), AlwaysEqual()
    else:
        def fn(*args):
            return AlwaysEqual()
    for check in (getattr(visible, f"check_{name}"), getattr(hidden, f"grade_{name}")):
        with pytest.raises(CheckFailed):
            check(fn)


def test_not_implemented_propagates():
    def stub(*args):
        raise NotImplementedError()

    for name in CORRECT:
        for check in (getattr(visible, f"check_{name}"), getattr(hidden, f"grade_{name}")):
            with pytest.raises(NotImplementedError):
                check(stub)


def test_learner_exception_becomes_check_failure():
    def broken(q, k, v, mask):
        return tf.matmul(q, v)  # incompatible shapes

    expect_both_fail("scaled_dot_product_attention", broken, "raised")


# ------------------------------------------------------------------------------------------------
# Deliberately wrong masks


def test_padding_mask_missing_middle_axis():
    expect_both_fail("create_padding_mask", lambda ids: tf.cast(ids != 0, tf.float32),
                     "middle axis of size 1 is missing")


def test_padding_mask_four_axes():
    expect_both_fail("create_padding_mask",
                     lambda ids: tf.cast(ids != 0, tf.float32)[:, tf.newaxis, tf.newaxis, :],
                     "one axis too many")


def test_padding_mask_inverted():
    expect_both_fail("create_padding_mask", lambda ids: tf.cast(ids == 0, tf.float32)[:, tf.newaxis],
                     "mask looks inverted: 1 must mean attend")


def test_padding_mask_of_the_first_tokens_counted():
    def counted(ids):
        lengths = tf.reduce_sum(tf.cast(ids != 0, tf.int32), axis=1)
        return tf.sequence_mask(lengths, tf.shape(ids)[1], tf.float32)[:, tf.newaxis, :]

    expect_both_fail("create_padding_mask", counted, "padding comes before the tokens")


def test_attention_with_a_transpose_for_four_axes_at_most():
    def by_rank(q, k, v, mask):
        perm = {2: [1, 0], 3: [0, 2, 1], 4: [0, 1, 3, 2]}[len(k.shape)]
        scores = tf.matmul(q, tf.transpose(k, perm)) / tf.sqrt(tf.cast(tf.shape(k)[-1], q.dtype))
        if mask is not None:
            scores += (1.0 - mask) * -1e9
        weights = tf.nn.softmax(scores, axis=-1)
        return tf.matmul(weights, v), weights

    expect_both_fail("scaled_dot_product_attention", by_rank, "raised KeyError: 5")


def test_padding_mask_wrong_dtype():
    expect_both_fail("create_padding_mask", lambda ids: (ids != 0)[:, tf.newaxis], "float32")


def test_padding_mask_not_a_tensor():
    expect_both_fail("create_padding_mask",
                     lambda ids: (ids.numpy() != 0).astype(np.float32)[:, None], "tf.Tensor")


def test_look_ahead_mask_upper_triangle():
    expect_both_fail("create_look_ahead_mask",
                     lambda n: tf.transpose(create_look_ahead_mask(n), (0, 2, 1)), "upper triangle")


def test_look_ahead_mask_inverted():
    expect_both_fail("create_look_ahead_mask", lambda n: 1.0 - create_look_ahead_mask(n),
                     "mask looks inverted: 1 must mean attend")


def test_look_ahead_mask_without_diagonal():
    expect_both_fail("create_look_ahead_mask",
                     lambda n: create_look_ahead_mask(n) - tf.eye(n)[tf.newaxis], "attend to itself")


def test_look_ahead_mask_missing_leading_axis():
    expect_both_fail("create_look_ahead_mask", lambda n: create_look_ahead_mask(n)[0],
                     "leading axis of size 1")


# ------------------------------------------------------------------------------------------------
# Deliberately wrong score functions


def test_scaled_dot_score_without_scaling():
    expect_both_fail("scaled_dot_score", dot_score, "scaling is missing")


def test_scaled_dot_score_divided_by_d():
    def by_d(queries, keys):
        return dot_score(queries, keys) / tf.cast(tf.shape(keys)[-1], tf.float32)

    expect_both_fail("scaled_dot_score", by_d, "not by d")


def test_scaled_dot_score_wrong_length():
    def by_number_of_keys(queries, keys):
        return dot_score(queries, keys) / tf.sqrt(tf.cast(tf.shape(keys)[0], tf.float32))

    expect_both_fail("scaled_dot_score", by_number_of_keys, "not of the number of keys")


def test_dot_score_transposed():
    expect_both_fail("dot_score", lambda queries, keys: tf.matmul(keys, queries, transpose_b=True),
                     "rows must be the queries")


def test_general_score_transposed_weight():
    expect_both_fail("general_score",
                     lambda queries, keys, weight: general_score(queries, keys, tf.transpose(weight)),
                     "W not transposed")


def test_general_score_weight_unused():
    expect_both_fail("general_score", lambda queries, keys, weight: dot_score(queries, keys), "not used")


def test_additive_score_swapped_weights():
    expect_both_fail("additive_score",
                     lambda queries, keys, w_query, w_key, v: additive_score(queries, keys, w_key, w_query, v),
                     "swapped")


def test_additive_score_without_tanh():
    def no_tanh(queries, keys, w_query, w_key, v):
        summed = tf.expand_dims(queries @ w_query, 1) + tf.expand_dims(keys @ w_key, 0)
        return tf.tensordot(summed, v, axes=1)

    expect_both_fail("additive_score", no_tanh, "tanh is missing")


def test_cosine_score_not_normalised():
    expect_both_fail("cosine_score", dot_score, "not normalised")


def test_cosine_score_only_queries_normalised():
    expect_both_fail("cosine_score",
                     lambda queries, keys: dot_score(tf.math.l2_normalize(queries, -1), keys),
                     "only the queries")


def test_cosine_score_divided_by_squared_lengths():
    def squared(queries, keys):
        return dot_score(queries, keys) / (tf.reduce_sum(queries**2, -1)[:, tf.newaxis]
                                           * tf.reduce_sum(keys**2, -1)[tf.newaxis, :])

    expect_both_fail("cosine_score", squared, "not their squares")
