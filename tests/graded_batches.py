"""One assignment's answered, blank and one-part-wrong submissions, graded once per pytest process.

tests/test_grading.py checks their grades and feedback pages. Under `make test`, tests/demo_grading.py also compares
the answered submission (the release with the solution typed in: its demo cells skipped) with nbval's kernel after
every cell ran. conftest.py puts both in the notebook's xdist group, so one worker grades the batch once for both.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from submissions import answered

from autograde import judge, registry
from autograde.grade import grade_batch
from autograde.judge import Limits, StudentResult
from autograde.normalise import nbgrader_meta
from autograde.variants import variants

from conftest import release_path

SEED = 20261123  # the seed every grading test grades at
LIMITS = dict(cell_timeout=120, call_timeout=20, student_timeout=240, memory=6 * 2**30, threads=1)
STUDENTS = ("answered", "blank", "one_wrong")


@dataclass
class Batch:
    stem: str
    out: Path  # grades.csv, grades_by_cell.csv, feedback/
    results: dict[str, StudentResult]
    notebook_seconds: dict[str, float]  # per student: from the start of its grading to its first hidden check
    wrong_row: registry.Exercise  # the exercise the one_wrong submission gets wrong
    variant: object  # and how (autograde.variants)


def first_wrong(stem: str):
    """The first wrong variant of the assignment's first exercise that has one."""
    for row in registry.exercises(stem):
        found = [v for v in variants(stem) if v.name == row.name and not v.correct]
        if found:
            return row, found[0]
    pytest.fail(f"{stem} has no wrong variants: add them to autograde/variants/{registry.topic(stem)}.py")


def write_answered_blank_and_one_wrong(stem: str, submissions: Path):
    """The three submissions as folders of `submissions`; the exercise and the wrong variant of the last."""
    for name, notebook in [("answered", answered(stem)), ("blank", nbformat.read(release_path(stem), as_version=4))]:
        (submissions / name).mkdir(parents=True)
        nbformat.write(notebook, submissions / name / f"{stem}.ipynb")
    row, variant = first_wrong(stem)
    wrong = answered(stem)
    cell = next(c for c in wrong.cells if nbgrader_meta(c).get("grade_id") == row.name)
    cell.source = variant.cell(cell.source)
    (submissions / "one_wrong").mkdir()
    nbformat.write(wrong, submissions / "one_wrong" / f"{stem}.ipynb")
    return row, variant


def first_check_seconds(grade):
    """grade()'s result, and for each student graded in this process, one after another, the seconds from the
    start of its grading to its first hidden check: the kernel's start and the notebook's cells."""
    grade_one, judge_one = judge._grade, judge._judge
    grading: list = []  # (student, start) of the submission being graded: one at a time here
    first_check: dict[str, float] = {}

    def timed_grade(stem, student, *args):
        grading[:] = [student, time.monotonic()]
        return grade_one(stem, student, *args)

    def timed_judge(row, remote):
        student, started = grading
        first_check.setdefault(student, time.monotonic() - started)
        return judge_one(row, remote)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(judge, "_grade", timed_grade)
        patch.setattr(judge, "_judge", timed_judge)
        results = grade()
    return results, first_check


_BATCHES: dict[str, Batch] = {}


def graded_batch(stem: str) -> Batch:
    """The batch of `stem`, graded on first use in this process (a temporary folder, removed at exit)."""
    if stem not in _BATCHES:
        root = Path(tempfile.mkdtemp(prefix=f"graded-{stem}-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        row, variant = write_answered_blank_and_one_wrong(stem, root / "submissions")
        results, seconds = first_check_seconds(lambda: grade_batch(
            stem, root / "submissions", root / "grades", workers=1, seed=SEED, limits=Limits(**LIMITS),
            log=lambda line: None))
        by_student = {result.student: result for result in results}
        assert sorted(by_student) == sorted(STUDENTS), f"{stem}: graded {sorted(by_student)}"
        _BATCHES[stem] = Batch(stem, root / "grades", by_student, seconds, row, variant)
    return _BATCHES[stem]
