"""nbgrader's settings for the course, applied to any course root (the repository or a throw-away one).

The configuration files (autograde/nbgrader_config.py, jupyter/instructor/nbgrader_config.py, the one
autograde/nbgrader_runner.py writes) and `make grade`'s recording step call `apply`. It sits above what it names:
the grader's parts go by their dotted names, as nbgrader loads them, and the pre-convert hook is the gradebook's.
"""

from __future__ import annotations

from pathlib import Path

from autograde.course import IGNORED_STDERR_PATTERN, SHOW_FLAGS_TO_STUDENTS, apply_layout
from autograde.gradebook import AssignmentRecorder


def apply(c, root: Path, *, cell_timeout: int = 300) -> None:
    """Set the course's nbgrader options on the traitlets config `c`, rooted at `root`."""
    apply_layout(c, root)
    # One grader whichever button is pressed: nbgrader's autograde (the command, the formgrader's button, and the
    # recording step of `make grade`) gets its verdicts from the course's sandboxed grader, never from running
    # the test cells in the student's kernel. nbgrader's default steps otherwise, with Execute replaced.
    # A submitted file that is not a notebook is read as a stand-in saying so, graded as `make grade` grades it,
    # instead of stopping nbgrader with a traceback and removing the earlier result (autograde/unreadable.py).
    c.Autograde.exporter_class = "autograde.unreadable.CourseExporter"
    # `nbgrader autograde` before any `generate_assignment`: the assignment is recorded first, as `make grade` does.
    c.Autograde.pre_convert_hook = AssignmentRecorder(c)
    c.Autograde.autograde_preprocessors = [
        "autograde.course_grading.CourseGrading", "nbconvert.preprocessors.ClearMetadataPreprocessor",
        "nbgrader.preprocessors.LimitOutput", "nbgrader.preprocessors.SaveAutoGrades",
        "nbgrader.preprocessors.AssignLatePenalties", "nbgrader.preprocessors.CheckCellMetadata"]
    c.Execute.timeout = cell_timeout
    c.Execute.interrupt_on_timeout = True
    c.IgnorePattern.enabled = True
    c.IgnorePattern.pattern = IGNORED_STDERR_PATTERN
    # A learner who deletes a test cell gets it back, graded, instead of silently losing it.
    c.OverwriteCells.add_missing_cells = True
    c.Autograde.create_student = True
    # Feedback pages: the grader's note without its flags unless SHOW_FLAGS_TO_STUDENTS (autograde/feedback.py).
    c.GenerateFeedback.preprocessors = ["nbgrader.preprocessors.GetGrades",
                                        "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
                                        "autograde.feedback.StudentNote"]
    c.StudentNote.show_flags = SHOW_FLAGS_TO_STUDENTS
