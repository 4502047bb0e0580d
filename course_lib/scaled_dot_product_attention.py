"""Assignment 02 (scaled dot-product attention and masks): toy data and the visible checks.

The checks run the learner's function on small hand-made inputs and compare with values generated from
the reference (`course_lib/expected/02_scaled_dot_product_attention.json`, written by
`python -m autograde.expected`), name the usual mistakes, and print a line starting with a check mark
when all is well. This module holds no solution code.
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
    shows_mistake,
    stored_mistakes,
    to_array,
    to_tensor,
)
from course_lib.expected import load as load_expected

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
        if shows_mistake(actual, candidate, expected, atol=atol, rtol=rtol):
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


def padding_shape_hints(batch: int, length: int) -> list[tuple[tuple[int, ...], str]]:
    """What a padding mask of a wrong shape is missing, for `expect_mask(shape_hints=...)`."""
    return [((batch, length), "the middle axis of size 1 is missing; it lets one mask row broadcast over every "
                              "query position (use tf.newaxis)"),
            ((batch, 1, 1, length), "one axis too many: the mask is (batch, 1, seq)")]


def look_ahead_shape_hints(length: int) -> list[tuple[tuple[int, ...], str]]:
    """What a look-ahead mask of a wrong shape is missing, for `expect_mask(shape_hints=...)`."""
    return [((length, length), "add a leading axis of size 1 so the mask broadcasts over the batch")]


INVERTED_MASK_MESSAGE = (
    "the mask looks inverted: 1 must mean attend and 0 blocked, so the large negative number "
    "goes where the mask is 0, e.g. scores + (1.0 - mask) * -1e9"
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
            if shows_mistake(weights, candidate, expected_weights, atol=atol, rtol=rtol):
                raise CheckFailed(f"attention_weights are wrong: {message}")
        expect_close(weights, expected_weights, "attention_weights", atol=atol, rtol=rtol,
                     hint="the weights are softmax(q k^T / sqrt(d_k)) over the last axis")
    expect_close(output, expected_output, "output", atol=10 * atol, rtol=rtol,
                 hint="your weights are right; the output is attention_weights @ v")




# ----------------------------------------------------------------------------------------------
# The visible checks: hand-made inputs, generated answers and mistakes

STEM = "02_scaled_dot_product_attention"


def _score_inputs(*names: str):
    inputs = load_expected(STEM, "score_inputs")
    return [to_tensor(inputs[name]) for name in names]


def _expect_scores_of(name: str, fn, *inputs: str):
    """Run a score function on the generated inputs named `inputs`; compare with its generated case."""
    case = load_expected(STEM, name)
    result = call_learner(fn, *_score_inputs(*inputs))
    expect_scores(result, case["expected"], f"{name}({', '.join(inputs)})", mistakes=stored_mistakes(case["mistakes"]))
    return result


def check_dot_score(dot_score) -> None:
    """Dot-product scores of two queries against four keys (d = 3)."""
    _expect_scores_of("dot_score", dot_score, "queries", "keys")
    queries, keys = _score_inputs("queries", "keys")
    expect_scores(call_learner(dot_score, queries[:1], keys[:1]), load_expected(STEM, "dot_score", "expected")[:1, :1],
                  "dot_score for one pair")
    passed("dot_score gives q . k for every query (row) and key (column)")


def check_scaled_dot_score(scaled_dot_score) -> None:
    """Scaled dot-product scores: the dot products divided by sqrt(3)."""
    _expect_scores_of("scaled_dot_score", scaled_dot_score, "queries", "keys")
    passed("scaled_dot_score divides the dot products by sqrt(d)")


def check_general_score(general_score) -> None:
    """General (bilinear) scores q W k^T with a W that is not symmetric."""
    _expect_scores_of("general_score", general_score, "queries", "keys", "weight")
    passed("general_score gives q W k^T")


def check_additive_score(additive_score) -> None:
    """Additive (Bahdanau) scores v . tanh(q W_q + k W_k) with h = 2 hidden units."""
    _expect_scores_of("additive_score", additive_score, "queries", "keys", "w_query", "w_key", "v")
    passed("additive_score gives v . tanh(q W_q + k W_k) for every query-key pair")


def check_cosine_score(cosine_score) -> None:
    """Cosine similarity: dot products divided by the product of the vector lengths (1, 1, 3, 5 and 3, 5)."""
    result = _expect_scores_of("cosine_score", cosine_score, "queries", "keys")
    if np.abs(to_array(result, "cosine_score")).max() > 1 + 1e-5:
        raise CheckFailed("cosine scores must lie between -1 and 1")
    passed("cosine_score gives q . k / (|q| |k|), between -1 and 1")


def check_create_padding_mask(create_padding_mask) -> None:
    """Padding mask of three sentences of lengths 3, 1 and 5 (id 0 is padding), of one without padding, and of one
    padded before its tokens beside one of padding only."""
    case = load_expected(STEM, "create_padding_mask")
    expect_mask(call_learner(create_padding_mask, to_tensor(case["token_ids"], "int32")), case["expected"],
                "create_padding_mask(token_ids)", mistakes=stored_mistakes(case["mistakes"]),
                shape_hints=padding_shape_hints(*case["token_ids"].shape))
    expect_mask(call_learner(create_padding_mask, to_tensor(case["unpadded_ids"], "int32")),
                case["unpadded_expected"], "create_padding_mask for a sentence without padding")
    expect_mask(call_learner(create_padding_mask, to_tensor(case["left_padded_ids"], "int32")),
                case["left_padded_expected"], "create_padding_mask for padding before the tokens and padding only",
                mistakes=stored_mistakes(case["left_padded_mistakes"]))
    passed("create_padding_mask marks real tokens with 1 and padding with 0, shape (batch, 1, seq)")


def check_create_look_ahead_mask(create_look_ahead_mask) -> None:
    """Look-ahead masks for sequence lengths 4 and 1."""
    case = load_expected(STEM, "create_look_ahead_mask")
    expect_mask(call_learner(create_look_ahead_mask, 4), case["expected"], "create_look_ahead_mask(4)",
                mistakes=stored_mistakes(case["mistakes"]), shape_hints=look_ahead_shape_hints(4))
    expect_mask(call_learner(create_look_ahead_mask, 1), case["length_1"], "create_look_ahead_mask(1)")
    passed("create_look_ahead_mask has ones on and below the diagonal, shape (1, L, L)")


# In this order: the lecture's Thinking Machines numbers (no batch axis, no mask), a padded batch, a look-ahead
# mask with two leading axes (batch, heads), a blocked key with a very large score, and one query with three
# leading axes.
ATTENTION_CASES = ("lecture", "padded_batch", "look_ahead_two_axes", "blocked_large_score", "three_axes_one_query")


def check_scaled_dot_product_attention(scaled_dot_product_attention) -> None:
    """Five small cases: the lecture's Thinking Machines numbers (no batch axis), a padded batch,
    a look-ahead mask with two leading axes, a blocked key with a very large score, and one query with three
    leading axes."""
    for name in ATTENTION_CASES:
        case = load_expected(STEM, "scaled_dot_product_attention", name)
        mask = case.get("mask")
        result = call_learner(scaled_dot_product_attention, to_tensor(case["q"]), to_tensor(case["k"]),
                              to_tensor(case["v"]), to_tensor(mask))
        output, weights = inspect_attention(result, output_shape=case["output"].shape,
                                            weights_shape=case["weights"].shape, mask=mask,
                                            unmasked_weights=case.get("unmasked_weights"),
                                            large_scores=name == "blocked_large_score")
        expect_attention_values(output, weights, case["output"], case["weights"],
                                mistakes=stored_mistakes(case["mistakes"]))
    passed("scaled_dot_product_attention: shapes, scaling by sqrt(d_k), softmax over the keys, "
           "masks (blocked weights exactly 0), any number of leading axes")
