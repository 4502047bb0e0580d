"""Calling the learner's function where its code runs, reading back what it did as plain data, and judging the
outcomes in order (06's and 07's text-side checks, visible and hidden).

A hidden check runs in the grader's process, the learner's function in the student's kernel: `call_each` makes all
of a check's calls there in one request and returns `describe`d plain data (what each call returned, its arguments
as the call left them, or the failure a crash became); the grader `rebuild`s it and judges each case with
`returned`, `expect_unchanged` and the check's own verdict. `judge_all` reports first the failure that a named
mistake (`named`) explains, so a tiny case that several mistakes explain alike never hides a later one that names
the mistake.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence

import numpy as np

from course_lib.checking import CheckFailed, call_learner

DEPTH = 8  # how deep containers are described; deeper ones become opaque
NEW_LISTS = "(by inserting, appending or assigning into it): build new lists, never change the caller's"


class Opaque:
    """Stands for a returned object that is not plain data (it stays in the student's kernel)."""

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self) -> str:
        return f"<{self.kind} object>"


def describe(value, depth: int = 0):
    """`value` as plain data: containers as {"kind": type name, "items" or "pairs": ...}, NumPy scalars as
    numbers, strings as str, arrays and tensors as arrays; anything else {"kind": ..., "opaque": True}."""
    kind = type(value).__name__
    if hasattr(value, "numpy") and not isinstance(value, (np.ndarray, np.generic)):
        value = np.asarray(value.numpy())
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return value
    if depth < DEPTH and isinstance(value, Mapping):
        return {"kind": kind, "pairs": [[describe(k, depth + 1), describe(v, depth + 1)] for k, v in value.items()]}
    if depth < DEPTH and isinstance(value, (set, frozenset, list, tuple)):
        return {"kind": kind, "items": [describe(item, depth + 1) for item in value]}
    return {"kind": kind, "opaque": True}


def rebuild(description):
    """The value `describe` described: sets, frozensets, tuples and lists as such, other sequences as lists,
    mappings as dicts, opaque objects as `Opaque`."""
    if not isinstance(description, dict):
        return description
    if description.get("opaque"):
        return Opaque(description["kind"])
    if "pairs" in description:
        return {rebuild(key): rebuild(value) for key, value in description["pairs"]}
    items = [rebuild(item) for item in description["items"]]
    return {"set": set, "frozenset": frozenset, "tuple": tuple}.get(description["kind"], list)(items)


def _object_arrays_as_lists(value, depth: int = 0):
    """`value` with NumPy arrays of objects (None among ints, pairs) turned into lists, which `describe` carries."""
    if isinstance(value, np.ndarray) and value.dtype == object:
        return [_object_arrays_as_lists(item, depth + 1) for item in value.tolist()]
    if depth < DEPTH and isinstance(value, Mapping):
        return {key: _object_arrays_as_lists(item, depth + 1) for key, item in value.items()}
    if depth < DEPTH and type(value) in (list, tuple):
        return type(value)(_object_arrays_as_lists(item, depth + 1) for item in value)
    return value


def within(function, seconds: float):
    """`function`, stopped by a TimeoutError once one call has run Python code for more than `seconds` (a loop that
    never ends on one input becomes that call's failure, not the whole check's). Python code only: it traces the
    calls' lines (sys.settrace), so it costs time; use it where a learner's loop may not end. Once a call has
    timed out, the later ones get a tenth of the time: the same loop usually never ends on them either, and a
    correct call takes milliseconds."""
    name = getattr(function, "__name__", None) or type(function).__name__
    timed_out = []

    def limited(*args, **kwargs):
        limit = seconds / 10 if timed_out else seconds
        deadline = time.monotonic() + limit

        def stop_when_late(frame, event, arg):
            if time.monotonic() > deadline:
                timed_out.append(True)
                raise TimeoutError(f"it was still running after {limit:g} s (a loop that never ends?)")
            return stop_when_late

        previous = sys.gettrace()
        sys.settrace(stop_when_late)
        try:
            return function(*args, **kwargs)
        finally:
            sys.settrace(previous)

    limited.__name__ = name
    return limited


def call_each(function, calls: Sequence, *, object_arrays_as_lists: bool = False,
              seconds: float | None = None) -> list[dict]:
    """`function(*args, **kwargs)` for each `(label, args)` or `(label, args, kwargs)` of `calls`, where the
    learner's code runs: what each call returned and its positional arguments as the call left them, both
    described as plain data, or the failure a crash became (`returned` raises it in its turn, so cases are judged
    in order). With `object_arrays_as_lists`, NumPy arrays of objects in what a call returned (07's windows: None
    among ints) come back as lists instead of opaque objects; with `seconds`, each call is stopped after that long
    (`within`)."""
    if seconds is not None:
        function = within(function, seconds)
    outcomes = []
    for label, args, *rest in calls:
        kwargs = rest[0] if rest else {}
        try:
            result = call_learner(function, *args, **kwargs)
        except CheckFailed as failure:
            outcomes.append({"raised": f"[{label}] {failure}"})
            continue
        if object_arrays_as_lists:
            result = _object_arrays_as_lists(result)
        outcomes.append({"result": describe(result), "after": describe(list(args))})
    return outcomes


def returned(outcome: Mapping, hint: str = ""):
    """What one call of `call_each` returned, or its crash as a failed check (with `hint` added)."""
    if "raised" in outcome:
        raise CheckFailed(outcome["raised"] + (f": {hint}" if hint else ""))
    return rebuild(outcome["result"])


def same_data(a, b) -> bool:
    """Equal as plain data (arrays by value)."""
    a, b = describe(a), describe(b)

    def same(x, y) -> bool:
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            return np.array_equal(np.asarray(x), np.asarray(y))
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            return all(same(x[key], y[key]) if key not in ("items", "pairs") else
                       len(x[key]) == len(y[key]) and all(same(p, q) for p, q in zip(x[key], y[key], strict=True))
                       for key in x)
        if isinstance(x, list) and isinstance(y, list):
            return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y, strict=True))
        return type(x) is type(y) and x == y

    return same(a, b)


def expect_unchanged(name: str, argument: str, before, after, label: str, *, advice: str = NEW_LISTS) -> None:
    """Fail if the learner's function changed an argument it was given; `advice` says how it may have and what
    to do instead."""
    if not same_data(before, after):
        raise CheckFailed(f"[{label}] {name} changed its argument {argument} {advice}")


# ----------------------------------------------------------------------------------------------
# Judging the cases in order


def named(message: str, matches: int) -> CheckFailed:
    """A failed check that knows how many named mistakes explain it (a check reports first a failure that
    exactly one explains)."""
    failure = CheckFailed(message)
    failure.matches = matches
    return failure


def judge_all(items, judge) -> None:
    """`judge(item)` for every item, in order. The failure reported is the first that exactly one named mistake
    explains, else the first that some named mistake explains, else the first: a tiny case that several mistakes
    explain alike never hides a later one that names the mistake."""
    failures = []
    for item in items:
        try:
            judge(item)
        except CheckFailed as failure:
            if getattr(failure, "matches", 0) == 1:
                raise
            failures.append(failure)
    if failures:
        raise next((failure for failure in failures if getattr(failure, "matches", 0)), failures[0])
