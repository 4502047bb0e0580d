"""Shared fixtures: where things are, and how to run a notebook the way a learner would."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograde.course import list_assignments

REPO = Path(__file__).resolve().parent.parent
ASSIGNMENTS = list_assignments()
SOLUTION_CODE = "### BEGIN SOLUTION"
OFFLINE_GUARD = REPO / "tests" / "offline"
pytest_plugins = ["memory_guard"]  # a test that grows its process past a limit fails, named (memory_guard.py)


class AlwaysEqual:
    """The classic trick: an object equal to everything. No check may accept it."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


def _skip_as_failure(report) -> None:
    """A skipped test proves nothing: the suite fails it, with the reason it gave."""
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped, and this suite does not skip (a test that needs something absent fails): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _skip_as_failure(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _skip_as_failure(outcome.get_result())


def set_course_environment() -> None:
    """Fast mode for every notebook the tests run, the course's Python as the kernel, and no network for
    any process they start (tests/offline/sitecustomize.py). Idempotent."""
    os.environ["COURSE_FAST"] = "1"
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(OFFLINE_GUARD)]
    os.environ["PYTHONPATH"] = os.pathsep.join([str(OFFLINE_GUARD), *paths])
    venv_bin = str(Path(sys.executable).parent)
    os.environ["PATH"] = os.pathsep.join([venv_bin, *(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                                       if p and p != venv_bin)])
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("MPLBACKEND", "Agg")
    # One thread per process for TensorFlow, PyTorch and OpenMP, unless the caller chose: `make test` runs a worker
    # per core, each with its kernels, and threads of two workers fighting over the cores cost CPU time they wait
    # out (the grader's sandboxed kernels run on one thread for the same reason, autograde/judge.py: Limits).
    for name in ("OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
        os.environ.setdefault(name, "1")


def pytest_configure(config):
    # Here, not only in a fixture: nbval starts a notebook's kernel when its first cell runs, and an nbval item
    # uses no fixture. The xdist workers, started after this hook, inherit the environment too.
    set_course_environment()


@pytest.fixture(autouse=True, scope="session")
def course_environment():
    """The course's environment (set_course_environment) for every test, whatever changed it meanwhile."""
    set_course_environment()


# ----------------------------------------------------------------------------------------------
# nbval (`make test` passes --nbval-lax and solutions/*/*.ipynb): one item per code cell, all sharing the
# notebook's kernel, so one notebook's cells run on one pytest-xdist worker, in order.


# 08 reads the model that 07 saves beside its notebook (../07_qa/qa_model): one worker runs both, 07 first, so
# that 08 never reads a half-written model.
NOTEBOOK_GROUPS = {"08_qa_pytorch": "07_qa"}


def notebook_group(stem: str) -> str:
    return f"{NOTEBOOK_GROUPS.get(stem, stem)}-notebook"


def is_nbval_cell(item) -> bool:
    return type(item).__name__ == "IPyNbCell" and type(item).__module__.startswith("nbval")


def count_runs(cell) -> None:
    """Record on the notebook's node each cell that ran in its kernel (EveryCellGraded checks them). Here, not in
    a report hook: this file's hooks that take an item only see items under tests/."""
    run = cell.runtest

    def runtest():
        try:
            run()
        except pytest.skip.Exception:
            raise
        except BaseException:
            cell.parent.__dict__.setdefault("course_cells_run", []).append(cell.name)
            raise
        cell.parent.__dict__.setdefault("course_cells_run", []).append(cell.name)

    cell.runtest = runtest


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(session, config, items):
    """nbval items: solution notebooks only (a student notebook fails by design), each notebook one xdist
    group, marked `notebooks` (not in `make test-quick`), followed by the grading of its kernel once every cell
    has run (tests/demo_grading.py), which replaces test_demo_cells.py's own run of every cell."""
    from demo_grading import EveryCellGraded

    kept, dropped, graded_here, files = [], [], set(), {}
    for item in items:
        if is_nbval_cell(item):
            path = item.path.resolve()
            if path.parent.parent != REPO / "solutions" or path.stem != path.parent.name:
                dropped.append(item)
                continue
            item.add_marker(pytest.mark.notebooks)
            item.add_marker(pytest.mark.xdist_group(notebook_group(path.stem)))
            count_runs(item)
            files.setdefault(item.parent, []).append(item)
        kept.append(item)
    for notebook_file, cells in files.items():
        stem = notebook_file.path.stem
        grading = EveryCellGraded.from_parent(notebook_file, name="grading after every cell ran", stem=stem,
                                              cells=len(cells))
        grading.add_marker(pytest.mark.notebooks)
        grading.add_marker(pytest.mark.grading)
        grading.add_marker(pytest.mark.xdist_group(notebook_group(stem)))
        kept.insert(kept.index(cells[-1]) + 1, grading)
        graded_here.add(stem)
    # test_demo_cells.py runs every cell of a notebook itself only where nbval does not
    for item in list(kept):
        if (item.path.name == "test_demo_cells.py" and hasattr(item, "callspec")
                and item.callspec.params.get("stem") in graded_here):
            kept.remove(item)
            dropped.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    # Slow tests first (a stable sort: the order within each kind is kept, nbval's cells too). pytest-xdist hands
    # out its groups largest first, then single tests in this order: a slow one left to the end would keep one
    # worker busy while the other has nothing left to do.
    items[:] = sorted(kept, key=lambda item: 0 if item.get_closest_marker("notebooks")
                      or item.get_closest_marker("grading") else 1)


def solution_path(stem: str) -> Path:
    return REPO / "solutions" / stem / f"{stem}.ipynb"


def release_path(stem: str) -> Path:
    return REPO / "notebooks" / stem / f"{stem}.ipynb"


def execute(notebook_path: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Run every cell (errors recorded, not raised) in the notebook's folder; return the result."""
    notebook = nbformat.read(notebook_path, as_version=4)
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(notebook_path.parent)}})
    client.execute()
    return notebook


def errors(notebook: nbformat.NotebookNode) -> list[tuple[int, str, str]]:
    """(cell number, exception name, message) for every error output."""
    found = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found.append((index + 1, output.get("ename"), output.get("evalue", "")[:200]))
    return found


@pytest.fixture(scope="session")
def chromium():
    """Headless Chromium (a playwright Browser), launched once per pytest worker (tests/browser.py).

    A machine without it fails the browser tests, saying how to install it: they are never skipped."""
    import browser

    if browser.chromium_path() is None:
        pytest.fail(browser.MISSING, pytrace=False)
    with browser.launched() as launched:
        yield launched
