"""Grade one submission: repair it, run it in a sandboxed kernel, judge each graded function here.

The kernel runs the notebook's code cells (not its test cells, nor the cells the source tags `demo`), then
answers the hidden checks' calls (autograde/remote.py). Each exercise is worth its points when its hidden
check passes and nothing otherwise; a cell that hangs or kills the kernel is reported once, the kernel is
restarted and the notebook replayed without that cell, so later exercises are still graded.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import textwrap
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from autograde import checks, registry
from autograde.course import RELEASE_DIRECTORY, REPO_ROOT
from autograde.kernel_view import course_lib_for, withheld_answers
from autograde.normalise import SKIP_KEY, nbgrader_meta, normalise
from autograde.remote import KernelTrouble, Remote
from autograde.sandbox import DEFAULT_MEMORY, SandboxKernel, declared_env, shadowing_names
from autograde.suspicion import flags_in_cells, flags_in_errors
from course_lib.checking import CheckFailed
from course_lib.env import quiet_tensorflow
from course_lib.notebooks import STUDENT_ID
from course_lib.notebooks import notebook_problem as file_problem

MAX_EXTRA_BYTES = 20 * 2**20  # a student's extra files copied next to the notebook


@dataclass
class Limits:
    cell_timeout: float = 120.0  # seconds for one notebook cell
    call_timeout: float = 60.0  # seconds for one call of the student's code by a check
    student_timeout: float = 900.0  # seconds for the whole submission
    memory: int = DEFAULT_MEMORY  # bytes of address space for the kernel
    threads: int = 1  # CPU threads for the kernel's numerical libraries


@dataclass
class CellResult:
    grade_id: str
    score: float
    max_score: float
    message: str  # the ✓ line, or what is wrong


@dataclass
class StudentResult:
    student: str
    assignment: str
    score: float
    max_score: float
    status: str
    cells: list[CellResult] = field(default_factory=list)
    notebook: str = ""  # the graded notebook (JSON) with each test cell's result as its output
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> StudentResult:
        data = dict(data)
        data["cells"] = [CellResult(**c) for c in data.get("cells", [])]
        return cls(**data)


def max_points(stem: str) -> float:
    return float(sum(row.points for row in registry.exercises(stem)))


def release_notebook(stem: str) -> nbformat.NotebookNode:
    """The student version, the structure every submission is repaired to."""
    return nbformat.read(REPO_ROOT / RELEASE_DIRECTORY / stem / f"{stem}.ipynb", as_version=4)


def notebook_problem(path: Path, stem: str) -> str | None:
    """Why `path` cannot be graded, or None when it is a readable notebook."""
    if not path.is_file():
        others = sorted(p.name for p in path.parent.glob("*.ipynb"))
        found = f" (found: {', '.join(others)})" if others else ""
        return f"missing: no {stem}.ipynb in the submission{found}"
    # The same rules as `make submit` (course_lib.notebooks), so both sides call the same file valid.
    return file_problem(path.read_bytes())


def grade_submission(stem: str, student: str, folder: Path, work: Path, *, seed: int,
                     limits: Limits | None = None) -> StudentResult:
    """Grade `folder/<stem>.ipynb`; `work` is a fresh folder the kernel may write in."""
    started = time.monotonic()
    result = _grade(stem, student, Path(folder), Path(work), seed, limits or Limits())
    result.seconds = round(time.monotonic() - started, 1)
    return result


def empty_result(stem: str, student: str, status: str) -> StudentResult:
    cells = [CellResult(row.test_id, 0.0, float(row.points), status) for row in registry.exercises(stem)]
    return StudentResult(student, stem, 0.0, max_points(stem), status, cells)


def _grade(stem, student, folder, work, seed, limits) -> StudentResult:
    if not STUDENT_ID.fullmatch(student):
        return empty_result(stem, student, "invalid student folder name: use letters, digits, '_', '.', '-'")
    path = folder / f"{stem}.ipynb"
    problem = notebook_problem(path, stem)
    if problem:
        return empty_result(stem, student, problem)
    submission = nbformat.read(path, as_version=4)
    release = release_notebook(stem)
    repaired = normalise(submission, release)
    notes = list(repaired.repairs)
    notes += _copy_extras(folder, work, stem)
    flags = flags_in_cells(repaired.notebook, withheld_answers(stem))

    deadline = time.monotonic() + limits.student_timeout
    cells_run = [c for c in repaired.notebook.cells if c.cell_type == "code" and not nbgrader_meta(c).get("grade")
                 and not c.metadata.get(SKIP_KEY, {}).get("skip")]
    kernel = SandboxKernel(work, course_lib=course_lib_for(stem), memory=limits.memory, threads=limits.threads,
                           env=declared_env(release))
    results: dict[str, CellResult] = {}
    try:
        kernel.start()
        replay: list[str] = []
        errors: list[tuple[str, str]] = []
        for cell in cells_run:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                notes.append(f"time limit of {limits.student_timeout:g} s reached while running the notebook")
                break
            outcome = kernel.run(cell.source, min(limits.cell_timeout, remaining))
            label = nbgrader_meta(cell).get("grade_id") or cell_label(repaired.notebook, cell)
            if outcome.status == "ok":
                replay.append(cell.source)
            elif outcome.status == "error":
                replay.append(cell.source)
                errors.append((outcome.ename, outcome.evalue))
                if outcome.out_of_memory():
                    notes.append(f"{label} ran out of memory (a kernel may map {limits.memory / 2**30:g} GiB)")
                elif not nbgrader_meta(cell).get("solution") and outcome.ename not in UNFINISHED:
                    # A set-up cell that fails takes later exercises with it: say which, and why.
                    first = (outcome.evalue.splitlines() or [""])[0][:160]
                    notes.append(f"{label} raised {outcome.ename}: {first}")
            elif outcome.status == "timeout" and outcome.evalue == "interrupted":
                notes.append(f"{label} timed out after {limits.cell_timeout:g} s and was interrupted")
            else:
                why = "ignored the interrupt" if outcome.status == "timeout" else "killed the kernel"
                notes.append(f"{label} {why}: skipped")
                _restart(kernel, replay, limits)
        flags += flags_in_errors(errors)
        remote = Remote(kernel, timeout=limits.call_timeout)
        remote.install()
        checks.use_seed(seed)
        for row in registry.exercises(stem):
            if time.monotonic() > deadline:
                results[row.test_id] = CellResult(row.test_id, 0.0, float(row.points),
                                                  f"not graded: the submission's time limit of "
                                                  f"{limits.student_timeout:g} s was reached")
                continue
            results[row.test_id], healthy = _judge(row, remote)
            if not healthy:
                notes.append(f"{row.name}: {results[row.test_id].message}")
                _restart(kernel, replay, limits)
                remote.install()
    except KernelTrouble as trouble:
        notes.append(f"the kernel failed ({trouble}); remaining exercises get 0")
    finally:
        kernel.stop()
        checks.use_seed(None)
    for row in registry.exercises(stem):
        results.setdefault(row.test_id, CellResult(row.test_id, 0.0, float(row.points), "not graded"))
    cells = [results[row.test_id] for row in registry.exercises(stem)]
    score = sum(c.score for c in cells)
    status = "; ".join(["graded", *flags, *notes])
    notebook = with_results(repaired.notebook, results)
    return StudentResult(student, stem, score, max_points(stem), status, cells, nbformat.writes(notebook))


UNFINISHED = ("NotImplementedError", "NotHandedOut")  # an exercise not done yet, not a failing cell


def cell_label(notebook, cell) -> str:
    """A cell without a grade id as a learner finds it: its place in the notebook and its first line."""
    number = next((i for i, c in enumerate(notebook.cells, 1) if c is cell), "?")
    first = next((line.strip() for line in cell.source.splitlines() if line.strip()), "")
    return f"cell {number} ({first[:40]}{'...' if len(first) > 40 else ''})"


def _restart(kernel: SandboxKernel, replay: list[str], limits: Limits) -> None:
    """A fresh kernel with the cells that ran before (a cell that hung or crashed is left out)."""
    kernel.restart()
    for source in replay:
        if kernel.run(source, limits.cell_timeout).status in ("timeout", "died"):
            raise KernelTrouble("replay", "a cell that ran before failed on replay")


def _judge(row: registry.Exercise, remote: Remote) -> tuple[CellResult, bool]:
    """(result, kernel still healthy) for one exercise."""
    points = float(row.points)
    quiet_tensorflow()  # the checks compute with it: imported once per process, without its start-up log
    check = registry.resolve(row.hidden)
    printed = io.StringIO()
    try:
        learner = remote.lookup(row.name)
        with contextlib.redirect_stdout(printed), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(learner)
    except KernelTrouble as trouble:
        message = {"timeout": f"{row.name} did not return within {remote.timeout:g} s (an endless loop?)",
                   "died": f"running {row.name} killed the kernel (a crash, os._exit or running out of memory)",
                   "memory": f"running {row.name} ran out of memory"}.get(trouble.kind, f"grading {row.name} "
                                                                                        f"failed: {trouble}")
        return CellResult(row.test_id, 0.0, points, message), False
    except NotImplementedError:
        return CellResult(row.test_id, 0.0, points, f"{row.name} is not implemented yet"), True
    except NameError as error:
        return CellResult(row.test_id, 0.0, points, str(error)), True
    except CheckFailed as failure:
        return CellResult(row.test_id, 0.0, points, str(failure)), True
    except Exception as error:  # the check met something it did not expect: say what, never the grader's code
        return CellResult(row.test_id, 0.0, points, f"{row.name}: {type(error).__name__}: {str(error)[:500]}"), True
    lines = [line for line in printed.getvalue().splitlines() if line.strip()]
    return CellResult(row.test_id, points, points, lines[-1] if lines else f"✓ {row.name}"), True


def with_results(notebook, results: dict[str, CellResult]):
    """Each test cell's output is its result: a ✓ line, or an error naming what is wrong (no traceback)."""
    for cell in notebook.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if cell.cell_type != "code" or not nbgrader_meta(cell).get("grade") or grade_id not in results:
            continue
        result = results[grade_id]
        if result.score >= result.max_score:
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=result.message + "\n")]
        else:
            cell.outputs = [nbformat.v4.new_output("error", ename="Not passed", evalue=result.message,
                                                   # Wrapped: the page shows it in a <pre>.
                                                   traceback=[textwrap.fill(f"Not passed: {result.message}", 100)])]
    return notebook


def _copy_extras(folder: Path, work: Path, stem: str) -> list[str]:
    """The student's other files (a helper module, a data file) go next to the notebook, within a size cap."""
    work.mkdir(parents=True, exist_ok=True)
    extras = [p for p in sorted(folder.rglob("*")) if p.is_file() and p.name != f"{stem}.ipynb"
              and ".ipynb_checkpoints" not in p.parts]
    if not extras:
        return []
    if sum(p.stat().st_size for p in extras) > MAX_EXTRA_BYTES:
        return [f"extra files over {MAX_EXTRA_BYTES // 2**20} MiB not copied: {len(extras)} files"]
    for path in extras:
        target = work / path.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    names = ", ".join(str(p.relative_to(folder)) for p in extras[:5]) + (" ..." if len(extras) > 5 else "")
    notes = [f"extra files available to the notebook: {names}"]
    shadowing = shadowing_names(work)
    if shadowing:
        notes.append(f"{', '.join(shadowing)} named like a module the course or Python provides: the notebook was "
                     "graded with the installed one (rename a helper of your own to use it)")
    return notes
