"""A learner's layer in the student's kernel, seen as `course_lib.keras_weights` expects a local one.

Keras keeps a layer's list attributes (`enc_layers`, `dec_layers`) in a list subclass of its own, which
crosses the wire as a handle (autograde/wire.py sends only plain lists by value), so reading a stack's
weights by attribute path would fail on it. Through `seen(layer)`, such a list reads as a Python list, and
every other object in the kernel as a `Seen` view whose attributes and call results are seen in turn. A local
object (the unit tests' layers) is returned as it is.
"""

from __future__ import annotations

from autograde.remote import Handle

KERAS_LISTS = ("TrackedList",)  # keras.src.utils.tracking.TrackedList, a subclass of list


class Seen:
    """An object in the kernel whose attributes and call results are seen as well."""

    __slots__ = ("_target",)

    def __init__(self, target: Handle):
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str):
        return seen(getattr(object.__getattribute__(self, "_target"), name))

    def __call__(self, *args, **kwargs):
        target = object.__getattribute__(self, "_target")
        return seen(target(*[_handle(a) for a in args], **{k: _handle(v) for k, v in kwargs.items()}))


_SEEN_TYPES: dict[str, type] = {}


def _seen_type(name: str) -> type:
    """A Seen class named like the object's type, so that messages name the learner's class."""
    if name not in _SEEN_TYPES:
        _SEEN_TYPES[name] = type(name, (Seen,), {"__slots__": ()})
    return _SEEN_TYPES[name]


def seen(value):
    """`value` with Keras's lists in the kernel read as Python lists; local values unchanged."""
    if isinstance(value, Handle):
        if type(value).__name__ in KERAS_LISTS:
            return [seen(item) for item in value.copy()]  # list.copy returns a plain list: sent by value
        return _seen_type(type(value).__name__)(value)
    if type(value) in (list, tuple):
        return type(value)(seen(item) for item in value)
    return value


def _handle(value):
    return object.__getattribute__(value, "_target") if isinstance(value, Seen) else value
