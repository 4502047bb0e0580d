"""The reference of the notebook's Keras layer, `ScratchMultiHeadAttention`, and the TensorFlow split and
merge it uses: the solution notebook's code, kept equal to it by tests/test_03_multi_head_attention.py.

The hidden checks grade a learner's `call` with these split_heads and merge_heads; the tests derive their
wrong layers from this class; bench/attention_speed.py times it against keras.layers.MultiHeadAttention.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from course_lib.layers import scaled_dot_product_attention


def split_heads(x, num_heads):
    """(batch, seq, d_model) -> (batch, num_heads, seq, depth) with TF ops (any batch size, tf.function)."""
    batch, seq = tf.shape(x)[0], tf.shape(x)[1]
    depth = x.shape[-1] // num_heads
    x = tf.reshape(x, (batch, seq, num_heads, depth))
    return tf.transpose(x, perm=(0, 2, 1, 3))


def merge_heads(x):
    """(batch, num_heads, seq, depth) -> (batch, seq, num_heads * depth) with TF ops."""
    x = tf.transpose(x, perm=(0, 2, 1, 3))
    batch, seq = tf.shape(x)[0], tf.shape(x)[1]
    return tf.reshape(x, (batch, seq, x.shape[2] * x.shape[3]))


class ScratchMultiHeadAttention(keras.layers.Layer):
    """Multi-head attention written from scratch: num_heads heads of depth = d_model // num_heads."""

    def __init__(self, d_model, num_heads, **kwargs):
        super().__init__(**kwargs)
        if d_model % num_heads != 0:
            raise ValueError(f"d_model = {d_model} must be divisible by num_heads = {num_heads}")
        self.num_heads = num_heads
        self.d_model = d_model
        self.depth = d_model // num_heads
        self.wq = keras.layers.Dense(d_model)
        self.wk = keras.layers.Dense(d_model)
        self.wv = keras.layers.Dense(d_model)
        self.wo = keras.layers.Dense(d_model)

    def call(self, q, k, v, attention_mask=None):
        """Returns (output (batch, n_q, d_model), attention_weights (batch, num_heads, n_q, n_k))."""
        heads_q = split_heads(self.wq(q), self.num_heads)
        heads_k = split_heads(self.wk(k), self.num_heads)
        heads_v = split_heads(self.wv(v), self.num_heads)
        if attention_mask is not None:
            attention_mask = tf.cast(attention_mask, heads_q.dtype)[:, tf.newaxis, :, :]
        attended, attention_weights = scaled_dot_product_attention(heads_q, heads_k, heads_v, attention_mask)
        output = self.wo(merge_heads(attended))
        return output, attention_weights
