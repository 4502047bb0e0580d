"""Hidden checks of assignment 02: the learner's functions against the NumPy reference on
seeded random inputs of several shapes. Each `grade_<function>(fn)` raises `CheckFailed` with a
diagnosis or prints one success line (stdout only)."""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.mistakes import results
from autograde.mistakes import scaled_dot_product_attention as mistakes
from autograde.reference import scaled_dot_product_attention as ref
from course_lib.checking import CheckFailed, passed, quietly, to_tensor
from course_lib.scaled_dot_product_attention import (
    expect_attention_values,
    expect_mask,
    expect_scores,
    inspect_attention,
    look_ahead_shape_hints,
    padding_shape_hints,
)

# (n queries, m keys, d) chosen so that n, m and d differ, which separates the usual mix-ups.
SCORE_SHAPES = [(1, 1, 1), (3, 5, 4), (6, 2, 16), (4, 7, 64)]


def _grade_scores(name, fn, reference, catalogue, more_inputs=lambda rng, d: ()) -> None:
    """`fn` against `reference` on random queries and keys of every shape; `more_inputs(rng, d)` draws the
    score's other arguments (weights)."""
    rng = draw(2)
    for n, m, d in SCORE_SHAPES:
        queries, keys = rng.standard_normal((n, d)), rng.standard_normal((m, d))
        inputs = (queries, keys, *more_inputs(rng, d))
        expect_scores(quietly(fn, *(to_tensor(a) for a in inputs)), reference(*inputs),
                      f"{name} for queries {queries.shape} and keys {keys.shape}",
                      mistakes=results(catalogue, *inputs), atol=1e-4, rtol=1e-4)
    passed(f"{name} matches the reference on random inputs of {len(SCORE_SHAPES)} shapes")


def grade_dot_score(dot_score) -> None:
    _grade_scores("dot_score", dot_score, ref.dot_score, mistakes.DOT_SCORE)


def grade_scaled_dot_score(scaled_dot_score) -> None:
    _grade_scores("scaled_dot_score", scaled_dot_score, ref.scaled_dot_score, mistakes.SCALED_DOT_SCORE)


def grade_general_score(general_score) -> None:
    _grade_scores("general_score", general_score, ref.general_score, mistakes.GENERAL_SCORE,
                  lambda rng, d: (rng.standard_normal((d, d)),))


def _additive_weights(rng, d: int):
    hidden = d + 2
    return rng.standard_normal((d, hidden)), rng.standard_normal((d, hidden)), rng.standard_normal(hidden)


def grade_additive_score(additive_score) -> None:
    _grade_scores("additive_score", additive_score, ref.additive_score, mistakes.ADDITIVE_SCORE, _additive_weights)


def _length_factors(rng, count: int) -> np.ndarray:
    """(count, 1) factors between 0.2 and 5; with two vectors or more, the first is 0.2 and the last 5."""
    factors = rng.uniform(0.2, 5.0, size=(count, 1))
    if count > 1:
        factors[0], factors[-1] = 0.2, 5.0
    return factors


def grade_cosine_score(cosine_score) -> None:
    rng = draw(3)
    for n, m, d in SCORE_SHAPES:
        # Vectors of very different lengths, so a missing normalisation cannot hide.
        queries = rng.standard_normal((n, d)) * _length_factors(rng, n)
        keys = rng.standard_normal((m, d)) * _length_factors(rng, m)
        expect_scores(quietly(cosine_score, to_tensor(queries), to_tensor(keys)), ref.cosine_score(queries, keys),
                      f"cosine_score for queries {queries.shape} and keys {keys.shape}",
                      mistakes=results(mistakes.COSINE_SCORE, queries, keys), atol=1e-4, rtol=1e-4)
    passed("cosine_score matches the reference on random inputs of 4 shapes")


def _random_token_ids(rng, batch: int, length: int, *, min_length: int = 1) -> np.ndarray:
    """Token ids in 1..99 followed by zeros (padding); every sentence has at least one token."""
    lengths = rng.integers(min_length, length + 1, size=batch)
    lengths[0] = length  # one sentence without padding
    if batch > 1:
        lengths[1] = min_length  # and one heavily padded
    ids = rng.integers(1, 100, size=(batch, length))
    return np.where(np.arange(length)[None, :] < lengths[:, None], ids, 0)


def _unusual_token_ids(rng) -> np.ndarray:
    """Sentences the random batches never give: padding before the tokens, padding only, padding at the end."""
    ids = rng.integers(1, 100, size=(3, 6))
    ids[0, :2] = 0
    ids[1] = 0
    ids[2, 4:] = 0
    return ids


def grade_create_padding_mask(create_padding_mask) -> None:
    rng = draw(4)
    batches = [(_random_token_ids(rng, batch, length), dtype, "")
               for batch, length, dtype in [(1, 1, "int32"), (4, 7, "int32"), (8, 12, "int64"), (2, 30, "int32")]]
    batches.append((_unusual_token_ids(rng), "int32", " (padding before the tokens; a sentence of padding only)"))
    for ids, dtype, what in batches:
        expect_mask(quietly(create_padding_mask, to_tensor(ids, dtype)), ref.padding_mask(ids),
                    f"create_padding_mask for token ids of shape {ids.shape}{what}",
                    mistakes=results(mistakes.PADDING_MASK, ids), shape_hints=padding_shape_hints(*ids.shape))
    passed(f"create_padding_mask matches the reference for {len(batches)} batches (padding at the end, before the "
           "tokens, and only padding)")


def grade_create_look_ahead_mask(create_look_ahead_mask) -> None:
    for length in [5, 16, 2, 1]:  # longer first: a diagnosis needs more than one entry
        # With one entry the wrong masks coincide, so none is named.
        named = results(mistakes.LOOK_AHEAD_MASK, length) if length > 1 else []
        expect_mask(quietly(create_look_ahead_mask, length), ref.look_ahead_mask(length),
                    f"create_look_ahead_mask({length})", mistakes=named, shape_hints=look_ahead_shape_hints(length))
    passed("create_look_ahead_mask matches the reference for lengths 1, 2, 5 and 16")


def _attention_cases(rng):
    """Yield (description, q, k, v, mask) covering 0 to 3 leading axes, one key, one query and the mask shapes."""
    normal = rng.standard_normal

    def mixed_mask(shape):  # random 0/1 with at least one 1 and (if possible) one 0 in every row
        mask = (rng.random(shape) < 0.6).astype(np.float64)
        mask[..., 0] = 1.0
        if shape[-1] > 1:
            mask[..., -1] = 0.0
        return mask

    # No leading axes: (n, d_k) queries.
    yield "no batch axis, no mask", normal((5, 8)), normal((7, 8)), normal((7, 3)), None
    yield "no batch axis, one key, no mask", normal((4, 8)), normal((1, 8)), normal((1, 3)), None
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

    # Three leading axes and a single query (one decoding step): a padding mask (batch, 1, 1, 1, seq).
    shape, length = (2, 2, 3), 6
    padding = ref.padding_mask(_random_token_ids(rng, shape[0], length, min_length=2))[:, None, None]
    yield ("batch 2, 2 x 3 heads (three leading axes), one query, padding mask (2, 1, 1, 1, 6)",
           normal((*shape, 1, 4)), normal((*shape, length, 4)), normal((*shape, length, 3)), padding)


def _large_score_case(rng):
    """Blocked keys whose scores are about 2e4 above the others: their weight must still be 0."""
    q = np.full((2, 3, 4), 100.0) + rng.uniform(-1, 1, size=(2, 3, 4))
    k = rng.uniform(-0.5, 0.5, size=(2, 5, 4))
    k[:, 3:] = 100.0
    v = rng.standard_normal((2, 5, 3))
    mask = np.array([[[1, 1, 1, 0, 0]], [[1, 1, 0, 0, 0]]], dtype=np.float64)
    return q, k, v, mask


def grade_scaled_dot_product_attention(scaled_dot_product_attention) -> None:
    rng = draw(5)
    cases = list(_attention_cases(rng))
    cases.append(("blocked keys with very large scores", *_large_score_case(rng)))
    for description, q, k, v, mask in cases:
        # Round to float32 first so the reference sees exactly what the learner's function sees.
        q, k, v = (np.asarray(a, dtype=np.float32).astype(np.float64) for a in (q, k, v))
        scores_shape = (*np.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])
        try:
            output, weights = inspect_attention(
                quietly(scaled_dot_product_attention, to_tensor(q), to_tensor(k), to_tensor(v), to_tensor(mask)),
                output_shape=(*scores_shape[:-1], v.shape[-1]), weights_shape=scores_shape, mask=mask,
                unmasked_weights=ref.attention_weights(q, k), large_scores="large" in description,
            )
            expected_output, expected_weights = ref.scaled_dot_product_attention(q, k, v, mask)
            expect_attention_values(output, weights, expected_output, expected_weights,
                                    mistakes=results(mistakes.ATTENTION_WEIGHTS, q, k, v, mask), atol=2e-5, rtol=2e-4)
        except CheckFailed as failure:
            raise CheckFailed(f"[{description}] {failure}") from None
    passed(f"scaled_dot_product_attention matches the reference in {len(cases)} cases "
           "(0 to 3 leading axes, one query, one key, padding and look-ahead masks, very large scores)")
