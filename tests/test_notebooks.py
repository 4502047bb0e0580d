"""Every notebook: committed clean, generated from its source, and runnable top to bottom."""

from __future__ import annotations

import filecmp
import json
import re
import subprocess

import nbformat
import pytest

from autograde.release import release

from conftest import ASSIGNMENTS, REPO, SOLUTION_CODE, execute, solution_path

TRACKED_NOTEBOOKS = subprocess.run(["git", "ls-files", "*.ipynb"], cwd=REPO, capture_output=True,
                                   text=True, check=True).stdout.split()


def test_there_are_assignments():
    assert ASSIGNMENTS[:2] == ["01_positional_encoding", "02_scaled_dot_product_attention"], ASSIGNMENTS


@pytest.mark.parametrize("path", TRACKED_NOTEBOOKS or ["<none tracked>"])
def test_committed_without_outputs(path):
    assert path != "<none tracked>", "no notebook is tracked by git"
    notebook = json.loads((REPO / path).read_text())
    dirty = [i + 1 for i, cell in enumerate(notebook["cells"])
             if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count"))]
    assert not dirty, f"{path}: cells {dirty} have outputs or execution counts; clear them before committing"


@pytest.mark.parametrize("stem", ASSIGNMENTS)
def test_source_notebook_is_well_formed(stem):
    notebook = nbformat.read(solution_path(stem), as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.get("kernelspec", {}).get("name") == "python3", "set the python3 kernelspec"
    ids, points = [], 0
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader")
        if not meta:
            continue
        ids.append(meta["grade_id"])
        if meta.get("grade"):
            assert meta.get("locked"), f"test cell {meta['grade_id']} should be locked"
            assert meta.get("points", 0) > 0, f"test cell {meta['grade_id']} has no points"
            # The grader runs the hidden checks from the registry; a notebook must not carry them.
            assert "HIDDEN TESTS" not in cell.source, f"{meta['grade_id']} still has hidden tests"
            points += meta["points"]
        if meta.get("solution"):
            assert SOLUTION_CODE in cell.source, f"solution cell {meta['grade_id']} has no solution markers"
    assert len(ids) == len(set(ids)), f"duplicate grade ids in {stem}: {ids}"
    assert points > 0


@pytest.mark.parametrize("stem", ASSIGNMENTS)
def test_points_in_the_text_match_the_grading(stem):
    """The points a learner reads (title cell, exercise headings) are the points nbgrader gives."""
    notebook = nbformat.read(solution_path(stem), as_version=4)
    stated_total = re.search(r"There are\s+(\d+)\s+points", notebook.cells[0].source)
    assert stated_total, f"{stem}: the title cell should say how many points there are"
    heading_points, total = None, 0
    for cell in notebook.cells:
        heading = re.search(r"^### Exercise [^\n]*\((\d+) points?\)", cell.source, flags=re.MULTILINE)
        if cell.cell_type == "markdown" and heading:
            heading_points = int(heading[1])
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            assert heading_points == meta["points"], (
                f"{stem}: {meta['grade_id']} gives {meta['points']} points, its exercise heading says "
                f"{heading_points}")
            heading_points = None
            total += meta["points"]
    assert int(stated_total[1]) == total, f"{stem}: the title says {stated_total[1]} points, the tests give {total}"


def git_ignored(names: list[str]) -> set[str]:
    """Those of `names` (paths under notebooks/) that git ignores, such as the model 07 saves beside its
    notebook (qa_model/) when a test runs it: never committed, so not part of the comparison."""
    found = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=REPO, capture_output=True,
                           text=True, input="".join(f"notebooks/{name}\n" for name in names))
    return {line.removeprefix("notebooks/") for line in found.stdout.splitlines()}


@pytest.mark.thorough
def test_student_notebooks_are_exactly_what_nbgrader_generates(tmp_path):
    release(tmp_path)
    generated = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(REPO / "notebooks").as_posix()
                       for p in (REPO / "notebooks").rglob("*") if p.is_file())
    ignored = git_ignored(generated + committed)
    generated, committed = [n for n in generated if n not in ignored], [n for n in committed if n not in ignored]
    assert generated == committed, "notebooks/ holds different files from a fresh release: run `make release`"
    stale = [name for name in generated
             if not filecmp.cmp(tmp_path / name, REPO / "notebooks" / name, shallow=False)]
    assert not stale, f"notebooks/ is out of date for {stale}: run `make release` and commit the result"


@pytest.mark.notebooks
def test_notebooks_run_with_the_network_unavailable(tmp_path):
    """The kernels these tests start cannot reach the network, so every notebook run here is an offline run."""
    probe = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import urllib.request\n"
        "try:\n"
        "    urllib.request.urlopen('https://huggingface.co', timeout=5)\n"
        "    print('REACHED THE NETWORK')\n"
        "except OSError as error:\n"
        "    print('refused:', error)\n"
    )])
    probe.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(probe, tmp_path / "probe.ipynb")
    output = "".join(o.get("text", "") for o in execute(tmp_path / "probe.ipynb").cells[0].outputs)
    assert "refused:" in output and "network disabled" in output, output


def test_make_test_validates_every_solution_notebook_with_nbval():
    """The solution notebooks run under nbval in `make test` (conftest.py: fast mode, offline, one worker per
    notebook, then their kernels graded by tests/demo_grading.py); the student notebooks run in the browser
    tests (test_browser.py), where every error must be the learner's unfinished work."""
    makefile = (REPO / "Makefile").read_text()
    nbval = re.search(r"^NBVAL := (.*)$", makefile, flags=re.MULTILINE)
    assert nbval, "the Makefile defines no NBVAL"
    assert "--nbval-lax" in nbval[1] and "$(wildcard solutions/*/*.ipynb)" in nbval[1] and "tests" in nbval[1].split()
    recipe = re.search(r"^test: .*\n((?:\t.*\n)+)", makefile, flags=re.MULTILINE)
    assert recipe and "pytest" in recipe[1] and "$(NBVAL)" in recipe[1], "make test does not run nbval"
    quick = re.search(r"^test-quick: .*\n((?:\t.*\n)+)", makefile, flags=re.MULTILINE)
    assert quick and "NBVAL" not in quick[1] and "not notebooks" in quick[1], "make test-quick runs notebooks"
    assert sorted(p.parent.name for p in (REPO / "solutions").glob("*/*.ipynb")) == ASSIGNMENTS
