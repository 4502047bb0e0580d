"""Building blocks from earlier assignments, provided to the later ones.

Assignment 01 asks for `positional_encoding`, assignment 02 for the masks and
`scaled_dot_product_attention`, assignment 04 for `EncoderLayer`; later notebooks import these versions
so that a mistake made earlier never blocks the work that follows. The conventions are those of assignment 02:
a mask value 1 means "may attend", 0 means "blocked".
"""

from __future__ import annotations

import numpy as np


def positional_encoding(positions: int, d_model: int):
    """Sinusoidal encoding (1, positions, d_model) float32: sine on even, cosine on odd dimensions."""
    import tensorflow as tf

    position = np.arange(positions)[:, np.newaxis]
    pair = np.arange(d_model)[np.newaxis, :] // 2
    angles = position / np.power(10000.0, 2 * pair / d_model)
    angles[:, 0::2] = np.sin(angles[:, 0::2])
    angles[:, 1::2] = np.cos(angles[:, 1::2])
    return tf.constant(angles[np.newaxis], dtype=tf.float32)


def create_padding_mask(token_ids):
    """1.0 for real tokens, 0.0 for padding (id 0): (batch, seq) -> (batch, 1, seq)."""
    import tensorflow as tf

    return tf.cast(tf.math.not_equal(token_ids, 0), tf.float32)[:, tf.newaxis, :]


def create_look_ahead_mask(sequence_length: int):
    """Ones on and below the diagonal: position i sees positions 0..i. Shape (1, L, L)."""
    import tensorflow as tf

    return tf.linalg.band_part(tf.ones((sequence_length, sequence_length), tf.float32), -1, 0)[tf.newaxis]


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k) + (1 - mask) * -1e9) v for any leading axes; returns (output, weights)."""
    import tensorflow as tf

    d_k = tf.cast(tf.shape(k)[-1], q.dtype)
    scores = tf.matmul(q, k, transpose_b=True) / tf.sqrt(d_k)
    if mask is not None:
        scores += (1.0 - tf.cast(mask, scores.dtype)) * -1e9
    weights = tf.nn.softmax(scores, axis=-1)
    return tf.matmul(weights, v), weights


def _encoder_layer_class():
    import keras

    from course_lib.transformer.layers import FullyConnected

    class EncoderLayer(keras.layers.Layer):
        """Assignment 04's encoder layer (post-norm), with the feed-forward activation as an argument.

        Attribute names are those of the assignment: mha, ffn, layernorm1, layernorm2, dropout_ffn.
        """

        def __init__(self, embedding_dim, num_heads, fully_connected_dim, dropout_rate=0.1, layernorm_eps=1e-6,
                     activation="relu", **kwargs):
            super().__init__(**kwargs)
            self.mha = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embedding_dim // num_heads,
                                                       dropout=dropout_rate)
            self.ffn = FullyConnected(embedding_dim=embedding_dim, fully_connected_dim=fully_connected_dim,
                                      activation=activation)
            self.layernorm1 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
            self.layernorm2 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
            self.dropout_ffn = keras.layers.Dropout(dropout_rate)

        def compute_mask(self, inputs, previous_mask=None):
            return None  # `mask` is an attention mask, not a Keras mask of the output

        def call(self, x, training=None, mask=None):
            """x (batch, seq, embedding_dim); mask broadcastable to (batch, seq, seq), 1 = attend."""
            attention = self.mha(x, x, x, attention_mask=mask, training=training)
            out1 = self.layernorm1(x + attention)
            ffn_output = self.dropout_ffn(self.ffn(out1), training=training)
            return self.layernorm2(out1 + ffn_output)

    return EncoderLayer


def __getattr__(name):
    # Built on first use, so that importing this module does not import Keras (and its stderr logging)
    # before `env.setup()` has quieted it.
    if name == "EncoderLayer":
        globals()[name] = _encoder_layer_class()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
