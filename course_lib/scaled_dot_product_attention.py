"""Assignment 02 (scaled dot-product attention and masks): toy data and the visible checks.

The checks run the learner's function on small hand-made inputs whose answers are written out as
numbers, look for the usual mistakes, and print a line starting with a check mark when all is well.
"""

from __future__ import annotations

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

PAD = "<pad>"

# ----------------------------------------------------------------------------------------------
# Toy data for the notebook


def tokenize_and_pad(sentences: Sequence[str]) -> tuple[np.ndarray, list[list[str]], dict[str, int]]:
    """Split on spaces, give every word an id (0 is kept for padding) and pad to the longest sentence.

    Returns the ids (batch, seq) as int32, the tokens per sentence (padded with "<pad>") and the
    vocabulary.
    """
    split = [sentence.lower().split() for sentence in sentences]
    vocabulary = {PAD: 0}
    for words in split:
        for word in words:
            vocabulary.setdefault(word, len(vocabulary))
    length = max(len(words) for words in split)
    tokens = [words + [PAD] * (length - len(words)) for words in split]
    ids = np.array([[vocabulary[word] for word in row] for row in tokens], dtype=np.int32)
    return ids, tokens, vocabulary


def random_embeddings(vocabulary_size: int, dim: int, seed: int = 0) -> np.ndarray:
    """A seeded (vocabulary_size, dim) float32 table of N(0, 1) entries: one vector per token id."""
    return np.random.default_rng(seed).standard_normal((vocabulary_size, dim)).astype(np.float32)


# ----------------------------------------------------------------------------------------------
# Shared diagnostics (also used by the hidden checks in autograde.checks.scaled_dot_product_attention)






def expect_scores(
    result,
    expected,
    name: str,
    *,
    mistakes: Sequence[tuple[object, str]] = (),
    atol: float = 1e-5,
    rtol: float = 1e-5,
) -> None:
    """Compare a score matrix with `expected`; if it equals one of `mistakes`, say which one."""
    actual = to_array(result, name)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape == expected.shape[::-1] and actual.shape != expected.shape:
        raise CheckFailed(
            f"{name} has shape {actual.shape}, expected {expected.shape}: rows must be the queries "
            "and columns the keys (queries (n, d) and keys (m, d) give scores (n, m))"
        )
    expect_shape(actual, expected.shape, name)
    if matches(actual, expected, atol=atol, rtol=rtol):
        return
    for candidate, message in mistakes:
        if matches(actual, candidate, atol=atol, rtol=rtol):
            raise CheckFailed(f"{name} is wrong: {message}")
    expect_close(actual, expected, name, atol=atol, rtol=rtol)


def expect_mask(
    result,
    expected,
    name: str,
    *,
    mistakes: Sequence[tuple[object, str]] = (),
    shape_hints: Sequence[tuple[tuple[int, ...], str]] = (),
) -> None:
    """Check a mask: a float32 tf.Tensor of the right shape whose entries are exactly 0 or 1."""
    expect_tensor(result, name)
    if result.dtype.name != "float32":
        raise CheckFailed(
            f"{name} should have dtype float32, got {result.dtype.name}: "
            "convert it with tf.cast(..., tf.float32)"
        )
    actual = to_array(result, name)
    expected = np.asarray(expected, dtype=np.float64)
    for shape, hint in shape_hints:
        if actual.shape == tuple(shape) and actual.shape != expected.shape:
            raise CheckFailed(f"{name} has shape {actual.shape}, expected {expected.shape}: {hint}")
    expect_shape(actual, expected.shape, name)
    if np.array_equal(actual, expected):
        return
    for candidate, message in mistakes:
        if np.array_equal(actual, np.asarray(candidate, dtype=np.float64)):
            raise CheckFailed(f"{name} is wrong: {message}")
    expect_close(actual, expected, name, atol=0.0, rtol=0.0)


INVERTED_MASK_MESSAGE = (
    "the mask looks inverted: 1 must mean attend and 0 blocked, so the large negative number "
    "goes where the mask is 0, e.g. scores + (1.0 - mask) * -1e9"
)
SCALING_MISSING_MESSAGE = (
    "the scaling is missing: divide the scores q k^T by sqrt(d_k), the length of a key vector"
)


def inspect_attention(
    result,
    *,
    output_shape: tuple[int, ...],
    weights_shape: tuple[int, ...],
    mask=None,
    unmasked_weights=None,
    large_scores: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Structural checks of `(output, attention_weights)`; returns both as float64 arrays.

    Checks, in this order: a pair of float32 tensors, their shapes, weights summing to 1 over the
    last axis, and (with a mask) exactly zero weight on every blocked position.
    """
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise CheckFailed(
            "scaled_dot_product_attention should return a pair (output, attention_weights), "
            f"got {type(result).__name__}"
        )
    output, weights = result
    expect_tensor(output, "output", "float32")
    expect_tensor(weights, "attention_weights", "float32")
    output = to_array(output, "output")
    weights = to_array(weights, "attention_weights")
    if output.shape == tuple(weights_shape) and weights.shape == tuple(output_shape) != output.shape:
        raise CheckFailed(
            f"output has shape {output.shape} and attention_weights {weights.shape}: the pair seems "
            "swapped; return (output, attention_weights) in that order"
        )
    expect_shape(weights, weights_shape, "attention_weights")
    expect_shape(output, output_shape, "output")

    sums = weights.sum(axis=-1)
    if not np.allclose(sums, 1.0, atol=1e-4):
        if weights.ndim >= 2 and np.allclose(weights.sum(axis=-2), 1.0, atol=1e-4):
            raise CheckFailed(
                "attention_weights do not sum to 1 over the last axis (the keys); they sum to 1 over "
                "axis -2 (the queries): apply the softmax with axis=-1"
            )
        raise CheckFailed(
            "attention_weights do not sum to 1 over the last axis (the keys): sums range from "
            f"{sums.min():.4g} to {sums.max():.4g}; apply a softmax over axis=-1 to the scores"
        )
    if weights.min() < 0:
        raise CheckFailed(f"attention_weights has negative entries (minimum {weights.min():.4g})")

    if mask is not None:
        allowed = np.broadcast_to(to_array(mask, "mask") > 0, weights.shape)
        blocked_weights = np.where(allowed, 0.0, weights)
        if np.any(blocked_weights != 0):
            mixed_rows = allowed.any(axis=-1) & ~allowed.all(axis=-1)
            allowed_mass = np.where(allowed, weights, 0.0).sum(axis=-1)
            # With very large blocked scores a weak constant looks the same; other cases tell them apart.
            if not large_scores and mixed_rows.any() and np.all(allowed_mass[mixed_rows] < 1e-6):
                raise CheckFailed(INVERTED_MASK_MESSAGE)
            if not large_scores and unmasked_weights is not None and matches(weights, unmasked_weights,
                                                                               atol=1e-5, rtol=1e-4):
                raise CheckFailed(
                    "the mask is ignored: blocked positions (mask 0) get the same weight as without a "
                    "mask; add a large negative number to their scores before the softmax"
                )
            largest = float(blocked_weights.max())
            message = (
                "blocked positions (mask 0) must get exactly zero weight, but the largest weight on a "
                f"blocked position is {largest:.3g}"
            )
            if large_scores:
                message += (
                    " when their scores are large (about 2e4 here): the number you add to blocked "
                    "scores is not negative enough; use -1e9"
                )
            else:
                message += (
                    ": add a large negative number such as -1e9 to their scores, so that exp() "
                    "underflows to exactly 0 in float32"
                )
            raise CheckFailed(message)
    return output, weights


def expect_attention_values(
    output: np.ndarray,
    weights: np.ndarray,
    expected_output,
    expected_weights,
    *,
    mistakes: Sequence[tuple[object, str]] = (),
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> None:
    """Compare weights (naming a recognised mistake if possible), then the output."""
    if not matches(weights, expected_weights, atol=atol, rtol=rtol):
        for candidate, message in mistakes:
            if matches(weights, candidate, atol=atol, rtol=rtol):
                raise CheckFailed(f"attention_weights are wrong: {message}")
        expect_close(weights, expected_weights, "attention_weights", atol=atol, rtol=rtol,
                     hint="the weights are softmax(q k^T / sqrt(d_k)) over the last axis")
    expect_close(output, expected_output, "output", atol=10 * atol, rtol=rtol,
                 hint="your weights are right; the output is attention_weights @ v")


# ----------------------------------------------------------------------------------------------
# Fixtures of the visible checks: inputs and answers written out as numbers

_QUERIES = np.array([[1, 2, 2], [0, 3, 4]], dtype=np.float32)  # norms 3 and 5
_KEYS = np.array([[1, 0, 0], [0, 0.6, 0.8], [2, -1, 2], [0, 4, -3]], dtype=np.float32)  # norms 1, 1, 3, 5
_DOT = np.array([[1.0, 2.8, 4.0, 2.0], [0.0, 5.0, 5.0, 0.0]])
_WEIGHT = np.array([[1, 2, 0], [0, 1, 0], [1, 0, -1]], dtype=np.float32)
_GENERAL = np.array([[3.0, 0.8, -2.0, 22.0], [4.0, -1.4, -3.0, 24.0]])
_GENERAL_TRANSPOSED_W = np.array([[5.0, 0.4, 6.0, 11.0], [6.0, -1.4, 1.0, 24.0]])
_W_QUERY = np.array([[0.5, -1.0], [0.25, 0.0], [0.0, 0.5]], dtype=np.float32)
_W_KEY = np.array([[1.0, 0.0], [-0.5, 0.5], [0.0, -0.25]], dtype=np.float32)
_V = np.array([1.0, -2.0], dtype=np.float32)
_ADDITIVE = np.array([[0.9640275801, 0.4050317879, 2.5213662095, -2.7453136051],
                      [-0.9866796217, -1.5190048680, -0.5261906764, -2.8479842550]])
_ADDITIVE_SWAPPED = np.array([[1.3863514718, -1.2837107068, 1.5593832669, 2.2847824679],
                              [0.1626401586, -2.3066490283, 0.2890853621, 1.0610711547]])
_ADDITIVE_NO_TANH = np.array([[2.0, 0.5, 5.5, -6.5], [-2.25, -3.75, 1.25, -10.75]])
_QUERY_NORMS = np.array([[3.0], [5.0]])
_KEY_NORMS = np.array([[1.0, 1.0, 3.0, 5.0]])


def _tensors(*arrays):
    import tensorflow as tf

    return [tf.constant(a) for a in arrays]


def check_dot_score(dot_score) -> None:
    """Dot-product scores of two queries against four keys (d = 3)."""
    queries, keys = _tensors(_QUERIES, _KEYS)
    expect_scores(call_learner(dot_score, queries, keys), _DOT, "dot_score(queries, keys)",
                  mistakes=[(_DOT / np.sqrt(3), "dot_score has no scaling; that is scaled_dot_score")])
    expect_scores(call_learner(dot_score, queries[:1], keys[:1]), _DOT[:1, :1], "dot_score for one pair")
    passed("dot_score gives q . k for every query (row) and key (column)")


def check_scaled_dot_score(scaled_dot_score) -> None:
    """Scaled dot-product scores: the dot products divided by sqrt(3)."""
    queries, keys = _tensors(_QUERIES, _KEYS)
    expect_scores(
        call_learner(scaled_dot_score, queries, keys), _DOT / np.sqrt(3.0), "scaled_dot_score(queries, keys)",
        mistakes=[
            (_DOT, SCALING_MISSING_MESSAGE.replace("d_k", "d")),
            (_DOT / 3.0, "divide by sqrt(d), not by d"),
            (_DOT / np.sqrt(2.0), "divide by the square root of the vector length d (the last axis), "
                                  "not of the number of queries"),
            (_DOT / 2.0, "divide by the square root of the vector length d (the last axis), "
                         "not of the number of keys"),
        ],
    )
    passed("scaled_dot_score divides the dot products by sqrt(d)")


def check_general_score(general_score) -> None:
    """General (bilinear) scores q W k^T with a W that is not symmetric."""
    queries, keys, weight = _tensors(_QUERIES, _KEYS, _WEIGHT)
    expect_scores(
        call_learner(general_score, queries, keys, weight), _GENERAL, "general_score(queries, keys, weight)",
        mistakes=[(_GENERAL_TRANSPOSED_W, "it equals q W^T k^T; the formula is q W k^T (W not transposed)"),
                  (_DOT, "the weight matrix is not used")],
    )
    passed("general_score gives q W k^T")


def check_additive_score(additive_score) -> None:
    """Additive (Bahdanau) scores v . tanh(q W_q + k W_k) with h = 2 hidden units."""
    queries, keys, w_query, w_key, v = _tensors(_QUERIES, _KEYS, _W_QUERY, _W_KEY, _V)
    expect_scores(
        call_learner(additive_score, queries, keys, w_query, w_key, v), _ADDITIVE,
        "additive_score(queries, keys, w_query, w_key, v)",
        mistakes=[(_ADDITIVE_SWAPPED, "w_query and w_key are swapped: queries go through w_query"),
                  (_ADDITIVE_NO_TANH, "the tanh is missing: v . tanh(q W_q + k W_k)")],
    )
    passed("additive_score gives v . tanh(q W_q + k W_k) for every query-key pair")


def check_cosine_score(cosine_score) -> None:
    """Cosine similarity: dot products divided by the product of the vector lengths."""
    queries, keys = _tensors(_QUERIES, _KEYS)
    expected = _DOT / (_QUERY_NORMS * _KEY_NORMS)
    result = call_learner(cosine_score, queries, keys)
    expect_scores(
        result, expected, "cosine_score(queries, keys)",
        mistakes=[(_DOT, "the vectors are not normalised: divide by |q| |k|"),
                  (_DOT / _QUERY_NORMS, "only the queries are normalised; divide by |k| as well"),
                  (_DOT / _KEY_NORMS, "only the keys are normalised; divide by |q| as well"),
                  (_DOT / (_QUERY_NORMS**2 * _KEY_NORMS**2), "divide by the lengths |q| |k|, not their "
                                                             "squares")],
    )
    if np.abs(to_array(result, "cosine_score")).max() > 1 + 1e-5:
        raise CheckFailed("cosine scores must lie between -1 and 1")
    passed("cosine_score gives q . k / (|q| |k|), between -1 and 1")


_TOKEN_IDS = np.array([[7, 3, 9, 0, 0], [4, 0, 0, 0, 0], [2, 8, 6, 5, 1]], dtype=np.int32)
_PADDING = np.array([[[1, 1, 1, 0, 0]], [[1, 0, 0, 0, 0]], [[1, 1, 1, 1, 1]]], dtype=np.float64)


def check_create_padding_mask(create_padding_mask) -> None:
    """Padding mask of three sentences of lengths 3, 1 and 5 (id 0 is padding)."""
    import tensorflow as tf

    result = call_learner(create_padding_mask, tf.constant(_TOKEN_IDS))
    expect_mask(
        result, _PADDING, "create_padding_mask(token_ids)",
        mistakes=[(1 - _PADDING, "the mask looks inverted: 1 must mean attend (a real token) and 0 "
                                 "blocked (padding, id 0)")],
        shape_hints=[((3, 5), "the middle axis of size 1 is missing; it lets one mask row broadcast "
                              "over every query position (use tf.newaxis)"),
                     ((3, 1, 1, 5), "one axis too many: the mask is (batch, 1, seq)")],
    )
    single = call_learner(create_padding_mask, tf.constant([[5, 6]], dtype=tf.int32))
    expect_mask(single, [[[1, 1]]], "create_padding_mask for a sentence without padding")
    passed("create_padding_mask marks real tokens with 1 and padding with 0, shape (batch, 1, seq)")


_LOWER_4 = np.array([[[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]], dtype=np.float64)


def check_create_look_ahead_mask(create_look_ahead_mask) -> None:
    """Look-ahead masks for sequence lengths 4 and 1."""
    result = call_learner(create_look_ahead_mask, 4)
    expect_mask(
        result, _LOWER_4, "create_look_ahead_mask(4)",
        mistakes=[
            (np.swapaxes(_LOWER_4, 1, 2), "this is the upper triangle; use the lower one: row i (a query "
                                          "position) may attend to columns 0..i, never to later positions"),
            (1 - _LOWER_4, "the mask looks inverted: 1 must mean attend, so the ones go on and below the "
                           "diagonal"),
            (_LOWER_4 - np.eye(4), "a position must be allowed to attend to itself: put ones on the "
                                   "diagonal too"),
        ],
        shape_hints=[((4, 4), "add a leading axis of size 1 so the mask broadcasts over the batch")],
    )
    expect_mask(call_learner(create_look_ahead_mask, 1), [[[1]]], "create_look_ahead_mask(1)")
    passed("create_look_ahead_mask has ones on and below the diagonal, shape (1, L, L)")


# Thinking Machines (lecture notes): q.k1 = 112, q.k2 = 96 with d_k = 64, so the scaled scores are
# 14 and 12 and the weights 1/(1 + e^-2) = 0.8808 and 0.1192.
_TM_Q = np.ones((1, 64), dtype=np.float32)
_TM_K = np.stack([np.full(64, 1.75), np.full(64, 1.5)]).astype(np.float32)
_TM_V = np.array([[10, 0, 1], [0, 10, 1]], dtype=np.float32)
_TM_TOP = 1 / (1 + np.exp(-2.0))
_TM_WEIGHTS = np.array([[_TM_TOP, 1 - _TM_TOP]])
_TM_UNSCALED = np.array([[1 / (1 + np.exp(-16.0)), 1 - 1 / (1 + np.exp(-16.0))]])
_TM_BY_DK = np.array([[1 / (1 + np.exp(-0.25)), 1 - 1 / (1 + np.exp(-0.25))]])

# A batch of two, three queries, four keys (d_k = 2, d_v = 3), padding mask (2, 1, 4).
_B_Q = np.array([[[1, 0], [0, 2], [1, 1]], [[2, -1], [0, 0], [-1, 1]]], dtype=np.float32)
_B_K = np.array([[[1, 1], [2, 0], [0, -1], [3, 3]], [[0, 1], [1, 2], [5, 5], [-2, 0]]], dtype=np.float32)
_B_V = np.array([[[1, 0, 2], [0, 1, 0], [1, 1, 1], [9, 9, 9]],
                 [[2, 0, 0], [0, 2, 0], [9, 9, 9], [7, 7, 7]]], dtype=np.float32)
_B_MASK = np.array([[[1, 1, 1, 0]], [[1, 1, 0, 0]]], dtype=np.float32)
_B_WEIGHTS = np.array([[[0.2839954097, 0.5759753452, 0.1400292450, 0],
                        [0.7679179361, 0.1866937009, 0.0453883629, 0],
                        [0.4717263166, 0.4717263166, 0.0565473667, 0]],
                       [[0.3302384507, 0.6697615493, 0, 0], [0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0]]])
_B_OUTPUT = np.array([[[0.4240246548, 0.7160045903, 0.7080200645],
                       [0.8133062991, 0.2320820639, 1.5812242352],
                       [0.5282736834, 0.5282736834, 1.0]],
                      [[0.6604769013, 1.3395230987, 0], [1, 1, 0], [1, 1, 0]]])
_B_UNSCALED = np.array([[[0.2447284711, 0.6652409558, 0.0900305732, 0],
                         [0.8668133322, 0.1173104278, 0.0158762400, 0],
                         [0.4878555512, 0.4878555512, 0.0242888977, 0]],
                        [[0.2689414214, 0.7310585786, 0, 0], [0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0]]])
_B_UNMASKED = np.array([[[0.1309854788, 0.2656536120, 0.0645848386, 0.5387760705],
                         [0.0548815758, 0.0133426295, 0.0032438165, 0.9285319782],
                         [0.0525245893, 0.0525245893, 0.0062962932, 0.8886545281]],
                        [[0.0137477139, 0.0278819444, 0.9567223585, 0.0016479831],
                         [0.25, 0.25, 0.25, 0.25],
                         [0.2211810164, 0.2211810164, 0.1090574343, 0.4485805330]]])

# All-zero queries give equal scores, so each row spreads its weight evenly over what it may see.
_LOWER_3 = _LOWER_4[0, :3, :3]
_UNIFORM_CAUSAL = np.array([[1, 0, 0], [1 / 2, 1 / 2, 0], [1 / 3, 1 / 3, 1 / 3]])


def check_scaled_dot_product_attention(scaled_dot_product_attention) -> None:
    """Four small cases: the lecture's Thinking Machines numbers (no batch axis), a padded batch,
    a look-ahead mask with two leading axes, and a blocked key with a very large score."""
    import tensorflow as tf

    # 1. Thinking Machines, no leading axes, no mask.
    q, k, v = _tensors(_TM_Q, _TM_K, _TM_V)
    output, weights = inspect_attention(call_learner(scaled_dot_product_attention, q, k, v, None),
                                        output_shape=(1, 3), weights_shape=(1, 2))
    expect_attention_values(
        output, weights, _TM_WEIGHTS @ _TM_V, _TM_WEIGHTS,
        mistakes=[(_TM_UNSCALED, SCALING_MISSING_MESSAGE + " (scores 112 and 96 should become 14 and 12)"),
                  (_TM_BY_DK, "divide the scores by sqrt(d_k) = 8, not by d_k = 64")],
    )

    # 2. A batch of two with a padding mask (2, 1, 4).
    q, k, v, mask = _tensors(_B_Q, _B_K, _B_V, _B_MASK)
    output, weights = inspect_attention(call_learner(scaled_dot_product_attention, q, k, v, mask),
                                        output_shape=(2, 3, 3), weights_shape=(2, 3, 4),
                                        mask=_B_MASK, unmasked_weights=_B_UNMASKED)
    expect_attention_values(output, weights, _B_OUTPUT, _B_WEIGHTS,
                            mistakes=[(_B_UNSCALED, SCALING_MISSING_MESSAGE)])

    # 3. Two leading axes (batch 2, heads 2) with a look-ahead mask (1, 1, 3, 3).
    q = tf.zeros((2, 2, 3, 4))
    k = tf.reshape(tf.range(48, dtype=tf.float32) / 10.0, (2, 2, 3, 4))
    v = tf.reshape(tf.range(24, dtype=tf.float32), (2, 2, 3, 2))
    causal = _LOWER_3[np.newaxis, np.newaxis].astype(np.float32)
    output, weights = inspect_attention(
        call_learner(scaled_dot_product_attention, q, k, v, tf.constant(causal)),
        output_shape=(2, 2, 3, 2), weights_shape=(2, 2, 3, 3), mask=causal,
        unmasked_weights=np.full((2, 2, 3, 3), 1 / 3),
    )
    expected_weights = np.broadcast_to(_UNIFORM_CAUSAL, (2, 2, 3, 3))
    expect_attention_values(output, weights, expected_weights @ v.numpy(), expected_weights)

    # 4. The blocked key has by far the largest score (2e4): its weight must still be exactly 0.
    q = np.full((1, 1, 4), 100.0, dtype=np.float32)
    k = np.array([[[0, 0, 0, 0], [0, 0, 0, 0], [100, 100, 100, 100]]], dtype=np.float32)
    v = np.array([[[1, 0], [0, 1], [5, 5]]], dtype=np.float32)
    mask = np.array([[[1, 1, 0]]], dtype=np.float32)
    output, weights = inspect_attention(
        call_learner(scaled_dot_product_attention, *_tensors(q, k, v, mask)),
        output_shape=(1, 1, 2), weights_shape=(1, 1, 3), mask=mask, large_scores=True,
    )
    expect_attention_values(output, weights, [[[0.5, 0.5]]], [[[0.5, 0.5, 0.0]]])
    passed("scaled_dot_product_attention: shapes, scaling by sqrt(d_k), softmax over the keys, "
           "masks (blocked weights exactly 0), any number of leading axes")
