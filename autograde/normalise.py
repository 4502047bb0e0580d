"""Repair a submission against its source notebook before grading, and say what was repaired.

Students duplicate, paste, edit and delete cells by accident. Grading goes by the source's structure:
- each graded solution cell is taken once, with the source's metadata (grade id, points, lock); among
  copies, the last attempted one counts (running the notebook top to bottom, it is the one that wins);
- each test cell is the source's, once, right after its solution cell (edited, deleted, duplicated or
  renamed test cells are restored);
- cells the source tags `demo` (training runs, plots, timing) are kept for the feedback but not run;
- the student's own cells are kept and run, in their place.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field

import nbformat

# One definition for the grader and `make submit` (which ships without autograde/): see course_lib/notebooks.py.
from course_lib.notebooks import DEMO_TAG, is_demo, nbgrader_meta  # noqa: F401 (DEMO_TAG: tests import it here)

SKIP_KEY = "course_grading"  # cell metadata: {"skip": true} for cells that are not run when grading


@dataclass
class Normalised:
    notebook: nbformat.NotebookNode
    repairs: list[str] = field(default_factory=list)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def _solution_body(text: str) -> str:
    """A solution cell's code without the solution markers (how the source compares with a submission)."""
    return _squash(re.sub(r"^\s*### (BEGIN|END) SOLUTION\s*$", "", text or "", flags=re.MULTILINE))


def defined_names(source: str) -> set[str]:
    """Top-level functions and classes a cell defines (empty if it does not parse)."""
    try:
        tree = ast.parse(source or "")
    except SyntaxError:
        match = re.findall(r"^(?:def|class)\s+([A-Za-z_]\w*)", source or "", flags=re.MULTILINE)
        return set(match)
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def _stub(source_cell, release_stub: str) -> bool:
    return _squash(source_cell.get("source", "")) == _squash(release_stub)


GRADING_KEYS = ("grade", "grade_id", "locked", "points", "solution")


def _same_meta(a, b) -> bool:
    return all(nbgrader_meta(a).get(key) == nbgrader_meta(b).get(key) for key in GRADING_KEYS)


def normalise(submission: nbformat.NotebookNode, source: nbformat.NotebookNode) -> Normalised:
    """The submission in the structure of `source`, the notebook as released to students."""
    repairs: list[str] = []
    solutions = {nbgrader_meta(c)["grade_id"]: c for c in source.cells
                 if nbgrader_meta(c).get("solution") and nbgrader_meta(c).get("grade_id")}
    tests = {nbgrader_meta(c)["grade_id"]: c for c in source.cells
             if nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution")}
    by_id = {c.get("id"): c for c in source.cells if c.get("id")}
    test_after = _test_after(source)
    stubs = {gid: c.get("source", "") for gid, c in solutions.items()}
    test_sources = {_squash(c.source): gid for gid, c in tests.items()}
    demo_ids = {c.get("id") for c in source.cells if is_demo(c)}
    demo_sources = {_squash(c.source) for c in source.cells if is_demo(c)}

    # 1. Classify every submitted cell.
    kinds: list[tuple[str, str | None, object]] = []  # (kind, grade id, cell)
    for cell in submission.cells:
        meta = nbgrader_meta(cell)
        grade_id, cell_id = meta.get("grade_id"), cell.get("id")
        source_cell = by_id.get(cell_id)
        if cell.get("cell_type") != "code":
            kinds.append(("text", None, cell))
        elif grade_id in tests or (source_cell is not None and nbgrader_meta(source_cell).get("grade_id") in tests
                                   and not meta.get("solution")) or _squash(cell.source) in test_sources:
            gid = grade_id if grade_id in tests else (
                nbgrader_meta(source_cell).get("grade_id") if source_cell is not None
                and nbgrader_meta(source_cell).get("grade_id") in tests else test_sources.get(_squash(cell.source)))
            kinds.append(("test", gid, cell))
        elif grade_id in solutions or (source_cell is not None and nbgrader_meta(source_cell).get("grade_id")
                                       in solutions):
            gid = grade_id if grade_id in solutions else nbgrader_meta(source_cell)["grade_id"]
            kinds.append(("solution", gid, cell))
        elif cell_id in demo_ids or _squash(cell.source) in demo_sources:
            kinds.append(("demo", None, cell))
        else:
            named = defined_names(cell.source) & set(solutions)
            if meta.get("solution") and len(named) == 1:
                kinds.append(("solution", named.pop(), cell))
            else:
                kinds.append(("own", None, cell))

    # 2. Choose one cell per solution: the last attempted copy, else the last copy.
    chosen: dict[str, object] = {}
    for grade_id in solutions:
        copies = [cell for kind, gid, cell in kinds if kind == "solution" and gid == grade_id]
        if not copies:
            repairs.append(f"solution cell {grade_id} missing: graded as unanswered")
            continue
        attempted = [c for c in copies if not (grade_id in stubs and _stub(c, stubs[grade_id]))]
        chosen[grade_id] = (attempted or copies)[-1]
        if len(copies) > 1:
            repairs.append(f"{len(copies)} copies of solution cell {grade_id}: graded the last attempted one")

    # 3. Rebuild: the source's test cells after their solution cells; metadata from the source.
    cells, placed_tests = [], set()
    seen_tests: dict[str, int] = {}
    for kind, gid, cell in kinds:
        if kind == "test":
            seen_tests[gid] = seen_tests.get(gid, 0) + 1
            if seen_tests[gid] == 1 and (_squash(cell.source) != _squash(tests[gid].source)
                                         or not _same_meta(cell, tests[gid])):
                edited = _squash(cell.source) != _squash(tests[gid].source)
                repairs.append(f"test cell {gid} {'edited' if edited else 'metadata changed'}: restored")
            continue  # placed after its solution cell below
        if kind == "solution":
            if chosen.get(gid) is not cell:
                continue
            fixed = copy.deepcopy(cell)
            source_cell = solutions[gid]
            if nbgrader_meta(cell).get("grade_id") != gid:
                repairs.append(f"solution cell {gid}: grade id restored")
            elif not _same_meta(cell, source_cell):
                repairs.append(f"solution cell {gid}: metadata restored")
            fixed["id"] = source_cell.get("id", fixed.get("id"))
            fixed.metadata = copy.deepcopy(source_cell.metadata)
            fixed["outputs"], fixed["execution_count"] = [], None
            cells.append(fixed)
            for test_id in test_after.get(gid, []):
                cells.append(_source_copy(tests[test_id]))
                placed_tests.add(test_id)
            continue
        fixed = copy.deepcopy(cell)
        if kind == "demo":
            fixed.metadata[SKIP_KEY] = {"skip": True}
        if fixed.get("cell_type") == "code":
            fixed["outputs"], fixed["execution_count"] = [], None
            if nbgrader_meta(fixed):
                del fixed.metadata["nbgrader"]  # a stray nbgrader cell (pasted, renamed) becomes the student's own
        cells.append(fixed)
    for gid, count in seen_tests.items():
        if count > 1:
            repairs.append(f"{count} copies of test cell {gid}: kept one")
    for gid in tests:
        if gid not in placed_tests:  # its solution cell is gone too: the test cell goes at the end
            cells.append(_source_copy(tests[gid]))
        if gid not in seen_tests:
            repairs.append(f"test cell {gid} deleted: restored")
    kernel = submission.get("metadata", {}).get("kernelspec", {}).get("name")
    if kernel and kernel != source.metadata.get("kernelspec", {}).get("name"):
        repairs.append(f"kernel {str(kernel)[:40]!r} replaced by the course's")
    notebook = copy.deepcopy(source)
    notebook.cells = [nbformat.from_dict(c) for c in cells]
    for cell in notebook.cells:
        if cell.get("cell_type") == "code" and "outputs" not in cell:
            cell["outputs"], cell["execution_count"] = [], None
    _unique_ids(notebook)
    return Normalised(notebook, repairs)


def _test_after(source) -> dict[str, list[str]]:
    """Solution grade id -> the test cells that follow it in the source (before the next solution)."""
    after, current = {}, None
    for cell in source.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution"):
            current = meta.get("grade_id")
            after.setdefault(current, [])
        elif meta.get("grade") and current:
            after[current].append(meta["grade_id"])
    return after


def _source_copy(cell):
    fixed = copy.deepcopy(cell)
    fixed["outputs"], fixed["execution_count"] = [], None
    return fixed


def _unique_ids(notebook) -> None:
    """Pasted cells share ids; nbformat requires them unique."""
    seen = set()
    for index, cell in enumerate(notebook.cells):
        cell_id = cell.get("id") or f"cell-{index}"
        while cell_id in seen:
            cell_id = f"{cell_id[:50]}-{index}"
        cell["id"] = cell_id
        seen.add(cell_id)
