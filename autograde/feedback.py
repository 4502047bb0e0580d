"""Students' feedback pages: the course's template for nbgrader's generate_feedback, and MathJax offline.

autograde/record.py runs nbgrader's generate_feedback on each graded notebook with these settings. The pages use
the course's template (autograde/templates/course_feedback, extending nbgrader's): test cells are named by their
exercise and long lines wrap. Equations are typeset by a copy of MathJax from the `jupyter-server-mathjax` package
in OUT/feedback/mathjax/, so the pages work offline. The grader's note on top keeps its `flagged:` items for the
instructor (`StudentNote`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

from autograde import registry
from autograde.grader_note import without_flags
from course_lib import notebooks

TEMPLATES = Path(__file__).parent / "templates"
# Relative to a page at OUT/feedback/<student>/<stem>.html. The package ships the HTML-CSS output only
# (no CommonHTML), hence this combined configuration; templates/course_feedback/mathjax.html.j2 uses the same.
MATHJAX_URL = "../mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
# Parts of the package's MathJax (12 MB) the pages never load: the SVG output, accessibility extensions and
# translations. What is left is about 2.8 MB; MathJax's LICENSE goes with it.
MATHJAX_UNUSED = ("SVG", "a11y", "localization")


def page_settings(config) -> None:
    """Set GenerateFeedback's HTMLExporter on the traitlets `config` (nbgrader/converters/generate_feedback.py sets
    template_name and extra_template_basedirs only when the config leaves them unset)."""
    import nbgrader

    nbgrader_templates = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
    config.HTMLExporter.template_name = "course_feedback"
    config.HTMLExporter.template_file = "feedback_page.html.j2"
    config.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), str(nbgrader_templates)]
    config.HTMLExporter.filters = {"exercise_name": "autograde.feedback.exercise_name"}
    # nbconvert's trait (nbconvert/exporters/html.py), for templates that pass it on; nbgrader's feedback header
    # calls mathjax() without it, which course_feedback/mathjax.html.j2 answers with this same URL.
    config.HTMLExporter.mathjax_url = MATHJAX_URL


class StudentNote(NbGraderPreprocessor):
    """generate_feedback's step for the grader's note on top (autograde/grader_note.py): without its
    `flagged:` items unless the course shows them (autograde/course.py, SHOW_FLAGS_TO_STUDENTS)."""

    show_flags = Bool(False, help="Show the grader's flagged: notes on students' feedback pages").tag(config=True)

    def preprocess(self, nb, resources):
        if not self.show_flags:
            without_flags(nb)
        return nb, resources


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
