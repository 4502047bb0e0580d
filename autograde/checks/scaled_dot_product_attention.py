"""Hidden checks of assignment 02: the learner's functions against the NumPy reference on
seeded random inputs of several shapes. Each `grade_<function>(fn)` raises `CheckFailed` with a
diagnosis or prints one success line (stdout only)."""

from __future__ import annotations

import numpy as np

from autograde.reference import scaled_dot_product_attention as ref
from course_lib.checking import CheckFailed, call_learner, passed, quiet
from course_lib.scaled_dot_product_attention import (
    SCALING_MISSING_MESSAGE,
    expect_attention_values,
    expect_mask,
    expect_scores,
    inspect_attention,
)

# (n queries, m keys, d) chosen so that n, m and d differ, which separates the usual mix-ups.
SCORE_SHAPES = [(1, 1, 1), (3, 5, 4), (6, 2, 16), (4, 7, 64)]


def _quietly(fn, *args):
    """Call the learner's function with Python warnings silenced (nbgrader scores stderr as 0)."""
    with quiet():
        return call_learner(fn, *args)


def _tf(array, dtype="float32"):
    import tensorflow as tf

    return tf.constant(np.asarray(array).astype(dtype))


def _score_inputs(seed: int):
    rng = np.random.default_rng(seed)
    for n, m, d in SCORE_SHAPES:
        yield rng, rng.standard_normal((n, d)), rng.standard_normal((m, d))


def _check_scores(name, fn, make_case):
    """Run `fn` on every case; `make_case(rng, queries, keys)` returns (extra args, expected, mistakes)."""
    for rng, queries, keys in _score_inputs(seed=2):
        extra, expected, mistakes = make_case(rng, queries, keys)
        args = [_tf(queries), _tf(keys), *[_tf(a) for a in extra]]
        label = f"{name} for queries {queries.shape} and keys {keys.shape}"
        expect_scores(_quietly(fn, *args), expected, label, mistakes=mistakes, atol=1e-4, rtol=1e-4)


def grade_dot_score(dot_score) -> None:
    def case(rng, queries, keys):
        return [], ref.dot_score(queries, keys), [
            (ref.scaled_dot_score(queries, keys), "dot_score has no scaling; that is scaled_dot_score")]

    _check_scores("dot_score", dot_score, case)
    passed("dot_score matches the reference on random inputs of 4 shapes")


def grade_scaled_dot_score(scaled_dot_score) -> None:
    def case(rng, queries, keys):
        dot = ref.dot_score(queries, keys)
        n, d = queries.shape
        m = keys.shape[0]
        mistakes = [(dot, SCALING_MISSING_MESSAGE.replace("d_k", "d")),
                    (dot / d, "divide by sqrt(d), not by d")]
        if n != d:
            mistakes.append((dot / np.sqrt(n), "divide by the square root of the vector length d (the "
                                               "last axis), not of the number of queries"))
        if m != d:
            mistakes.append((dot / np.sqrt(m), "divide by the square root of the vector length d (the "
                                               "last axis), not of the number of keys"))
        return [], ref.scaled_dot_score(queries, keys), mistakes

    _check_scores("scaled_dot_score", scaled_dot_score, case)
    passed("scaled_dot_score matches the reference on random inputs of 4 shapes")


def grade_general_score(general_score) -> None:
    def case(rng, queries, keys):
        d = queries.shape[1]
        weight = rng.standard_normal((d, d))
        mistakes = [(ref.general_score(queries, keys, weight.T),
                     "it equals q W^T k^T; the formula is q W k^T (W not transposed)")]
        return [weight], ref.general_score(queries, keys, weight), mistakes if d > 1 else []

    _check_scores("general_score", general_score, case)
    passed("general_score matches the reference on random inputs of 4 shapes")


def grade_additive_score(additive_score) -> None:
    def case(rng, queries, keys):
        d = queries.shape[1]
        hidden = d + 2
        w_query, w_key = rng.standard_normal((d, hidden)), rng.standard_normal((d, hidden))
        v = rng.standard_normal(hidden)
        no_tanh = ((queries @ w_query)[:, None, :] + (keys @ w_key)[None, :, :]) @ v
        mistakes = [(ref.additive_score(queries, keys, w_key, w_query, v),
                     "w_query and w_key are swapped: queries go through w_query"),
                    (no_tanh, "the tanh is missing: v . tanh(q W_q + k W_k)")]
        return [w_query, w_key, v], ref.additive_score(queries, keys, w_query, w_key, v), mistakes

    _check_scores("additive_score", additive_score, case)
    passed("additive_score matches the reference on random inputs of 4 shapes")


def grade_cosine_score(cosine_score) -> None:
    rng = np.random.default_rng(3)
    for n, m, d in SCORE_SHAPES:
        # Vectors of very different lengths, so a missing normalisation cannot hide.
        queries = rng.standard_normal((n, d)) * rng.uniform(0.2, 5.0, size=(n, 1))
        keys = rng.standard_normal((m, d)) * rng.uniform(0.2, 5.0, size=(m, 1))
        dot = ref.dot_score(queries, keys)
        q_norms = np.linalg.norm(queries, axis=1)[:, None]
        k_norms = np.linalg.norm(keys, axis=1)[None, :]
        mistakes = [(dot, "the vectors are not normalised: divide by |q| |k|"),
                    (dot / q_norms, "only the queries are normalised; divide by |k| as well"),
                    (dot / k_norms, "only the keys are normalised; divide by |q| as well")]
        expect_scores(_quietly(cosine_score, _tf(queries), _tf(keys)), ref.cosine_score(queries, keys),
                      f"cosine_score for queries {queries.shape} and keys {keys.shape}",
                      mistakes=mistakes, atol=1e-4, rtol=1e-4)
    passed("cosine_score matches the reference on random inputs of 4 shapes")


def _random_token_ids(rng, batch: int, length: int, *, min_length: int = 1) -> np.ndarray:
    """Token ids in 1..99 followed by zeros (padding); every sentence has at least one token."""
    lengths = rng.integers(min_length, length + 1, size=batch)
    lengths[0] = length  # one sentence without padding
    if batch > 1:
        lengths[1] = min_length  # and one heavily padded
    ids = rng.integers(1, 100, size=(batch, length))
    return np.where(np.arange(length)[None, :] < lengths[:, None], ids, 0)


def grade_create_padding_mask(create_padding_mask) -> None:
    rng = np.random.default_rng(4)
    for batch, length, dtype in [(1, 1, "int32"), (4, 7, "int32"), (8, 12, "int64"), (2, 30, "int32")]:
        ids = _random_token_ids(rng, batch, length)
        expected = ref.padding_mask(ids)
        expect_mask(
            _quietly(create_padding_mask, _tf(ids, dtype)), expected,
            f"create_padding_mask for token ids of shape {ids.shape}",
            mistakes=[(1 - expected, "the mask looks inverted: 1 must mean attend (a real token) and 0 "
                                     "blocked (padding, id 0)")],
            shape_hints=[((batch, length), "the middle axis of size 1 is missing; it lets one mask row "
                                           "broadcast over every query position (use tf.newaxis)"),
                         ((batch, 1, 1, length), "one axis too many: the mask is (batch, 1, seq)")],
        )
    passed("create_padding_mask matches the reference for 4 random batches")


def grade_create_look_ahead_mask(create_look_ahead_mask) -> None:
    for length in [5, 16, 2, 1]:  # longer first: a diagnosis needs more than one entry
        expected = ref.look_ahead_mask(length)
        lower = expected[0]
        mistakes = [(lower.T[None], "this is the upper triangle; use the lower one: row i (a query "
                                    "position) may attend to columns 0..i, never to later positions"),
                    (1 - expected, "the mask looks inverted: 1 must mean attend, so the ones go on and "
                                   "below the diagonal"),
                    ((lower - np.eye(length))[None], "a position must be allowed to attend to itself: "
                                                     "put ones on the diagonal too")]
        expect_mask(_quietly(create_look_ahead_mask, length), expected,
                    f"create_look_ahead_mask({length})", mistakes=mistakes if length > 1 else [],
                    shape_hints=[((length, length), "add a leading axis of size 1 so the mask "
                                                    "broadcasts over the batch")])
    passed("create_look_ahead_mask matches the reference for lengths 1, 2, 5 and 16")


def _attention_cases(rng):
    """Yield (description, q, k, v, mask) covering 0, 1 and 2 leading axes and the mask shapes."""
    normal = rng.standard_normal

    def mixed_mask(shape):  # random 0/1 with at least one 1 and (if possible) one 0 in every row
        mask = (rng.random(shape) < 0.6).astype(np.float64)
        mask[..., 0] = 1.0
        if shape[-1] > 1:
            mask[..., -1] = 0.0
        return mask

    # No leading axes: (n, d_k) queries.
    yield "no batch axis, no mask", normal((5, 8)), normal((7, 8)), normal((7, 3)), None
    yield "no batch axis, mask (5, 7)", normal((5, 8)), normal((7, 8)), normal((7, 3)), mixed_mask((5, 7))
    yield "no batch axis, mask (1, 7)", normal((5, 8)), normal((7, 8)), normal((7, 3)), mixed_mask((1, 7))

    # One leading axis (batch): padding mask (batch, 1, seq) and look-ahead mask (1, L, L).
    batch, length, d_k, d_v = 3, 6, 16, 5
    x_q, x_k, x_v = normal((batch, length, d_k)), normal((batch, length, d_k)), normal((batch, length, d_v))
    padding = ref.padding_mask(_random_token_ids(rng, batch, length, min_length=2))
    yield "batch 3, self-attention, no mask", x_q, x_k, x_v, None
    yield "batch 3, padding mask (3, 1, 6)", x_q, x_k, x_v, padding
    yield "batch 3, look-ahead mask (1, 6, 6)", x_q, x_k, x_v, ref.look_ahead_mask(length)
    yield ("batch 3, cross-attention 4 queries -> 6 keys, padding mask (3, 1, 6)",
           normal((batch, 4, d_k)), x_k, x_v, padding)

    # Two leading axes (batch, heads): masks (batch, 1, 1, seq), (1, 1, L, L) and their product.
    heads, length = 2, 5
    shape = (batch, heads, length)
    x_q, x_k, x_v = normal((*shape, 4)), normal((*shape, 4)), normal((*shape, 3))
    padding = ref.padding_mask(_random_token_ids(rng, batch, length, min_length=2))[:, None]
    causal = ref.look_ahead_mask(length)[None]
    yield "batch 3, 2 heads, padding mask (3, 1, 1, 5)", x_q, x_k, x_v, padding
    yield "batch 3, 2 heads, look-ahead mask (1, 1, 5, 5)", x_q, x_k, x_v, causal
    yield "batch 3, 2 heads, padding x look-ahead mask (3, 1, 5, 5)", x_q, x_k, x_v, padding * causal


def _large_score_case(rng):
    """Blocked keys whose scores are about 2e4 above the others: their weight must still be 0."""
    q = np.full((2, 3, 4), 100.0) + rng.uniform(-1, 1, size=(2, 3, 4))
    k = rng.uniform(-0.5, 0.5, size=(2, 5, 4))
    k[:, 3:] = 100.0
    v = rng.standard_normal((2, 5, 3))
    mask = np.array([[[1, 1, 1, 0, 0]], [[1, 1, 0, 0, 0]]], dtype=np.float64)
    return q, k, v, mask


def grade_scaled_dot_product_attention(scaled_dot_product_attention) -> None:
    rng = np.random.default_rng(5)
    cases = list(_attention_cases(rng))
    cases.append(("blocked keys with very large scores", *_large_score_case(rng)))
    for description, q, k, v, mask in cases:
        # Round to float32 first so the reference sees exactly what the learner's function sees.
        q, k, v = (np.asarray(a, dtype=np.float32).astype(np.float64) for a in (q, k, v))
        d_k, d_v = k.shape[-1], v.shape[-1]
        scores_shape = (*np.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])
        try:
            output, weights = inspect_attention(
                _quietly(scaled_dot_product_attention, _tf(q), _tf(k), _tf(v),
                         None if mask is None else _tf(mask)),
                output_shape=(*scores_shape[:-1], d_v), weights_shape=scores_shape, mask=mask,
                unmasked_weights=ref.attention_weights(q, k), large_scores="large" in description,
            )
            expected_output, expected_weights = ref.scaled_dot_product_attention(q, k, v, mask)
            mistakes = [(ref.attention_weights(q, k, mask, scale=1.0), SCALING_MISSING_MESSAGE),
                        (ref.attention_weights(q, k, mask, scale=1.0 / d_k),
                         "divide the scores by sqrt(d_k), not by d_k")]
            if d_v != d_k:
                mistakes.append((ref.attention_weights(q, k, mask, scale=1.0 / np.sqrt(d_v)),
                                 "divide by sqrt(d_k), the length of the keys, not sqrt(d_v)"))
            expect_attention_values(output, weights, expected_output, expected_weights,
                                    mistakes=mistakes, atol=2e-5, rtol=2e-4)
        except CheckFailed as failure:
            raise CheckFailed(f"[{description}] {failure}") from None
    passed(f"scaled_dot_product_attention matches the reference in {len(cases)} cases "
           "(0, 1 and 2 leading axes, padding and look-ahead masks, very large scores)")
