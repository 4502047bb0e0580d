"""Reference QAModel and qa_loss (assignment 08), and their NumPy counterparts.

`QAModel` is the solution: keras-hub's BertBackbone (a torch module on Keras's PyTorch backend) called with
`training=self.training` (Keras layers do not follow torch's train()/eval() switch), then one
`torch.nn.Linear(hidden_dim, 2)` on every position of the sequence output; column 0 gives the start logits and
column 1 the end logits, as in assignment 07's Dense(2). `qa_loss` is the mean of the start and the end
cross-entropies over the batch. The hidden checks compare with `span_logits` and `qa_loss_numpy`, computed in
float64 from what the grader chose; the usual mistakes are in autograde.mistakes.qa_pytorch.model.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


class QAModel(torch.nn.Module):
    """Start and end logits (batch, seq) from a BERT backbone and one Linear(hidden_dim, 2)."""

    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.qa_outputs = torch.nn.Linear(backbone.hidden_dim, 2)

    def forward(self, token_ids, segment_ids, padding_mask):
        inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
        sequence_output = self.backbone(inputs, training=self.training)["sequence_output"]
        logits = self.qa_outputs(sequence_output)  # (batch, seq, 2)
        return logits[..., 0], logits[..., 1]


def qa_loss(start_logits, end_logits, start_positions, end_positions):
    """(cross-entropy of the start + cross-entropy of the end) / 2, each the mean over the batch."""
    start = F.cross_entropy(start_logits, start_positions.long())
    end = F.cross_entropy(end_logits, end_positions.long())
    return (start + end) / 2


# ----------------------------------------------------------------------------------------------
# NumPy, float64: what the hidden checks compare with


def log_softmax(logits, axis: int = -1) -> np.ndarray:
    z = np.asarray(logits, np.float64)
    z = z - z.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def softmax(logits, axis: int = -1) -> np.ndarray:
    return np.exp(log_softmax(logits, axis))


def span_logits(sequence_output, kernel, bias) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) logits, each (batch, seq): h K + c at every position, column 0 the start, column 1 the end."""
    logits = np.asarray(sequence_output, np.float64) @ np.asarray(kernel, np.float64) + np.asarray(bias, np.float64)
    return logits[..., 0], logits[..., 1]


def cross_entropy(logits, positions) -> np.ndarray:
    """-log softmax(logits)[position] of each row: (batch,)."""
    picked = np.take_along_axis(log_softmax(logits), np.asarray(positions, np.int64)[:, None], axis=-1)
    return -picked[:, 0]


def qa_loss_numpy(start_logits, end_logits, start_positions, end_positions) -> float:
    return float((cross_entropy(start_logits, start_positions).mean()
                  + cross_entropy(end_logits, end_positions).mean()) / 2)


def one_hot(positions, width: int) -> np.ndarray:
    return np.eye(width)[np.asarray(positions, np.int64)]


def qa_loss_gradient(start_logits, end_logits, start_positions, end_positions) -> tuple[np.ndarray, np.ndarray]:
    """d qa_loss / d start_logits and d end_logits: (softmax - one-hot of the position) / (2 * batch)."""
    batch, seq = np.shape(start_logits)
    start = (softmax(start_logits) - one_hot(start_positions, seq)) / (2 * batch)
    end = (softmax(end_logits) - one_hot(end_positions, seq)) / (2 * batch)
    return start, end
