"""Building blocks from earlier assignments, provided to the later ones.

Assignment 01 asks for `positional_encoding` and assignment 02 for the masks and
`scaled_dot_product_attention`; from assignment 03 on, notebooks import these versions so that a
mistake made earlier never blocks the work that follows. The conventions are those of assignment 02:
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
