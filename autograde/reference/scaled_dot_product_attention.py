"""Reference score functions, masks and scaled dot-product attention in plain NumPy (float64).

Conventions match assignment 02: queries are (..., n, d), keys (..., m, d), values (..., m, d_v);
a mask value 1 means "may attend" and 0 means "blocked"; blocked positions get weight exactly 0.
The named mistakes are built from these parts in autograde/mistakes/scaled_dot_product_attention.py.
"""

from __future__ import annotations

import numpy as np


def as_float(x) -> np.ndarray:
    """A tensor, array or nested list as a float64 array."""
    if hasattr(x, "numpy"):
        x = x.numpy()
    return np.asarray(x, dtype=np.float64)


def softmax(x, axis: int = -1) -> np.ndarray:
    """Softmax that subtracts the maximum first, so large inputs do not overflow.

    Entries equal to -inf get probability 0; a slice that is -inf everywhere gives all zeros.
    """
    x = as_float(x)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    exps = np.exp(x - top)
    total = np.sum(exps, axis=axis, keepdims=True)
    return np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)


def dot_score(queries, keys) -> np.ndarray:
    """score(q, k) = q . k for every pair: (n, d), (m, d) -> (n, m)."""
    return as_float(queries) @ as_float(keys).T


def scaled_dot_score(queries, keys) -> np.ndarray:
    """score(q, k) = q . k / sqrt(d), d the length of a key."""
    keys = as_float(keys)
    return dot_score(queries, keys) / np.sqrt(keys.shape[-1])


def general_score(queries, keys, weight) -> np.ndarray:
    """score(q, k) = q W k^T (Luong's "general"), W of shape (d, d)."""
    return as_float(queries) @ as_float(weight) @ as_float(keys).T


def additive_score(queries, keys, w_query, w_key, v) -> np.ndarray:
    """score(q, k) = v . tanh(q W_q + k W_k) (Bahdanau), W_q and W_k (d, h), v (h,)."""
    return np.tanh(additive_hidden(queries, keys, w_query, w_key)) @ as_float(v)


def additive_hidden(queries, keys, w_query, w_key) -> np.ndarray:
    """q W_q + k W_k for every pair, before the tanh: (n, m, h)."""
    projected_queries = as_float(queries) @ as_float(w_query)  # (n, h)
    projected_keys = as_float(keys) @ as_float(w_key)  # (m, h)
    return projected_queries[:, np.newaxis, :] + projected_keys[np.newaxis, :, :]


def vector_lengths(x) -> np.ndarray:
    """|x| of every row: (n, d) -> (n,)."""
    return np.linalg.norm(as_float(x), axis=-1)


def cosine_score(queries, keys) -> np.ndarray:
    """score(q, k) = q . k / (|q| |k|)."""
    return dot_score(queries, keys) / np.outer(vector_lengths(queries), vector_lengths(keys))


def padding_mask(token_ids) -> np.ndarray:
    """1 for real tokens, 0 for padding (id 0): (batch, seq) -> (batch, 1, seq)."""
    ids = np.asarray(token_ids.numpy() if hasattr(token_ids, "numpy") else token_ids)
    return (ids != 0).astype(np.float64)[:, np.newaxis, :]


def look_ahead_mask(sequence_length: int) -> np.ndarray:
    """Row i (a query position) may attend to columns 0..i: (1, L, L), ones on and below the diagonal."""
    rows = np.arange(sequence_length)[:, np.newaxis]
    cols = np.arange(sequence_length)[np.newaxis, :]
    return (cols <= rows).astype(np.float64)[np.newaxis]


def attention_scores(q, k) -> np.ndarray:
    """q k^T for any number of leading axes, before the scaling: (..., n, m)."""
    return np.matmul(as_float(q), np.swapaxes(as_float(k), -1, -2))


def masked_softmax(scores, mask=None) -> np.ndarray:
    """Softmax over the keys (last axis) with blocked positions (mask 0) at exactly 0."""
    scores = as_float(scores)
    if mask is not None:
        allowed = np.broadcast_to(as_float(mask), scores.shape) > 0
        scores = np.where(allowed, scores, -np.inf)
    return softmax(scores, axis=-1)


def attention_weights(q, k, mask=None) -> np.ndarray:
    """softmax(q k^T / sqrt(d_k)) over the keys, with blocked positions at exactly 0."""
    return masked_softmax(attention_scores(q, k) / np.sqrt(as_float(k).shape[-1]), mask)


def scaled_dot_product_attention(q, k, v, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Return (softmax(q k^T / sqrt(d_k)) v, weights), for any number of leading batch axes."""
    weights = attention_weights(q, k, mask)
    return np.matmul(weights, as_float(v)), weights
