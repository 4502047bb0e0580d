"""Named mistakes of assignment 04's Encoder, Decoder and Transformer, built from the reference's parts.

`EMBEDDING` gives the wrong embedded input from (w, prefix, token_ids, pos_encoding); the Encoder's and
Decoder's catalogues pass it through the reference layers, so that each message exists once. `LOGITS`
gives the wrong output from the right logits alone (the visible check's test doubles have no layers).
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake
from autograde.reference.scaled_dot_product_attention import softmax
from autograde.reference.transformer import stacks as ref
from autograde.reference.transformer.layers import as_float, encoder_layer


def _embedding(combine):
    """A wrong embedding: `combine(rows of the table, d, positional encoding of the first seq_len positions)`."""
    def produce(w, prefix, token_ids, pos_encoding):
        table = w[f"{prefix}embedding.embeddings"]
        x = table[np.asarray(token_ids)]
        return combine(x, table.shape[1], as_float(pos_encoding)[:, : x.shape[1], :])

    return produce


EMBEDDING = (
    Mistake("not_scaled", "the embeddings are not multiplied by sqrt(embedding_dim) before the positional "
            "encoding is added", _embedding(lambda x, d, pe: x + pe)),
    Mistake("scaled_by_d", "the embeddings are multiplied by embedding_dim; the factor is sqrt(embedding_dim)",
            _embedding(lambda x, d, pe: x * d + pe)),
    Mistake("divided_by_sqrt_d", "the embeddings are divided by sqrt(embedding_dim); multiply instead",
            _embedding(lambda x, d, pe: x / np.sqrt(d) + pe)),
    Mistake("no_positional_encoding", "the positional encoding is not added: x += self.pos_encoding[:, :seq_len, :]",
            _embedding(lambda x, d, pe: x * np.sqrt(d))),
    Mistake("scaled_after_adding", "the positional encoding is scaled too: multiply the embeddings by "
            "sqrt(embedding_dim) first, then add the positional encoding",
            _embedding(lambda x, d, pe: (x + pe) * np.sqrt(d))),
)


# ----------------------------------------------------------------------------------------------
# Encoder: produce(w, token_ids, pos_encoding, num_layers, mask=None, eps=...)


def _encoder_layers(w, x, num_layers, mask, eps):
    for i in range(num_layers):
        x = encoder_layer(w, x, mask, eps=eps, prefix=f"enc_layers[{i}].")
    return x


def _encoder_embedding(mistake: Mistake) -> Mistake:
    def produce(w, token_ids, pos_encoding, num_layers, mask=None, *, eps=1e-6):
        return _encoder_layers(w, mistake.produce(w, "", token_ids, pos_encoding), num_layers, mask, eps)

    return Mistake(mistake.name, mistake.message, produce)


def _only_first_layer(w, token_ids, pos_encoding, num_layers, mask=None, *, eps=1e-6):
    return _encoder_layers(w, ref.embed(w, "", token_ids, pos_encoding), 1, mask, eps)


ENCODER = (
    *(_encoder_embedding(mistake) for mistake in EMBEDDING),
    Mistake("no_mask", "the mask is not passed on: call every encoder layer with mask=mask",
            lambda w, token_ids, pos_encoding, num_layers, mask=None, *, eps=1e-6:
            ref.encoder(w, token_ids, pos_encoding, num_layers, None, eps=eps)),
    Mistake("only_first_layer", "only the first encoder layer is applied: loop over all of self.enc_layers, feeding "
            "each one the previous one's output", _only_first_layer),
)


# ----------------------------------------------------------------------------------------------
# Decoder: produce(w, token_ids, enc_output, pos_encoding, num_layers, look_ahead_mask=None, padding_mask=None,
# eps=...) -> output


def _decoder_embedding(mistake: Mistake) -> Mistake:
    def produce(w, token_ids, enc_output, pos_encoding, num_layers, look_ahead_mask=None, padding_mask=None, *,
                eps=1e-6):
        x = mistake.produce(w, "", token_ids, pos_encoding)
        return ref.decode_embedded(w, x, enc_output, num_layers, look_ahead_mask, padding_mask, eps=eps)[0]

    return Mistake(mistake.name, mistake.message, produce)


def _decoder_masks(choose):
    """The reference decoder given other masks: `choose(look_ahead_mask, padding_mask)` -> the pair."""
    def produce(w, token_ids, enc_output, pos_encoding, num_layers, look_ahead_mask=None, padding_mask=None, *,
                eps=1e-6):
        masks = choose(look_ahead_mask, padding_mask)
        return ref.decoder(w, token_ids, enc_output, pos_encoding, num_layers, *masks, eps=eps)[0]

    return produce


DECODER = (
    *(_decoder_embedding(mistake) for mistake in EMBEDDING),
    Mistake("masks_swapped", "the masks are swapped: pass look_ahead_mask=look_ahead_mask and "
            "padding_mask=padding_mask to every decoder layer",
            _decoder_masks(lambda look_ahead, padding: (padding, look_ahead))),
    Mistake("no_look_ahead_mask", "the look-ahead mask is not passed on to the decoder layers",
            _decoder_masks(lambda look_ahead, padding: (None, padding))),
    Mistake("no_padding_mask", "the padding mask is not passed on to the decoder layers",
            _decoder_masks(lambda look_ahead, padding: (look_ahead, None))),
)


# ----------------------------------------------------------------------------------------------
# Transformer: produce(w, input_ids, output_ids, enc_pos_encoding, dec_pos_encoding, num_layers,
# enc_padding_mask=None, look_ahead_mask=None, dec_padding_mask=None, eps=...) -> logits

LOGITS = (
    Mistake("softmax", "these are probabilities; return the final layer's logits (no softmax): the loss takes "
            "from_logits=True", lambda logits: softmax(as_float(logits), axis=-1)),
)


def _transformer_logits(mistake: Mistake) -> Mistake:
    def produce(*args, **kwargs):
        return mistake.produce(ref.transformer(*args, **kwargs)[0])

    return Mistake(mistake.name, mistake.message, produce)


def _transformer_masks(choose):
    """The reference transformer given other masks: `choose(enc_padding, look_ahead, dec_padding)` -> the three."""
    def produce(w, input_ids, output_ids, enc_pos_encoding, dec_pos_encoding, num_layers, enc_padding_mask=None,
                look_ahead_mask=None, dec_padding_mask=None, *, eps=1e-6):
        masks = choose(enc_padding_mask, look_ahead_mask, dec_padding_mask)
        return ref.transformer(w, input_ids, output_ids, enc_pos_encoding, dec_pos_encoding, num_layers, *masks,
                               eps=eps)[0]

    return produce


TRANSFORMER = (
    *(_transformer_logits(mistake) for mistake in LOGITS),
    Mistake("no_encoder_mask", "the encoder is not given enc_padding_mask",
            _transformer_masks(lambda enc_padding, look_ahead, dec_padding: (None, look_ahead, dec_padding))),
    Mistake("decoder_masks_swapped", "the decoder's masks are swapped: look_ahead_mask=look_ahead_mask, "
            "padding_mask=dec_padding_mask",
            _transformer_masks(lambda enc_padding, look_ahead, dec_padding: (enc_padding, dec_padding, look_ahead))),
)
