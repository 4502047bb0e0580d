"""Every graded function against its variants: each wrong one loses exactly its points, each right one keeps
them, graded by the hidden check through a sandboxed kernel, at a grading-time seed."""

from __future__ import annotations

import pytest
from judged_variants import group, judged

from autograde import registry
from autograde.variants import solution_cells, variants

from conftest import ASSIGNMENTS

MIN_WRONG, MIN_RIGHT = 3, 2


@pytest.mark.parametrize("stem", ASSIGNMENTS)
def test_every_exercise_has_enough_variants(stem):
    found = variants(stem)
    short = []
    for row in registry.exercises(stem):
        wrong = sum(1 for v in found if v.name == row.name and not v.correct)
        right = sum(1 for v in found if v.name == row.name and v.correct)
        if wrong < MIN_WRONG or right < MIN_RIGHT:
            short.append(f"{row.name}: {wrong} wrong, {right} right")
    assert not short, f"{stem} needs >= {MIN_WRONG} wrong and >= {MIN_RIGHT} right variants: {short}"


@pytest.mark.parametrize("stem", ASSIGNMENTS)
def test_variants_apply_to_the_solution(stem):
    cells = solution_cells(stem)
    for variant in variants(stem):
        assert variant.cell(cells[variant.name]) != cells[variant.name], f"{variant.what} changes nothing"


@pytest.mark.grading
@pytest.mark.parametrize("stem", [pytest.param(s, marks=group(s)) for s in ASSIGNMENTS])
def test_each_variant_gets_its_verdict(stem):
    wrong_verdicts = [f"{'right' if v.correct else 'wrong'} {v.name} ({v.what}): {r.score:g}/{r.max_score:g} "
                      f"{r.message}" for v, r in judged(stem).values()
                      if (r.score == r.max_score) != v.correct or r.score not in (0, r.max_score)]
    assert not wrong_verdicts, "\n".join(wrong_verdicts)
