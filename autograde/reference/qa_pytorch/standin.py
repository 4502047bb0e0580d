"""The stand-in network of the train_step and evaluate checks (course_lib.qa_pytorch.standin) in NumPy float64:
its forward pass, its gradient, and the visible checks' stand-in loss with its gradient.

Weights are a dict by WEIGHT_NAMES: token_embedding (vocabulary, hidden), segment_embedding (segments, hidden),
kernel (hidden, 2), bias (2,). A batch is a dict of token_ids, segment_ids, padding_mask, start_positions and
end_positions. Dropout is off: the checks train the stand-in without it and evaluate must switch it off.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def forward(weights: Mapping, batch: Mapping) -> dict[str, np.ndarray]:
    """{"start", "end"} logits (batch, seq) and what the gradient needs ("activation", "mask", "vectors")."""
    ids = np.asarray(batch["token_ids"], np.int64)
    segments = np.asarray(batch["segment_ids"], np.int64)
    mask = np.asarray(batch["padding_mask"], np.float64)[..., None]
    activation = np.tanh(np.asarray(weights["token_embedding"], np.float64)[ids]
                         + np.asarray(weights["segment_embedding"], np.float64)[segments])
    vectors = activation * mask
    logits = vectors @ np.asarray(weights["kernel"], np.float64) + np.asarray(weights["bias"], np.float64)
    return {"start": logits[..., 0], "end": logits[..., 1], "activation": activation, "mask": mask,
            "vectors": vectors}


def gradient(weights: Mapping, batch: Mapping, forward_pass: Mapping, d_start, d_end) -> dict[str, np.ndarray]:
    """The gradient of every weight, given the loss's gradient with respect to the start and end logits."""
    d_logits = np.stack([np.asarray(d_start, np.float64), np.asarray(d_end, np.float64)], axis=-1)
    kernel = np.asarray(weights["kernel"], np.float64)
    d_kernel = np.einsum("bsh,bsk->hk", forward_pass["vectors"], d_logits)
    d_bias = d_logits.sum(axis=(0, 1))
    d_inner = (d_logits @ kernel.T) * forward_pass["mask"] * (1.0 - forward_pass["activation"] ** 2)
    d_token = np.zeros(np.shape(weights["token_embedding"]))
    np.add.at(d_token, np.asarray(batch["token_ids"], np.int64), d_inner)
    d_segment = np.zeros(np.shape(weights["segment_embedding"]))
    np.add.at(d_segment, np.asarray(batch["segment_ids"], np.int64), d_inner)
    return {"token_embedding": d_token, "segment_embedding": d_segment, "kernel": d_kernel, "bias": d_bias}


def stand_in_loss(start, end, start_positions, end_positions) -> float:
    """mean over the batch of ((1 - start[s*])^2 + (1 - end[e*])^2) / 2."""
    rows = np.arange(np.shape(start)[0])
    picked_start = np.asarray(start, np.float64)[rows, np.asarray(start_positions, np.int64)]
    picked_end = np.asarray(end, np.float64)[rows, np.asarray(end_positions, np.int64)]
    return float((((1 - picked_start) ** 2 + (1 - picked_end) ** 2) / 2).mean())


def stand_in_loss_gradient(start, end, start_positions, end_positions) -> tuple[np.ndarray, np.ndarray]:
    batch = np.shape(start)[0]
    rows = np.arange(batch)
    d_start, d_end = np.zeros(np.shape(start)), np.zeros(np.shape(end))
    starts, ends = np.asarray(start_positions, np.int64), np.asarray(end_positions, np.int64)
    d_start[rows, starts] = -(1 - np.asarray(start, np.float64)[rows, starts]) / batch
    d_end[rows, ends] = -(1 - np.asarray(end, np.float64)[rows, ends]) / batch
    return d_start, d_end
