"""Named mistakes of assignment 02, each built from the reference's parts. A mistake whose wrong result
equals the right one on some inputs (no scaling when d = 1, say) is harmless there: the checks consult
the mistakes only for a result that is already wrong."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake
from autograde.reference import scaled_dot_product_attention as ref

SCALING_MISSING = "the scaling is missing: divide the scores q k^T by sqrt(d_k), the length of a key vector"
# Assignment 02 writes the key length of a score function d, and that of the attention d_k.
SCORE_SCALING_MISSING = SCALING_MISSING.replace("d_k", "d")


def _columns(x) -> int:
    return ref.as_float(x).shape[-1]


def _rows(x) -> int:
    return ref.as_float(x).shape[0]


DOT_SCORE = (
    Mistake("scaled", "dot_score has no scaling; that is scaled_dot_score", ref.scaled_dot_score),
)

SCALED_DOT_SCORE = (
    Mistake("unscaled", SCORE_SCALING_MISSING, ref.dot_score),
    Mistake("by_d", "divide by sqrt(d), not by d", lambda q, k: ref.dot_score(q, k) / _columns(k)),
    Mistake("by_number_of_queries", "divide by the square root of the vector length d (the last axis), not of the "
            "number of queries", lambda q, k: ref.dot_score(q, k) / np.sqrt(_rows(q))),
    Mistake("by_number_of_keys", "divide by the square root of the vector length d (the last axis), not of the "
            "number of keys", lambda q, k: ref.dot_score(q, k) / np.sqrt(_rows(k))),
)

GENERAL_SCORE = (
    Mistake("weight_transposed", "it equals q W^T k^T; the formula is q W k^T (W not transposed)",
            lambda q, k, weight: ref.general_score(q, k, ref.as_float(weight).T)),
    Mistake("weight_unused", "the weight matrix is not used", lambda q, k, weight: ref.dot_score(q, k)),
)

ADDITIVE_SCORE = (
    Mistake("weights_swapped", "w_query and w_key are swapped: queries go through w_query",
            lambda q, k, w_query, w_key, v: ref.additive_score(q, k, w_key, w_query, v)),
    Mistake("no_tanh", "the tanh is missing: v . tanh(q W_q + k W_k)",
            lambda q, k, w_query, w_key, v: ref.additive_hidden(q, k, w_query, w_key) @ ref.as_float(v)),
)


def _divided(q, k, *, by_queries: bool, by_keys: bool, power: int = 1) -> np.ndarray:
    query_lengths = ref.vector_lengths(q)[:, np.newaxis] if by_queries else 1.0
    key_lengths = ref.vector_lengths(k)[np.newaxis, :] if by_keys else 1.0
    return ref.dot_score(q, k) / (query_lengths * key_lengths) ** power


COSINE_SCORE = (
    Mistake("not_normalised", "the vectors are not normalised: divide by |q| |k|", ref.dot_score),
    Mistake("only_queries", "only the queries are normalised; divide by |k| as well",
            lambda q, k: _divided(q, k, by_queries=True, by_keys=False)),
    Mistake("only_keys", "only the keys are normalised; divide by |q| as well",
            lambda q, k: _divided(q, k, by_queries=False, by_keys=True)),
    Mistake("squared_lengths", "divide by the lengths |q| |k|, not their squares",
            lambda q, k: _divided(q, k, by_queries=True, by_keys=True, power=2)),
)

def _counted(token_ids):
    """Ones on the first n positions of each sentence, n its number of real tokens (the same as the right mask when
    all padding is at the end)."""
    ids = np.asarray(token_ids)
    counts = np.sum(ids != 0, axis=-1)
    return (np.arange(ids.shape[-1])[np.newaxis, :] < counts[:, np.newaxis]).astype(np.float64)[:, np.newaxis, :]


PADDING_MASK = (
    Mistake("inverted", "the mask looks inverted: 1 must mean attend (a real token) and 0 blocked (padding, id 0)",
            lambda token_ids: 1 - ref.padding_mask(token_ids)),
    Mistake("counted", "it marks the first n positions of each sentence, n its number of real tokens, but here padding "
            "comes before the tokens: mark each position by its own id (token_ids != 0)", _counted),
)

LOOK_AHEAD_MASK = (
    Mistake("upper_triangle", "this is the upper triangle; use the lower one: row i (a query position) may attend "
            "to columns 0..i, never to later positions", lambda length: np.swapaxes(ref.look_ahead_mask(length), 1, 2)),
    Mistake("inverted", "the mask looks inverted: 1 must mean attend, so the ones go on and below the diagonal",
            lambda length: 1 - ref.look_ahead_mask(length)),
    Mistake("no_diagonal", "a position must be allowed to attend to itself: put ones on the diagonal too",
            lambda length: ref.look_ahead_mask(length) - np.eye(length)),
)


def _weights_scaled_by(scale):
    """The attention weights with the scores q k^T multiplied by `scale(d_k, d_v)` instead of 1/sqrt(d_k)."""

    def weights(q, k, v, mask=None):
        return ref.masked_softmax(ref.attention_scores(q, k) * scale(_columns(k), _columns(v)), mask)

    return weights


# Wrong attention weights; the checks compare these before the output.
ATTENTION_WEIGHTS = (
    Mistake("unscaled", SCALING_MISSING, _weights_scaled_by(lambda d_k, d_v: 1.0)),
    Mistake("by_d_k", "divide the scores by sqrt(d_k), not by d_k", _weights_scaled_by(lambda d_k, d_v: 1.0 / d_k)),
    Mistake("by_d_v", "divide by sqrt(d_k), the length of the keys, not sqrt(d_v)",
            _weights_scaled_by(lambda d_k, d_v: 1.0 / np.sqrt(d_v))),
)
