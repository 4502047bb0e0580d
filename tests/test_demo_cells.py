"""Skipping the cells the sources tag `demo` (training runs, plots, timing) changes no grade.

Each solution notebook is graded twice with the same seed: as released, the demo cells skipped, and with a
release whose demo tags are removed, every cell run. Both runs must give full marks with the same score in
every cell. The tag is there to save time, so the notebook part of the first run (everything before the
first hidden check) must stay quick; the hidden checks' own time is theirs and not bounded here.

Under `make test` nbval has run every cell of each solution notebook already: conftest.py then grades nbval's
kernel instead (tests/demo_grading.py, EveryCellGraded, the same assertions) and leaves this test out for that
notebook, so no notebook runs twice. Run alone (no --nbval-lax), this test runs every cell itself.
"""

from __future__ import annotations

import os

import nbformat
import pytest
from demo_grading import demo_cells, expect_same_grades, grade, import_checks, without_demo_tags

from autograde import judge

from conftest import ASSIGNMENTS, solution_path

pytestmark = pytest.mark.grading


def one_worker_each(stems: list[str]) -> list:
    """One pytest-xdist group per assignment (make test: --dist loadgroup). The mark is only known when xdist
    runs this file in a worker; elsewhere (-p no:xdist) --strict-markers would refuse it."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return list(stems)
    return [pytest.param(stem, marks=pytest.mark.xdist_group(stem)) for stem in stems]


@pytest.mark.parametrize("stem", one_worker_each(ASSIGNMENTS))
def test_skipping_demo_cells_changes_no_grade(stem, tmp_path, monkeypatch, capsys):
    release = judge.release_notebook(stem)
    demos = demo_cells(stem)
    import_checks(stem)  # before timing either run
    solution = nbformat.read(solution_path(stem), as_version=4)
    skipped = grade(stem, solution, tmp_path / "skipped")
    # The judge takes what to skip from the release, so the release it reads must lose its tags too.
    monkeypatch.setattr(judge, "release_notebook", lambda name: without_demo_tags(release))
    run_all = grade(stem, without_demo_tags(solution), tmp_path / "all")
    with capsys.disabled():
        print(f"\n{stem}: {len(demos)} demo cells; graded in {skipped.describe()} with them skipped, "
              f"{run_all.describe()} with every cell run")

    assert run_all.result.score == run_all.result.max_score > 0, (run_all.result.status, run_all.by_cell())
    assert run_all.skipped() == 0
    expect_same_grades(stem, skipped, run_all.result.cells, demos)
