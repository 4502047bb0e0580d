"""Reference span head of assignment 07 (extractive question answering), and its NumPy counterpart.

`build_qa_model` is the solution: BERT's `sequence_output`, dropout, one `Dense(2)` without activation named
"span_logits", split on the last axis into start and end logits of shape (batch, seq) each, on the backbone's own
inputs (the padding mask included), the encoder left trainable; the model returns the list
[start_logits, end_logits]. The hidden check compares with `span_logits`, computed in float64 from what the grader
chose (the backbone's weights and inputs, the head's kernel and bias); the backbone itself runs as in assignment
06 (autograde.reference.heads.backbone_forward). The usual mistakes are in autograde.mistakes.qa.model.
"""

from __future__ import annotations

import numpy as np

from autograde.reference.heads import backbone_forward, token_logits

__all__ = ["backbone_forward", "build_qa_model", "span_logits", "stacked_span_logits"]


def build_qa_model(backbone, dropout=0.1):
    """[start_logits, end_logits], each (batch, seq), from one Dense(2) on the sequence_output."""
    import keras

    inputs = backbone.input  # {"token_ids", "segment_ids", "padding_mask"}
    sequence = backbone(inputs)["sequence_output"]
    hidden = keras.layers.Dropout(dropout)(sequence)
    logits = keras.layers.Dense(2, name="span_logits")(hidden)  # (batch, seq, 2)
    start_logits, end_logits = keras.ops.unstack(logits, num=2, axis=-1)
    return keras.Model(inputs, [start_logits, end_logits])


def span_logits(sequence_output, kernel, bias) -> tuple[np.ndarray, np.ndarray]:
    """The head at inference (dropout off): h W + b at every position; column 0 is the start, column 1 the end."""
    logits = token_logits(sequence_output, kernel, bias)
    return logits[..., 0], logits[..., 1]


def stacked_span_logits(sequence_output, kernel, bias) -> np.ndarray:
    """`span_logits` as one array (2, batch, seq): start logits first. The checks compare the model's two outputs
    stacked this way."""
    return np.stack(span_logits(sequence_output, kernel, bias))
