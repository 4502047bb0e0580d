"""Submissions built from the solution notebooks for the grading tests.

The deliberately wrong versions live in the exercise registry (`autograde.registry`, `Exercise.wrong`):
each makes exactly one graded function wrong, and only its test cell should lose its points. The
wrong versions of one assignment are applied together to one submission: each must cost exactly its
own cell, which also proves that composites graded with reference parts do not pay for their parts'
mistakes.
"""

from __future__ import annotations

import nbformat

from autograde.registry import Wrong


def mutate(notebook: nbformat.NotebookNode, mutation: Wrong) -> nbformat.NotebookNode:
    hits = [cell for cell in notebook.cells if cell.cell_type == "code" and mutation.old in cell.source]
    count = sum(cell.source.count(mutation.old) for cell in hits)
    assert count == 1, f"mutation '{mutation.what}': expected its text once in the notebook, found {count}"
    hits[0].source = hits[0].source.replace(mutation.old, mutation.new)
    return notebook


def insert_after_setup(notebook: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    """Insert a code cell right after the first code cell (the set-up cell)."""
    first_code = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    notebook.cells.insert(first_code + 1, nbformat.v4.new_code_cell(source))
    return notebook


def delete_cell(notebook: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    before = len(notebook.cells)
    notebook.cells = [cell for cell in notebook.cells
                      if cell.metadata.get("nbgrader", {}).get("grade_id") != grade_id]
    assert len(notebook.cells) == before - 1, f"no cell with grade id {grade_id}"
    return notebook


def prepend_to_solutions(notebook: nbformat.NotebookNode, code: str) -> nbformat.NotebookNode:
    """Insert `code` at the start of every solution region, indented like the marker."""
    changed = 0
    for cell in notebook.cells:
        lines = cell.source.split("\n")
        for index, line in enumerate(lines):
            if line.strip() == "### BEGIN SOLUTION":
                indent = line[: len(line) - len(line.lstrip())]
                lines[index + 1:index + 1] = [indent + extra for extra in code.split("\n")]
                changed += 1
                break
        cell.source = "\n".join(lines)
    assert changed, "no solution region found"
    return notebook
