"""The grader's note at the top of a graded notebook: autograde/course_grading.py writes it, and autograde/feedback.py
takes its `flagged:` items off a student's page."""

from __future__ import annotations

import nbformat

STATUS_CELL_ID = "course-grading-status"


def status_cell(result, how: str):
    """The note for a `judge.StudentResult`: who graded it, and the status items one per line."""
    items = [item.strip() for item in result.status.split(";") if item.strip()]
    lines = [f"**Graded by the course's grader** ({how}): {result.score:g} / {result.max_score:g} points."]
    lines += [f"- {item}" for item in items if item != "graded"]
    cell = nbformat.v4.new_markdown_cell("\n".join(lines))
    cell["id"] = STATUS_CELL_ID
    return cell


def without_flags(nb) -> None:
    """Remove the note's `flagged:` items, for a student's page."""
    for cell in nb.cells:
        if cell.get("id") == STATUS_CELL_ID:
            lines = cell.source.splitlines()
            cell.source = "\n".join(line for line in lines if not line.startswith("- flagged:"))
