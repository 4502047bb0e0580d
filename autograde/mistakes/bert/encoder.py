"""Named mistakes of BertEmbedding and BertEncoder (assignment 05), built from the reference's parts.

Embedding mistakes take (weights, token_ids, segment_ids) and keyword eps; encoder mistakes take
(weights, token_ids, segment_ids, padding_mask, num_layers) and keyword eps, embedded (the visible
check's test double output in place of the embedding). A variant that cannot run on the inputs raises
ValueError and is left out.
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake
from autograde.reference.bert import encoder as ref
from autograde.reference.transformer.layers import as_float

# ----------------------------------------------------------------------------------------------
# BertEmbedding


def _embedding_sum(combine):
    """An embedding whose output is `combine(w, tokens, positions, segments, eps)` instead of the norm of the sum."""
    def produce(w, token_ids, segment_ids, *, eps=ref.BERT_EPS):
        return combine(w, *ref.embedding_lookups(w, token_ids, segment_ids), eps)
    return produce


def _scaled(w, tokens, positions, segments, eps):
    return ref.embedding_norm(w, tokens * np.sqrt(tokens.shape[-1]) + positions + segments, eps=eps)


def _no_positions(w, tokens, positions, segments, eps):
    return ref.embedding_norm(w, tokens + segments, eps=eps)


def _no_segments(w, tokens, positions, segments, eps):
    return ref.embedding_norm(w, tokens + positions, eps=eps)


def _no_layer_norm(w, tokens, positions, segments, eps):
    return tokens + positions + segments


def _norm_before_sum(w, tokens, positions, segments, eps):
    return ref.embedding_norm(w, tokens, eps=eps) + positions + segments


def _positions_from_token_ids(w, token_ids, segment_ids, *, eps=ref.BERT_EPS):
    table = w["position_embedding.embeddings"]
    token_ids = np.asarray(token_ids)
    if token_ids.max() >= len(table):  # the learner's lookup crashes there: its hint explains positions
        raise ValueError("a token id beyond the position table")
    tokens, _, segments = ref.embedding_lookups(w, token_ids, segment_ids)
    return ref.embedding_norm(w, tokens + table[token_ids] + segments, eps=eps)


EMBEDDING = (
    Mistake("scaled", "the token embeddings are multiplied by sqrt(hidden_dim): assignment 04 did that, BERT does "
            "not (its position table is learned, on the same scale as the token table)", _embedding_sum(_scaled)),
    Mistake("no_positions", "the position embeddings are missing: add self.position_embedding(tf.range(seq_len))",
            _embedding_sum(_no_positions)),
    Mistake("positions_from_token_ids", "the position embeddings are looked up with the token ids; look up the "
            "positions 0, 1, ..., seq_len - 1: self.position_embedding(tf.range(seq_len))",
            _positions_from_token_ids),
    Mistake("no_segments", "the segment embeddings are missing: add self.segment_embedding(segment_ids)",
            _embedding_sum(_no_segments)),
    Mistake("no_layer_norm", "the layer norm is missing: E = LayerNorm(token + position + segment)",
            _embedding_sum(_no_layer_norm)),
    Mistake("norm_before_sum", "the layer norm is applied to the token embeddings alone; add the three embeddings "
            "first, then normalise the sum", _embedding_sum(_norm_before_sum)),
)

# ----------------------------------------------------------------------------------------------
# BertEncoder


def _encoder_variant(mask_of, order_of):
    """An encoder whose layers get `mask_of(padding_mask)` and run in the order `order_of(num_layers)`."""
    def produce(w, token_ids, segment_ids, padding_mask, num_layers, *, eps=ref.BERT_EPS, embedded=None):
        x = ref.embedded_input(w, token_ids, segment_ids, eps=eps, embedded=embedded)
        return ref.run_layers(w, x, mask_of(padding_mask), order_of(num_layers), eps=eps)
    return produce


def _layers_in_order(num_layers):
    return range(num_layers)


def _no_mask(padding_mask):
    return None


def _mask_not_expanded(padding_mask):
    return as_float(padding_mask)  # Keras reads a 2-D mask as (queries, keys): it only fits when batch == seq


def _mask_wrong_axis(padding_mask):
    return as_float(padding_mask)[:, :, np.newaxis]  # blocks padding *queries* instead of padding keys


ENCODER = (
    Mistake("no_mask", "the padding mask is not used: give every layer mask=... (the attention mask made from "
            "padding_mask)", _encoder_variant(_no_mask, _layers_in_order)),
    Mistake("mask_not_expanded", "the layers get padding_mask (batch, seq) as it is, which Keras reads as a (query, "
            "key) mask; give them padding_mask[:, tf.newaxis, :], shape (batch, 1, seq)",
            _encoder_variant(_mask_not_expanded, _layers_in_order)),
    Mistake("mask_wrong_axis", "the mask has shape (batch, seq, 1): it blocks padding queries instead of padding "
            "keys; use padding_mask[:, tf.newaxis, :], shape (batch, 1, seq)",
            _encoder_variant(_mask_wrong_axis, _layers_in_order)),
    Mistake("only_first_layer", "only the first layer is applied: loop over all of self.enc_layers",
            _encoder_variant(ref.attention_mask, lambda n: [0])),
    Mistake("only_last_layer", "only the last layer counts (was every layer given the embeddings?): each layer "
            "takes the previous one's output, x = layer(x, ...)",
            _encoder_variant(ref.attention_mask, lambda n: [n - 1])),  # each layer given the embeddings
    Mistake("layers_reversed", "the layers run in reverse order: self.enc_layers[0] comes first",
            _encoder_variant(ref.attention_mask, lambda n: range(n - 1, -1, -1))),
)
# With a single layer these give the right result: the hidden check skips them there.
LAYER_ORDER = ("only_first_layer", "only_last_layer", "layers_reversed")
