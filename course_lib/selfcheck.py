"""Run a copy of a student's notebook in a fresh kernel and say where each graded exercise stands.

`make submit` (course_lib/submit.py) uses this before it packs the notebooks. The conventions are the grader's
(autograde/judge.py), without its sandbox and without the hidden checks: the course's `python3` kernel, cells
tagged `demo` skipped, a time limit per cell, and a cell that hangs or kills the kernel is reported and left out
(the kernel is restarted and the cells before it run again) so that the other exercises are still checked. What
is run is a copy of the notebook alone in a temporary folder, since the archive holds only the notebook: the
student's files are only read.

An exercise is
- `not started` when its solution cell is the released stub, or still raises NotImplementedError;
- `done, check passes` when the visible check in its test cell ran without error;
- `done, check fails: <why>` otherwise: the first line of the check's message (a `CheckFailed`), or the error
  the cell raised.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course_lib.checking import CheckFailed, NotImplementedYet
from course_lib.notebooks import Exercise, exercises, is_demo, nbgrader_meta, notebook_problem

DEFAULT_CELL_TIMEOUT = 120.0  # seconds, the grader's default (`make grade --cell-timeout`)
NOT_STARTED = "not started"
PASSES = "done, check passes"
FAILS = "done, check fails"
MAX_MESSAGE = 200  # characters of a message shown in the summary
MAX_NOTES = 5
# What a cell raises for an unfinished exercise: the stub's own error, or the checks' name for it.
UNFINISHED = {NotImplementedError.__name__, NotImplementedYet.__name__}


@dataclass
class Outcome:
    """What running one cell gave: status is ok, error, timeout, died or skipped (not run)."""

    status: str
    ename: str = ""
    evalue: str = ""

    def first_line(self) -> str:
        """The first line of the error's message: a check's message is written to be read on its own."""
        first = next((line.strip() for line in self.evalue.splitlines() if line.strip()), "")
        # A syntax error names the file ipykernel compiled the cell to (a number): only the line means something.
        return _short(re.sub(r"\(\d+\.py, line (\d+)\)", r"(line \1)", first))

    def error_line(self) -> str:
        return _short(f"{self.ename}: {self.first_line()}" if self.first_line() else self.ename)


@dataclass
class ExerciseStatus:
    name: str
    points: float
    status: str  # NOT_STARTED, PASSES, or a line starting with FAILS or "done, not checked"

    @property
    def line(self) -> str:
        points = f"{self.points:g} point{'' if self.points == 1 else 's'}"
        return f"{self.name} ({points}): {self.status}"


@dataclass
class NotebookReport:
    stem: str
    exercises: list[ExerciseStatus] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the notebook's other problems, for the student to read
    problem: str | None = None  # the file is not a readable notebook
    ran: bool = False  # executed in a kernel (False: nothing answered yet, invalid, or checks not asked for)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 3] + "..."


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def released_notebook(released: Path | None, stem: str):
    """The notebook as the course released it, or None when there is no release to compare with."""
    path = released / stem / f"{stem}.ipynb" if released else None
    if path is None or not path.is_file():
        return None
    try:
        return nbformat.read(path, as_version=4)
    except Exception:  # a broken release is not the student's problem: check without it
        return None


def kernel_environment() -> dict[str, str]:
    """This interpreter's bin first on PATH, so the `python3` kernel is the course's Python; COURSE_FAST and the
    rest of the environment are inherited."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return env


def check_notebook(path: Path, data: bytes, *, released: Path | None, cell_timeout: float = DEFAULT_CELL_TIMEOUT,
                   run: bool = True) -> NotebookReport:
    """The report on one assignment notebook; `data` is the file's content as read once by the caller."""
    stem = path.stem
    report = NotebookReport(stem)
    report.problem = notebook_problem(data)
    if report.problem:
        return report
    notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
    release = released_notebook(released, stem)
    graded = exercises(notebook)
    stubs = None
    if release is not None:
        stubs = {nbgrader_meta(c)["grade_id"]: c.source for c in release.cells if nbgrader_meta(c).get("grade_id")}
        names = {e.test_id: e.name for e in exercises(release)}
        graded = [dataclasses.replace(e, name=names.get(e.test_id, e.name)) for e in graded]
        report.notes += _missing_cells(graded, notebook, release)
    started = [e for e in graded if not _unchanged(e, notebook, stubs)]
    outcomes: dict[int, Outcome] = {}
    runnable = copy.deepcopy(notebook)
    if run and started:
        report.notes += _restore_test_cells(graded, runnable, stubs)
        report.notes += _not_handed_in(path.parent, stem, released)
        with tempfile.TemporaryDirectory(prefix=f"submit-{stem}-") as tmp:
            # The archive holds the notebook alone, so it runs alone, as the grader will run it.
            _course_files(released, stem, Path(tmp) / stem)
            outcomes = run_cells(runnable, Path(tmp) / stem, cell_timeout)
        report.ran = True
        report.notes += _other_cell_notes(runnable, outcomes, graded, cell_timeout)
    for exercise in graded:
        if exercise not in started:
            status = NOT_STARTED
        elif not report.ran:
            status = "done, not checked"
        else:
            status = _status(exercise, runnable, outcomes, cell_timeout)
        report.exercises.append(ExerciseStatus(exercise.name, exercise.points, status))
    return report


def _unchanged(exercise: Exercise, notebook, stubs: dict[str, str] | None) -> bool:
    """The solution cell is missing or is the released stub (unknown without a release: run it to see)."""
    if exercise.solution is None:
        return True
    cell = notebook.cells[exercise.solution]
    stub = (stubs or {}).get(nbgrader_meta(cell).get("grade_id"))
    return stub is not None and _squash(cell.source) == _squash(stub)


def _missing_cells(graded: list[Exercise], notebook, release) -> list[str]:
    """Notes on exercises of the release whose cells are gone from the student's notebook."""
    tests = {e.test_id for e in graded}
    solutions = {nbgrader_meta(c).get("grade_id") for c in notebook.cells if nbgrader_meta(c).get("solution")}
    notes = []
    for exercise in exercises(release):
        if exercise.name not in solutions:
            notes.append(f"{exercise.name}: its solution cell is missing from your notebook (or lost its "
                         f"metadata), so grading counts it as not answered")
        elif exercise.test_id not in tests:
            notes.append(f"{exercise.name}: its check cell is missing; grading puts the course's back, but this "
                         f"summary could not check it")
    return notes


def _restore_test_cells(graded: list[Exercise], runnable, stubs: dict[str, str] | None) -> list[str]:
    """Edited check cells run as released, as grading does; say so."""
    notes = []
    for exercise in graded:
        released = (stubs or {}).get(exercise.test_id)
        cell = runnable.cells[exercise.test]
        if released is not None and _squash(cell.source) != _squash(released):
            cell.source = released
            notes.append(f"{exercise.name}: its check cell was edited; the course's check was run instead, as "
                         f"grading does")
    return notes


def _course_files(released: Path | None, stem: str, target: Path) -> None:
    """An empty folder for the kernel, with the files the course released beside the notebook (data), if any."""
    source = released / stem if released else None
    try:
        if source is not None and source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns(".*", "__pycache__", f"{stem}.ipynb"))
    except (OSError, shutil.Error):
        pass  # without them, a cell that reads them fails and the summary says so
    target.mkdir(parents=True, exist_ok=True)


def _not_handed_in(folder: Path, stem: str, released: Path | None) -> list[str]:
    """A note naming the student's own files beside the notebook: only the notebook is handed in and graded."""
    course = released / stem if released else None
    own = sorted(p.name for p in folder.iterdir()
                 if not p.name.startswith(".") and p.name not in ("__pycache__", f"{stem}.ipynb")
                 and not p.name.endswith(".new.ipynb") and not (course and (course / p.name).exists()))
    if not own:
        return []
    shown = ", ".join(own[:5]) + (", ..." if len(own) > 5 else "")
    return [f"only the notebook is handed in, not the files beside it ({shown}); the check ran without them, "
            f"as grading will"]


def run_cells(notebook, folder: Path, cell_timeout: float) -> dict[int, Outcome]:
    """Run the notebook's code cells (not `demo` cells) in a fresh kernel in `folder`; the outcome of each, by
    index. A cell that times out or kills the kernel is left out: a new kernel replays the cells before it."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    pending = [i for i, c in enumerate(notebook.cells)
               if c.cell_type == "code" and c.source.strip() and not is_demo(c)]
    outcomes: dict[int, Outcome] = {}
    replay: list[int] = []
    client = NotebookClient(notebook, timeout=cell_timeout, kernel_name="python3", allow_errors=True,
                            shutdown_kernel="immediate", resources={"metadata": {"path": str(folder)}})
    while pending:
        try:
            with client.setup_kernel(env=kernel_environment(), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL):
                for index in replay:
                    try:
                        client.execute_cell(copy.deepcopy(notebook.cells[index]), index)
                    except (CellTimeoutError, DeadKernelError):
                        raise _Stop("a cell that ran before failed when the kernel was restarted") from None
                while pending:
                    index = pending.pop(0)
                    try:
                        client.execute_cell(notebook.cells[index], index)
                    except CellTimeoutError:
                        outcomes[index] = Outcome("timeout")
                        break
                    except DeadKernelError:
                        outcomes[index] = Outcome("died")
                        break
                    outcomes[index] = _outcome(notebook.cells[index])
                    replay.append(index)
        except _Stop as stop:
            why = str(stop)
        except Exception as error:  # the kernel would not start, or the connection broke
            why = f"the kernel failed ({type(error).__name__}: {_short(str(error))})"
        else:
            continue
        for index in pending:
            outcomes[index] = Outcome("skipped", evalue=why)
        break
    return outcomes


class _Stop(Exception):
    pass


def _outcome(cell) -> Outcome:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return Outcome("error", output.get("ename", "Error"), output.get("evalue", ""))
    return Outcome("ok")


def _status(exercise: Exercise, runnable, outcomes: dict[int, Outcome], cell_timeout: float) -> str:
    solution = outcomes.get(exercise.solution) if exercise.solution is not None else None
    source = runnable.cells[exercise.solution].source if exercise.solution is not None else ""
    if solution is not None and solution.status == "error" and solution.ename not in UNFINISHED:
        return f"{FAILS}: your solution cell raised {solution.error_line()}"
    if solution is not None and solution.status in ("timeout", "died"):
        return f"{FAILS}: your solution cell {_trouble(solution, cell_timeout)}"
    test = outcomes.get(exercise.test, Outcome("skipped", evalue="it was not run"))
    if test.status == "ok":
        return PASSES
    if test.status == "skipped":
        return f"done, not checked: {test.evalue}"
    if test.status in ("timeout", "died"):
        return f"{FAILS}: the check {_trouble(test, cell_timeout)}"
    if test.ename in UNFINISHED:
        if "NotImplementedError" in source:
            return f"{NOT_STARTED} (your cell still raises NotImplementedError)"
        # Something else it uses is unfinished; the checks' message names it.
        return f"{FAILS}: {test.first_line() or 'NotImplementedError'}"
    if test.ename == CheckFailed.__name__:
        return f"{FAILS}: {test.first_line() or 'the check failed'}"
    return f"{FAILS}: {test.error_line()}"


def _trouble(outcome: Outcome, cell_timeout: float) -> str:
    if outcome.status == "timeout":
        return f"did not finish within {cell_timeout:g} s (an endless loop?) and was stopped"
    return "killed the kernel (a crash, os._exit or too much memory)"


def _other_cell_notes(runnable, outcomes: dict[int, Outcome], graded: list[Exercise], cell_timeout: float):
    """Trouble in cells that are not an exercise's: grading runs them too."""
    graded_cells = {e.test for e in graded} | {e.solution for e in graded if e.solution is not None}
    notes = []
    for index, outcome in sorted(outcomes.items()):
        if index in graded_cells or outcome.status in ("ok", "skipped"):
            continue
        if outcome.status == "error" and outcome.ename in UNFINISHED:
            continue  # a cell that uses an exercise not written yet: expected
        what = f"raised {outcome.error_line()}" if outcome.status == "error" else _trouble(outcome, cell_timeout)
        first = next((line.strip() for line in runnable.cells[index].source.splitlines() if line.strip()), "")
        notes.append(f"cell {index + 1} ({_short(first)[:50]!r}) {what}")
    if len(notes) > MAX_NOTES:
        notes[MAX_NOTES:] = [f"... and {len(notes) - MAX_NOTES} more cells with errors"]
    return notes
