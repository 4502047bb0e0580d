"""Reference score functions, masks and scaled dot-product attention in plain NumPy (float64).

Conventions match assignment 02: queries are (..., n, d), keys (..., m, d), values (..., m, d_v);
a mask value 1 means "may attend" and 0 means "blocked"; blocked positions get weight exactly 0.
"""

from __future__ import annotations

import numpy as np


def _as_float(x) -> np.ndarray:
    if hasattr(x, "numpy"):
        x = x.numpy()
    return np.asarray(x, dtype=np.float64)


def softmax(x, axis: int = -1) -> np.ndarray:
    """Softmax that subtracts the maximum first, so large inputs do not overflow.

    Entries equal to -inf get probability 0; a slice that is -inf everywhere gives all zeros.
    """
    x = _as_float(x)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    exps = np.exp(x - top)
    total = np.sum(exps, axis=axis, keepdims=True)
    return np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)


def dot_score(queries, keys) -> np.ndarray:
    """score(q, k) = q . k for every pair: (n, d), (m, d) -> (n, m)."""
    return _as_float(queries) @ _as_float(keys).T


def scaled_dot_score(queries, keys) -> np.ndarray:
    """score(q, k) = q . k / sqrt(d), d the length of a key."""
    keys = _as_float(keys)
    return dot_score(queries, keys) / np.sqrt(keys.shape[-1])


def general_score(queries, keys, weight) -> np.ndarray:
    """score(q, k) = q W k^T (Luong's "general"), W of shape (d, d)."""
    return _as_float(queries) @ _as_float(weight) @ _as_float(keys).T


def additive_score(queries, keys, w_query, w_key, v) -> np.ndarray:
    """score(q, k) = v . tanh(q W_q + k W_k) (Bahdanau), W_q and W_k (d, h), v (h,)."""
    projected_queries = _as_float(queries) @ _as_float(w_query)  # (n, h)
    projected_keys = _as_float(keys) @ _as_float(w_key)  # (m, h)
    hidden = np.tanh(projected_queries[:, np.newaxis, :] + projected_keys[np.newaxis, :, :])
    return hidden @ _as_float(v)


def cosine_score(queries, keys) -> np.ndarray:
    """score(q, k) = q . k / (|q| |k|)."""
    queries, keys = _as_float(queries), _as_float(keys)
    query_norms = np.linalg.norm(queries, axis=-1)
    key_norms = np.linalg.norm(keys, axis=-1)
    return (queries @ keys.T) / np.outer(query_norms, key_norms)


def padding_mask(token_ids) -> np.ndarray:
    """1 for real tokens, 0 for padding (id 0): (batch, seq) -> (batch, 1, seq)."""
    ids = np.asarray(token_ids.numpy() if hasattr(token_ids, "numpy") else token_ids)
    return (ids != 0).astype(np.float64)[:, np.newaxis, :]


def look_ahead_mask(sequence_length: int) -> np.ndarray:
    """Row i (a query position) may attend to columns 0..i: (1, L, L), ones on and below the diagonal."""
    rows = np.arange(sequence_length)[:, np.newaxis]
    cols = np.arange(sequence_length)[np.newaxis, :]
    return (cols <= rows).astype(np.float64)[np.newaxis]


def attention_weights(q, k, mask=None, *, scale: float | None = None) -> np.ndarray:
    """softmax(q k^T * scale) over the keys, with blocked positions at exactly 0.

    `scale` defaults to 1/sqrt(d_k); the checks pass other values to recognise common mistakes.
    """
    q, k = _as_float(q), _as_float(k)
    if scale is None:
        scale = 1.0 / np.sqrt(k.shape[-1])
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if mask is not None:
        allowed = np.broadcast_to(_as_float(mask), scores.shape) > 0
        scores = np.where(allowed, scores, -np.inf)
    return softmax(scores, axis=-1)


def scaled_dot_product_attention(q, k, v, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Return (softmax(q k^T / sqrt(d_k)) v, weights), for any number of leading batch axes."""
    weights = attention_weights(q, k, mask)
    return np.matmul(weights, _as_float(v)), weights
