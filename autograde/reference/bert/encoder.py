"""Reference of assignment 05's encoder in NumPy (float64, inference mode): GELU, BERT's input embedding and
the encoder. They compute the truth only; the usual mistakes are built from these parts in
`autograde.mistakes.bert.encoder`.

Weights are read by attribute path (`course_lib.keras_weights`) from a flat dict such as
{"embedding.token_embedding.embeddings": ..., "enc_layers[0].mha.query_dense.kernel": ...}. The encoder
layers are assignment 04's (`autograde.reference.transformer.layers.encoder_layer`) with GELU and eps 1e-12.
Masks: the encoder receives keras-hub's padding mask (batch, seq), 1 = real token, and attends with the
(batch, 1, seq) attention mask made from it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from autograde.reference.transformer.layers import as_float, encoder_layer, layer_norm

BERT_EPS = 1e-12


def gelu_exact(x) -> np.ndarray:
    """GELU(x) = x Phi(x), Phi the standard normal CDF."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / np.sqrt(2.0)))


def gelu_tanh(x) -> np.ndarray:
    """The tanh approximation of GELU used by Google's BERT and keras-hub."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def embedding_lookups(w: dict, token_ids, segment_ids, *, prefix: str = ""):
    """The three embeddings BERT adds: tokens (batch, seq, d), positions 0..seq-1 (1, seq, d), segments."""
    token_ids, segment_ids = np.asarray(token_ids), np.asarray(segment_ids)
    tokens = w[f"{prefix}token_embedding.embeddings"][token_ids]
    positions = w[f"{prefix}position_embedding.embeddings"][np.arange(token_ids.shape[1])][np.newaxis]
    segments = w[f"{prefix}segment_embedding.embeddings"][segment_ids]
    return tokens, positions, segments


def embedding_norm(w: dict, x, *, eps: float = BERT_EPS, prefix: str = "") -> np.ndarray:
    """The embedding's layer norm."""
    return layer_norm(x, w[f"{prefix}layer_norm.gamma"], w[f"{prefix}layer_norm.beta"], eps)


def bert_embedding(w: dict, token_ids, segment_ids, *, eps: float = BERT_EPS, prefix: str = "") -> np.ndarray:
    """LayerNorm(token + position + segment embeddings): (batch, seq) ids -> (batch, seq, hidden_dim).

    Positions are 0..seq-1 and index a learned table (no sinusoids, no sqrt(d) scaling).
    """
    tokens, positions, segments = embedding_lookups(w, token_ids, segment_ids, prefix=prefix)
    return embedding_norm(w, tokens + positions + segments, eps=eps, prefix=prefix)


def attention_mask(padding_mask) -> np.ndarray:
    """The attention mask the encoder gives its layers: (batch, seq) -> (batch, 1, seq)."""
    return as_float(padding_mask)[:, np.newaxis, :]


def embedded_input(w: dict, token_ids, segment_ids, *, eps: float = BERT_EPS, embedded=None) -> np.ndarray:
    """The encoder's embedding output, or `embedded` in its place (the visible check's test double)."""
    if embedded is not None:
        return as_float(embedded)
    return bert_embedding(w, token_ids, segment_ids, eps=eps, prefix="embedding.")


def run_layers(w: dict, x, mask, layers: Iterable[int], *, eps: float = BERT_EPS, activation=gelu_tanh):
    """Apply the encoder layers numbered `layers`, in that order, each to the previous one's output."""
    for i in layers:
        x = encoder_layer(w, x, mask, eps=eps, prefix=f"enc_layers[{i}].", activation=activation)
    return x


def bert_encoder(w: dict, token_ids, segment_ids, padding_mask, num_layers: int, *, eps: float = BERT_EPS,
                 activation=gelu_tanh, embedded=None) -> np.ndarray:
    """Embedding, then the encoder layers in order, all with the (batch, 1, seq) attention mask.

    `embedded` replaces the embedding's output (the visible check's test double has no weights).
    """
    x = embedded_input(w, token_ids, segment_ids, eps=eps, embedded=embedded)
    return run_layers(w, x, attention_mask(padding_mask), range(num_layers), eps=eps, activation=activation)
