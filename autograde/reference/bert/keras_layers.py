"""The correct Keras layers of assignment 05, with the template's constructor arguments and attribute names
(tests/test_05_bert_encoder.py keeps their `__init__` equal to the solution notebook's). The hidden checks
grade a composite with these parts (BertEncoder with this BertEmbedding, the weight loader with this
BertEncoder); the unit tests derive their wrong variants from them by subclassing."""

from __future__ import annotations

import keras
import tensorflow as tf

from course_lib.layers import EncoderLayer


def gelu_tanh(x):
    """GELU in its tanh form, as keras-hub's BERT uses it."""
    return keras.activations.gelu(x, approximate=True)


class BertEmbedding(keras.layers.Layer):
    """BERT's input embedding: LayerNorm(token + position + segment embeddings), then dropout."""

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
    """BERT's encoder: the input embedding, then num_layers post-norm encoder layers with GELU."""

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim, intermediate_dim, dropout=0.1,
                 max_sequence_length=512, num_segments=2, **kwargs):
        super().__init__(**kwargs)
        self.embedding = BertEmbedding(vocabulary_size, hidden_dim, max_sequence_length=max_sequence_length,
                                       num_segments=num_segments, dropout=dropout, layernorm_eps=1e-12)
        self.enc_layers = [EncoderLayer(hidden_dim, num_heads, intermediate_dim, dropout_rate=dropout,
                                        layernorm_eps=1e-12, activation=gelu_tanh) for _ in range(num_layers)]

    def call(self, token_ids, segment_ids, padding_mask, training=None):
        x = self.embedding(token_ids, segment_ids, training=training)
        mask = padding_mask[:, tf.newaxis, :]  # (batch, 1, seq): the same keys for every query
        for layer in self.enc_layers:
            x = layer(x, training=training, mask=mask)
        return x
