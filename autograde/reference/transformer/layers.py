"""Reference Transformer of assignment 04, twice.

1. NumPy forward passes (float64, inference mode) that take the weights of a learner's Keras layer,
   read by attribute name (`course_lib.keras_weights`): a flat dict whose keys are attribute paths
   such as "enc_layers[0].mha.query_dense.kernel". Keyword `mistake=` computes what a usual mistake gives,
   so the hidden checks can name it.
2. Keras layers with the template's attribute names and a correct `call`, used to build a learner's
   composite from reference parts (Encoder with the reference EncoderLayer, and so on).

Conventions: masks are 1 = may attend, 0 = blocked; padding masks (batch, 1, seq), look-ahead masks
(1, L, L) or their product; Keras MultiHeadAttention inserts the heads axis at -3.
"""

from __future__ import annotations

import functools

import numpy as np

from autograde.reference.scaled_dot_product_attention import softmax

# ----------------------------------------------------------------------------------------------
# NumPy forward passes


def _f(x) -> np.ndarray:
    if hasattr(x, "numpy"):
        x = x.numpy()
    return np.asarray(x, dtype=np.float64)


def layer_norm(x, gamma, beta, eps: float) -> np.ndarray:
    """Normalise the last axis to mean 0 and variance 1 (biased variance, like Keras), then scale and shift."""
    x = _f(x)
    mean = x.mean(axis=-1, keepdims=True)
    variance = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * gamma + beta


def multi_head_attention(w: dict, prefix: str, query, value, key=None, mask=None):
    """Keras MultiHeadAttention at inference: kernels (d_model, heads, key_dim), output (heads, key_dim, d_model).

    Returns (output (batch, T, d_model), weights (batch, heads, T, S)).
    """
    query, value = _f(query), _f(value)
    key = value if key is None else _f(key)

    def project(x, name):
        kernel, bias = w[f"{prefix}{name}_dense.kernel"], w[f"{prefix}{name}_dense.bias"]
        return np.einsum("btd,dhk->bhtk", x, kernel) + bias[:, None, :]

    q, k, v = project(query, "query"), project(key, "key"), project(value, "value")
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        allowed = np.broadcast_to(np.expand_dims(_f(mask), -3) > 0, scores.shape)
        scores = np.where(allowed, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    context = weights @ v  # (batch, heads, T, key_dim)
    output = np.einsum("bhtk,hkd->btd", context, w[f"{prefix}output_dense.kernel"]) + w[f"{prefix}output_dense.bias"]
    return output, weights


def feed_forward(w: dict, prefix: str, x) -> np.ndarray:
    """Dense(fully_connected_dim, relu) then Dense(embedding_dim), position by position."""
    hidden = np.maximum(_f(x) @ w[f"{prefix}layers[0].kernel"] + w[f"{prefix}layers[0].bias"], 0.0)
    return hidden @ w[f"{prefix}layers[1].kernel"] + w[f"{prefix}layers[1].bias"]


def _norm(w, prefix, name, x, eps):
    return layer_norm(x, w[f"{prefix}{name}.gamma"], w[f"{prefix}{name}.beta"], eps)


ENCODER_LAYER_MISTAKES = ("pre_norm", "no_residual_attention", "no_residual_ffn", "norms_swapped",
                          "residual_outside_norm", "no_mask")


def encoder_layer(w: dict, x, mask=None, *, eps: float = 1e-6, prefix: str = "", mistake: str | None = None):
    """LayerNorm(x + MHA(x, x, x)), then LayerNorm(h + FFN(h)) (post-norm); `mistake` gives a wrong variant."""
    x = _f(x)
    first, second = ("layernorm2", "layernorm1") if mistake == "norms_swapped" else ("layernorm1", "layernorm2")
    if mistake == "no_mask":
        mask = None
    if mistake == "pre_norm":
        normed = _norm(w, prefix, "layernorm1", x, eps)
        h = x + multi_head_attention(w, f"{prefix}mha.", normed, normed, normed, mask)[0]
        return h + feed_forward(w, f"{prefix}ffn.", _norm(w, prefix, "layernorm2", h, eps))
    attention = multi_head_attention(w, f"{prefix}mha.", x, x, x, mask)[0]
    if mistake == "no_residual_attention":
        h = _norm(w, prefix, first, attention, eps)
    elif mistake == "residual_outside_norm":
        h = x + _norm(w, prefix, first, attention, eps)
    else:
        h = _norm(w, prefix, first, x + attention, eps)
    ffn = feed_forward(w, f"{prefix}ffn.", h)
    if mistake == "no_residual_ffn":
        return _norm(w, prefix, second, ffn, eps)
    if mistake == "residual_outside_norm":
        return h + _norm(w, prefix, second, ffn, eps)
    return _norm(w, prefix, second, h + ffn, eps)


def embed(w: dict, prefix: str, token_ids, pos_encoding, mistake: str | None = None) -> np.ndarray:
    """Embedding times sqrt(d), plus the positional encoding of the first seq_len positions."""
    table = w[f"{prefix}embedding.embeddings"]
    d = table.shape[1]
    x = table[np.asarray(token_ids)]
    pe = _f(pos_encoding)[:, : x.shape[1], :]
    if mistake == "not_scaled":
        return x + pe
    if mistake == "scaled_by_d":
        return x * d + pe
    if mistake == "divided_by_sqrt_d":
        return x / np.sqrt(d) + pe
    if mistake == "no_positional_encoding":
        return x * np.sqrt(d)
    if mistake == "scaled_after_adding":
        return (x + pe) * np.sqrt(d)
    return x * np.sqrt(d) + pe


EMBEDDING_MISTAKES = ("not_scaled", "scaled_by_d", "divided_by_sqrt_d", "no_positional_encoding",
                      "scaled_after_adding")


def encoder(w: dict, token_ids, pos_encoding, num_layers: int, mask=None, *, eps: float = 1e-6,
            mistake: str | None = None) -> np.ndarray:
    """Embed (scaled, plus positions), then the encoder layers in order, each given the mask."""
    x = embed(w, "", token_ids, pos_encoding, mistake)
    if mistake == "no_mask":
        mask = None
    for i in range(num_layers):
        x = encoder_layer(w, x, mask, eps=eps, prefix=f"enc_layers[{i}].")
        if mistake == "only_first_layer":
            break
    return x


DECODER_LAYER_MISTAKES = ("pre_norm", "masks_swapped", "no_look_ahead_mask", "no_padding_mask",
                          "cross_query_is_x", "no_residual_self", "no_residual_cross", "no_residual_ffn")


def decoder_layer(w: dict, x, enc_output, look_ahead_mask=None, padding_mask=None, *, eps: float = 1e-6,
                  prefix: str = "", mistake: str | None = None):
    """Masked self-attention, cross-attention over enc_output, feed-forward; each followed by add & norm.

    Returns (output, self-attention weights, cross-attention weights).
    """
    x, enc_output = _f(x), _f(enc_output)
    if mistake == "masks_swapped":
        look_ahead_mask, padding_mask = padding_mask, look_ahead_mask
    if mistake == "no_look_ahead_mask":
        look_ahead_mask = None
    if mistake == "no_padding_mask":
        padding_mask = None

    def norm(name, value):
        return _norm(w, prefix, name, value, eps)

    if mistake == "pre_norm":
        n1 = norm("layernorm1", x)
        a1, w1 = multi_head_attention(w, f"{prefix}mha1.", n1, n1, n1, look_ahead_mask)
        h1 = x + a1
        a2, w2 = multi_head_attention(w, f"{prefix}mha2.", norm("layernorm2", h1), enc_output, enc_output,
                                      padding_mask)
        h2 = h1 + a2
        return h2 + feed_forward(w, f"{prefix}ffn.", norm("layernorm3", h2)), w1, w2
    a1, w1 = multi_head_attention(w, f"{prefix}mha1.", x, x, x, look_ahead_mask)
    h1 = norm("layernorm1", a1 if mistake == "no_residual_self" else x + a1)
    cross_query = x if mistake == "cross_query_is_x" else h1
    a2, w2 = multi_head_attention(w, f"{prefix}mha2.", cross_query, enc_output, enc_output, padding_mask)
    h2 = norm("layernorm2", a2 if mistake == "no_residual_cross" else h1 + a2)
    f = feed_forward(w, f"{prefix}ffn.", h2)
    h3 = norm("layernorm3", f if mistake == "no_residual_ffn" else h2 + f)
    return h3, w1, w2


def attention_keys(num_layers: int) -> list[str]:
    """The keys of the decoder's attention-weights dict, in order."""
    keys = []
    for i in range(1, num_layers + 1):
        keys += [f"decoder_layer{i}_block1_self_att", f"decoder_layer{i}_block2_decenc_att"]
    return keys


def decoder(w: dict, token_ids, enc_output, pos_encoding, num_layers: int, look_ahead_mask=None,
            padding_mask=None, *, eps: float = 1e-6, prefix: str = "", mistake: str | None = None):
    """Embed the target tokens, then the decoder layers; returns (x, {key: attention weights})."""
    x = embed(w, prefix, token_ids, pos_encoding, mistake)
    if mistake == "masks_swapped":
        look_ahead_mask, padding_mask = padding_mask, look_ahead_mask
    if mistake == "no_look_ahead_mask":
        look_ahead_mask = None
    if mistake == "no_padding_mask":
        padding_mask = None
    weights = {}
    for i in range(num_layers):
        x, w1, w2 = decoder_layer(w, x, enc_output, look_ahead_mask, padding_mask, eps=eps,
                                  prefix=f"{prefix}dec_layers[{i}].")
        weights[f"decoder_layer{i + 1}_block1_self_att"] = w1
        weights[f"decoder_layer{i + 1}_block2_decenc_att"] = w2
    return x, weights


def transformer(w: dict, input_ids, output_ids, enc_pos_encoding, dec_pos_encoding, num_layers: int,
                enc_padding_mask=None, look_ahead_mask=None, dec_padding_mask=None, *, eps: float = 1e-6,
                mistake: str | None = None):
    """Encoder, decoder, final Dense layer; returns (logits, attention weights of the decoder)."""
    if mistake == "no_encoder_mask":
        enc_padding_mask = None
    enc_w = {k[len("encoder."):]: v for k, v in w.items() if k.startswith("encoder.")}
    dec_w = {k[len("decoder."):]: v for k, v in w.items() if k.startswith("decoder.")}
    enc_output = encoder(enc_w, input_ids, enc_pos_encoding, num_layers, enc_padding_mask, eps=eps)
    if mistake == "decoder_masks_swapped":
        look_ahead_mask, dec_padding_mask = dec_padding_mask, look_ahead_mask
    dec_output, weights = decoder(dec_w, output_ids, enc_output, dec_pos_encoding, num_layers, look_ahead_mask,
                                  dec_padding_mask, eps=eps)
    if mistake == "no_final_layer":
        return dec_output, weights
    logits = dec_output @ w["final_layer.kernel"] + w["final_layer.bias"]
    if mistake == "softmax":
        return softmax(logits, axis=-1), weights
    return logits, weights


# ----------------------------------------------------------------------------------------------
# Keras reference layers (same constructor arguments and attribute names as the template)


@functools.cache
def keras_layers():
    """Build the reference Keras classes on demand (keeps importing this module free of TensorFlow)."""
    import keras
    import tensorflow as tf

    from course_lib.layers import positional_encoding
    from course_lib.transformer.layers import FullyConnected

    class EncoderLayer(keras.layers.Layer):
        def __init__(self, embedding_dim, num_heads, fully_connected_dim, dropout_rate=0.1, layernorm_eps=1e-6):
            super().__init__()
            self.mha = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embedding_dim // num_heads,
                                                       dropout=dropout_rate)
            self.ffn = FullyConnected(embedding_dim, fully_connected_dim)
            self.layernorm1 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
            self.layernorm2 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
            self.dropout_ffn = keras.layers.Dropout(dropout_rate)

        def compute_mask(self, inputs, previous_mask=None):
            return None

        def call(self, x, training=None, mask=None):
            attention = self.mha(x, x, x, attention_mask=mask, training=training)
            h = self.layernorm1(x + attention)
            f = self.dropout_ffn(self.ffn(h), training=training)
            return self.layernorm2(h + f)

    class Encoder(keras.layers.Layer):
        def __init__(self, num_layers, embedding_dim, num_heads, fully_connected_dim, input_vocab_size,
                     maximum_position_encoding, dropout_rate=0.1, layernorm_eps=1e-6):
            super().__init__()
            self.embedding_dim = embedding_dim
            self.num_layers = num_layers
            self.embedding = keras.layers.Embedding(input_vocab_size, embedding_dim)
            self.pos_encoding = positional_encoding(maximum_position_encoding, embedding_dim)
            self.enc_layers = [EncoderLayer(embedding_dim, num_heads, fully_connected_dim, dropout_rate,
                                            layernorm_eps) for _ in range(num_layers)]
            self.dropout = keras.layers.Dropout(dropout_rate)

        def compute_mask(self, inputs, previous_mask=None):
            return None

        def call(self, x, training=None, mask=None):
            seq_len = tf.shape(x)[1]
            x = self.embedding(x) * tf.sqrt(tf.cast(self.embedding_dim, tf.float32))
            x = self.dropout(x + self.pos_encoding[:, :seq_len, :], training=training)
            for layer in self.enc_layers:
                x = layer(x, training=training, mask=mask)
            return x

    class DecoderLayer(keras.layers.Layer):
        def __init__(self, embedding_dim, num_heads, fully_connected_dim, dropout_rate=0.1, layernorm_eps=1e-6):
            super().__init__()
            key_dim = embedding_dim // num_heads
            self.mha1 = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=key_dim, dropout=dropout_rate)
            self.mha2 = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=key_dim, dropout=dropout_rate)
            self.ffn = FullyConnected(embedding_dim, fully_connected_dim)
            self.layernorm1 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
            self.layernorm2 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
            self.layernorm3 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
            self.dropout_ffn = keras.layers.Dropout(dropout_rate)

        def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
            a1, w1 = self.mha1(x, x, x, attention_mask=look_ahead_mask, return_attention_scores=True,
                               training=training)
            h1 = self.layernorm1(x + a1)
            a2, w2 = self.mha2(h1, enc_output, enc_output, attention_mask=padding_mask,
                               return_attention_scores=True, training=training)
            h2 = self.layernorm2(h1 + a2)
            f = self.dropout_ffn(self.ffn(h2), training=training)
            return self.layernorm3(h2 + f), w1, w2

    class Decoder(keras.layers.Layer):
        def __init__(self, num_layers, embedding_dim, num_heads, fully_connected_dim, target_vocab_size,
                     maximum_position_encoding, dropout_rate=0.1, layernorm_eps=1e-6):
            super().__init__()
            self.embedding_dim = embedding_dim
            self.num_layers = num_layers
            self.embedding = keras.layers.Embedding(target_vocab_size, embedding_dim)
            self.pos_encoding = positional_encoding(maximum_position_encoding, embedding_dim)
            self.dec_layers = [DecoderLayer(embedding_dim, num_heads, fully_connected_dim, dropout_rate,
                                            layernorm_eps) for _ in range(num_layers)]
            self.dropout = keras.layers.Dropout(dropout_rate)

        def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
            seq_len = tf.shape(x)[1]
            x = self.embedding(x) * tf.sqrt(tf.cast(self.embedding_dim, tf.float32))
            x = self.dropout(x + self.pos_encoding[:, :seq_len, :], training=training)
            weights = {}
            for i, layer in enumerate(self.dec_layers):
                x, w1, w2 = layer(x, enc_output, training=training, look_ahead_mask=look_ahead_mask,
                                  padding_mask=padding_mask)
                weights[f"decoder_layer{i + 1}_block1_self_att"] = w1
                weights[f"decoder_layer{i + 1}_block2_decenc_att"] = w2
            return x, weights

    return {"EncoderLayer": EncoderLayer, "Encoder": Encoder, "DecoderLayer": DecoderLayer, "Decoder": Decoder}
