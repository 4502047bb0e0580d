"""The one correct Keras implementation of assignment 04's graded layers, with the template's constructor
arguments and attribute names. The hidden checks build a learner's composite from these parts (Encoder with
this EncoderLayer, and so on), the expected-value generator builds them with seeded weights, and the unit
tests derive their wrong variants from them by subclassing.

EncoderLayer is the one given to assignment 05 (`course_lib.layers.EncoderLayer`): the same layer, with the
feed-forward activation as an extra argument (ReLU by default).
"""

from __future__ import annotations

import keras
import tensorflow as tf

import course_lib.layers as given
from course_lib.layers import positional_encoding
from course_lib.transformer.layers import FullyConnected

__all__ = ["Decoder", "DecoderLayer", "Encoder", "EncoderLayer", "Transformer"]

# A plain assignment, not an import, so that the grader can ship it (and the Encoder that uses it) as source
# to the student's kernel (autograde.remote.part_source).
EncoderLayer = given.EncoderLayer


class Encoder(keras.layers.Layer):
    """Embedding, scaling, positional encoding, dropout, then num_layers encoder layers."""

    def __init__(self, num_layers, embedding_dim, num_heads, fully_connected_dim, input_vocab_size,
                 maximum_position_encoding, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.num_layers = num_layers
        self.embedding = keras.layers.Embedding(input_vocab_size, embedding_dim)
        self.pos_encoding = positional_encoding(maximum_position_encoding, embedding_dim)
        self.enc_layers = [EncoderLayer(embedding_dim=embedding_dim, num_heads=num_heads,
                                        fully_connected_dim=fully_connected_dim, dropout_rate=dropout_rate,
                                        layernorm_eps=layernorm_eps) for _ in range(num_layers)]
        self.dropout = keras.layers.Dropout(dropout_rate)

    def compute_mask(self, inputs, previous_mask=None):
        return None  # `mask` is an attention mask, not a Keras mask of the output

    def call(self, x, training=None, mask=None):
        """Token ids (batch, seq) -> (batch, seq, embedding_dim)."""
        seq_len = tf.shape(x)[1]
        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))
        x = x + self.pos_encoding[:, :seq_len, :]
        x = self.dropout(x, training=training)
        for layer in self.enc_layers:
            x = layer(x, training=training, mask=mask)
        return x


class DecoderLayer(keras.layers.Layer):
    """Masked self-attention, cross-attention over the encoder output, feed-forward; each with add & norm."""

    def __init__(self, embedding_dim, num_heads, fully_connected_dim, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.mha1 = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embedding_dim // num_heads,
                                                    dropout=dropout_rate)
        self.mha2 = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embedding_dim // num_heads,
                                                    dropout=dropout_rate)
        self.ffn = FullyConnected(embedding_dim=embedding_dim, fully_connected_dim=fully_connected_dim)
        self.layernorm1 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
        self.layernorm2 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
        self.layernorm3 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
        self.dropout_ffn = keras.layers.Dropout(dropout_rate)

    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        """Returns (output (batch, T, embedding_dim), self-attention weights, cross-attention weights)."""
        self_attention, self_weights = self.mha1(x, x, x, attention_mask=look_ahead_mask,
                                                 return_attention_scores=True, training=training)
        out1 = self.layernorm1(x + self_attention)
        cross_attention, cross_weights = self.mha2(out1, enc_output, enc_output, attention_mask=padding_mask,
                                                   return_attention_scores=True, training=training)
        out2 = self.layernorm2(out1 + cross_attention)
        ffn_output = self.dropout_ffn(self.ffn(out2), training=training)
        return self.layernorm3(out2 + ffn_output), self_weights, cross_weights


class Decoder(keras.layers.Layer):
    """Embedding, scaling, positional encoding, dropout, then num_layers decoder layers."""

    def __init__(self, num_layers, embedding_dim, num_heads, fully_connected_dim, target_vocab_size,
                 maximum_position_encoding, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.num_layers = num_layers
        self.embedding = keras.layers.Embedding(target_vocab_size, embedding_dim)
        self.pos_encoding = positional_encoding(maximum_position_encoding, embedding_dim)
        self.dec_layers = [DecoderLayer(embedding_dim=embedding_dim, num_heads=num_heads,
                                        fully_connected_dim=fully_connected_dim, dropout_rate=dropout_rate,
                                        layernorm_eps=layernorm_eps) for _ in range(num_layers)]
        self.dropout = keras.layers.Dropout(dropout_rate)

    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        """Target ids (batch, T) -> ((batch, T, embedding_dim), dict of attention weights)."""
        seq_len = tf.shape(x)[1]
        attention_weights = {}
        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))
        x = x + self.pos_encoding[:, :seq_len, :]
        x = self.dropout(x, training=training)
        for i, layer in enumerate(self.dec_layers):
            x, block1, block2 = layer(x, enc_output, training=training, look_ahead_mask=look_ahead_mask,
                                      padding_mask=padding_mask)
            attention_weights[f"decoder_layer{i + 1}_block1_self_att"] = block1
            attention_weights[f"decoder_layer{i + 1}_block2_decenc_att"] = block2
        return x, attention_weights


class Transformer(keras.Model):
    """Encoder, decoder and a final Dense layer giving logits over the target vocabulary."""

    def __init__(self, num_layers, embedding_dim, num_heads, fully_connected_dim, input_vocab_size,
                 target_vocab_size, max_positional_encoding_input, max_positional_encoding_target,
                 dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.encoder = Encoder(num_layers=num_layers, embedding_dim=embedding_dim, num_heads=num_heads,
                               fully_connected_dim=fully_connected_dim, input_vocab_size=input_vocab_size,
                               maximum_position_encoding=max_positional_encoding_input,
                               dropout_rate=dropout_rate, layernorm_eps=layernorm_eps)
        self.decoder = Decoder(num_layers=num_layers, embedding_dim=embedding_dim, num_heads=num_heads,
                               fully_connected_dim=fully_connected_dim, target_vocab_size=target_vocab_size,
                               maximum_position_encoding=max_positional_encoding_target,
                               dropout_rate=dropout_rate, layernorm_eps=layernorm_eps)
        self.final_layer = keras.layers.Dense(target_vocab_size)

    def call(self, input_sentence, output_sentence, training=None, enc_padding_mask=None, look_ahead_mask=None,
             dec_padding_mask=None):
        """Input ids (batch, S), target ids (batch, T) -> (logits (batch, T, target_vocab_size), weights)."""
        enc_output = self.encoder(input_sentence, training=training, mask=enc_padding_mask)
        dec_output, attention_weights = self.decoder(output_sentence, enc_output, training=training,
                                                     look_ahead_mask=look_ahead_mask, padding_mask=dec_padding_mask)
        return self.final_layer(dec_output), attention_weights
