"""Reference of make_windows (assignment 07): the answer in course_lib.layers, the one source of truth, named here
for the registry. `room` and `plain_window` are the grader's helpers."""

from __future__ import annotations

from course_lib.layers import make_windows
from course_lib.qa.windows import plain_window, room

__all__ = ["make_windows", "plain_window", "room"]
