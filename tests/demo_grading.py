"""Grading a solution notebook twice with one seed: as released (its `demo` cells skipped), and after every cell
ran. Both must give full marks with the same score in every cell (tests/test_demo_cells.py says why).

test_demo_cells.py grades both ways through the judge, which runs the notebook twice. Under `make test` nbval
has already run every cell of each solution notebook in a kernel of its own: conftest.py puts an EveryCellGraded
item after a notebook's last nbval cell, and it runs the hidden checks against that kernel instead of running
the notebook a second time (conftest.py then leaves out test_demo_cells.py's test of that notebook). Its other
side is the answered submission of tests/graded_batches.py (the release with the solution typed in, graded with
its demo cells skipped), which tests/test_grading.py checks too: graded once, in the notebook's xdist group.
"""

from __future__ import annotations

import copy
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from graded_batches import SEED, first_check_seconds, graded_batch

from autograde import checks, judge, registry
from autograde.normalise import DEMO_TAG, SKIP_KEY, is_demo, nbgrader_meta
from autograde.remote import Remote
from autograde.sandbox import SandboxKernel

from conftest import OFFLINE_GUARD, solution_path

NOTEBOOK_BUDGET = 20.0  # seconds to start the kernel and run the notebook's cells, demo cells skipped
CALL_TIMEOUT = 60.0  # the judge's default for one call of the notebook's code by a check


def without_demo_tags(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy in which no cell is tagged `demo` (other tags kept)."""
    plain = copy.deepcopy(notebook)
    for cell in plain.cells:
        tags = cell.get("metadata", {}).get("tags")
        if tags and DEMO_TAG in tags:
            kept = [tag for tag in tags if tag != DEMO_TAG]
            if kept:
                cell.metadata["tags"] = kept
            else:
                del cell.metadata["tags"]
    return plain


def demo_cells(stem: str) -> list:
    """The release's demo cells; there are some, and none is a solution or test cell."""
    demos = [cell for cell in judge.release_notebook(stem).cells if is_demo(cell)]
    assert demos, f"{stem}: no cell of the release is tagged {DEMO_TAG!r}"
    graded_cells = [cell.get("id") for cell in demos if nbgrader_meta(cell).get("solution")
                    or nbgrader_meta(cell).get("grade")]
    assert not graded_cells, f"{stem}: solution or test cells tagged {DEMO_TAG!r}: {graded_cells}"
    return demos


def import_checks(stem: str) -> None:
    """Import the hidden checks (and TensorFlow) before anything is timed."""
    for row in registry.exercises(stem):
        registry.resolve(row.hidden)


@dataclass
class Graded:
    result: judge.StudentResult
    seconds: float  # the whole grading
    notebook_seconds: float  # until the first hidden check: kernel start and the notebook's cells

    def by_cell(self) -> list[tuple[str, float, float]]:
        return [(cell.grade_id, cell.score, cell.max_score) for cell in self.result.cells]

    def skipped(self) -> int:
        """Cells of the graded notebook that the judge did not run because of their tag."""
        notebook = nbformat.reads(self.result.notebook, as_version=4)
        return sum(1 for cell in notebook.cells if cell.get("metadata", {}).get(SKIP_KEY, {}).get("skip"))

    def describe(self) -> str:
        return f"{self.seconds:.1f} s ({self.notebook_seconds:.1f} s running the notebook)"


def grade(stem: str, notebook: nbformat.NotebookNode, root: Path) -> Graded:
    """The judge's grading of `notebook` as a submission, timed until its first hidden check."""
    folder, work = root / "submission", root / "work"
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{stem}.ipynb")
    started = time.monotonic()
    result, first_check = first_check_seconds(
        lambda: judge.grade_submission(stem, "solution", folder, work, seed=SEED))
    seconds = time.monotonic() - started
    return Graded(result, seconds, first_check.get("solution", seconds))


def expect_full_marks(what: str, cells: list[judge.CellResult], status: str = "") -> None:
    lost = [cell for cell in cells if cell.score != cell.max_score]
    assert cells and sum(cell.max_score for cell in cells) > 0 and not lost, (what, status, lost)


def expect_same_grades(stem: str, skipped: Graded, every_cell: list[judge.CellResult], demos: list) -> None:
    """The assertions of test_demo_cells.py, whichever way every cell was run."""
    expect_full_marks(f"{stem}, demo cells skipped", skipped.result.cells, skipped.result.status)
    assert skipped.result.score == skipped.result.max_score > 0, (skipped.result.status, skipped.by_cell())
    expect_full_marks(f"{stem}, every cell run", every_cell)
    assert skipped.skipped() == len(demos)
    assert skipped.by_cell() == [(cell.grade_id, cell.score, cell.max_score) for cell in every_cell]
    assert skipped.notebook_seconds < NOTEBOOK_BUDGET, (
        f"{stem}: running the notebook took {skipped.notebook_seconds:.1f} s with its demo cells skipped")


class KernelOf:
    """nbval's kernel (nbval.kernel.RunningKernel) seen as the judge's SandboxKernel: run(code, timeout) and a
    `work` folder that both the grader and the kernel can read and write (the grading agent's requests)."""

    run = SandboxKernel.run  # the same execution, timeout and interrupt logic as the judge's

    def __init__(self, running, work: Path):
        self.running, self.client, self.manager, self.work = running, running.kc, running.km, work
        self.grading_folder = work / ".grading"  # the agent's requests and answers (SandboxKernel.grading_folder)
        self.grading_folder.mkdir(exist_ok=True)

    def alive(self) -> bool:
        return self.running.is_alive()


KERNEL_ENVIRONMENT = ("import os, sys\n"
                      "print(os.environ.get('COURSE_FAST'), '|', getattr(sys.modules.get('sitecustomize'), "
                      "'__file__', None))")


def grade_kernel(stem: str, kernel: KernelOf) -> list[judge.CellResult]:
    """The hidden checks of `stem`, with SEED, against the notebook already run in `kernel`."""
    remote = Remote(kernel, timeout=CALL_TIMEOUT)
    remote.install()
    checks.use_seed(SEED)
    try:
        return [judge._judge(row, remote)[0] for row in registry.exercises(stem)]
    finally:
        checks.use_seed(None)


def code_cells(stem: str) -> int:
    return sum(1 for cell in nbformat.read(solution_path(stem), as_version=4).cells if cell.cell_type == "code")


class EveryCellGraded(pytest.Item):
    """After nbval ran every cell of solutions/<stem>/<stem>.ipynb: grade its kernel; the grades must be those of
    the answered submission, its demo cells skipped (test_demo_cells.py's test)."""

    def __init__(self, *, stem: str, cells: int, **kwargs):
        super().__init__(**kwargs)
        self.stem, self.cells = stem, cells

    def runtest(self) -> None:
        stem = self.stem
        ran = getattr(self.parent, "course_cells_run", [])
        # nbval runs every code cell (no cell of ours is tagged for nbval to skip), all in this kernel
        assert self.cells == code_cells(stem) and len(ran) == self.cells, (
            f"{stem}: nbval ran {len(ran)} of the notebook's {code_cells(stem)} code cells in this kernel "
            "(this item grades the kernel after the notebook's last cell: run the whole notebook)")
        running = self.parent.kernel
        assert running is not None and running.is_alive(), f"{stem}: nbval's kernel is gone"
        demos = demo_cells(stem)
        import_checks(stem)
        with tempfile.TemporaryDirectory(prefix=f"demo-grading-{stem}-") as tmp:
            kernel = KernelOf(running, Path(tmp))
            # nbval's kernels run as every notebook of the tests does: fast mode, network refused
            environment = kernel.run(KERNEL_ENVIRONMENT, 60, keep_stdout=True)
            said = "".join(environment.stdout).strip()
            assert environment.status == "ok" and said == f"1 | {OFFLINE_GUARD / 'sitecustomize.py'}", (
                f"{stem}: nbval's kernel runs with COURSE_FAST | sitecustomize = {said!r} {environment}")
            started = time.monotonic()
            every_cell = grade_kernel(stem, kernel)
            kernel_seconds = time.monotonic() - started
        batch = graded_batch(stem)
        answered = batch.results["answered"]
        skipped = Graded(answered, answered.seconds, batch.notebook_seconds["answered"])
        print(f"{stem}: {len(demos)} demo cells; the answered submission graded in {skipped.describe()} with them "
              f"skipped, nbval's kernel (every cell run) graded in {kernel_seconds:.1f} s")
        expect_same_grades(stem, skipped, every_cell, demos)

    def reportinfo(self):
        return self.path, None, f"{self.stem}: grades with demo cells skipped = after every cell ran (nbval)"
