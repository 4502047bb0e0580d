"""The learner's Keras objects as the shared helpers expect them, whether they live in the grader (unit tests)
or in the student's kernel (grading, where the check holds handles: autograde/remote.py).

- `run_there(learner, "course_lib.module:function", ...)`: a course_lib helper run where the learner runs
  (building a layer's weights, calling with a generator made there), its `CheckFailed` turned back into ours.
  Only helpers that build, call or diagnose run there; every verdict is reached here.
"""

from __future__ import annotations

from autograde.remote import LearnerError, library
from course_lib.checking import CheckFailed


def run_there(learner, dotted: str, *args, **kwargs):
    """`dotted` (a course_lib function) called where `learner` lives; a CheckFailed it raises is ours."""
    function = library(learner, dotted)
    try:
        return function(*args, **kwargs)
    except Exception as error:  # LearnerError is a mixin, not an exception type of its own
        if isinstance(error, LearnerError) and error.remote_type == "CheckFailed":
            raise CheckFailed(str(error)) from None
        raise
