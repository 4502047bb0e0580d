"""A learner layer's weights as the hidden checks set them, in a handful of requests wherever the layer lives.

When grading, the layer is in the student's kernel: walking it attribute by attribute from here would cost a
request per attribute (hundreds per case). Instead the walk (course_lib.keras_weights) runs in the kernel
and returns the variables as handles, their shapes come back in one request, and the values the grader
chose are set in one more. The values are generated here, so the reference computes with exactly them.
"""

from __future__ import annotations

import numpy as np

from autograde.remote import in_kernel, remote_of, run_there
from course_lib.keras_weights import layer_variables, seeded_values


def variables_of(layer, reader, *args, **kwargs) -> dict:
    """`reader(layer, *args)` (a course_lib.keras_weights walk) run where `layer` lives: its variables by path."""
    return run_there(layer, reader, layer, *args, **kwargs)


def shapes(variables: dict) -> dict[str, tuple[int, ...]]:
    keys, targets = list(variables), list(variables.values())
    if targets and in_kernel(targets[0]):
        found = remote_of(targets[0]).getattr_each(targets, "shape")
    else:
        found = [v.shape for v in targets]
    return {key: tuple(int(d) for d in shape) for key, shape in zip(keys, found, strict=True)}


def assign(variables: dict, values: dict[str, np.ndarray]) -> None:
    """Set `variables[key]` to `values[key]` (float32) for each key of `values`."""
    keys = list(values)
    arrays = [np.asarray(values[key], np.float32) for key in keys]
    targets = [variables[key] for key in keys]
    if targets and in_kernel(targets[0]):
        remote_of(targets[0]).assign_each(targets, arrays)
        return
    for target, array in zip(targets, arrays, strict=True):
        target.assign(array)


def set_seeded(variables: dict, seed: int) -> dict[str, np.ndarray]:
    """Set every variable from a seeded generator; return the values set, as float64."""
    values = seeded_values(shapes(variables), seed)
    assign(variables, values)
    return {key: value.astype(np.float64) for key, value in values.items()}


def seed_layer(layer, kind: str, config: dict, seed: int) -> dict[str, np.ndarray]:
    """Seed every weight of an assignment-04 layer (`kind` as in course_lib.keras_weights.layer_variables)."""
    return set_seeded(variables_of(layer, layer_variables, kind, config), seed)
