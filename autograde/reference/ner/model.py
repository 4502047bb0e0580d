"""Reference token-classification head and masked loss (assignment 06), and their NumPy counterparts.

`build_token_classifier` is the solution: BERT's `sequence_output`, dropout, one `Dense(num_labels)` without
activation, on the backbone's own inputs (the padding mask included), the encoder left trainable.
`masked_token_loss` is the mean cross-entropy (from logits) over the positions whose label is not -100, 0 when
there is none. The hidden checks compare with `token_logits` and `masked_token_loss_numpy`, computed in float64
from what the grader chose (weights, inputs); the usual mistakes are in autograde.mistakes.ner.model.
"""

from __future__ import annotations

import numpy as np

from autograde.reference.heads import backbone_forward, log_softmax, token_logits

# The head's NumPy counterparts live in autograde.reference.heads (07 and 08 compare with them too).
__all__ = ["IGNORE", "backbone_forward", "build_token_classifier", "log_softmax", "masked_token_loss",
           "masked_token_loss_numpy", "token_logits", "token_losses"]

IGNORE = -100  # the label of positions that do not count: continuation pieces, [CLS], [SEP], padding


def build_token_classifier(backbone, num_labels, dropout=0.1):
    """Logits (batch, seq, num_labels) from the backbone's sequence_output, on the backbone's inputs."""
    import keras

    inputs = backbone.input  # {"token_ids", "segment_ids", "padding_mask"}
    sequence = backbone(inputs)["sequence_output"]
    hidden = keras.layers.Dropout(dropout)(sequence)
    logits = keras.layers.Dense(num_labels, name="token_logits")(hidden)
    return keras.Model(inputs, logits)


def masked_token_loss(labels, logits):
    """Mean sparse cross-entropy over the positions whose label is not -100 (a float32 scalar tensor)."""
    import tensorflow as tf

    labels = tf.cast(labels, tf.int32)  # Keras hands a loss its labels as float32
    counts = tf.not_equal(labels, IGNORE)
    safe = tf.where(counts, labels, 0)  # any valid class: these positions are weighted 0
    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=safe, logits=tf.cast(logits, tf.float32))
    weights = tf.cast(counts, tf.float32)
    return tf.math.divide_no_nan(tf.reduce_sum(losses * weights), tf.reduce_sum(weights))


# ----------------------------------------------------------------------------------------------
# NumPy, float64: what the hidden checks compare with


def token_losses(labels, logits) -> tuple[np.ndarray, np.ndarray]:
    """(-log p(label) at every position (0 where ignored), the boolean mask of the positions that count)."""
    labels = np.asarray(labels).astype(np.int64)
    counts = labels != IGNORE
    picked = np.take_along_axis(log_softmax(logits), np.where(counts, labels, 0)[..., None], axis=-1)[..., 0]
    return np.where(counts, -picked, 0.0), counts


def masked_token_loss_numpy(labels, logits) -> float:
    losses, counts = token_losses(labels, logits)
    return float(losses.sum() / counts.sum()) if counts.any() else 0.0
