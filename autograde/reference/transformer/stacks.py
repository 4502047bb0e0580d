"""Reference stacks of assignment 04 in NumPy (float64, inference mode): the embedding with positions, the
Encoder, the Decoder and the Transformer, built from the blocks of `autograde.reference.transformer.layers`.
Weights by attribute path ("enc_layers[1].mha.key_dense.bias", "decoder.embedding.embeddings")."""

from __future__ import annotations

import numpy as np

from autograde.reference.transformer.layers import as_float, decoder_layer, encoder_layer


def embed(w: dict, prefix: str, token_ids, pos_encoding) -> np.ndarray:
    """Embedding times sqrt(d), plus the positional encoding of the first seq_len positions."""
    table = w[f"{prefix}embedding.embeddings"]
    x = table[np.asarray(token_ids)]
    return x * np.sqrt(table.shape[1]) + as_float(pos_encoding)[:, : x.shape[1], :]


def encoder(w: dict, token_ids, pos_encoding, num_layers: int, mask=None, *, eps: float = 1e-6) -> np.ndarray:
    """Embed (scaled, plus positions), then the encoder layers in order, each given the mask."""
    x = embed(w, "", token_ids, pos_encoding)
    for i in range(num_layers):
        x = encoder_layer(w, x, mask, eps=eps, prefix=f"enc_layers[{i}].")
    return x


def attention_keys(num_layers: int) -> list[str]:
    """The keys of the decoder's attention-weights dict, in order (layers numbered from 1)."""
    keys = []
    for i in range(1, num_layers + 1):
        keys += [f"decoder_layer{i}_block1_self_att", f"decoder_layer{i}_block2_decenc_att"]
    return keys


def decode_embedded(w: dict, x, enc_output, num_layers: int, look_ahead_mask=None, padding_mask=None, *,
                    eps: float = 1e-6, prefix: str = ""):
    """The decoder layers on embedded targets `x`; returns (x, {key: attention weights})."""
    keys, weights = attention_keys(num_layers), {}
    for i in range(num_layers):
        x, self_weights, cross_weights = decoder_layer(w, x, enc_output, look_ahead_mask, padding_mask, eps=eps,
                                                       prefix=f"{prefix}dec_layers[{i}].")
        weights[keys[2 * i]], weights[keys[2 * i + 1]] = self_weights, cross_weights
    return x, weights


def decoder(w: dict, token_ids, enc_output, pos_encoding, num_layers: int, look_ahead_mask=None,
            padding_mask=None, *, eps: float = 1e-6, prefix: str = ""):
    """Embed the target tokens, then the decoder layers; returns (x, {key: attention weights})."""
    x = embed(w, prefix, token_ids, pos_encoding)
    return decode_embedded(w, x, enc_output, num_layers, look_ahead_mask, padding_mask, eps=eps, prefix=prefix)


def part(w: dict, name: str) -> dict:
    """The weights under `name.` ("encoder"), with that prefix removed."""
    return {key[len(name) + 1:]: value for key, value in w.items() if key.startswith(f"{name}.")}


def transformer(w: dict, input_ids, output_ids, enc_pos_encoding, dec_pos_encoding, num_layers: int,
                enc_padding_mask=None, look_ahead_mask=None, dec_padding_mask=None, *, eps: float = 1e-6):
    """Encoder, decoder, final Dense layer; returns (logits, attention weights of the decoder)."""
    enc_output = encoder(part(w, "encoder"), input_ids, enc_pos_encoding, num_layers, enc_padding_mask, eps=eps)
    dec_output, weights = decoder(part(w, "decoder"), output_ids, enc_output, dec_pos_encoding, num_layers,
                                  look_ahead_mask, dec_padding_mask, eps=eps)
    return dec_output @ w["final_layer.kernel"] + w["final_layer.bias"], weights
