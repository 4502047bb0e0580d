"""Reference for assignment 05, "your encoder, BERT's weights", three ways.

1. NumPy forward passes (float64, inference mode) of BERT's input embedding and of the encoder, taking
   the weights of a learner's Keras layer read by attribute name (`course_lib.bert.encoder`): flat dicts
   keyed by attribute paths such as "embedding.token_embedding.embeddings" or "enc_layers[0].mha.query_dense.kernel".
   Keyword `mistake=` computes what a usual mistake gives, so the hidden checks can name it.
2. Keras layers with the template's constructor arguments and attribute names and a correct `call`, used
   to grade a composite with reference parts (BertEncoder with the reference BertEmbedding, the weight
   loader with the reference BertEncoder).
3. Where every pretrained weight comes from in a keras-hub `BertBackbone` (`SOURCES`), and a reference
   loader that follows it.

Masks: the encoder receives keras-hub's padding mask (batch, seq), 1 = real token, and attends with
the (batch, 1, seq) attention mask made from it.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from autograde.reference.scaled_dot_product_attention import softmax
from autograde.reference.transformer.layers import layer_norm

# ----------------------------------------------------------------------------------------------
# Activations


def gelu_exact(x) -> np.ndarray:
    """GELU(x) = x Phi(x), Phi the standard normal CDF."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / np.sqrt(2.0)))


def gelu_tanh(x) -> np.ndarray:
    """The tanh approximation of GELU used by Google's BERT and keras-hub."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


# ----------------------------------------------------------------------------------------------
# NumPy forward passes


def _f(x) -> np.ndarray:
    if hasattr(x, "numpy"):
        x = x.numpy()
    return np.asarray(x, dtype=np.float64)


EMBEDDING_MISTAKES = ("scaled", "no_positions", "positions_from_token_ids", "no_segments", "no_layer_norm",
                      "norm_before_sum")


def bert_embedding(w: dict, token_ids, segment_ids, *, eps: float = 1e-12, prefix: str = "",
                   mistake: str | None = None) -> np.ndarray:
    """LayerNorm(token + position + segment embeddings): (batch, seq) ids -> (batch, seq, hidden_dim).

    Positions are 0..seq-1 and index a learned table (no sinusoids, no sqrt(d) scaling).
    """
    token_ids, segment_ids = np.asarray(token_ids), np.asarray(segment_ids)
    tokens = w[f"{prefix}token_embedding.embeddings"][token_ids]
    hidden = tokens.shape[-1]
    positions = w[f"{prefix}position_embedding.embeddings"][np.arange(token_ids.shape[1])][np.newaxis]
    segments = w[f"{prefix}segment_embedding.embeddings"][segment_ids]
    gamma, beta = w[f"{prefix}layer_norm.gamma"], w[f"{prefix}layer_norm.beta"]
    if mistake == "scaled":
        tokens = tokens * np.sqrt(hidden)
    elif mistake == "no_positions":
        positions = 0.0
    elif mistake == "positions_from_token_ids":
        positions = w[f"{prefix}position_embedding.embeddings"][token_ids]  # IndexError if an id >= max length
    elif mistake == "no_segments":
        segments = 0.0
    if mistake == "no_layer_norm":
        return tokens + positions + segments
    if mistake == "norm_before_sum":
        return layer_norm(tokens, gamma, beta, eps) + positions + segments
    return layer_norm(tokens + positions + segments, gamma, beta, eps)


def attention_mask(padding_mask, mistake: str | None = None) -> np.ndarray:
    """The attention mask the encoder gives its layers: (batch, seq) -> (batch, 1, seq)."""
    padding_mask = _f(padding_mask)
    if mistake == "mask_not_expanded":
        return padding_mask  # Keras reads a 2-D mask as (queries, keys): it only fits when batch == seq
    if mistake == "mask_wrong_axis":
        return padding_mask[:, :, np.newaxis]  # blocks padding *queries* instead of padding keys
    return padding_mask[:, np.newaxis, :]


def multi_head_attention(w: dict, prefix: str, x, mask=None) -> np.ndarray:
    """Keras MultiHeadAttention on x (self-attention) at inference, with Keras 3.15's treatment of masks:
    a query whose keys are all blocked gets weight 0 everywhere (its context vector is 0)."""
    x = _f(x)

    def project(name):
        kernel, bias = w[f"{prefix}{name}_dense.kernel"], w[f"{prefix}{name}_dense.bias"]
        return np.einsum("btd,dhk->bhtk", x, kernel) + bias[:, None, :]

    q, k, v = project("query"), project("key"), project("value")
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        allowed = np.broadcast_to(np.expand_dims(_f(mask), -3) > 0, scores.shape)  # ValueError if it does not fit
        scores = np.where(allowed, scores, -np.inf)  # softmax gives 0 to -inf, and all zeros to a blocked row
    context = softmax(scores, axis=-1) @ v
    return np.einsum("bhtk,hkd->btd", context, w[f"{prefix}output_dense.kernel"]) + w[f"{prefix}output_dense.bias"]


def encoder_layer(w: dict, x, mask=None, *, eps: float = 1e-12, prefix: str = "", activation=gelu_tanh):
    """Assignment 04's post-norm encoder layer with a GELU feed-forward block."""
    x = _f(x)
    h = layer_norm(x + multi_head_attention(w, f"{prefix}mha.", x, mask),
                   w[f"{prefix}layernorm1.gamma"], w[f"{prefix}layernorm1.beta"], eps)
    hidden = activation(h @ w[f"{prefix}ffn.layers[0].kernel"] + w[f"{prefix}ffn.layers[0].bias"])
    f = hidden @ w[f"{prefix}ffn.layers[1].kernel"] + w[f"{prefix}ffn.layers[1].bias"]
    return layer_norm(h + f, w[f"{prefix}layernorm2.gamma"], w[f"{prefix}layernorm2.beta"], eps)


ENCODER_MISTAKES = ("no_mask", "mask_not_expanded", "mask_wrong_axis", "only_first_layer", "only_last_layer",
                    "layers_reversed")


def bert_encoder(w: dict, token_ids, segment_ids, padding_mask, num_layers: int, *, eps: float = 1e-12,
                 activation=gelu_tanh, embedded=None, mistake: str | None = None) -> np.ndarray:
    """Embedding, then the encoder layers in order, all with the (batch, 1, seq) attention mask.

    `embedded` replaces the embedding's output (the visible check's test double has no weights).
    """
    x = bert_embedding(w, token_ids, segment_ids, eps=eps, prefix="embedding.") if embedded is None else _f(embedded)
    mask = None if mistake == "no_mask" else attention_mask(padding_mask, mistake)
    order = list(range(num_layers))
    if mistake == "only_first_layer":
        order = order[:1]
    elif mistake == "only_last_layer":
        order = order[-1:]
    elif mistake == "layers_reversed":
        order = order[::-1]
    for i in order:
        x = encoder_layer(w, x, mask, eps=eps, prefix=f"enc_layers[{i}].", activation=activation)
    return x


# ----------------------------------------------------------------------------------------------
# Where each pretrained weight comes from: (encoder sublayer, backbone sublayer) as attribute paths


EMBEDDING_SOURCES = (
    ("embedding.token_embedding", "token_embedding"),
    ("embedding.position_embedding", "position_embedding"),
    ("embedding.segment_embedding", "segment_embedding"),
    ("embedding.layer_norm", "embeddings_layer_norm"),
)
LAYER_SOURCES = (
    ("mha", "_self_attention_layer"),
    ("layernorm1", "_self_attention_layer_norm"),
    ("ffn.layers[0]", "_feedforward_intermediate_dense"),
    ("ffn.layers[1]", "_feedforward_output_dense"),
    ("layernorm2", "_feedforward_layer_norm"),
)


def sources(num_layers: int) -> list[tuple[str, str]]:
    """Every (encoder sublayer, backbone sublayer) pair of an encoder with `num_layers` layers."""
    pairs = list(EMBEDDING_SOURCES)
    for i in range(num_layers):
        pairs += [(f"enc_layers[{i}].{mine}", f"transformer_layers[{i}].{theirs}") for mine, theirs in LAYER_SOURCES]
    return pairs


def load_bert_weights(encoder, backbone) -> None:
    """Copy every weight of a keras-hub BertBackbone into a built BertEncoder of the same sizes."""
    from course_lib.keras_weights import resolve

    if len(encoder.enc_layers) != len(backbone.transformer_layers):
        raise ValueError(f"the encoder has {len(encoder.enc_layers)} layers, the backbone "
                         f"{len(backbone.transformer_layers)}")
    for mine, theirs in sources(len(encoder.enc_layers)):
        resolve(encoder, mine).set_weights(resolve(backbone, theirs).get_weights())


# ----------------------------------------------------------------------------------------------
# Keras reference layers (same constructor arguments and attribute names as the template)


@functools.cache
def keras_layers() -> dict:
    """Build the reference Keras classes on demand (keeps importing this module free of TensorFlow)."""
    import keras
    import tensorflow as tf

    from course_lib.layers import EncoderLayer

    def gelu(x):
        return keras.activations.gelu(x, approximate=True)

    class BertEmbedding(keras.layers.Layer):
        def __init__(self, vocabulary_size, hidden_dim, max_sequence_length=512, num_segments=2, dropout=0.1,
                     layernorm_eps=1e-12, **kwargs):
            super().__init__(**kwargs)
            self.token_embedding = keras.layers.Embedding(vocabulary_size, hidden_dim)
            self.position_embedding = keras.layers.Embedding(max_sequence_length, hidden_dim)
            self.segment_embedding = keras.layers.Embedding(num_segments, hidden_dim)
            self.layer_norm = keras.layers.LayerNormalization(epsilon=layernorm_eps)
            self.dropout = keras.layers.Dropout(dropout)

        def call(self, token_ids, segment_ids, training=None):
            positions = self.position_embedding(tf.range(tf.shape(token_ids)[1]))
            x = self.token_embedding(token_ids) + positions + self.segment_embedding(segment_ids)
            return self.dropout(self.layer_norm(x), training=training)

    class BertEncoder(keras.layers.Layer):
        def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim, intermediate_dim, dropout=0.1,
                     max_sequence_length=512, num_segments=2, **kwargs):
            super().__init__(**kwargs)
            self.embedding = BertEmbedding(vocabulary_size, hidden_dim, max_sequence_length=max_sequence_length,
                                           num_segments=num_segments, dropout=dropout, layernorm_eps=1e-12)
            self.enc_layers = [EncoderLayer(hidden_dim, num_heads, intermediate_dim, dropout_rate=dropout,
                                            layernorm_eps=1e-12, activation=gelu) for _ in range(num_layers)]

        def call(self, token_ids, segment_ids, padding_mask, training=None):
            x = self.embedding(token_ids, segment_ids, training=training)
            mask = tf.cast(padding_mask, tf.float32)[:, tf.newaxis, :]
            for layer in self.enc_layers:
                x = layer(x, training=training, mask=mask)
            return x

    return {"BertEmbedding": BertEmbedding, "BertEncoder": BertEncoder}
