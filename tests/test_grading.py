"""End to end: `make grade`'s batch grader on real submissions, as students (careless or dishonest) make them.

- Per assignment: the answered notebook gets full marks, the blank one zero, one wrong part costs only its
  own points, and the feedback page shows neither hidden checks nor the grader's files (one batch per assignment,
  tests/graded_batches.py).
- One batch of bad submissions of assignment 01 through `python -m autograde.grade` (the command `make grade`
  runs, two workers), compared row by row with the outcomes listed in INSTRUCTORS.md.
- Three of those submissions graded again on a two-worker Dask cluster from folders in reversed order, and one of
  them with one worker in this process, give the same CSV rows as in the two-worker batch."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psutil
import pytest
from graded_batches import SEED, graded_batch
from submissions import ROOT_ESCAPE, STEM, answered, names, outcome_table, write_submission

from autograde import registry
from autograde.grade import grade_batch
from autograde.grade import main as grade_main
from autograde.judge import Limits

from conftest import ASSIGNMENTS, REPO, notebook_group

pytestmark = pytest.mark.grading
# The bad batch's limits: short, since three of its submissions hang until a limit stops them (one of them burning
# CPU until its call's limit). Long enough for a cell that imports TensorFlow on a busy machine, and a check's call
# of a correct get_angles, which takes milliseconds. test_the_production_limits checks the values graders get.
BAD_LIMITS = dict(cell_timeout=30, call_timeout=4, student_timeout=240, memory=6 * 2**30, threads=1)


def read_rows(out: Path, name: str) -> list[dict[str, str]]:
    with open(out / name, newline="") as handle:
        return list(csv.DictReader(handle))


def page_text(html: str) -> str:
    """What a reader sees: the page without its style sheets and scripts (their CSS names 'Traceback')."""
    return re.sub(r"<(style|script)\b.*?</\1>", "", html, flags=re.DOTALL)


def by_student(out: Path) -> dict[str, dict[str, str]]:
    return {row["student"]: row for row in read_rows(out, "grades.csv")}


@pytest.fixture(scope="module", params=[pytest.param(stem, marks=pytest.mark.xdist_group(notebook_group(stem)))
                                        for stem in ASSIGNMENTS])
def graded(request):
    """Answered, blank, and one-part-wrong submissions of one assignment, graded in one batch (tests/graded_batches.py:
    in the notebook's xdist group, where tests/demo_grading.py compares the same batch with nbval's kernel)."""
    batch = graded_batch(request.param)
    return batch.stem, batch.out, batch.wrong_row, batch.variant


def test_answered_notebook_gets_full_marks(graded):
    stem, out, _, _ = graded
    row = by_student(out)["answered"]
    assert row["status"] == "graded" and float(row["score"]) == float(row["max_score"]) > 0, row
    lost = [r for r in read_rows(out, "grades_by_cell.csv")
            if r["student"] == "answered" and r["score"] != r["max_score"]]
    assert not lost, f"the answered notebook lost points: {lost}"


def test_blank_template_gets_zero(graded):
    stem, out, _, _ = graded
    row = by_student(out)["blank"]
    assert row["status"] == "graded" and float(row["score"]) == 0.0, row
    messages = {r["message"] for r in read_rows(out, "grades_by_cell.csv") if r["student"] == "blank"}
    assert all("not implemented yet" in m for m in messages), messages


def test_one_wrong_part_costs_only_its_points(graded):
    stem, out, wrong_row, variant = graded
    cells = {r["grade_id"]: r for r in read_rows(out, "grades_by_cell.csv") if r["student"] == "one_wrong"}
    assert float(cells[wrong_row.test_id]["score"]) == 0, f"{variant.what} was not caught"
    others = [g for g, r in cells.items() if g != wrong_row.test_id and r["score"] != r["max_score"]]
    assert not others, f"{variant.what} also cost points in {others}: {[cells[g]['message'] for g in others]}"


def test_feedback_shows_results_not_hidden_checks(graded):
    stem, out, wrong_row, _ = graded
    page = page_text((out / "feedback" / "one_wrong" / f"{stem}.html").read_text())
    message = next(r["message"] for r in read_rows(out, "grades_by_cell.csv")
                   if r["student"] == "one_wrong" and r["grade_id"] == wrong_row.test_id)
    assert message.split(":")[0][:40] in page, "the failed check's message is missing from the feedback page"
    for leak in ("BEGIN HIDDEN TESTS", "autograde", "grade_", "Traceback", str(REPO)):
        assert leak not in page, f"the feedback page shows {leak!r}"


def test_feedback_page_works_offline_and_names_exercises(graded):
    """Issue 11: equations typeset by the local MathJax copy (no CDN), each test cell named by its exercise."""
    stem, out, _, _ = graded
    html = (out / "feedback" / "one_wrong" / f"{stem}.html").read_text()
    scripts = re.findall(r'<script[^>]*\bsrc="([^"]*)"', html)
    mathjax = [src for src in scripts if "MathJax" in src or "mathjax" in src]
    assert mathjax and all(src.startswith("../mathjax/MathJax.js?") for src in mathjax), mathjax
    assert (out / "feedback" / "mathjax" / "MathJax.js").is_file(), "the pages' MathJax copy is missing"
    config = mathjax[0].split("config=")[1].split(",")[0]
    assert (out / "feedback" / "mathjax" / "config" / f"{config}.js").is_file(), f"no MathJax config {config}"
    assert "cdnjs" not in html and not re.search(r"https?://[^\"' ]*mathjax", html, re.IGNORECASE)
    summary = re.search(r'<div id="toc">(.*?)</div>', html, re.DOTALL).group(1)
    assert "Test cell" not in summary, "the summary still names test cells only 'Test cell'"
    for row in registry.exercises(stem):
        assert f'<a href="#{row.test_id}">{row.name}</a>' in summary, f"the summary does not name {row.name}"


# ----------------------------------------------------------------------------------------------
# Bad submissions, through the command `make grade` runs


@dataclass
class BadBatch:
    out: Path  # grades.csv, grades_by_cell.csv, feedback/
    folders: dict[str, str]  # the guide's row name -> the student folder that holds it


@pytest.fixture(scope="module")
def bad_batch() -> BadBatch:
    # Outside /tmp, which the sandbox has always emptied: "other students' work read" must find no way to this batch's
    # folders by the allow list alone.
    root = Path(tempfile.mkdtemp(prefix="bad-batch-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    try:
        yield _grade_bad_batch(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _grade_bad_batch(root: Path) -> BadBatch:
    submissions, out = root / "submissions", root / "grades"
    submissions.mkdir()
    folders = {}
    for index, name in enumerate(names()):
        folder = submissions / f"s{index:02d}"
        write_submission(name, folder)
        folders[name] = folder.name
    for escape in (Path("/tmp/course-grading-escape.txt"), ROOT_ESCAPE):
        escape.unlink(missing_ok=True)
    code = grade_main(["--assignment", STEM, "--submissions", str(submissions), "--out", str(out), "--workers", "2",
                       "--seed", str(SEED), "--cell-timeout", str(BAD_LIMITS["cell_timeout"]), "--call-timeout",
                       str(BAD_LIMITS["call_timeout"]), "--student-timeout", str(BAD_LIMITS["student_timeout"]),
                       "--memory", str(BAD_LIMITS["memory"] // 2**30), "--no-gradebook"])
    assert code == 0
    return BadBatch(out, folders)


@pytest.mark.xdist_group("bad-batch")
def test_bad_submissions_match_the_instructors_guide(bad_batch):
    out, folders = bad_batch.out, bad_batch.folders
    table = outcome_table(REPO / "INSTRUCTORS.md")
    assert sorted(table) == sorted(folders), "INSTRUCTORS.md's table and tests/submissions.py list different cases"
    rows = by_student(out)
    cells = read_rows(out, "grades_by_cell.csv")
    mismatches = []
    for name, folder in folders.items():
        expected = table[name]
        if expected["score"] == "none":  # not handed in: no row at all
            if folder in rows:
                mismatches.append(f"{name}: got a row {rows[folder]}, guide says not handed in")
            continue
        row = rows[folder]
        score = row["max_score"] if expected["score"] == "full" else expected["score"]
        page = out / "feedback" / folder / f"{STEM}.html"
        if not expected["reads"].startswith("—") and not page.is_file():  # what the student reads is on that page
            mismatches.append(f"{name}: no feedback page")
        if row["score"] != score or expected["status"] not in row["status"]:
            messages = [c["message"][:100] for c in cells if c["student"] == folder and c["score"] != c["max_score"]]
            mismatches.append(f"{name}: got {row['score']} ({row['status']}) {messages}, guide says {expected}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.xdist_group("bad-batch")
def test_nothing_escapes_the_sandbox(bad_batch):
    out = bad_batch.out
    assert not Path("/tmp/course-grading-escape.txt").exists(), "a kernel wrote outside its folder"
    assert not ROOT_ESCAPE.exists(), "a kernel remounted the machine's disk and wrote on it"
    assert not (Path(np.__file__).parent / "escape.txt").exists(), "a kernel wrote into site-packages"
    assert "x,01_positional_encoding" not in (out / "grades.csv").read_text()
    survivors = [p.info["cmdline"] for p in psutil.process_iter(["cmdline"])
                 if any("grades.csv" in part for part in p.info["cmdline"] or [])]
    assert not survivors, f"processes started by submissions outlived grading: {survivors}"


# ----------------------------------------------------------------------------------------------
# The same results whatever the order, the worker count or the engine


# One that passes, one that times out in a check, one whose kernel state is tampered with.
ENGINE_CASES = ["correct", "endless get_angles", "numpy monkeypatched"]
SEQUENTIAL_CASE = "numpy monkeypatched"


def csv_rows(out: Path, name: str, students: set[str] | None = None) -> list[list[str]]:
    """A CSV of `out` as rows (the header first), only the rows of `students` if given."""
    with open(out / name, newline="") as handle:
        table = list(csv.reader(handle))
    return table[:1] + [row for row in table[1:] if students is None or row[0] in students]


def grades(out: Path, students: set[str] | None = None) -> tuple[list, list]:
    return csv_rows(out, "grades.csv", students), csv_rows(out, "grades_by_cell.csv", students)


@pytest.mark.xdist_group("bad-batch")
def test_same_csv_sequential_parallel_and_dask(bad_batch, tmp_path):
    """The same rows whatever grades them: two workers (the bad batch, which holds these submissions in the same
    folders among others), one worker in this process, and Dask from folders in reversed order."""
    from distributed import LocalCluster

    small = tmp_path / "small"
    for name in ENGINE_CASES:
        write_submission(name, small / bad_batch.folders[name])
    students = {bad_batch.folders[name] for name in ENGINE_CASES}
    limits = Limits(**BAD_LIMITS)
    # One worker, in this process: the state-tampering case (each graded batch of test_graded_* grades sequentially
    # too, so this path meets every assignment; here it meets the two-worker pool's rows).
    alone = {bad_batch.folders[SEQUENTIAL_CASE]}
    shutil.copytree(small / bad_batch.folders[SEQUENTIAL_CASE], tmp_path / "alone" / bad_batch.folders[SEQUENTIAL_CASE])
    sequential = grade_batch(STEM, tmp_path / "alone", tmp_path / "one", workers=1, seed=SEED, limits=limits,
                             feedback=False, log=lambda line: None)
    assert len(sequential) == 1
    assert grades(bad_batch.out, alone) == grades(tmp_path / "one"), "1 worker instead of 2 changed the results"
    # Every case on Dask, from folders in reversed order (students finishing in another order).
    reordered = tmp_path / "reordered"
    for index, folder in enumerate(sorted(small.iterdir(), reverse=True)):
        shutil.copytree(folder, reordered / folder.name)
        os.utime(reordered / folder.name, (index, index))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        grade_batch(STEM, reordered, tmp_path / "dask", scheduler=cluster.scheduler_address, seed=SEED,
                    limits=limits, feedback=False, log=lambda line: None)
    assert grades(tmp_path / "dask") == grades(bad_batch.out, students), (
        "Dask (folders in reversed order) changed the results of the two-worker pool")


def test_the_production_limits(capsys):
    """What graders get unless they say otherwise (the tests above grade with shorter limits, to wait less), and what
    `make grade`'s help says they are."""
    limits = Limits()
    assert (limits.cell_timeout, limits.call_timeout, limits.student_timeout) == (120, 60, 900)
    assert limits.memory == 6 * 2**30
    with pytest.raises(SystemExit):
        grade_main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for option, value in [("cell-timeout", 120), ("call-timeout", 60), ("student-timeout", 900), ("memory", 6)]:
        assert re.search(rf"--{option} \S+ .*?\(default {value}\)", help_text), f"--{option}: {help_text}"


def test_the_grade_command_runs_as_a_process(tmp_path):
    """`make grade`'s command line, as its own process (the batches above call its main in this one): here on
    submissions that need no kernel, so that it is quick."""
    for name in ("not JSON", "notebook missing"):
        write_submission(name, tmp_path / "submissions" / name.replace(" ", "_"))
    ran = subprocess.run([sys.executable, "-m", "autograde.grade", "--assignment", STEM, "--submissions",
                          str(tmp_path / "submissions"), "--out", str(tmp_path / "out"), "--workers", "1",
                          "--no-gradebook"],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "graded 2 submissions" in ran.stdout, ran.stdout
    rows = by_student(tmp_path / "out")
    assert sorted(rows) == ["not_JSON", "notebook_missing"] and all(row["score"] == "0" for row in rows.values()), rows
    assert rows["not_JSON"]["status"].startswith("invalid notebook: not valid JSON"), rows


def test_grading_refuses_without_sandbox(monkeypatch, tmp_path, capsys):
    import autograde.sandbox

    monkeypatch.setattr(autograde.sandbox.shutil, "which", lambda name: None)
    (tmp_path / "s").mkdir()
    assert grade_main(["--assignment", STEM, "--submissions", str(tmp_path / "s"), "--out", str(tmp_path / "o")]) == 2
    assert "bubblewrap" in capsys.readouterr().err


def test_answered_submission_builder_matches_the_solution():
    notebook = answered()
    assert any("np.power" in cell.source for cell in notebook.cells)
