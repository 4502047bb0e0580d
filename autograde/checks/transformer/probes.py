"""Stand-ins for a composite's parts that report the `training` flag they were called with.

The training checks of the stacks build the learner's Encoder, Decoder or Transformer with these in place of
its parts: the output then says whether the learner's `call` ran its parts in training mode. They are shipped
as source to the student's kernel (autograde.remote.part_source), so they import only Keras and TensorFlow.
"""

import keras
import tensorflow as tf


def _flag(training) -> float:
    return 1.0 if training else 0.0


class EncoderLayerProbe(keras.layers.Layer):
    """An encoder layer's constructor; its output is all ones in training mode, all zeros otherwise."""

    def __init__(self, embedding_dim, num_heads, fully_connected_dim, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()

    def compute_mask(self, inputs, previous_mask=None):
        return None

    def call(self, x, training=None, mask=None):
        return tf.zeros_like(x) + _flag(training)


class DecoderLayerProbe(keras.layers.Layer):
    """A decoder layer's constructor and results; the output is all ones in training mode, zeros otherwise."""

    def __init__(self, embedding_dim, num_heads, fully_connected_dim, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()

    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        batch, target, source = tf.shape(x)[0], tf.shape(x)[1], tf.shape(enc_output)[1]
        return (tf.zeros_like(x) + _flag(training), tf.zeros((batch, 1, target, target)),
                tf.zeros((batch, 1, target, source)))


class EncoderProbe(keras.layers.Layer):
    """An Encoder's constructor; token ids (batch, S) -> (batch, S, embedding_dim) of ones in training mode."""

    def __init__(self, num_layers, embedding_dim, num_heads, fully_connected_dim, input_vocab_size,
                 maximum_position_encoding, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.embedding_dim = embedding_dim

    def compute_mask(self, inputs, previous_mask=None):
        return None

    def call(self, x, training=None, mask=None):
        shape = tf.concat([tf.shape(x), [self.embedding_dim]], axis=0)
        return tf.zeros(shape) + _flag(training)


class DecoderProbe(keras.layers.Layer):
    """A Decoder's constructor; its output is 1 (its own training flag) + 2 x (the encoder output's mean)
    everywhere, so the Transformer's logits tell which of the two ran in training mode."""

    def __init__(self, num_layers, embedding_dim, num_heads, fully_connected_dim, target_vocab_size,
                 maximum_position_encoding, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.embedding_dim = embedding_dim

    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        shape = tf.concat([tf.shape(x), [self.embedding_dim]], axis=0)
        value = _flag(training) + 2.0 * tf.reduce_mean(tf.cast(enc_output, tf.float32))
        return tf.zeros(shape) + value, {}
