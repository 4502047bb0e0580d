"""What every head on the tiny backbone is compared with (06's token classifier, 07's span head, 08's QA module):
keras-hub's BertBackbone run in float64 in the grader's process on the weights the grader chose, and the head
in NumPy, float64."""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np


def log_softmax(logits) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def token_logits(sequence_output, kernel, bias) -> np.ndarray:
    """The head at inference (dropout off): h W + b at every position."""
    return np.asarray(sequence_output, np.float64) @ np.asarray(kernel, np.float64) + np.asarray(bias, np.float64)


@functools.cache
def _tiny_backbone(config_items: tuple):
    from course_lib.heads import tiny_backbone  # Keras: the NumPy heads need it only to build this backbone

    # float64: the same values on every CPU and thread count (float32 sums in another order differ by ~1e-6), so
    # the generated expected values hold everywhere; learners' float32 models are compared at 1e-4.
    return tiny_backbone(dict(config_items), dtype="float64")


def backbone_forward(config: Mapping, weights: Mapping[str, np.ndarray], inputs: Mapping) -> dict[str, np.ndarray]:
    """keras-hub's BertBackbone (no dropout) with `weights` on `inputs`, in this process: its "sequence_output" and
    "pooled_output", and "unmasked_sequence_output" with the padding mask replaced by ones (for the mistakes)."""
    backbone = _tiny_backbone(tuple(sorted(config.items())))
    variables = {variable.path: variable for variable in backbone.weights}
    for path, value in weights.items():
        variables[path].assign(np.asarray(value, np.float64))
    tensors = {name: np.asarray(value, np.int32) for name, value in inputs.items()}
    outputs = backbone(tensors, training=False)
    unmasked = backbone({**tensors, "padding_mask": np.ones_like(tensors["padding_mask"])}, training=False)
    import keras

    def array(tensor) -> np.ndarray:  # on any backend (a torch tensor that records gradients refuses np.asarray)
        return np.asarray(keras.ops.convert_to_numpy(keras.ops.stop_gradient(tensor)), np.float64)

    return {"sequence_output": array(outputs["sequence_output"]), "pooled_output": array(outputs["pooled_output"]),
            "unmasked_sequence_output": array(unmasked["sequence_output"])}
