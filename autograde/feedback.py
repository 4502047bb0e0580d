"""Feedback pages and nbgrader's gradebook from graded notebooks, without running anything again.

Each graded notebook already carries its results as the test cells' outputs (a ✓ line, or an error output
naming the mistake, with no traceback and no hidden test). nbgrader's `autograde` is run with its
execution step removed, so it only records those outcomes in its gradebook; `generate_feedback` then
renders the pages. Both run once for the whole batch.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat

from autograde.judge import StudentResult
from autograde.nbgrader_runner import make_course_root, run_nbgrader

# nbgrader's defaults minus the steps that clear outputs and execute the notebook.
NO_EXECUTION = """
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.DeduplicateIds", "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells", "nbgrader.preprocessors.CheckCellMetadata"]
c.Autograde.autograde_preprocessors = [
    "nbconvert.preprocessors.ClearMetadataPreprocessor", "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades", "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata"]
"""


def write_feedback(stem: str, results: list[StudentResult], out: Path) -> list[str]:
    """Write OUT/feedback/<student>/<stem>.html for every graded notebook; return the problems met."""
    graded = [r for r in results if r.notebook]
    if not graded:
        return []
    problems = []
    with tempfile.TemporaryDirectory(prefix=f"feedback-{stem}-") as tmp:
        root = make_course_root(Path(tmp), [stem])
        with open(root / "nbgrader_config.py", "a") as config:
            config.write(NO_EXECUTION)
        run_nbgrader(root, "generate_assignment", stem, "--force", "--log-level=WARN", timeout=300)
        for result in graded:
            folder = root / "submitted" / result.student / stem
            folder.mkdir(parents=True)
            nbformat.write(nbformat.reads(result.notebook, as_version=4), folder / f"{stem}.ipynb")
        try:
            run_nbgrader(root, "autograde", stem, "--force", "--log-level=WARN", timeout=600)
            run_nbgrader(root, "generate_feedback", stem, "--force", "--log-level=WARN", timeout=600)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            problems.append(f"no feedback pages: {str(error).splitlines()[0]}")
        for result in graded:
            page = root / "feedback" / result.student / stem / f"{stem}.html"
            if page.is_file():
                (out / "feedback" / result.student).mkdir(parents=True, exist_ok=True)
                shutil.copy2(page, out / "feedback" / result.student / page.name)
            elif not problems:
                problems.append(f"no feedback page for {result.student}")
    return problems
