"""A learner's Keras layer constructed for a hidden check, wherever the learner's class lives."""

from __future__ import annotations

from autograde.remote import in_kernel, run_there
from course_lib import checking


def make_layer(cls, *args, **kwargs):
    """course_lib.checking.make_layer; in the learner's kernel too, the layer is built by its first call
    (`checking.build_on_first_call`, run there: the grader sees the layer only through a handle)."""
    layer = checking.make_layer(cls, *args, **kwargs)
    if in_kernel(layer):
        run_there(layer, checking.build_on_first_call, layer)
    return layer
