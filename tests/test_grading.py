"""End to end: nbgrader grades real submissions in temporary course folders.

Solutions get full marks, blank templates zero, one wrong function loses only its own points,
and broken submissions (hanging, crashing, deleted cells, invalid files) are graded or reported
without stopping the rest of the batch.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import nbformat
import psutil
import pytest

from autograde import registry
from autograde.grade import grade_batch

from conftest import ASSIGNMENTS, release_path, solution_path
from mutations import delete_cell, insert_after_setup, mutate, prepend_to_solutions

pytestmark = pytest.mark.grading

SOFT_HANG = "import time\ntime.sleep(100_000)  # stuck, but interruptible"
HARD_HANG = (
    "import signal, time\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)  # ignores the grader's interrupt\n"
    "while True:\n"
    "    time.sleep(0.1)"
)
KERNEL_DIES = "import os\nos._exit(1)"
# Correct code that writes to stderr the way libraries do: it must not cost points.
NOISY = (
    "import warnings; warnings.warn('a library warning', UserWarning)\n"
    "from absl import logging as absl_logging; absl_logging.warning('an absl log line')"
)


def wrong_versions(stem: str) -> list[tuple[str, registry.Wrong]]:
    """(test cell grade id, wrong version): the first wrong version of each exercise that has one."""
    return [(row.test_id, row.wrong[0]) for row in registry.exercises(stem) if row.wrong]


def write(notebook: nbformat.NotebookNode, folder: Path, stem: str) -> None:
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{stem}.ipynb")


def read_rows(out: Path, name: str) -> list[dict[str, str]]:
    with open(out / name, newline="") as handle:
        return list(csv.DictReader(handle))


KERNEL_TAG = "COURSE_TEST_KERNEL_TAG"


@pytest.fixture
def kernel_tag(monkeypatch, tmp_path) -> str:
    """Marks the kernels this test starts (they inherit the environment), so that kernels started meanwhile
    by another pytest-xdist worker are not counted."""
    tag = str(tmp_path)
    monkeypatch.setenv(KERNEL_TAG, tag)
    return tag


def kernel_count(tag: str) -> int:
    """Kernels still running that were started under `tag`."""
    count = 0
    for process in psutil.process_iter(["cmdline"]):
        if not any("ipykernel_launcher" in part for part in process.info["cmdline"] or []):
            continue
        try:
            if process.environ().get(KERNEL_TAG) == tag:
                count += 1
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return count


# One worker grades an assignment's batch and runs the three tests that read it (make test: --dist loadgroup).
@pytest.fixture(scope="module",
                params=[pytest.param(stem, marks=pytest.mark.xdist_group(stem)) for stem in ASSIGNMENTS])
def graded(request, tmp_path_factory):
    """Solution, blank template and a submission with wrong functions, graded in one batch."""
    stem = request.param
    if not wrong_versions(stem):
        pytest.fail(f"{stem} has no deliberately wrong submission: add one to its rows in autograde/registry.py")
    submissions = tmp_path_factory.mktemp(f"{stem}-submissions")
    out = tmp_path_factory.mktemp(f"{stem}-grades")
    write(nbformat.read(solution_path(stem), as_version=4), submissions / "solution", stem)
    write(nbformat.read(release_path(stem), as_version=4), submissions / "blank", stem)
    wrong = nbformat.read(solution_path(stem), as_version=4)
    for _, mutation in wrong_versions(stem):
        wrong = mutate(wrong, mutation)
    write(wrong, submissions / "wrong", stem)
    grade_batch(stem, submissions, out, cell_timeout=120, student_timeout=600, log=lambda line: None)
    return stem, out


def test_solution_gets_full_marks(graded):
    stem, out = graded
    row = {r["student"]: r for r in read_rows(out, "grades.csv")}["solution"]
    assert row["status"] == "graded", row
    assert float(row["score"]) == float(row["max_score"]) > 0, row
    cells = [r for r in read_rows(out, "grades_by_cell.csv") if r["student"] == "solution"]
    lost = [r["grade_id"] for r in cells if r["score"] != r["max_score"]]
    assert not lost, f"the solution lost points in {lost}: see {out}/feedback/solution"
    assert (out / "feedback" / "solution" / f"{stem}.html").is_file()


def test_blank_template_gets_zero(graded):
    stem, out = graded
    row = {r["student"]: r for r in read_rows(out, "grades.csv")}["blank"]
    assert row["status"] == "graded" and float(row["score"]) == 0.0, row


def test_each_wrong_function_loses_only_its_points(graded):
    stem, out = graded
    mutations = wrong_versions(stem)
    cells = {r["grade_id"]: r for r in read_rows(out, "grades_by_cell.csv") if r["student"] == "wrong"}
    for grade_id, mutation in mutations:
        assert grade_id in cells, f"no grade for {grade_id}: {sorted(cells)}"
        assert float(cells[grade_id]["score"]) == 0.0, f"{mutation.what} was not caught"
    wrong_ids = {grade_id for grade_id, _ in mutations}
    lost = [g for g, r in cells.items() if g not in wrong_ids and r["score"] != r["max_score"]]
    assert not lost, f"{[m.what for _, m in mutations]} also cost points in {lost}: tests are not independent"
    total = {r["student"]: r for r in read_rows(out, "grades.csv")}["wrong"]
    expected = float(total["max_score"]) - sum(float(cells[g]["max_score"]) for g in wrong_ids)
    assert float(total["score"]) == expected, total


def test_broken_submissions_never_stop_the_batch(tmp_path, kernel_tag):
    stem = ASSIGNMENTS[0]
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    solution = lambda: nbformat.read(solution_path(stem), as_version=4)  # noqa: E731
    write(insert_after_setup(solution(), SOFT_HANG), submissions / "a_soft_hang", stem)
    write(insert_after_setup(solution(), HARD_HANG), submissions / "b_hard_hang", stem)
    write(insert_after_setup(solution(), KERNEL_DIES), submissions / "c_kernel_dies", stem)
    first_test = next(c.metadata["nbgrader"]["grade_id"] for c in solution().cells
                      if c.metadata.get("nbgrader", {}).get("grade"))
    write(delete_cell(solution(), first_test), submissions / "d_deleted_test_cell", stem)
    (submissions / "e_invalid_json").mkdir(parents=True)
    text = solution_path(stem).read_text()
    (submissions / "e_invalid_json" / f"{stem}.ipynb").write_text(text[: len(text) // 2])
    (submissions / "f_wrong_name").mkdir()
    shutil.copy(solution_path(stem), submissions / "f_wrong_name" / "my_homework.ipynb")
    write(solution(), submissions / "g_fine", stem)
    write(prepend_to_solutions(solution(), NOISY), submissions / "h_noisy_stderr", stem)

    grade_batch(stem, submissions, out, cell_timeout=20, student_timeout=240, log=lambda line: None)
    rows = {r["student"]: r for r in read_rows(out, "grades.csv")}
    assert sorted(rows) == sorted(p.name for p in submissions.iterdir()), "every student needs a row"
    full = rows["g_fine"]["max_score"]

    assert rows["a_soft_hang"]["score"] == full, rows["a_soft_hang"]
    assert "timed out and interrupted" in rows["a_soft_hang"]["status"], rows["a_soft_hang"]
    assert rows["b_hard_hang"]["score"] == "0", rows["b_hard_hang"]
    assert "ignored the interrupt" in rows["b_hard_hang"]["status"], rows["b_hard_hang"]
    assert "kernel died" in rows["c_kernel_dies"]["status"], rows["c_kernel_dies"]
    assert rows["d_deleted_test_cell"]["score"] == full, rows["d_deleted_test_cell"]
    assert f"restored and graded: {first_test}" in rows["d_deleted_test_cell"]["status"]
    assert rows["e_invalid_json"]["status"].startswith("invalid notebook: not valid JSON"), rows["e_invalid_json"]
    assert rows["f_wrong_name"]["status"] == f"missing: no {stem}.ipynb in the submission (found: my_homework.ipynb)"
    assert rows["g_fine"]["status"] == "graded" and float(full) > 0, rows["g_fine"]
    assert rows["h_noisy_stderr"]["score"] == full, f"stderr noise cost points: {rows['h_noisy_stderr']}"
    assert kernel_count(kernel_tag) == 0, "grading left kernels running"


def test_a_submission_over_its_time_budget_is_stopped(tmp_path, kernel_tag):
    stem = ASSIGNMENTS[0]
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    notebook = insert_after_setup(nbformat.read(solution_path(stem), as_version=4), HARD_HANG)
    write(notebook, submissions / "runaway", stem)
    grade_batch(stem, submissions, out, cell_timeout=600, student_timeout=20, log=lambda line: None)
    (row,) = read_rows(out, "grades.csv")
    assert row["score"] == "0" and row["status"].startswith("timed out: grading took longer than 20 s"), row
    assert kernel_count(kernel_tag) == 0, "the stopped submission left its kernel running"
