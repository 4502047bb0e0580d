"""Grade a batch of submissions, each student in its own nbgrader run.

    python -m autograde.grade --assignment 01_positional_encoding --submissions DIR --out OUT

DIR holds `<student>/<assignment>.ipynb`. The command writes
- OUT/grades.csv: student, assignment, score, max_score, status (one row per student);
- OUT/grades_by_cell.csv: the same per test cell, for seeing which exercise lost points;
- OUT/feedback/<student>/<assignment>.html: nbgrader's feedback page.
A submission that crashes, hangs or is malformed gets a row whose status says what happened;
it never stops the rest of the batch.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import psutil

from autograde.course import SOURCE_DIRECTORY, list_assignments
from autograde.nbgrader_runner import kernel_environment, make_course_root, run_nbgrader

STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
GRADES_COLUMNS = ["student", "assignment", "score", "max_score", "status"]
CELL_COLUMNS = ["student", "assignment", "grade_id", "score", "max_score"]


@dataclass
class StudentResult:
    student: str
    score: float
    max_score: float
    status: str
    cells: dict[str, tuple[float, float]] = field(default_factory=dict)


def notebook_problem(path: Path, stem: str) -> str | None:
    """Why `path` cannot be graded, or None when it is a readable notebook."""
    if not path.is_file():
        others = sorted(p.name for p in path.parent.glob("*.ipynb"))
        found = f" (found: {', '.join(others)})" if others else ""
        return f"missing: no {stem}.ipynb in the submission{found}"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        return f"invalid notebook: not UTF-8 text ({error.reason})"
    except json.JSONDecodeError as error:
        return f"invalid notebook: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
    try:
        notebook = nbformat.from_dict(raw)
        with warnings.catch_warnings():
            # Cells without ids come from older Jupyter versions: gradable, so not worth a warning.
            warnings.simplefilter("ignore")
            nbformat.validate(notebook)
    except nbformat.ValidationError as error:
        return f"invalid notebook: {str(error).splitlines()[0]}"
    except Exception as error:  # nbformat raises several types for structurally odd input
        return f"invalid notebook: {type(error).__name__}: {error}"
    return None


def grade_ids(notebook_path: Path) -> list[str]:
    """The grade ids of the test cells in a (valid) notebook."""
    notebook = nbformat.read(notebook_path, as_version=4)
    ids = []
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and meta.get("grade_id"):
            ids.append(meta["grade_id"])
    return ids


def kill_tree(process: subprocess.Popen) -> None:
    """Kill nbgrader and its kernels (which run in sessions of their own)."""
    try:
        parent = psutil.Process(process.pid)
        victims = parent.children(recursive=True) + [parent]
    except psutil.NoSuchProcess:
        victims = []
    for victim in victims:
        try:
            victim.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(victims, timeout=10)
    process.wait()


def run_autograde(root: Path, stem: str, student: str, timeout: float, *, fast: bool = True
                  ) -> tuple[str | None, str]:
    """Autograde one student; return (problem or None, nbgrader's log)."""
    command = [sys.executable, "-m", "nbgrader", "autograde", stem, "--student", student, "--force"]
    environment = kernel_environment()
    # Graded functions never depend on a notebook's long demonstrations (training runs).
    environment["COURSE_FAST"] = "1" if fast else "0"
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.Popen(command, cwd=root, env=environment, stdout=log,
                                   stderr=subprocess.STDOUT, text=True)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(process)
            return f"timed out: grading took longer than {timeout:g} s and was stopped", ""
        log.seek(0)
        text = log.read()
    if process.returncode != 0:
        return f"autograde failed: {failure_reason(text, process.returncode)}", text
    return None, text


def failure_reason(log: str, returncode: int) -> str:
    """One line for the instructor from nbgrader's log of a failed run."""
    if "Timeout waiting for IOPub output" in log or "CellTimeoutError" in log:
        return "a cell ran past the cell time limit and ignored the interrupt"
    if "Kernel died" in log or "DeadKernelError" in log:
        return "the kernel died while running the notebook (a crash, os._exit or running out of memory)"
    exceptions = re.findall(r"^\s*((?:\w+\.)*\w+(?:Error|Exception): .*)$", log, flags=re.MULTILINE)
    return exceptions[-1].strip()[:300] if exceptions else f"nbgrader exited with code {returncode}"


def notes_from_autograded(notebook_path: Path) -> list[str]:
    """Cell-level events worth telling the instructor: interrupted (hung) cells."""
    if not notebook_path.is_file():
        return []
    notebook = nbformat.read(notebook_path, as_version=4)
    hung = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error" and output.get("ename") == "CellTimeoutError":
                grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                hung.append(grade_id or f"cell {index + 1}")
    return [f"timed out and interrupted: {', '.join(hung)}"] if hung else []


def read_scores(root: Path, stem: str, student: str) -> tuple[float, float, dict[str, tuple[float, float]]]:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{root / '.nbgrader' / 'gradebook.db'}") as gradebook:
        max_score = gradebook.find_assignment(stem).max_score
        try:
            submission = gradebook.find_submission(stem, student)
        except MissingEntry:
            return 0.0, max_score, {}
        cells = {}
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                cells[grade.name] = (float(grade.score or 0.0), float(grade.max_score))
        return float(submission.score), float(submission.max_score), cells


def assignment_max_score(root: Path, stem: str) -> float:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / '.nbgrader' / 'gradebook.db'}") as gradebook:
        return float(gradebook.find_assignment(stem).max_score)


def grade_student(root: Path, stem: str, student: str, submission_dir: Path, out: Path,
                  timeout: float, *, fast: bool = True) -> StudentResult:
    max_score = assignment_max_score(root, stem)
    if not STUDENT_ID.fullmatch(student):
        return StudentResult(student, 0.0, max_score,
                             "invalid student folder name: use letters, digits, '_', '.', '-'")
    notebook = submission_dir / f"{stem}.ipynb"
    problem = notebook_problem(notebook, stem)
    if problem:
        return StudentResult(student, 0.0, max_score, problem)

    target = root / "submitted" / student / stem
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(notebook, target / f"{stem}.ipynb")
    notes = []
    source = root / SOURCE_DIRECTORY / stem / f"{stem}.ipynb"
    missing = sorted(set(grade_ids(source)) - set(grade_ids(notebook)))
    if missing:
        notes.append(f"deleted test cells restored and graded: {', '.join(missing)}")

    problem, _ = run_autograde(root, stem, student, timeout, fast=fast)
    if problem:
        return StudentResult(student, 0.0, max_score, problem)
    notes += notes_from_autograded(root / "autograded" / student / stem / f"{stem}.ipynb")
    score, max_score, cells = read_scores(root, stem, student)

    try:
        run_nbgrader(root, "generate_feedback", stem, "--student", student, "--force",
                     "--log-level=WARN", timeout=300)
        feedback = out / "feedback" / student
        feedback.mkdir(parents=True, exist_ok=True)
        for page in (root / "feedback" / student / stem).glob("*.html"):
            shutil.copy2(page, feedback / page.name)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        notes.append(f"no feedback page ({str(error).splitlines()[0]})")
    status = "graded" + (f"; {'; '.join(notes)}" if notes else "")
    return StudentResult(student, score, max_score, status, cells)


def grade_batch(stem: str, submissions: Path, out: Path, *, cell_timeout: int = 120,
                student_timeout: float = 900, fast: bool = True, log=print) -> list[StudentResult]:
    """Grade every `<student>/` folder in `submissions`; write the CSVs and feedback to `out`."""
    out.mkdir(parents=True, exist_ok=True)
    students = sorted(p.name for p in submissions.iterdir() if p.is_dir() and not p.name.startswith("."))
    results = []
    with tempfile.TemporaryDirectory(prefix=f"grade-{stem}-") as tmp:
        root = make_course_root(Path(tmp), [stem], cell_timeout=cell_timeout)
        # Registers the assignment and its test cells in the gradebook.
        run_nbgrader(root, "generate_assignment", stem, "--force", "--log-level=WARN")
        for student in students:
            started = time.monotonic()
            try:
                result = grade_student(root, stem, student, submissions / student, out, student_timeout,
                                       fast=fast)
            except Exception as error:  # one student's trouble must never end the batch
                result = StudentResult(student, 0.0, assignment_max_score(root, stem),
                                       f"grader error: {type(error).__name__}: {error}")
            results.append(result)
            log(f"{student}: {result.score:g}/{result.max_score:g} ({result.status}) "
                f"in {time.monotonic() - started:.0f} s")
    write_csvs(stem, results, out)
    return results


def write_csvs(stem: str, results: list[StudentResult], out: Path) -> None:
    with open(out / "grades.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(GRADES_COLUMNS)
        for r in results:
            writer.writerow([r.student, stem, f"{r.score:g}", f"{r.max_score:g}", r.status])
    with open(out / "grades_by_cell.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(CELL_COLUMNS)
        for r in results:
            for grade_id, (score, max_score) in sorted(r.cells.items()):
                writer.writerow([r.student, stem, grade_id, f"{score:g}", f"{max_score:g}"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignment", required=True, help="assignment stem, e.g. 01_positional_encoding")
    parser.add_argument("--submissions", required=True, type=Path, help="folder of <student>/<notebook>.ipynb")
    parser.add_argument("--out", required=True, type=Path, help="folder for grades.csv and feedback/")
    parser.add_argument("--cell-timeout", type=int, default=120, help="seconds one cell may run (default 120)")
    parser.add_argument("--student-timeout", type=float, default=900,
                        help="seconds one whole submission may take (default 900)")
    parser.add_argument("--full-mode", action="store_true",
                        help="run the notebooks' long demonstrations in full (default: COURSE_FAST=1)")
    args = parser.parse_args(argv)
    if args.assignment not in list_assignments():
        parser.error(f"unknown assignment {args.assignment!r}; known: {', '.join(list_assignments())}")
    if not args.submissions.is_dir():
        parser.error(f"submissions folder {args.submissions} does not exist")
    results = grade_batch(args.assignment, args.submissions, args.out, cell_timeout=args.cell_timeout,
                          student_timeout=args.student_timeout, fast=not args.full_mode)
    print(f"graded {len(results)} submissions: {args.out / 'grades.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
