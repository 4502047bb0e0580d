"""`make grade`'s results where instructors look, and one grader whichever button is pressed (issue 24).

One small batch of 01, in nbgrader's `submitted/` layout with timestamps (one of them after the due date), graded
by `make grade`'s command into a throw-away course root that holds every assignment:
- every test cell's score, the flag and the timestamp reach the course's gradebook; autograded/ holds the notebook
  the formgrader shows, with each verdict under its test and the status on top;
- `nbgrader autograde` (the command the formgrader's button runs) gives a submission that rebinds the checks the
  same score as `make grade`: nbgrader's own path, which runs the test cells in the student's kernel, would give
  full marks;
- `make export` reads those scores back;
- re-grading replaces the automatic scores and keeps an instructor's manual score, extra credit and comment;
- in a browser, `make formgrader` lists every assignment with its points, its Autograde button grades with the
  course's grader, and it shows the graded submission's per-cell scores (screenshots/formgrader_grades.png);
- `make grade` and `make formgrader` name the gradebook's students from the roster, else by their id, so that the
  formgrader never lists "None, None", and refuse a malformed roster before anything else (issue 33; those tests
  run no kernel: the grader is replaced by one that fails every check).
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import nbformat
import pytest
from graded_batches import SEED
from lab_server import lab_server
from submissions import STEM, write_submission

import autograde.confinement
import autograde.grade
import autograde.gradebook
from autograde import registry
from autograde.course import COURSE_ID, list_assignments
from autograde.grade import main as grade_main
from autograde.gradebook import main as gradebook_main
from autograde.grader_note import STATUS_CELL_ID
from autograde.judge import empty_result
from autograde.nbgrader_runner import kernel_environment, make_course_root
from autograde.record import course_config
from autograde.unreadable import kept_name

pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("course-gradebook")]
SECONDS = 1000  # playwright counts in milliseconds
CASES = {"correct": "correct", "rebinds": "checks rebound", "broken": "not JSON"}
DUE = datetime(2026, 11, 20, 12, 0, 0)
SUBMITTED = {"correct": DUE - timedelta(hours=2), "rebinds": DUE - timedelta(minutes=5),
             "broken": DUE + timedelta(hours=3)}


@dataclass
class Course:
    root: Path
    out: Path
    db_url: str


def gradebook(course: Course):
    from nbgrader.api import Gradebook

    return Gradebook(course.db_url)


def run_grade(course: Course, submissions: Path, out: Path) -> None:
    code = grade_main(["--assignment", STEM, "--submissions", str(submissions), "--out", str(out), "--workers", "1",
                       "--seed", str(SEED), "--course-root", str(course.root), "--cell-timeout", "60",
                       "--call-timeout", "20"])
    assert code == 0


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Course:
    from nbgrader.api import Gradebook

    from autograde.gradebook import record

    root = make_course_root(tmp_path_factory.mktemp("course"), list_assignments())
    db_url = course_config(root).CourseDirectory.db_url
    assert not record([STEM], db_url)
    with Gradebook(db_url) as book:  # the due date an instructor sets in the formgrader
        book.update_or_create_assignment(STEM, duedate=DUE)
    for student, case in CASES.items():  # as `nbgrader collect` leaves them
        folder = root / "submitted" / student / STEM
        write_submission(case, folder)
        (folder / "timestamp.txt").write_text(SUBMITTED[student].strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    course = Course(root, tmp_path_factory.mktemp("grades"), db_url)
    run_grade(course, root / "submitted", course.out)
    return course


def csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_cell_score_and_flag_reaches_the_gradebook(course):
    cells = {(r["student"], r["grade_id"]): float(r["score"]) for r in csv_rows(course.out / "grades_by_cell.csv")}
    totals = {r["student"]: float(r["score"]) for r in csv_rows(course.out / "grades.csv")}
    assert totals == {"correct": 5, "rebinds": 3, "broken": 0}, totals
    with gradebook(course) as book:
        for student in CASES:
            submission = book.find_submission(STEM, student)
            notebook = book.find_submission_notebook(STEM, STEM, student)
            recorded = {(student, grade.name): grade.auto_score for grade in notebook.grades}
            assert recorded == {key: score for key, score in cells.items() if key[0] == student}, recorded
            assert submission.score == totals[student], (student, submission.score)
            assert notebook.flagged == (student == "rebinds"), (student, notebook.flagged)


def test_the_formgrader_notebook_carries_the_verdicts_and_the_status(course):
    messages = {r["grade_id"]: r["message"] for r in csv_rows(course.out / "grades_by_cell.csv")
                if r["student"] == "rebinds"}
    path = course.root / "autograded" / "rebinds" / STEM / f"{STEM}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    status = notebook.cells[0]
    assert status.get("id") == STATUS_CELL_ID and "(make grade): 3 / 5 points" in status.source, status.source
    assert "flagged: rebinds the course's checks" in status.source, status.source
    for row in registry.exercises(STEM):
        cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == row.test_id)
        shown = cell.outputs[0].get("evalue") or cell.outputs[0].get("text")
        assert messages[row.test_id] in shown, (row.test_id, shown)


def test_an_unreadable_submission_is_shown_as_such_with_its_bytes_kept(course):
    graded = course.root / "autograded" / "broken" / STEM
    notebook = nbformat.read(graded / f"{STEM}.ipynb", as_version=4)
    answers = [c.source for c in notebook.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    assert answers and all(text.startswith("# No answer shown: the submitted") for text in answers), answers
    assert (graded / kept_name(STEM)).read_bytes() == (course.root / "submitted" / "broken" / STEM /
                                                       f"{STEM}.ipynb").read_bytes()
    page = (course.out / "feedback" / "broken" / f"{STEM}.html").read_text()
    assert "No answer shown: the submitted" in page


def test_students_feedback_pages_leave_the_flags_out(course):
    note = nbformat.read(course.root / "autograded" / "rebinds" / STEM / f"{STEM}.ipynb", as_version=4).cells[0]
    assert "flagged: rebinds the course's checks" in note.source  # the instructor's view
    for page in (course.out / "feedback" / "rebinds" / f"{STEM}.html",
                 course.root / "feedback" / "rebinds" / STEM / f"{STEM}.html"):
        text = page.read_text()
        assert "Graded by the course's grader" in text and "flagged" not in text, page


def test_timestamps_are_kept_and_a_late_submission_says_so(course):
    statuses = {r["student"]: r["status"] for r in csv_rows(course.out / "grades.csv")}
    assert "late by 3.0 h" in statuses["broken"], statuses["broken"]
    assert not any("late by" in statuses[s] for s in ("correct", "rebinds")), statuses
    assert f"submitted {SUBMITTED['correct']:%Y-%m-%d %H:%M:%S}" in statuses["correct"], statuses["correct"]
    with gradebook(course) as book:
        for student, when in SUBMITTED.items():
            assert book.find_submission(STEM, student).timestamp == when, student


def test_make_export_reads_what_make_grade_recorded(course, tmp_path):
    from autograde.export import export

    export("csv", tmp_path / "grades.csv", [STEM], db_url=course.db_url)
    exported = {r["student"]: r for r in csv_rows(tmp_path / "grades.csv")}
    graded = {r["student"]: r for r in csv_rows(course.out / "grades.csv")}
    for student in ("correct", "rebinds", "broken"):
        assert float(exported[student]["score"]) == float(graded[student]["score"]), (student, exported[student])
    assert float(exported["broken"]["late_seconds"]) == 3 * 3600 and exported["correct"]["late_seconds"] == "0"


def test_nbgrader_autograde_gives_the_score_make_grade_gave(course):
    """The formgrader's Autograde button runs this command's converter: the course's grader, out of the kernel."""
    ran = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", STEM, "--student", "rebinds", "--force"],
                         cwd=course.root, env=kernel_environment(), capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    made = {r["grade_id"]: float(r["score"]) for r in csv_rows(course.out / "grades_by_cell.csv")
            if r["student"] == "rebinds"}
    with gradebook(course) as book:
        notebook = book.find_submission_notebook(STEM, STEM, "rebinds")
        assert {grade.name: grade.auto_score for grade in notebook.grades} == made
        assert notebook.flagged
    status = nbformat.read(course.root / "autograded" / "rebinds" / STEM / f"{STEM}.ipynb", as_version=4).cells[0]
    assert "(nbgrader autograde (seed" in status.source and "3 / 5 points" in status.source, status.source


def test_regrading_keeps_the_instructors_manual_score_comment_and_extra_credit(course, tmp_path):
    """Last of the module's tests on the gradebook: it changes "correct"'s scores."""
    with gradebook(course) as book:  # what an instructor does in the formgrader
        grade = book.find_grade("test_get_angles", STEM, STEM, "correct")
        grade.manual_score, grade.extra_credit = 1.5, 0.5
        book.find_comment("get_angles", STEM, STEM, "correct").manual_comment = "k//2: see lecture 2"
        book.db.commit()
        rebinds = book.find_submission(STEM, "rebinds").score
    # The same student handed in again, from another folder: the earlier files are kept aside.
    again = tmp_path / "again" / "correct"
    shutil.copytree(course.root / "submitted" / "correct" / STEM, again)
    (again / "notes.txt").write_text("second try\n")
    run_grade(course, tmp_path / "again", tmp_path / "out")
    with gradebook(course) as book:
        grade = book.find_grade("test_get_angles", STEM, STEM, "correct")
        assert (grade.auto_score, grade.manual_score, grade.extra_credit) == (2.0, 1.5, 0.5)
        assert book.find_comment("get_angles", STEM, STEM, "correct").manual_comment == "k//2: see lecture 2"
        assert book.find_submission(STEM, "correct").score == 1.5 + 0.5 + 3
        assert book.find_submission(STEM, "rebinds").score == rebinds, "re-grading one student touched another"
    kept = sorted(p.name for p in (course.root / "submitted" / "correct").iterdir())
    assert kept[0] == STEM and kept[1].startswith(f"{STEM}.replaced-") and len(kept) == 2, kept
    assert (course.root / "submitted" / "correct" / STEM / "notes.txt").is_file()


# nbgrader's Manual Grading table: one row per assignment, its last cell "average / max" filled in by a script
SCORES_SHOWN = "n => [...document.querySelectorAll('table tbody td.score')].filter(td => td.textContent).length >= n"


def test_formgrader_lists_every_assignment_and_shows_a_submissions_cell_scores(chromium, course, tmp_path):
    from browser import only_from, screenshot

    points = {stem: sum(exercise.points for exercise in registry.exercises(stem)) for stem in registry.stems()}
    with gradebook(course) as book:
        submitted = book.find_submission_notebook(STEM, STEM, "rebinds")
        notebook_id, expected_cells = submitted.id, {g.name: (g.score, g.max_score) for g in submitted.grades}
        average = book.average_assignment_score(STEM)
    variables = {"COURSE": str(course.root), "EXCHANGE": str(tmp_path / "exchange")}
    with lab_server("formgrader", variables=variables) as server:
        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        try:
            refused = only_from(page, server.url)
            page.goto(f"{server.url}/formgrader?token={server.token}")  # Manage Assignments
            page.wait_for_function("() => document.querySelectorAll('table tbody tr td a').length > 0",
                                   timeout=60 * SECONDS)
            rows = page.locator("table tbody tr").filter(has=page.locator("td"))
            listed = {row.locator("td").first.inner_text().strip() for row in rows.all()}
            assert set(points) <= listed, f"Manage Assignments lists {sorted(listed)}"

            page.get_by_role("link", name="Manual Grading").first.click()  # the table with the points
            page.wait_for_function(SCORES_SHOWN, arg=len(points), timeout=60 * SECONDS)
            shown = {}
            for row in page.locator("table tbody tr").all():
                cells = [cell.strip() for cell in row.locator("td").all_inner_texts()]
                if cells and cells[-1]:
                    shown[cells[0]] = cells[-1]
            # the formgrader rounds averages to two decimals
            shown_average = f"{average:.2f}".rstrip("0").rstrip(".")
            expected = {stem: f"{shown_average if stem == STEM else 0} / {total}" for stem, total in points.items()}
            assert shown == expected, f"Manual Grading shows {shown}, expected {expected}"
            assert not refused, f"the formgrader asked for things off the server (refused): {refused}"

            # The Autograde button of Manage Submissions grades "rebinds" again: with the course's grader.
            page.goto(f"{server.url}/formgrader/manage_submissions/{STEM}")
            page.wait_for_selector("td.autograde a", timeout=60 * SECONDS)
            row = page.locator("table tbody tr").filter(has=page.get_by_text("rebinds", exact=True))
            with page.expect_response(lambda r: r.url.endswith("/rebinds/autograde"), timeout=600 * SECONDS) as answer:
                row.locator("td.autograde a").click()
            assert answer.value.ok and '"success": true' in answer.value.text(), answer.value.text()[-2000:]
            note = nbformat.read(course.root / "autograded" / "rebinds" / STEM / f"{STEM}.ipynb", as_version=4).cells[0]
            assert "(nbgrader autograde (seed" in note.source and "3 / 5 points" in note.source, note.source

            # The same button on the notebook cut in half: make grade's score and note, a one-line reason in the log
            # instead of a traceback, and the graded folder still there (issue 33).
            page.goto(f"{server.url}/formgrader/manage_submissions/{STEM}")  # closes the first button's window
            page.wait_for_selector("td.autograde a", timeout=60 * SECONDS)
            row = page.locator("table tbody tr").filter(has=page.get_by_text("broken", exact=True))
            with page.expect_response(lambda r: r.url.endswith("/broken/autograde"), timeout=600 * SECONDS) as answer:
                row.locator("td.autograde a").click()
            reply = answer.value.json()
            assert reply["success"] and "Traceback" not in reply.get("log", "") + reply.get("error", ""), reply
            assert "could not be read (invalid notebook: not valid JSON" in reply["log"], reply["log"][-2000:]
            graded = course.root / "autograded" / "broken" / STEM
            note = nbformat.read(graded / f"{STEM}.ipynb", as_version=4).cells[0].source
            assert "0 / 5 points" in note and "invalid notebook: not valid JSON" in note, note
            assert (graded / kept_name(STEM)).read_bytes() == (course.root / "submitted" / "broken" / STEM /
                                                               f"{STEM}.ipynb").read_bytes()
            with gradebook(course) as book:
                assert book.find_submission(STEM, "broken").score == 0
                broken_id = book.find_submission_notebook(STEM, STEM, "broken").id
            page.wait_for_selector(".modal-dialog", timeout=60 * SECONDS)
            screenshot(page, "formgrader_autograde_unreadable")

            page.goto(f"{server.url}/formgrader/submissions/{notebook_id}/")  # one student's notebook
            page.wait_for_selector("input.score", timeout=60 * SECONDS)
            shot = screenshot(page, "formgrader_grades")
            scores = page.eval_on_selector_all(
                "input.score", "inputs => inputs.map(i => [i.closest('[id]')?.id || '', i.value, i.placeholder])")
            text = page.inner_text("body")
            for grade_id, (score, _) in expected_cells.items():
                assert f"{grade_id}" in page.content(), f"no cell {grade_id} on the page ({shot})"
                assert any(value == f"{score:g}" or placeholder == f"{score:g}" for _, value, placeholder in scores), \
                    f"{grade_id}'s score {score:g} is not shown: {scores} ({shot})"
            assert "Graded by the course's grader" in text and "flagged: rebinds the course's checks" in text, shot
            assert "has wrong values" in text, f"the failed check's message is not on the page ({shot})"
            # Equations typeset by the server's MathJax (the course's formgrade template), nothing asked off it.
            page.wait_for_function("() => window.MathJax && MathJax.isReady && "
                                   "document.querySelectorAll('span.MathJax').length > 0", timeout=60 * SECONDS)
            assert not refused, f"the submission page asked for things off the server (refused): {refused}"
            screenshot(page, "formgrader_grades")

            page.goto(f"{server.url}/formgrader/submissions/{broken_id}/")  # the unreadable one: said so
            page.wait_for_selector("input.score", timeout=60 * SECONDS)
            text = page.inner_text("body")
            assert "No answer shown: the submitted" in text and kept_name(STEM) in text, text[:3000]
            screenshot(page, "formgrader_unreadable")

            page.goto(f"{server.url}/formgrader/manage_students")  # every student named, never "None, None"
            page.wait_for_function("() => document.querySelectorAll('table tbody tr td a').length >= 3",
                                   timeout=60 * SECONDS)
            names = page.eval_on_selector_all("table tbody tr td:first-child", "cells => cells.map(c => c.innerText)")
            assert sorted(name.split(",")[0].strip() for name in names) == sorted(CASES), names
            assert not refused, f"the formgrader asked for things off the server (refused): {refused}"
        finally:
            page.close()


# ----------------------------------------------------------------------------------------------
# Students' names (issue 33). nbgrader 0.9.6's formgrader builds a student's name from the fields its API gives:
# Manage Students (static/js/manage_students.js, render) and an assignment's Manage Submissions write
# `last, first` with a null shown as "None"; Manual Grading's list of a notebook's submissions
# (gradebook_notebook_submissions.js, render) writes `last, first` when neither is null, else the id.


def manage_students_name(row: dict) -> str:
    return f"{'None' if row['last_name'] is None else row['last_name']}, " \
           f"{'None' if row['first_name'] is None else row['first_name']}"


def submissions_page_name(row: dict) -> str:
    if row["last_name"] is not None and row["first_name"] is not None:
        return f"{row['last_name']}, {row['first_name']}"
    return row["student"]


def no_kernel_grader(stem: str, student: str, files: dict, seed: int, limits: dict) -> dict:
    """Stands in for `grade.grade_files`: every check failed, at once, so that the recording is what is tested."""
    return empty_result(stem, student, "not run: this test replaces the grader").to_dict()


def never(*args, **kwargs):
    raise AssertionError("reached with a roster that should have stopped everything")


def student_rows(db_url: str) -> dict[str, dict]:
    from nbgrader.api import Gradebook

    with Gradebook(db_url, course_id=COURSE_ID) as book:
        return {s.id: {"first_name": s.first_name, "last_name": s.last_name, "email": s.email} for s in book.students}


def test_make_grade_names_students_from_the_roster_else_by_their_id(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI

    root = make_course_root(tmp_path / "course", [STEM])
    db_url = course_config(root).CourseDirectory.db_url
    with Gradebook(db_url, course_id=COURSE_ID) as book:
        book.add_student("erin")  # as the formgrader's Autograde button leaves a student: no name
        book.add_student("frank", last_name="Fischer")  # typed in the formgrader, its first name left empty (null)
    for student in ("alice", "bob", "carol"):
        write_submission("correct", tmp_path / "submissions" / student)
    roster = tmp_path / "roster.csv"
    roster.write_text("student,name,email\nalice,Alice Liddell,alice@uni\nbob,,bob@uni\ndave,Dave Doe,\n"
                      "frank,Frank Other,\n", encoding="utf-8")
    monkeypatch.setattr(autograde.grade, "grade_files", no_kernel_grader)
    monkeypatch.setattr(autograde.confinement, "sandbox_check", lambda: None)
    assert grade_main(["--assignment", STEM, "--submissions", str(tmp_path / "submissions"), "--out",
                       str(tmp_path / "out"), "--workers", "1", "--no-feedback", "--course-root", str(root),
                       "--roster", str(roster)]) == 0
    api = NbGraderAPI(config=course_config(root))  # what the formgrader's pages ask for
    students = {row["id"]: row for row in api.get_students()}
    assert {student: manage_students_name(row) for student, row in students.items()} == {
        "alice": "Liddell, Alice", "bob": "bob, ", "carol": "carol, ", "dave": "Doe, Dave", "erin": "erin, ",
        "frank": "Fischer, "}  # the browser shows "bob," (a trailing space is not drawn)
    assert (students["alice"]["email"], students["bob"]["email"], students["carol"]["email"]) == \
        ("alice@uni", "bob@uni", None)
    shown = {row["student"]: submissions_page_name(row) for row in api.get_notebook_submissions(STEM, STEM)}
    assert shown == {"alice": "Liddell, Alice", "bob": "bob, ", "carol": "carol, "}, shown
    assert all(row["last_name"] and row["first_name"] is not None for row in student_rows(db_url).values())


def test_make_formgrader_names_students_and_keeps_the_names_it_finds(tmp_path, monkeypatch, capsys):
    from nbgrader.api import Gradebook

    root = tmp_path / "course"
    root.mkdir()
    monkeypatch.setenv("COURSE_ROOT", str(root))
    monkeypatch.delenv("COURSE_DB_URL", raising=False)
    db_url = course_config(root).CourseDirectory.db_url
    with Gradebook(db_url, course_id=COURSE_ID) as book:
        book.add_student("bob")  # graded with the formgrader's Autograde button
        book.add_student("alice", first_name="Alice", last_name="Liddell", email="al@uni")  # typed in the formgrader
    assert gradebook_main([STEM]) == 0
    assert {s: manage_students_name(row) for s, row in student_rows(db_url).items()} == \
        {"alice": "Liddell, Alice", "bob": "bob, "}
    assert "named 1 students (else by their id)" in capsys.readouterr().out
    # A roster given later: it names bob, whose name was his id, and leaves what was typed in the formgrader.
    roster = tmp_path / "roster.csv"
    roster.write_text("student,name,email\nalice,Someone Else,other@uni\nbob,Bob Builder,bob@uni\n", encoding="utf-8")
    assert gradebook_main([STEM, "--roster", str(roster)]) == 0
    assert student_rows(db_url) == {"alice": {"first_name": "Alice", "last_name": "Liddell", "email": "al@uni"},
                                    "bob": {"first_name": "Bob", "last_name": "Builder", "email": "bob@uni"}}


MALFORMED_ROSTERS = {
    "no student column": (b"name,email\nAlice,alice@uni\n", "has no student column (its columns: name, email)"),
    "unknown column": (b"student,emial\nalice,alice@uni\n", "has unknown columns emial (known: student, name,"),
    "not UTF-8": ("student,name\nzoe,Zo\u00eb\n".encode("latin-1"), "is not UTF-8 text (save it as CSV UTF-8)"),
    "student twice": (b"student,name\nbob,Bob\nbob,Robert\n", "lists students twice: bob"),
}


@pytest.mark.parametrize("case", MALFORMED_ROSTERS)
def test_a_malformed_roster_stops_grade_and_formgrader_before_anything(case, tmp_path, monkeypatch, capsys):
    data, problem = MALFORMED_ROSTERS[case]
    roster = tmp_path / "roster.csv"
    roster.write_bytes(data)
    root = tmp_path / "course"
    root.mkdir()
    monkeypatch.setenv("COURSE_ROOT", str(root))
    monkeypatch.delenv("COURSE_DB_URL", raising=False)
    monkeypatch.setattr(autograde.grade, "grade_files", never)
    monkeypatch.setattr(autograde.gradebook, "record", never)
    write_submission("correct", tmp_path / "submissions" / "alice")
    assert grade_main(["--assignment", STEM, "--submissions", str(tmp_path / "submissions"), "--out",
                       str(tmp_path / "out"), "--course-root", str(root), "--roster", str(roster)]) == 2
    error = capsys.readouterr().err.splitlines()
    assert len(error) == 1 and error[0].startswith(f"cannot grade: roster {roster} {problem}"), error
    assert gradebook_main([STEM, "--roster", str(roster)]) == 2
    error = capsys.readouterr().err.splitlines()
    assert len(error) == 1 and error[0].startswith(f"gradebook: roster {roster} {problem}"), error
    assert not (tmp_path / "out").exists() and not (root / ".nbgrader").exists()
