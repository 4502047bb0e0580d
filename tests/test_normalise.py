"""normalise: a submission is graded as it runs top to bottom, in the release's structure, each grade id on one cell.

A split or pasted solution cell runs every piece in order (a helper above the function is not dropped), a pasted
template does not undo the answer; a test cell turned into markdown is restored and its markdown copy loses the
grade id, so that nbgrader's converter records the score and writes the feedback page (issue: 3/5 and 10/12 for
split cells, 5/5 in grades.csv but nothing in the gradebook for a markdown test cell).
"""

from __future__ import annotations

import copy
from collections import Counter

import nbformat
import numpy as np
import pytest
from submissions import STEM, answered

from autograde import registry
from autograde.judge import CellResult, StudentResult, release_notebook, with_results
from autograde.nbgrader_runner import make_course_root
from autograde.normalise import SKIP_KEY, nbgrader_meta, normalise
from autograde.record import course_config, record_batch

RATE = "def _rate(k, d):\n    return np.power(10000, (2 * (k // 2)) / np.float64(d))\n"
GET_ANGLES = "def get_angles(pos, k, d):\n    return pos / _rate(k, d)\n"


def cell_of(notebook, grade_id: str):
    return next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == grade_id)


def split(notebook, grade_id: str, upper: str, lower: str):
    """The solution cell split in two as JupyterLab does: both pieces keep its metadata (the upper one its id)."""
    cell = cell_of(notebook, grade_id)
    above = copy.deepcopy(cell)
    above.source, cell.source, cell["id"] = upper, lower, "split-lower"
    notebook.cells.insert(notebook.cells.index(cell), above)
    return notebook


def template(grade_id: str, stem: str = STEM):
    return copy.deepcopy(cell_of(release_notebook(stem), grade_id))


def run_order(notebook) -> list[str]:
    """The sources the grader runs, in order (judge.py: code cells, not test cells, not skipped)."""
    return [c.source for c in notebook.cells if c.cell_type == "code" and not nbgrader_meta(c).get("grade")
            and not c.metadata.get(SKIP_KEY, {}).get("skip")]


def assert_one_cell_per_grade_id(notebook, stem: str = STEM) -> None:
    """Each of the release's grade ids on exactly one cell, of the release's type; no other cell marked."""
    release = {nbgrader_meta(c)["grade_id"]: c.cell_type for c in release_notebook(stem).cells
               if nbgrader_meta(c).get("grade_id")}
    marked = [(nbgrader_meta(c).get("grade_id"), c.cell_type) for c in notebook.cells if "nbgrader" in c.metadata]
    assert Counter(gid for gid, _ in marked) == Counter(list(release)), marked
    assert all(release[gid] == kind for gid, kind in marked), marked
    nbformat.validate(notebook)


def test_a_split_solution_cell_runs_both_pieces_in_order():
    notebook = split(answered(), "get_angles", RATE, GET_ANGLES)
    repaired = normalise(notebook, release_notebook(STEM))
    namespace = {"np": np}
    for source in run_order(repaired.notebook):
        if source in (RATE, GET_ANGLES):
            exec(source, namespace)
    angles = namespace["get_angles"](np.arange(3)[:, None], np.arange(4)[None, :], 4)
    np.testing.assert_allclose(angles[2], [2, 2, 0.02, 0.02])
    assert repaired.repairs == ["2 copies of solution cell get_angles: all run in order"]
    assert_one_cell_per_grade_id(repaired.notebook)
    cells = repaired.notebook.cells
    solution = cell_of(repaired.notebook, "get_angles")
    assert solution.source == GET_ANGLES and solution.id == template("get_angles").id  # the source's id, not a copy's
    assert cells[cells.index(solution) + 1] is cell_of(repaired.notebook, "test_get_angles")


def test_a_split_squad_em_f1_keeps_the_helper_above_it():
    """07's case (10/12 instead of 12/12): `normalize` split off into a cell of its own, above squad_em_f1."""
    stem = "07_qa"
    notebook = answered(stem)
    answer = cell_of(notebook, "squad_em_f1").source
    at = answer.index("def squad_em_f1")
    split(notebook, "squad_em_f1", answer[:at], answer[at:])
    repaired = normalise(notebook, release_notebook(stem))
    namespace = {}
    for source in run_order(repaired.notebook):
        if source in (answer[:at], answer[at:]):
            exec(source, namespace)
    assert namespace["squad_em_f1"]("The cat!", ["a cat"]) == (1.0, 1.0)
    assert "2 copies of solution cell squad_em_f1: all run in order" in repaired.repairs
    assert_one_cell_per_grade_id(repaired.notebook, stem)
    assert cell_of(repaired.notebook, "squad_em_f1").source == answer[at:]


@pytest.mark.parametrize("where", ["above", "below"])
def test_a_pasted_template_is_left_out_above_or_below_the_answer(where):
    notebook = answered()
    answer = cell_of(notebook, "get_angles")
    notebook.cells.insert(notebook.cells.index(answer) + (where == "below"), template("get_angles"))
    repaired = normalise(notebook, release_notebook(STEM))
    assert repaired.repairs == ["2 copies of solution cell get_angles: the untouched template left out"]
    assert_one_cell_per_grade_id(repaired.notebook)
    assert cell_of(repaired.notebook, "get_angles").source == answer.source
    assert not any("NotImplementedError" in source for source in run_order(repaired.notebook)[:3])
    assert sum("def get_angles" in source for source in run_order(repaired.notebook)) == 1


def test_a_template_beside_a_split_answer():
    notebook = split(answered(), "get_angles", RATE, GET_ANGLES)
    notebook.cells.insert(notebook.cells.index(cell_of(notebook, "get_angles")), template("get_angles"))
    repaired = normalise(notebook, release_notebook(STEM))
    assert repaired.repairs == ["3 copies of solution cell get_angles: the untouched template left out, the others "
                                "run in order"]
    assert_one_cell_per_grade_id(repaired.notebook)
    order = run_order(repaired.notebook)
    assert order.index(RATE) < order.index(GET_ANGLES) and not any("NotImplementedError" in s for s in order[:4])


def markdown(cell):
    """The cell as JupyterLab leaves it when its type is changed to markdown: metadata and id kept."""
    return nbformat.v4.new_markdown_cell(cell.source, metadata=copy.deepcopy(cell.metadata), id=cell.id)


def with_markdown_test_cell():
    notebook = answered()
    test = cell_of(notebook, "test_get_angles")
    notebook.cells[notebook.cells.index(test)] = markdown(test)
    return notebook


def test_a_test_cell_turned_into_markdown_is_restored_and_the_markdown_unmarked():
    notebook = with_markdown_test_cell()
    repaired = normalise(notebook, release_notebook(STEM))
    assert repaired.repairs == ["test cell test_get_angles turned into markdown: restored as code"]
    assert_one_cell_per_grade_id(repaired.notebook)
    kept = [c for c in repaired.notebook.cells if c.cell_type == "markdown" and "check_get_angles" in c.source]
    assert len(kept) == 1 and "nbgrader" not in kept[0].metadata
    assert cell_of(repaired.notebook, "test_get_angles").id == template("test_get_angles").id


def test_a_solution_cell_turned_into_markdown_is_unanswered():
    notebook = answered()
    solution = cell_of(notebook, "get_angles")
    notebook.cells[notebook.cells.index(solution)] = markdown(solution)
    repaired = normalise(notebook, release_notebook(STEM))
    assert repaired.repairs == ["solution cell get_angles turned into markdown: graded as unanswered"]
    assert not any(nbgrader_meta(c).get("grade_id") == "get_angles" for c in repaired.notebook.cells)
    # Its test cell goes at the end, as for a deleted solution cell.
    assert [nbgrader_meta(c)["grade_id"] for c in repaired.notebook.cells if "nbgrader" in c.metadata] == \
        ["positional_encoding", "test_positional_encoding", "test_get_angles"]


def test_stray_nbgrader_metadata_is_removed_and_said():
    """A markdown copy of a test cell beside the real one, a raw cell and a code cell with grade ids of their own."""
    notebook = answered()
    test = cell_of(notebook, "test_get_angles")
    notebook.cells.insert(notebook.cells.index(test) + 1, markdown(test))
    notes = nbformat.v4.new_raw_cell("notes", metadata={"nbgrader": {"grade_id": "my_notes", "solution": True}})
    helper = nbformat.v4.new_code_cell("SCALE = 10000", metadata={"nbgrader": {"grade_id": "cell-x", "grade": True,
                                                                               "points": 9}})
    notebook.cells[2:2] = [notes, helper]
    repaired = normalise(notebook, release_notebook(STEM))
    assert repaired.repairs == ["a raw cell with grade id my_notes: nbgrader metadata removed",
                                "a code cell with grade id cell-x: nbgrader metadata removed",
                                "a markdown cell with grade id test_get_angles: nbgrader metadata removed"]
    assert_one_cell_per_grade_id(repaired.notebook)
    assert "SCALE = 10000" in run_order(repaired.notebook)


@pytest.mark.thorough
def test_a_markdown_test_cell_reaches_the_gradebook_and_the_feedback_page(tmp_path):
    """Through nbgrader's converter, as `make grade` records a batch: with the markdown copy still marked, nbgrader
    met two cells with one grade id and recorded nothing. The verdicts are those a correct answer gets."""
    from nbgrader.api import Gradebook

    notebook = with_markdown_test_cell()
    folder = tmp_path / "submissions" / "ann"
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{STEM}.ipynb")
    repaired = normalise(notebook, release_notebook(STEM))
    cells = [CellResult(row.test_id, float(row.points), float(row.points), f"✓ {row.name}")
             for row in registry.exercises(STEM)]
    graded = with_results(repaired.notebook, {c.grade_id: c for c in cells})
    result = StudentResult("ann", STEM, 5.0, 5.0, "; ".join(["graded", *repaired.repairs]), cells,
                           nbformat.writes(graded))
    root = make_course_root(tmp_path / "course", [STEM])
    out = tmp_path / "out"
    assert record_batch(STEM, [result], {"ann": folder}, out, course_root=root, log=print) == []
    with Gradebook(course_config(root).CourseDirectory.db_url) as book:
        assert book.find_submission(STEM, "ann").score == 5
    assert (out / "feedback" / "ann" / f"{STEM}.html").is_file()
