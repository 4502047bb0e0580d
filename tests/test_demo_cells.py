"""Skipping the cells the sources tag `demo` (training runs, plots, timing) changes no grade.

Each solution notebook is graded twice with the same seed: as released, the demo cells skipped, and with a
release whose demo tags are removed, every cell run. Both runs must give full marks with the same score in
every cell; the first must stay quick, since that is what the tag is for.
"""

from __future__ import annotations

import copy
import time

import nbformat
import pytest

from autograde import judge
from autograde.normalise import DEMO_TAG, SKIP_KEY, is_demo, nbgrader_meta

from conftest import ASSIGNMENTS, solution_path

pytestmark = pytest.mark.grading

SEED = 20240611  # any fixed seed: both runs draw the same hidden-check inputs
SKIPPED_BUDGET = 20.0  # seconds for grading a solution with its demo cells skipped


def without_demo_tags(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy in which no cell is tagged `demo` (other tags kept)."""
    plain = copy.deepcopy(notebook)
    for cell in plain.cells:
        tags = cell.get("metadata", {}).get("tags")
        if tags and DEMO_TAG in tags:
            kept = [tag for tag in tags if tag != DEMO_TAG]
            if kept:
                cell.metadata["tags"] = kept
            else:
                del cell.metadata["tags"]
    return plain


def skipped_count(result: judge.StudentResult) -> int:
    """Code cells of the graded notebook that the judge did not run because of their tag."""
    graded = nbformat.reads(result.notebook, as_version=4)
    return sum(1 for cell in graded.cells if cell.get("metadata", {}).get(SKIP_KEY, {}).get("skip"))


def grade(stem: str, notebook: nbformat.NotebookNode, root) -> tuple[judge.StudentResult, float]:
    folder, work = root / "submission", root / "work"
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{stem}.ipynb")
    started = time.monotonic()
    result = judge.grade_submission(stem, "solution", folder, work, seed=SEED)
    return result, time.monotonic() - started


def by_cell(result: judge.StudentResult) -> list[tuple[str, float, float]]:
    return [(cell.grade_id, cell.score, cell.max_score) for cell in result.cells]


@pytest.mark.parametrize("stem", [pytest.param(stem, marks=pytest.mark.xdist_group(stem)) for stem in ASSIGNMENTS])
def test_skipping_demo_cells_changes_no_grade(stem, tmp_path, monkeypatch, capsys):
    release = judge.release_notebook(stem)
    demos = [cell for cell in release.cells if is_demo(cell)]
    assert demos, f"{stem}: no cell of the release is tagged {DEMO_TAG!r}"
    graded_cells = [cell.get("id") for cell in demos if nbgrader_meta(cell).get("solution")
                    or nbgrader_meta(cell).get("grade")]
    assert not graded_cells, f"{stem}: solution or test cells tagged {DEMO_TAG!r}: {graded_cells}"

    solution = nbformat.read(solution_path(stem), as_version=4)
    skipped, skipped_seconds = grade(stem, solution, tmp_path / "skipped")
    # The judge takes what to skip from the release, so the release it reads must lose its tags too.
    monkeypatch.setattr(judge, "release_notebook", lambda name: without_demo_tags(release))
    run_all, all_seconds = grade(stem, without_demo_tags(solution), tmp_path / "all")
    with capsys.disabled():
        print(f"\n{stem}: {len(demos)} demo cells; grading {skipped_seconds:.1f} s with them skipped, "
              f"{all_seconds:.1f} s with every cell run")

    for result in (skipped, run_all):
        lost = [cell for cell in result.cells if cell.score != cell.max_score]
        assert result.score == result.max_score > 0 and not lost, (result.status, lost)
    assert skipped_count(skipped) == len(demos) and skipped_count(run_all) == 0
    assert by_cell(skipped) == by_cell(run_all)
    assert skipped_seconds < SKIPPED_BUDGET, f"{stem}: grading took {skipped_seconds:.1f} s with demo cells skipped"
