"""The learner's Keras objects as the shared helpers expect them, whether they live in the grader (unit tests)
or in the student's kernel (grading, where the check holds handles: autograde/remote.py).

- `viewed(layer)`: Keras keeps a layer's list attributes (`enc_layers`, `transformer_layers`) in a list type of
  its own, which crosses the wire as a handle, not as a list; on a view such a list reads as a Python list of
  views, so `course_lib.keras_weights.bert_variables` checks the structure of a layer in the kernel, here, as
  it checks a local one.
- `run_there(learner, "course_lib.module:function", ...)`: a course_lib helper run where the learner runs
  (building a layer's weights, calling with a generator made there), its `CheckFailed` turned back into ours.
  Only helpers that build, call or diagnose run there; every verdict is reached here.
"""

from __future__ import annotations

from autograde.remote import Handle, LearnerError, library
from course_lib.checking import CheckFailed

KERAS_LISTS = ("TrackedList",)  # keras.src.utils.tracking: a list subclass, so not sent by value


class _View:
    """A kernel object whose attributes (and call results) are viewed in turn."""

    __slots__ = ("_target",)

    def __init__(self, target: Handle):
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str):
        return viewed(getattr(object.__getattribute__(self, "_target"), name))

    def __call__(self, *args, **kwargs):
        target = object.__getattribute__(self, "_target")
        return viewed(target(*[_unviewed(a) for a in args], **{k: _unviewed(v) for k, v in kwargs.items()}))


_VIEW_TYPES: dict[str, type] = {}


def _view_type(name: str) -> type:
    """A view class named like the object's type: messages say "BertEncoder.enc_layers", not "_View"."""
    if name not in _VIEW_TYPES:
        _VIEW_TYPES[name] = type(name, (_View,), {"__slots__": ()})
    return _VIEW_TYPES[name]


def viewed(value):
    """`value`, with Keras's lists in the kernel read as lists; a local value is returned as it is."""
    if isinstance(value, Handle):
        if type(value).__name__ in KERAS_LISTS:
            return [viewed(item) for item in value.copy()]  # list.copy gives a plain list, sent by value
        return _view_type(type(value).__name__)(value)
    if type(value) in (list, tuple):
        return type(value)(viewed(item) for item in value)
    return value


def _unviewed(value):
    return object.__getattribute__(value, "_target") if isinstance(value, _View) else value


def run_there(learner, dotted: str, *args, **kwargs):
    """`dotted` (a course_lib function) called where `learner` lives; a CheckFailed it raises is ours."""
    function = library(learner, dotted)
    try:
        return function(*args, **kwargs)
    except Exception as error:  # LearnerError is a mixin, not an exception type of its own
        if isinstance(error, LearnerError) and error.remote_type == "CheckFailed":
            raise CheckFailed(str(error)) from None
        raise
