"""Feedback pages and nbgrader's gradebook from graded notebooks, without running anything again.

Each graded notebook already carries its results as the test cells' outputs (a ✓ line, or an error output
naming the mistake, with no traceback and no hidden test). nbgrader's `autograde` is run with its
execution step removed, so it only records those outcomes in its gradebook; `generate_feedback` then
renders the pages. Both run once for the whole batch.

The pages use the course's template (autograde/templates/course_feedback, extending nbgrader's): test cells
are named by their exercise and long lines wrap. Equations are typeset by a copy of MathJax from the
`jupyter-server-mathjax` package in OUT/feedback/mathjax/, so the pages work offline.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat

from autograde import registry
from autograde.judge import StudentResult
from autograde.nbgrader_runner import make_course_root, run_nbgrader
from course_lib import notebooks

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

TEMPLATES = Path(__file__).parent / "templates"
# Relative to a page at OUT/feedback/<student>/<stem>.html. The package ships the HTML-CSS output only
# (no CommonHTML), hence this combined configuration; templates/course_feedback/mathjax.html.j2 uses the same.
MATHJAX_URL = "../mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
# Parts of the package's MathJax (12 MB) the pages never load: the SVG output, accessibility extensions and
# translations. What is left is about 2.8 MB; MathJax's LICENSE goes with it.
MATHJAX_UNUSED = ("SVG", "a11y", "localization")


def page_config() -> str:
    """nbgrader config for GenerateFeedback's HTMLExporter (nbgrader/converters/generate_feedback.py sets
    template_name and extra_template_basedirs only when the config leaves them unset)."""
    import nbgrader

    nbgrader_templates = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
    return f"""
c.HTMLExporter.template_name = "course_feedback"
c.HTMLExporter.template_file = "feedback_page.html.j2"
c.HTMLExporter.extra_template_basedirs = [{str(TEMPLATES)!r}, {str(nbgrader_templates)!r}]
c.HTMLExporter.filters = {{"exercise_name": "autograde.feedback.exercise_name"}}
# nbconvert's trait (nbconvert/exporters/html.py), for templates that pass it on; nbgrader's feedback header
# calls mathjax() without it, which course_feedback/mathjax.html.j2 answers with this same URL.
c.HTMLExporter.mathjax_url = {MATHJAX_URL!r}
"""


def exercise_name(grade_id: str) -> str:
    """The exercise a test cell grades, for the page's score summary: the registry's name (the solution cell's
    grade id), named by the same rule as `make submit`'s summary (course_lib.notebooks.exercise_name)."""
    return notebooks.exercise_name(grade_id, {row.test_id: row.name for row in registry.EXERCISES})


def copy_mathjax(feedback: Path) -> Path:
    """Copy MathJax next to the students' folders (once per batch); return the copied MathJax.js."""
    from jupyter_server_mathjax.app import STATIC_ASSETS_PATH

    target = feedback / "mathjax"
    if not (target / "MathJax.js").is_file():
        shutil.copytree(STATIC_ASSETS_PATH, target, dirs_exist_ok=True,
                        ignore=lambda folder, names: [n for n in names if n in MATHJAX_UNUSED])
    return target / "MathJax.js"


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
            config.write(page_config())
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
        copy_mathjax(out / "feedback")
        for result in graded:
            page = root / "feedback" / result.student / stem / f"{stem}.html"
            if page.is_file():
                (out / "feedback" / result.student).mkdir(parents=True, exist_ok=True)
                shutil.copy2(page, out / "feedback" / result.student / page.name)
            elif not problems:
                problems.append(f"no feedback page for {result.student}")
    return problems
