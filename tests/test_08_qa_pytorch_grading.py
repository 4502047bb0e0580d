"""Assignment 08 is graded on Keras's PyTorch backend: the released notebook declares KERAS_BACKEND=torch in its
metadata, the grader starts the student's kernel with it (whatever the submission's own cells do), and a notebook
may add variables to the sandbox's environment but never replace the sandbox's own.

The answered, blank and one-wrong submissions of 08 are graded by tests/test_grading.py and every variant by
tests/test_variants.py, like every assignment's; here, a submission that lost the notebook's backend line and imports
Keras first still gets full marks."""

from __future__ import annotations

import ast
import csv

import nbformat
import pytest

from autograde.grade import grade_batch
from autograde.judge import Limits
from autograde.normalise import nbgrader_meta
from autograde.sandbox import declared_env, kernel_env

from conftest import ASSIGNMENTS, release_path, solution_path

STEM = "08_qa_pytorch"
BACKEND_LINE = 'os.environ["KERAS_BACKEND"] = "torch"'


def test_the_release_declares_the_torch_backend():
    assert declared_env(nbformat.read(release_path(STEM), as_version=4)) == {"KERAS_BACKEND": "torch"}
    others = {stem: declared_env(nbformat.read(release_path(stem), as_version=4)) for stem in ASSIGNMENTS
              if stem != STEM and release_path(stem).is_file()}
    assert not any(others.values()), f"only 08 runs Keras on another backend: {others}"


def test_the_first_code_cell_sets_the_declared_backend_before_any_import_of_keras():
    """Outside grading (JupyterLab, `make submit`) the notebook's own first cell chooses the backend: it must agree
    with what the grader declares, and come before anything that imports Keras."""
    notebook = nbformat.read(solution_path(STEM), as_version=4)
    first = next(cell for cell in notebook.cells if cell.cell_type == "code")
    tree = ast.parse(first.source)
    assignments = [node for node in tree.body if isinstance(node, ast.Assign)]
    assert assignments and ast.unparse(assignments[0]).replace("'", '"') == BACKEND_LINE
    imports_before = [node for node in tree.body[:tree.body.index(assignments[0])]
                      if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert [alias.name for node in imports_before for alias in node.names] == ["os"]


def test_a_notebook_adds_to_the_sandbox_environment_but_replaces_nothing(tmp_path):
    env = kernel_env(tmp_path, threads=1, declared={"KERAS_BACKEND": "torch"})
    assert env["KERAS_BACKEND"] == "torch" and env["COURSE_GRADING"] == "1"
    for name in ("HOME", "PATH", "COURSE_FAST"):
        with pytest.raises(ValueError, match=name):
            kernel_env(tmp_path, threads=1, declared={name: "x"})


@pytest.mark.parametrize("metadata", [{"course": {"kernel_env": {"keras_backend": "torch"}}},
                                      {"course": {"kernel_env": {"KERAS_BACKEND": 1}}},
                                      {"course": {"kernel_env": ["KERAS_BACKEND=torch"]}}])
def test_malformed_declarations_are_refused(metadata):
    notebook = nbformat.v4.new_notebook(metadata=metadata)
    with pytest.raises(ValueError, match="kernel_env"):
        declared_env(notebook)


def test_no_declaration_means_no_variable():
    assert declared_env(nbformat.v4.new_notebook()) == {}
    assert declared_env(nbformat.v4.new_notebook(metadata={"course": "something else"})) == {}


@pytest.mark.grading
def test_grading_runs_on_torch_whatever_the_submission_does_first(tmp_path):
    from submissions import answered

    notebook = answered(STEM)
    first = next(cell for cell in notebook.cells if cell.cell_type == "code")
    assert BACKEND_LINE in first.source
    first.source = first.source.replace(BACKEND_LINE, "# (the backend line deleted)")
    notebook.cells.insert(0, nbformat.v4.new_code_cell("import keras  # imported before anything else"))
    assert not any(BACKEND_LINE in cell.source for cell in notebook.cells)
    assert nbgrader_meta(first) == {}
    folder = tmp_path / "submissions" / "no_backend_line"
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{STEM}.ipynb")
    out = tmp_path / "out"
    grade_batch(STEM, tmp_path / "submissions", out, workers=1, seed=20261123,
                limits=Limits(cell_timeout=120, call_timeout=60, student_timeout=600), log=lambda line: None)
    with open(out / "grades_by_cell.csv", newline="") as handle:
        cells = list(csv.DictReader(handle))
    assert cells and all(row["score"] == row["max_score"] for row in cells), cells
