"""Named mistakes of assignment 04's EncoderLayer and DecoderLayer, built from the reference's parts.

Each `produce` takes the reference's inputs: (w, x, mask, eps=...) for the encoder layer,
(w, x, enc_output, look_ahead_mask, padding_mask, eps=...) for the decoder layer, and returns the output.
"""

from __future__ import annotations

from autograde.mistakes import Mistake
from autograde.reference.transformer import layers as ref
from autograde.reference.transformer.layers import as_float, feed_forward, multi_head_attention
from course_lib.transformer.layers import QUERY_MASK_NOTE


def _norm(w, name, x, eps):
    return ref.norm(w, "", name, x, eps)


def _self_attention(w, name, x, mask):
    return multi_head_attention(w, f"{name}.", x, x, x, mask)


# ----------------------------------------------------------------------------------------------
# EncoderLayer


def _encoder_pre_norm(w, x, mask=None, *, eps=1e-6):
    x = as_float(x)
    normed = _norm(w, "layernorm1", x, eps)
    h = x + _self_attention(w, "mha", normed, mask)[0]
    return h + feed_forward(w, "ffn.", _norm(w, "layernorm2", h, eps))


def _encoder_post_norm(w, x, mask, eps, *, first="layernorm1", second="layernorm2", attention_residual=True,
                       ffn_residual=True):
    """The encoder layer with its norms in a given order and either residual left out."""
    x = as_float(x)
    attention = _self_attention(w, "mha", x, mask)[0]
    h = _norm(w, first, x + attention if attention_residual else attention, eps)
    ffn = feed_forward(w, "ffn.", h)
    return _norm(w, second, h + ffn if ffn_residual else ffn, eps)


def _residual_outside_norm(w, x, mask=None, *, eps=1e-6):
    x = as_float(x)
    h = x + _norm(w, "layernorm1", _self_attention(w, "mha", x, mask)[0], eps)
    return h + _norm(w, "layernorm2", feed_forward(w, "ffn.", h), eps)


ENCODER_LAYER = (
    Mistake("pre_norm", "it looks pre-norm (x + Sublayer(LayerNorm(x))); this Transformer is post-norm: "
            "LayerNorm(x + Sublayer(x)), the layer norm comes after the residual sum", _encoder_pre_norm),
    Mistake("no_residual_attention", "the residual connection around the self-attention is missing: "
            "layernorm1(x + attention), not layernorm1(attention)",
            lambda w, x, mask=None, *, eps=1e-6: _encoder_post_norm(w, x, mask, eps, attention_residual=False)),
    Mistake("no_residual_ffn", "the residual connection around the feed-forward block is missing: "
            "layernorm2(h + ffn(h)), not layernorm2(ffn(h))",
            lambda w, x, mask=None, *, eps=1e-6: _encoder_post_norm(w, x, mask, eps, ffn_residual=False)),
    Mistake("norms_swapped", "layernorm1 and layernorm2 are swapped: layernorm1 follows the attention, layernorm2 "
            "the feed-forward block",
            lambda w, x, mask=None, *, eps=1e-6: _encoder_post_norm(w, x, mask, eps, first="layernorm2",
                                                                    second="layernorm1")),
    Mistake("residual_outside_norm", "the residual is added after the layer norm (x + LayerNorm(Sublayer(x))); "
            "add first, then normalise: LayerNorm(x + Sublayer(x))", _residual_outside_norm),
    Mistake("no_mask", "the mask is not used: pass it to the self-attention by keyword, "
            "self.mha(x, x, x, attention_mask=mask) " + QUERY_MASK_NOTE,
            lambda w, x, mask=None, *, eps=1e-6: ref.encoder_layer(w, x, None, eps=eps)),
)


# ----------------------------------------------------------------------------------------------
# DecoderLayer


def _decoder_pre_norm(w, x, enc_output, look_ahead_mask=None, padding_mask=None, *, eps=1e-6):
    x, enc_output = as_float(x), as_float(enc_output)
    n1 = _norm(w, "layernorm1", x, eps)
    h1 = x + _self_attention(w, "mha1", n1, look_ahead_mask)[0]
    h2 = h1 + multi_head_attention(w, "mha2.", _norm(w, "layernorm2", h1, eps), enc_output, enc_output,
                                   padding_mask)[0]
    return h2 + feed_forward(w, "ffn.", _norm(w, "layernorm3", h2, eps))


def _decoder_post_norm(w, x, enc_output, look_ahead_mask, padding_mask, eps, *, residuals=(True, True, True),
                       cross_query_is_x=False):
    """The decoder layer with any of its three residuals left out, or x as the cross-attention's query."""
    x, enc_output = as_float(x), as_float(enc_output)
    a1 = _self_attention(w, "mha1", x, look_ahead_mask)[0]
    h1 = _norm(w, "layernorm1", x + a1 if residuals[0] else a1, eps)
    a2 = multi_head_attention(w, "mha2.", x if cross_query_is_x else h1, enc_output, enc_output, padding_mask)[0]
    h2 = _norm(w, "layernorm2", h1 + a2 if residuals[1] else a2, eps)
    f = feed_forward(w, "ffn.", h2)
    return _norm(w, "layernorm3", h2 + f if residuals[2] else f, eps)


def _decoder_variant(**change):
    def produce(w, x, enc_output, look_ahead_mask=None, padding_mask=None, *, eps=1e-6):
        return _decoder_post_norm(w, x, enc_output, look_ahead_mask, padding_mask, eps, **change)

    return produce


def _decoder_masks(choose):
    """The reference decoder layer given other masks: `choose(look_ahead_mask, padding_mask)` -> the pair."""
    def produce(w, x, enc_output, look_ahead_mask=None, padding_mask=None, *, eps=1e-6):
        return ref.decoder_layer(w, x, enc_output, *choose(look_ahead_mask, padding_mask), eps=eps)[0]

    return produce


DECODER_LAYER = (
    Mistake("pre_norm", "it looks pre-norm; this Transformer is post-norm: each block is LayerNorm(h + Sublayer(h))",
            _decoder_pre_norm),
    Mistake("masks_swapped", "the masks are swapped: look_ahead_mask goes to the self-attention mha1, padding_mask "
            "to the cross-attention mha2", _decoder_masks(lambda look_ahead, padding: (padding, look_ahead))),
    Mistake("no_look_ahead_mask", "the self-attention (mha1) is not masked: pass attention_mask=look_ahead_mask "
            + QUERY_MASK_NOTE, _decoder_masks(lambda look_ahead, padding: (None, padding))),
    Mistake("no_padding_mask", "the cross-attention (mha2) is not masked: pass attention_mask=padding_mask "
            + QUERY_MASK_NOTE, _decoder_masks(lambda look_ahead, padding: (look_ahead, None))),
    Mistake("cross_query_is_x", "the cross-attention's query is x; it must be the first block's output, "
            "mha2(query=out1, value=enc_output, key=enc_output)", _decoder_variant(cross_query_is_x=True)),
    Mistake("no_residual_self", "the residual around the self-attention is missing: layernorm1(x + attention)",
            _decoder_variant(residuals=(False, True, True))),
    Mistake("no_residual_cross", "the residual around the cross-attention is missing: layernorm2(out1 + attention)",
            _decoder_variant(residuals=(True, False, True))),
    Mistake("no_residual_ffn", "the residual around the feed-forward block is missing: layernorm3(out2 + ffn(out2))",
            _decoder_variant(residuals=(True, True, False))),
)
