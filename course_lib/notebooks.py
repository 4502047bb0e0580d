"""How the course's tools read an assignment notebook, on the student's side (`make submit`) and the grader's.

`course_lib` ships to students without `autograde/`, so the rules both sides must apply the same way live
here and the grader imports them: which cells are graded exercises and what they are called, which cells are
`demo` cells (never run when grading or checking a submission), what counts as a readable notebook (nbformat 4,
or 3 as Jupyter still opens it), how large a notebook the grader reads, and which student ids are accepted.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import nbformat

DEMO_TAG = "demo"  # cells no graded function needs (training runs, plots, timing): grading skips them
# A student id names a folder and an archive: letters, digits, '_', '.', '-', not starting with '.', '_' or '-'.
STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
MAX_STUDENT_ID = 64
# An assignment's folder and notebook share its stem: 01_positional_encoding/01_positional_encoding.ipynb.
ASSIGNMENT_STEM = re.compile(r"[0-9]{2}_[A-Za-z0-9_]+")
# The largest notebook the grader reads (an archive's member, a file in a student's folder); `make submit` refuses
# to pack a larger one. Outputs make the size: a notebook with many figures is a few MiB.
MAX_NOTEBOOK_BYTES = 50 * 2**20


def nbgrader_meta(cell) -> dict:
    """The cell's nbgrader metadata ({} when it has none or it is not a mapping)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def is_demo(cell) -> bool:
    return DEMO_TAG in (cell.get("metadata", {}).get("tags") or [])


@dataclass(frozen=True)
class Exercise:
    """A graded exercise as a notebook holds it: a solution cell, then the test cell that checks it."""

    name: str  # the learner's function or class: the solution cell's grade id
    test_id: str  # the test cell's grade id
    points: float
    solution: int | None  # index of the solution cell in the notebook's cells (None if there is none)
    test: int  # index of the test cell


def exercises(notebook) -> list[Exercise]:
    """The notebook's graded exercises in order: each test cell with the last solution cell above it."""
    found, solution = [], None
    for index, cell in enumerate(notebook.get("cells", [])):
        meta = nbgrader_meta(cell)
        if meta.get("solution") and meta.get("grade_id"):
            solution = index
        elif meta.get("grade") and meta.get("grade_id") and cell.get("cell_type") == "code":
            name = nbgrader_meta(notebook["cells"][solution])["grade_id"] if solution is not None else None
            found.append(Exercise(exercise_name(meta["grade_id"], {meta["grade_id"]: name} if name else None),
                                  meta["grade_id"], float(meta.get("points") or 0), solution, index))
            solution = None  # a solution cell is checked by the test cell right after it
    return found


def exercise_name(test_id: str, names: Mapping[str, str] | None = None) -> str:
    """The exercise a test cell checks, as a learner calls it: `names[test_id]` (the solution cell's grade id,
    which is the function or class the learner writes), else the test cell's grade id without `test_`."""
    return (names or {}).get(test_id) or test_id.removeprefix("test_")


def student_id_problem(student: str) -> str | None:
    """Why `student` cannot name a submission, or None when it can."""
    if not student or not student.strip():
        return "the student id is empty"
    if len(student) > MAX_STUDENT_ID:
        return f"the student id is longer than {MAX_STUDENT_ID} characters"
    if not STUDENT_ID.fullmatch(student):
        return (f"the student id {student!r} may contain only letters, digits, '_', '.' and '-', and must start "
                f"with a letter or digit (no spaces, no '/' or '\\', no '..')")
    return None


def notebook_problem(data: bytes) -> str | None:
    """Why the bytes of a `.ipynb` file are not a readable notebook, or None when they are."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        return f"invalid notebook: not UTF-8 text ({error.reason})"
    except json.JSONDecodeError as error:
        return f"invalid notebook: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
    if not isinstance(raw, dict) or not (isinstance(raw.get("cells"), list) or _worksheets(raw)):
        return "invalid notebook: no list of cells (is it a notebook?)"
    try:
        notebook = nbformat.from_dict(raw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if _worksheets(raw):
                nbformat.validate(notebook)  # by nbformat 3's schema first: its errors name what is wrong
            nbformat.validate(nbformat.v4.upgrade(notebook) if notebook.get("nbformat", 4) < 4 else notebook)
    except nbformat.ValidationError as error:
        return f"invalid notebook: {str(error).splitlines()[0]}"
    except Exception as error:  # nbformat raises several types for structurally odd input
        return f"invalid notebook: {type(error).__name__}: {error}"
    return None


def _worksheets(raw: dict) -> bool:
    """Whether `raw` has nbformat 3's layout: its cells in a list of worksheets (nbformat converts it to 4)."""
    sheets = raw.get("worksheets")
    return (raw.get("nbformat") == 3 and isinstance(sheets, list)
            and all(isinstance(sheet, dict) and isinstance(sheet.get("cells"), list) for sheet in sheets))
