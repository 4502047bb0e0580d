"""Assignment 07, the arguments of `make_windows`: the room a window leaves for the context, which arguments it must
refuse with a ValueError (no room, a stride outside [0, room)), and what a crash on allowed ones may come from (a
ValueError they do not call for, a loop that never ended, None offsets read). Shared by the visible check
(course_lib.qa.windows) and the hidden one (autograde.checks.qa.windows)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from course_lib.checking import CheckFailed
from course_lib.qa.spans import NONE_OFFSETS


def room(question_ids, max_length: int) -> int:
    """How many context tokens a window holds: max_length less the question and [CLS], [SEP], [SEP]."""
    return int(max_length) - len(question_ids) - 3


REFUSE = "raise a ValueError if R = max_length - len(question_ids) - 3 < 1, or if stride is not in [0, R)"
TIME_LIMIT = 1.0  # seconds one call of make_windows may run in a check (a loop that never ends stops there)


def refused_because(question_ids, max_length: int, stride: int) -> str:
    """Why make_windows must refuse these arguments ("" when it must not)."""
    space = room(question_ids, max_length)
    if space < 1:
        return (f"a question of {len(question_ids)} tokens leaves no room in max_length={max_length} tokens (R = "
                f"{space})")
    if not 0 <= stride < space:
        return f"stride={stride} is not in [0, R) = [0, {space})"
    return ""


def _raised(message: str, label: str) -> str:
    """The exception's type in a crash's message "[label] name raised Type: ..." (call_each's)."""
    found = re.match(r"\S+ raised (\w+):", message.removeprefix(f"[{label}] "))
    return found.group(1) if found else ""


def expect_refused(outcome: Mapping, why: str, label: str) -> None:
    """The call (an outcome of course_lib.calls.call_each) must have raised a ValueError, because `why`."""
    if "raised" in outcome:
        if _raised(outcome["raised"], label) == "ValueError":
            return
        raise CheckFailed(f"{outcome['raised']}: expected a ValueError, because {why}; {REFUSE}")
    result = outcome["result"]
    got = (f"a list of {len(result['items'])} windows" if isinstance(result, Mapping) and "items" in result else
           "a value")
    raise CheckFailed(f"[{label}] make_windows(...) returned {got} where it should raise a ValueError: {why}; "
                      f"{REFUSE}")


def crash_hint_for(raised: str, label: str, question_ids, max_length: int, stride: int) -> str:
    """What a crash on allowed arguments may come from: a ValueError they do not call for, a loop that never ended,
    None offsets read."""
    kind, space = _raised(raised, label), room(question_ids, max_length)
    if kind == "ValueError":
        return (f"these arguments are allowed (R = {space}, stride={stride}): {REFUSE}, and only then; stride 0 (no "
                "overlap), R = 1, an empty question or context are allowed")
    if kind == "TimeoutError":
        return (f"the next piece starts R - stride = {space} - {stride} = {space - stride} tokens after the previous "
                "one, and the last piece is the first that reaches the context's end")
    return NONE_OFFSETS if "NoneType" in raised else ""
