"""Reference blocks of assignment 04 in NumPy (float64, inference mode): layer norm, Keras's multi-head
attention, the feed-forward block, and the encoder and decoder layers. They compute the truth only; the
usual mistakes are built from these parts in `autograde.mistakes.transformer`.

Weights are read by attribute path (`course_lib.keras_weights`) from a flat dict such as
{"mha.query_dense.kernel": ..., "ffn.layers[0].bias": ...}; `prefix` selects one layer of a composite
("enc_layers[0]."). Masks: 1 = may attend, 0 = blocked; padding masks (batch, 1, seq), look-ahead masks
(1, L, L) or their product; Keras MultiHeadAttention inserts the heads axis at -3.
Assignment 05 reuses `encoder_layer` with its GELU and eps 1e-12.
"""

from __future__ import annotations

import numpy as np

from autograde.reference.scaled_dot_product_attention import softmax


def as_float(x) -> np.ndarray:
    """A tensor or array as float64."""
    if hasattr(x, "numpy"):
        x = x.numpy()
    return np.asarray(x, dtype=np.float64)


def relu(x) -> np.ndarray:
    return np.maximum(x, 0.0)


def layer_norm(x, gamma, beta, eps: float) -> np.ndarray:
    """Normalise the last axis to mean 0 and variance 1 (biased variance, like Keras), then scale and shift."""
    x = as_float(x)
    mean = x.mean(axis=-1, keepdims=True)
    variance = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * gamma + beta


def norm(w: dict, prefix: str, name: str, x, eps: float) -> np.ndarray:
    """The layer norm `name` of the layer at `prefix` ("layernorm1")."""
    return layer_norm(x, w[f"{prefix}{name}.gamma"], w[f"{prefix}{name}.beta"], eps)


def multi_head_attention(w: dict, prefix: str, query, value, key=None, mask=None):
    """Keras MultiHeadAttention at inference: kernels (d_model, heads, key_dim), output (heads, key_dim, d_model).

    Returns (output (batch, T, d_model), weights (batch, heads, T, S)).
    """
    query, value = as_float(query), as_float(value)
    key = value if key is None else as_float(key)

    def project(x, name):
        kernel, bias = w[f"{prefix}{name}_dense.kernel"], w[f"{prefix}{name}_dense.bias"]
        return np.einsum("btd,dhk->bhtk", x, kernel) + bias[:, None, :]

    q, k, v = project(query, "query"), project(key, "key"), project(value, "value")
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        allowed = np.broadcast_to(np.expand_dims(as_float(mask), -3) > 0, scores.shape)
        scores = np.where(allowed, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    context = weights @ v  # (batch, heads, T, key_dim)
    output = np.einsum("bhtk,hkd->btd", context, w[f"{prefix}output_dense.kernel"]) + w[f"{prefix}output_dense.bias"]
    return output, weights


def feed_forward(w: dict, prefix: str, x, *, activation=relu) -> np.ndarray:
    """Dense(fully_connected_dim, activation) then Dense(embedding_dim), position by position."""
    hidden = activation(as_float(x) @ w[f"{prefix}layers[0].kernel"] + w[f"{prefix}layers[0].bias"])
    return hidden @ w[f"{prefix}layers[1].kernel"] + w[f"{prefix}layers[1].bias"]


def encoder_layer(w: dict, x, mask=None, *, eps: float = 1e-6, prefix: str = "", activation=relu) -> np.ndarray:
    """LayerNorm(x + MHA(x, x, x)), then LayerNorm(h + FFN(h)) (post-norm)."""
    x = as_float(x)
    h = norm(w, prefix, "layernorm1", x + multi_head_attention(w, f"{prefix}mha.", x, x, x, mask)[0], eps)
    return norm(w, prefix, "layernorm2", h + feed_forward(w, f"{prefix}ffn.", h, activation=activation), eps)


def decoder_layer(w: dict, x, enc_output, look_ahead_mask=None, padding_mask=None, *, eps: float = 1e-6,
                  prefix: str = ""):
    """Masked self-attention, cross-attention over enc_output, feed-forward; each followed by add & norm.

    Returns (output, self-attention weights, cross-attention weights).
    """
    x, enc_output = as_float(x), as_float(enc_output)
    a1, w1 = multi_head_attention(w, f"{prefix}mha1.", x, x, x, look_ahead_mask)
    h1 = norm(w, prefix, "layernorm1", x + a1, eps)
    a2, w2 = multi_head_attention(w, f"{prefix}mha2.", h1, enc_output, enc_output, padding_mask)
    h2 = norm(w, prefix, "layernorm2", h1 + a2, eps)
    return norm(w, prefix, "layernorm3", h2 + feed_forward(w, f"{prefix}ffn.", h2), eps), w1, w2
