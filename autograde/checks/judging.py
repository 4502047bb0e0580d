"""What the hidden checks of 06's and 07's text side share: all of a check's calls in one request to the student's
kernel (`call_all`), and the cases judged in order (`judge_all`, from course_lib.calls, where 07's visible checks
use it too)."""

from __future__ import annotations

import copy

from autograde.remote import run_there
from course_lib.calls import call_each, judge_all

__all__ = ["call_all", "judge_all"]


def call_all(learner, calls: list, **options) -> list[dict]:
    """`course_lib.calls.call_each` where the learner's code runs, on copies of the inputs: what a call does to its
    arguments is seen, also when the learner's function runs in this process (the unit tests). Each call is
    (label, args) or (label, args, kwargs); `options` go to call_each."""
    return run_there(learner, call_each, learner, copy.deepcopy(calls), **options)
