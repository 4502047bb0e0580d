"""Repair a submission against its source notebook before grading, and say what was repaired.

Students split, duplicate, paste, edit, retype and delete cells by accident. Grading runs what the notebook does
top to bottom, in the source's structure:
- a graded solution cell split in two or pasted keeps its grade id on every copy: all copies run in order, the
  last attempted one as the solution cell (the source's metadata: grade id, points, lock; the test cells follow
  it), the others as the student's own cells; a copy left as the untouched template is left out when another
  copy is attempted (run below an answer, it would undo it);
- each test cell is the source's, once, right after its solution cell (edited, deleted, duplicated, renamed or
  retyped test cells are restored);
- each grade id is on one cell only, of the source's type: any other cell that carries nbgrader metadata (a
  markdown copy of a code cell, a pasted graded cell, a stray id) loses it and stays as the student's;
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
    code = [c for c in source.cells if c.get("cell_type") == "code"]
    solutions = {nbgrader_meta(c)["grade_id"]: c for c in code
                 if nbgrader_meta(c).get("solution") and nbgrader_meta(c).get("grade_id")}
    tests = {nbgrader_meta(c)["grade_id"]: c for c in code
             if nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution")}
    # Another cell the source marks (read-only, a written answer) keeps its grade id on the first cell of its type.
    marked = {nbgrader_meta(c)["grade_id"]: c for c in source.cells
              if nbgrader_meta(c).get("grade_id") and nbgrader_meta(c)["grade_id"] not in {*solutions, *tests}}
    by_id = {c.get("id"): c for c in source.cells if c.get("id")}
    test_after = _test_after(source)
    stubs = {gid: c.get("source", "") for gid, c in solutions.items()}
    test_sources = {_squash(c.source): gid for gid, c in tests.items()}
    demo_ids = {c.get("id") for c in source.cells if is_demo(c)}
    demo_sources = {_squash(c.source) for c in source.cells if is_demo(c)}

    # 1. Classify every submitted cell.
    kinds: list[tuple[str, str | None, object]] = []  # (kind, grade id, cell)
    retyped: dict[str, str] = {}  # grade id of a graded code cell -> the type a copy of it was changed to
    for cell in submission.cells:
        meta = nbgrader_meta(cell)
        grade_id, cell_id = _grade_id(cell), cell.get("id")
        source_cell = by_id.get(cell_id)
        if cell.get("cell_type") != "code":
            if grade_id in solutions or grade_id in tests:
                retyped.setdefault(grade_id, str(cell.get("cell_type"))[:20])
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

    # 2. Per solution, the cell that carries its grade id: the last attempted copy, else the last copy. The other
    # copies run in their place, except those left as the template (below an answer, they would undo it).
    chosen: dict[str, object] = {}
    left_out: set[int] = set()  # id() of the template copies not run
    for grade_id in solutions:
        copies = [cell for kind, gid, cell in kinds if kind == "solution" and gid == grade_id]
        if not copies:
            how = f"turned into {retyped[grade_id]}" if grade_id in retyped else "missing"
            repairs.append(f"solution cell {grade_id} {how}: graded as unanswered")
            continue
        attempted = [c for c in copies if not _stub(c, stubs[grade_id])]
        chosen[grade_id] = (attempted or copies)[-1]
        templates = [c for c in copies if c is not chosen[grade_id] and _stub(c, stubs[grade_id])]
        left_out |= {id(c) for c in templates}
        if len(copies) > 1:
            repairs.append(f"{len(copies)} copies of solution cell {grade_id}: "
                           f"{_copies_note(len(copies) - len(templates), len(templates))}")

    # 3. Rebuild: the source's test cells after their solution cells; metadata from the source.
    cells, official, placed_tests = [], set(), set()  # official: id() of the cells with the source's grade ids
    seen_tests: dict[str, int] = {}
    for kind, gid, cell in kinds:
        if kind == "test":
            seen_tests[gid] = seen_tests.get(gid, 0) + 1
            if seen_tests[gid] == 1 and (_squash(cell.source) != _squash(tests[gid].source)
                                         or not _same_meta(cell, tests[gid])):
                edited = _squash(cell.source) != _squash(tests[gid].source)
                repairs.append(f"test cell {gid} {'edited' if edited else 'metadata changed'}: restored")
            continue  # placed after its solution cell below
        if kind == "solution" and chosen.get(gid) is cell:
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
            official.add(id(fixed))
            for test_id in test_after.get(gid, []):
                cells.append(_source_copy(tests[test_id]))
                official.add(id(cells[-1]))
                placed_tests.add(test_id)
            continue
        if id(cell) in left_out:
            continue
        fixed = copy.deepcopy(cell)
        if kind == "solution":  # another copy of the answer: the student's own cell, explained by the note above
            fixed.metadata.pop("nbgrader", None)
        if kind == "demo":
            fixed.metadata[SKIP_KEY] = {"skip": True}
        if fixed.get("cell_type") == "code":
            fixed["outputs"], fixed["execution_count"] = [], None
        cells.append(fixed)
    for gid, count in seen_tests.items():
        if count > 1:
            repairs.append(f"{count} copies of test cell {gid}: kept one")
    for gid in tests:
        if gid not in placed_tests:  # its solution cell is gone too: the test cell goes at the end
            cells.append(_source_copy(tests[gid]))
            official.add(id(cells[-1]))
        if gid not in seen_tests:
            how = f"turned into {retyped[gid]}: restored as code" if gid in retyped else "deleted: restored"
            repairs.append(f"test cell {gid} {how}")
    explained = {gid for gid in retyped if gid not in seen_tests and gid not in chosen}
    repairs += _unmark(cells, official, marked, explained)
    kernel = submission.get("metadata", {}).get("kernelspec", {}).get("name")
    if kernel and kernel != source.metadata.get("kernelspec", {}).get("name"):
        repairs.append(f"kernel {str(kernel)[:40]!r} replaced by the course's")
    notebook = copy.deepcopy(source)
    notebook.cells = [nbformat.from_dict(c) for c in cells]
    for cell in notebook.cells:
        if cell.get("cell_type") == "code" and "outputs" not in cell:
            cell["outputs"], cell["execution_count"] = [], None
    _unique_ids(notebook, {index for index, cell in enumerate(cells) if id(cell) in official})
    return Normalised(notebook, repairs)


def _copies_note(run: int, left_out: int) -> str:
    if not left_out:
        return "all run in order"
    template = "the untouched template" + (f"s ({left_out})" if left_out > 1 else "")
    return f"{template} left out" + (", the others run in order" if run > 1 else "")


def _unmark(cells: list, official: set[int], marked: dict, explained: set[str]) -> list[str]:
    """Leave each grade id on one cell: the source's. Another cell keeps nbgrader metadata only when the source marks
    a cell of its type with that id (the source's metadata then); the rest lose it, said once per id unless
    `explained` (a test or solution cell retyped, whose note says so already)."""
    taken = {nbgrader_meta(c).get("grade_id") for c in cells if id(c) in official}
    stray: dict[tuple[str, str], int] = {}
    for cell in cells:
        if id(cell) in official or "nbgrader" not in cell.get("metadata", {}):
            continue
        gid = _grade_id(cell)
        source_cell = marked.get(gid)
        if source_cell is not None and gid not in taken and source_cell.get("cell_type") == cell.get("cell_type"):
            cell.metadata["nbgrader"] = copy.deepcopy(source_cell.metadata["nbgrader"])
            taken.add(gid)
            continue
        del cell.metadata["nbgrader"]
        if gid not in explained:
            key = (str(cell.get("cell_type"))[:20], f"grade id {gid[:40]}" if gid else "no grade id")
            stray[key] = stray.get(key, 0) + 1
    return [f"{f'{count} {kind} cells' if count > 1 else f'a {kind} cell'} with {label}: nbgrader metadata removed"
            for (kind, label), count in stray.items()]


def _grade_id(cell) -> str | None:
    grade_id = nbgrader_meta(cell).get("grade_id")
    return grade_id if isinstance(grade_id, str) and grade_id else None


def _test_after(source) -> dict[str, list[str]]:
    """Solution grade id -> the test cells that follow it in the source (before the next solution)."""
    after, current = {}, None
    for cell in source.cells:
        meta = nbgrader_meta(cell)
        if cell.get("cell_type") != "code":
            continue
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


def _unique_ids(notebook, first: set[int]) -> None:
    """Pasted cells share ids; nbformat requires them unique. The cells at the positions `first` (the source's
    graded cells) keep theirs."""
    seen = {notebook.cells[index].get("id") for index in first}
    for index, cell in enumerate(notebook.cells):
        if index in first:
            continue
        cell_id = cell.get("id") or f"cell-{index}"
        while cell_id in seen:
            cell_id = f"{cell_id[:50]}-{index}"
        cell["id"] = cell_id
        seen.add(cell_id)
