"""The exercise registry (autograde/registry.py) agrees with the notebooks, the files and CONTRIBUTING.md,
and the visible checks' expected values are what the references generate."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograde import expected, registry
from autograde.course import list_assignments

from conftest import REPO, solution_path

ROWS = registry.EXERCISES
ROW_IDS = [f"{row.stem}:{row.name}" for row in ROWS]


def test_every_assignment_is_registered():
    assert registry.stems() == list_assignments(), "every solutions/ notebook needs its rows in autograde/registry.py"


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_named_files_and_objects_exist(row):
    for dotted in (row.visible, row.hidden, *row.reference):
        assert (REPO / registry.module_file(dotted)).is_file(), f"{dotted}: no file {registry.module_file(dotted)}"
        assert registry.resolve(dotted) is not None
    assert (REPO / row.tests).is_file(), f"{row.name}: no unit tests at {row.tests}"
    topic = registry.topic(row.stem)
    for dotted, root in [(row.visible, "course_lib"), (row.hidden, "autograde.checks")]:
        assert dotted.startswith(f"{root}.{topic}"), f"{dotted} should live in {root}.{topic}"
    assert Path(row.tests).name.startswith(f"test_{row.stem}"), f"{row.tests} should be named after {row.stem}"


# (That each row's reference passes both of its checks, a Keras layer's class among them: tests/test_exercises.py.)


def _graded_cells(stem: str):
    notebook = nbformat.read(solution_path(stem), as_version=4)
    solutions, tests = [], []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            solutions.append(meta["grade_id"])
        if meta.get("grade"):
            tests.append((meta["grade_id"], meta["points"], cell.source))
    return notebook, solutions, tests


@pytest.mark.parametrize("stem", list_assignments())
def test_notebook_cells_match_the_registry(stem):
    notebook, solutions, tests = _graded_cells(stem)
    rows = registry.exercises(stem)
    assert solutions == [row.name for row in rows], f"{stem}: solution cells {solutions} differ from the registry"
    assert [(grade_id, points) for grade_id, points, _ in tests] == [(row.test_id, row.points) for row in rows], (
        f"{stem}: test cells (grade id, points) differ from the registry")
    imported = _imports(notebook)
    for row, (_, _, source) in zip(rows, tests, strict=True):
        visible_module, visible = row.visible.split(":")
        assert re.search(rf"\b{visible}\({row.name}\b", source), f"{row.test_id} should call {visible}({row.name}...)"
        # The grader runs the hidden check from the registry, in its own process: the notebook never names it.
        assert "HIDDEN TESTS" not in source and "autograde" not in source, f"{row.test_id} names the grader"
        assert imported.get(visible) == visible_module, (
            f"{stem}: {visible} should be imported from {visible_module}, found {imported.get(visible)}")


def _imports(notebook) -> dict[str, str]:
    """{name: module} for every `from module import name` in the notebook's code cells."""
    found = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                found.update({alias.asname or alias.name: node.module for alias in node.names})
    return found


def test_contributing_table_is_the_registry():
    text = (REPO / "CONTRIBUTING.md").read_text()
    assert registry.markdown_table() in text, (
        "CONTRIBUTING.md's exercise table differs from the registry: paste `python -m autograde.registry`")


# ---------------------------------------------------------------------------------------------
# Generated expected values


def test_every_assignment_has_generated_expected_values():
    assert expected.generator_stems() == list_assignments(), "add autograde/expected/<topic>.py for each assignment"


@pytest.mark.thorough
@pytest.mark.parametrize("stem", expected.generator_stems())
def test_expected_values_are_what_the_references_generate(stem):
    problems = expected.check(stem)
    assert not problems, f"{stem}: run `python -m autograde.expected {stem}`:\n" + "\n".join(problems[:20])


# Another machine computes in another order: oneDNN's kernels off and two threads (TensorFlow reads
# TF_ENABLE_ONEDNN_OPTS, its thread pools TF_NUM_*_THREADS; torch and OpenMP read OMP_NUM_THREADS). The test above
# already regenerates on one thread, which the tests' environment sets (conftest.py); `make expected` wrote the
# committed values with the machine's default.
OTHER_MACHINE = {"TF_ENABLE_ONEDNN_OPTS": "0", "TF_NUM_INTRAOP_THREADS": "2", "TF_NUM_INTEROP_THREADS": "2",
                 "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"}


@pytest.mark.thorough
def test_expected_values_hold_under_other_thread_counts_and_onednn_settings():
    """The committed values are what the references give on another machine too, not only on the one that wrote
    them: floating-point noise stays inside the drift test's tolerance."""
    run = subprocess.run([sys.executable, "-m", "autograde.expected", "--check"], cwd=REPO, capture_output=True,
                         text=True, timeout=900, env={**os.environ, **OTHER_MACHINE, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert run.returncode == 0, f"regenerated with {OTHER_MACHINE}:\n{run.stdout[-4000:]}\n{run.stderr[-2000:]}"
    assert run.stdout.count("up to date") == len(expected.generator_stems()), run.stdout


def test_the_drift_tolerance_tells_a_changed_generator_from_rounding():
    """Rounding (1e-12) passes; a change a visible check could notice (1e-6 on values near 1) does not."""
    stored = {"logits": [[0.25, -1.5, 3.0]], "loss": 0.7, "name": "x"}
    rounded = {"logits": [[0.25 + 1e-12, -1.5, 3.0 - 1e-12]], "loss": 0.7 + 1e-12, "name": "x"}
    changed = {"logits": [[0.25, -1.5 + 1e-6, 3.0]], "loss": 0.7, "name": "x"}
    assert expected.differences(rounded, stored) == []
    assert expected.differences(changed, stored) == ["/logits: values differ by up to 1e-06"]
    assert expected.TOLERANCE * 10 <= 1e-6, "the tolerance must stay well below the visible checks' own (1e-6, 1e-4)"


# A line with three or more decimals of 4+ digits is a pasted array: such values belong in course_lib/expected/.
PASTED_NUMBERS = re.compile(r"(-?\d+\.\d{4,}.*){3,}")


def test_no_literal_arrays_in_the_code():
    pasted = []
    for folder in ("course_lib", "autograde"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if PASTED_NUMBERS.search(line):
                    pasted.append(f"{path.relative_to(REPO)}:{number}")
    assert not pasted, f"literal arrays in the code (generate them instead): {pasted[:10]}"


MAX_MODULE_LINES = 420  # "about 400": a module past this is doing more than one job


def test_modules_stay_small():
    large = [f"{path.relative_to(REPO)} ({count} lines)"
             for folder in ("course_lib", "autograde") for path in sorted((REPO / folder).rglob("*.py"))
             if (count := len(path.read_text().splitlines())) > MAX_MODULE_LINES]
    assert not large, f"split these modules by responsibility: {large}"
