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


@pytest.fixture(autouse=True, scope="session")
def course_environment():
    """Fast mode for every notebook the tests run, the course's Python as the kernel, and no network for
    any process they start (tests/offline/sitecustomize.py)."""
    os.environ["COURSE_FAST"] = "1"
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(OFFLINE_GUARD), os.environ.get("PYTHONPATH")]))
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("MPLBACKEND", "Agg")


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
