"""nbgrader's autograde step, done by the course's grader: whichever button or command starts it.

`autograde.nbgrader_settings.apply` puts `CourseGrading` where nbgrader's `Execute` was, so `nbgrader autograde`, the
formgrader's Autograde button and `make grade` all give the verdicts of autograde/judge.py: the notebook runs in
the sandboxed kernel, the hidden checks judge each function from outside it. nbgrader's own path (the test cells
run inside the student's kernel) never runs: a solution cell that rebinds a check gains nothing.

Two ways to get the verdicts:
- `make grade` has graded the batch already (in parallel, or on Dask): it names a JSON file of the results
  (`CourseGrading.results`), and the preprocessor only copies them into the notebook;
- otherwise (nbgrader's command, the formgrader's button) it grades the submitted folder now, in a separate
  process so that the checks' TensorFlow never loads into the Jupyter server.
Each test cell's output becomes its verdict, which nbgrader's SaveAutoGrades turns into the cell's score; a
markdown cell at the top says how the notebook was graded and what the grader repaired or noticed, and a
flagged submission is flagged in the gradebook (the formgrader shows the flag).

The graded notebook is also kept in `.nbgrader/autograded-kept/`: nbgrader removes the earlier one before it
converts, so when the grader cannot run here (no sandbox), the last result comes back with a note instead of the
submission dropping to "needs autograding". A file that is not a notebook never reaches this step as such:
autograde/unreadable.py reads it as the stand-in `make grade` records too.
"""

from __future__ import annotations

import functools
import json
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float, Unicode

from autograde import confinement
from autograde.grader_note import STATUS_CELL_ID, status_cell
from autograde.judge import Limits, StudentResult, empty_result, with_results
from autograde.roster import name_students

KEPT = ".nbgrader/autograded-kept"  # in the course root: each submission's last graded notebook


class GraderUnavailable(RuntimeError):
    """The course's grader cannot run on this machine (no sandbox): nothing is graded, an earlier result stands."""


class CourseGrading(NbGraderPreprocessor):
    """Fill each test cell's output with the course grader's verdict (see the module's docstring)."""

    results = Unicode("", help="A JSON file {student: result} of a batch `make grade` has graded; empty: grade "
                               "each submission now").tag(config=True)
    timeout = Float(1800.0, help="Seconds one submission may take when graded now").tag(config=True)

    def preprocess(self, nb, resources):
        student = resources["nbgrader"]["student"]
        stem = resources["nbgrader"]["assignment"]
        kept = self._kept(stem, student)
        try:
            result, how = self._result(stem, student)
        except GraderUnavailable as reason:
            if not kept.is_file():
                raise
            # nbgrader has removed the earlier graded notebook already; the last one graded comes back, said so.
            self.log.warning("%s of %s not re-graded (%s): the earlier result stands", stem, student, reason)
            earlier = nbformat.read(kept, as_version=4)
            if earlier.cells and earlier.cells[0].get("id") == STATUS_CELL_ID:
                earlier.cells[0].source += f"\n- not re-graded on {time.strftime('%Y-%m-%d %H:%M')}: {reason}"
            return earlier, resources
        with_results(nb, {cell.grade_id: cell for cell in result.cells})
        nb.cells = [cell for cell in nb.cells if cell.get("id") != STATUS_CELL_ID]
        nb.cells.insert(0, status_cell(result, how))
        self._flag(resources, result)
        kept.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, kept)
        return nb, resources

    def _kept(self, stem: str, student: str) -> Path:
        """Where the last notebook graded for this submission is kept, outside what nbgrader removes on a re-run."""
        from nbgrader.coursedir import CourseDirectory

        return Path(CourseDirectory(config=self.config).root) / KEPT / student / f"{stem}.ipynb"

    def _result(self, stem: str, student: str) -> tuple[StudentResult, str]:
        if self.results:
            batch = read_results(self.results, Path(self.results).stat().st_mtime_ns)
            if student in batch:
                return StudentResult.from_dict(batch[student]), batch.get("_how", "make grade")
        from nbgrader.coursedir import CourseDirectory

        coursedir = CourseDirectory(config=self.config)
        folder = Path(coursedir.format_path(coursedir.submitted_directory, student, stem))
        seed = secrets.randbits(32)
        self.log.info("Grading %s of %s with the course's grader (seed %d)", stem, student, seed)
        return grade_elsewhere(stem, student, folder, seed, timeout=self.timeout), \
            f"nbgrader autograde (seed {seed})"

    def _flag(self, resources, result: StudentResult) -> None:
        """nbgrader's flag on a flagged submission; a student nbgrader has just created gets the id as a name (the
        formgrader would list "None, None"; a roster given to `make formgrader` or `make grade` named the others)."""
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            notebook = gradebook.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            notebook.flagged = "flagged:" in result.status
            gradebook.db.commit()
        name_students(info["db_url"], students=[info["student"]])


@functools.lru_cache(maxsize=1)
def read_results(path: str, mtime: int) -> dict:
    """A batch's results, read once for all its students (the file's time tells a new batch from the last)."""
    return json.loads(Path(path).read_text())


def grade_elsewhere(stem: str, student: str, folder: Path, seed: int, *, timeout: float) -> StudentResult:
    """`grade.grade_files` on `folder` in a fresh Python process; a failure becomes a zero naming it."""
    problem = confinement.sandbox_check()  # looked up when called: tests stand in for it
    if problem:
        raise GraderUnavailable(f"cannot grade {student}: {problem}")
    with tempfile.TemporaryDirectory(prefix="course-grading-") as tmp:
        task = Path(tmp) / "task.json"
        task.write_text(json.dumps({"stem": stem, "student": student, "folder": str(folder), "seed": seed,
                                    "limits": vars(Limits())}))
        try:
            ran = subprocess.run([sys.executable, "-m", "autograde.course_grading", str(task)], capture_output=True,
                                 text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            ran = None
        answer = Path(tmp) / "result.json"
        if ran is not None and ran.returncode == 0 and answer.is_file():
            return StudentResult.from_dict(json.loads(answer.read_text()))
    why = "it took too long" if ran is None else (ran.stderr.strip().splitlines() or ["no output"])[-1]
    return empty_result(stem, student, f"grader error: {why}")


def _grade_task(task: Path) -> None:
    # Not at the top: grading loads the checks' TensorFlow, which only this process needs, never the Jupyter server
    # that loads CourseGrading.
    from autograde.grade import grade_files, read_submission

    data = json.loads(task.read_text())
    files = read_submission(Path(data["folder"]))
    result = grade_files(data["stem"], data["student"], files, data["seed"], data["limits"])
    (task.parent / "result.json").write_text(json.dumps(result))


if __name__ == "__main__":
    _grade_task(Path(sys.argv[1]))
