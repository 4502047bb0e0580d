"""What nbgrader's own converters and pages make of the course's graded notebooks (issue 33), without a kernel:
- a submitted file that is not a notebook is read as the stand-in that says so, its bytes kept beside it;
- students' feedback pages leave the grader's `flagged:` notes out unless the course shows them;
- the formgrader's submission page loads MathJax from the Jupyter server, never from a CDN.
"""

from __future__ import annotations

import nbformat
import pytest
from traitlets.config import Config, Configurable

from autograde.course import SHOW_FLAGS_TO_STUDENTS
from autograde.feedback import StudentNote
from autograde.grader_note import status_cell
from autograde.judge import StudentResult, release_notebook
from autograde.nbgrader_settings import apply
from autograde.unreadable import CourseExporter, kept_name, problem_of, stand_in
from course_lib.notebooks import nbgrader_meta

STEM = "01_positional_encoding"


def answers(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells if nbgrader_meta(cell).get("solution")]


def test_the_stand_in_says_why_in_every_answer_cell_and_keeps_the_rest_of_the_release():
    release = release_notebook(STEM)
    notebook = stand_in(release, STEM, "invalid notebook: not valid JSON", kept=True)
    assert len(notebook.cells) == len(release.cells)
    assert answers(notebook) and all("could not be read (invalid notebook: not valid JSON)" in text
                                     and kept_name(STEM) in text for text in answers(notebook))
    assert answers(release) != answers(notebook), "the release itself was changed"
    tests = [c.source for c in notebook.cells if nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution")]
    assert tests == [c.source for c in release.cells
                     if nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution")]
    missing = stand_in(release, STEM, "missing: no 01_positional_encoding.ipynb in the submission", kept=False)
    assert all("No file was handed in" in text for text in answers(missing))


@pytest.mark.parametrize(("status", "problem"), [
    ("invalid notebook: not valid JSON (line 1, column 12: Expecting value); submitted 2026-11-20",
     "invalid notebook: not valid JSON (line 1, column 12: Expecting value)"),
    ("missing: no x.ipynb in the submission", "missing: no x.ipynb in the submission"),
    ("grader error: it took too long", "grader error: it took too long"),
])
def test_the_problem_is_the_status_item_that_names_it(status, problem):
    assert problem_of(status) == problem


class Converter(Configurable):
    """What CourseExporter reads of nbgrader's converter: its course directory."""

    def __init__(self, root):
        from nbgrader.coursedir import CourseDirectory

        super().__init__()
        self.coursedir = CourseDirectory(root=str(root))


@pytest.mark.parametrize("data", [b'{"cells": [', b"{}", b"\xff\xfe not text", b'{"cells": "none"}'])
def test_an_unreadable_submission_is_read_as_the_stand_in_with_its_bytes_kept(tmp_path, data):
    submitted = tmp_path / "submitted" / "carol" / STEM / f"{STEM}.ipynb"
    submitted.parent.mkdir(parents=True)
    submitted.write_bytes(data)
    exporter = CourseExporter(parent=Converter(tmp_path))
    resources = {"nbgrader": {"assignment": STEM, "student": "carol", "notebook": STEM}}
    output, _ = exporter.from_filename(str(submitted), resources=resources)
    notebook = nbformat.reads(output, as_version=4)
    assert all("could not be read (invalid notebook: " in text for text in answers(notebook))
    kept = tmp_path / "autograded" / "carol" / STEM / kept_name(STEM)
    assert kept.read_bytes() == data and submitted.read_bytes() == data


def test_a_readable_submission_is_read_as_it_is(tmp_path):
    path = tmp_path / f"{STEM}.ipynb"
    release = release_notebook(STEM)
    nbformat.write(release, path)
    output, _ = CourseExporter().from_filename(str(path), resources={})
    assert answers(nbformat.reads(output, as_version=4)) == answers(release)
    assert not list(tmp_path.glob("*.as-submitted"))


def flagged_note():
    result = StudentResult("carol", STEM, 3.0, 5.0, "graded; flagged: rebinds the course's checks; late by 2 h")
    notebook = nbformat.v4.new_notebook(cells=[status_cell(result, "make grade")])
    return notebook


@pytest.mark.parametrize("show", [False, True])
def test_students_read_the_note_without_its_flags_unless_the_course_shows_them(show, tmp_path):
    config = Config()
    apply(config, tmp_path)
    assert config.StudentNote.show_flags is SHOW_FLAGS_TO_STUDENTS is False
    assert "autograde.feedback.StudentNote" in config.GenerateFeedback.preprocessors
    config.StudentNote.show_flags = show
    notebook, _ = StudentNote(config=config).preprocess(flagged_note(), {})
    note = notebook.cells[0].source
    assert "3 / 5 points" in note and "- late by 2 h" in note
    assert ("flagged:" in note) is show, note


def test_the_formgrader_page_loads_mathjax_from_the_server_not_a_cdn(monkeypatch):
    """The page as the formgrader renders it (nbgrader's formgrade template, its folder named by nbgrader) in the
    instructor's Lab, whose JUPYTER_PATH holds the course's mathjax macro; the browser test opens it offline."""
    from nbconvert import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers

    from autograde.course import REPO_ROOT

    monkeypatch.setenv("JUPYTER_PATH", str(REPO_ROOT / "jupyter" / "instructor" / "data"))
    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("$PE_{(pos, 2i)} = \\sin(x)$")])
    resources = {"assignment_id": STEM, "notebook_id": STEM, "submission_id": "x", "index": 0, "total": 1,
                 "base_url": "", "student": "carol", "last_name": "carol", "first_name": "", "notebook_path": "x"}
    html, _ = HTMLExporter(config=config).from_notebook_node(notebook, resources=resources)
    assert "formgrade.css" in html, "not nbgrader's formgrade page any more"
    loader = html[html.index('path.indexOf("/formgrader/")'):]
    assert 'static/jupyter_server_mathjax/MathJax.js' in loader.split("document.write")[0], loader[:600]
    assert '<script src="https://cdnjs' not in html, "the CDN's MathJax is loaded unconditionally"


def run_autograde(root, config, student: str) -> dict:
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log

    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id, coursedir.student_id = STEM, student
    converter = Autograde(coursedir=coursedir, config=config)
    converter.force = True  # as the formgrader's button sets it
    return capture_log(converter)


@pytest.mark.thorough
def test_when_the_grader_cannot_run_the_earlier_result_stands(tmp_path, monkeypatch):
    """nbgrader removes the graded notebook before converting; without a sandbox the course's grader refuses, and
    the last graded notebook comes back with a note instead of the submission dropping to "needs autograding"."""
    from nbgrader.api import Gradebook

    import autograde.confinement
    from autograde import registry
    from autograde.course_grading import KEPT
    from autograde.gradebook import record
    from autograde.judge import CellResult, with_results
    from autograde.nbgrader_runner import make_course_root
    from autograde.record import course_config

    root = make_course_root(tmp_path / "course", [STEM])
    config = course_config(root)
    assert not record([STEM], config.CourseDirectory.db_url)
    for student in ("carol", "dave"):
        folder = root / "submitted" / student / STEM
        folder.mkdir(parents=True)
        nbformat.write(release_notebook(STEM), folder / f"{STEM}.ipynb")
    cells = [CellResult(row.test_id, float(row.points), float(row.points), f"✓ {row.name}")
             for row in registry.exercises(STEM)]
    earlier = with_results(release_notebook(STEM), {cell.grade_id: cell for cell in cells})
    earlier.cells.insert(0, status_cell(StudentResult("carol", STEM, 5.0, 5.0, "graded", cells), "make grade"))
    (root / KEPT / "carol").mkdir(parents=True)
    nbformat.write(earlier, root / KEPT / "carol" / f"{STEM}.ipynb")
    monkeypatch.setattr(autograde.confinement, "sandbox_check", lambda: "bubblewrap (bwrap) is not installed")

    outcome = run_autograde(root, config, "carol")
    assert outcome["success"], outcome
    assert "not re-graded (cannot grade carol: bubblewrap (bwrap) is not installed)" in outcome["log"]
    note = nbformat.read(root / "autograded" / "carol" / STEM / f"{STEM}.ipynb", as_version=4).cells[0].source
    assert "5 / 5 points" in note and "- not re-graded on " in note, note
    with Gradebook(config.CourseDirectory.db_url) as book:
        assert book.find_submission(STEM, "carol").score == 5

    outcome = run_autograde(root, config, "dave")  # nothing graded before: nbgrader's failure, naming the reason
    assert not outcome["success"] and "cannot grade dave: bubblewrap (bwrap) is not installed" in outcome["log"]
