"""07's quality-against-questions curve and the scores' intervals (course_lib.qa.curve)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from course_lib.qa import budgets, curve

MACHINE = {"cpu": "AMD EPYC", "cores": 2, "avx2": True, "avx512": False, "bf16": False, "tensorflow": "2.21.0"}


def run(questions, f1, **recipe):
    return {"recipe": {**budgets.BUDGETS["default"], "budget": "default", "questions": questions, **recipe},
            "questions": questions, "windows": questions + 10, "fine_tuning_seconds": 1.0,
            "validation": {"em": f1 - 10, "f1": f1, "questions": 1000}, "machine": MACHINE}


def test_the_bootstrap_interval_holds_the_mean_and_narrows_with_more_questions():
    rng = np.random.default_rng(1)
    few, many = rng.random(100), rng.random(1600)
    low, high = curve.bootstrap_interval(few)
    assert low < few.mean() < high
    low_many, high_many = curve.bootstrap_interval(many)
    assert (high_many - low_many) == pytest.approx((high - low) / 4, rel=0.3)  # 16 times the questions: a quarter
    assert curve.bootstrap_interval(few) == (low, high)  # seeded: the same interval every run
    with pytest.raises(ValueError, match="no scores to bootstrap"):
        curve.bootstrap_interval([])


def test_a_score_is_printed_with_its_interval():
    result = {"f1": 50.0, "exact_match": 40.0, "questions": 4, "rows": [{"f1": f} for f in (0.0, 1.0, 0.5, 0.5)]}
    assert curve.scored_with_interval(result).startswith("F1 50.0 (95% interval ")
    assert curve.scored_with_interval(result).endswith("), EM 40.0 on 4 questions")


def test_the_curve_keeps_runs_of_the_default_recipe_and_the_budgets_points(tmp_path):
    path = tmp_path / "curve.json"
    curve.record_point(run(1500, 30.0), path)
    curve.record_point(run(3000, 50.2), path)
    with pytest.raises(ValueError, match=r"the default recipe with another number of questions; this run differs in "
                                         r"\['peak_learning_rate'\]"):
        curve.record_point(run(3000, 52.0, peak_learning_rate=1e-4), path)
    figures = {"default": {**run(6000, 57.2), "recipe": budgets.BUDGETS["default"]}}
    points = curve.points(json.loads(path.read_text()), figures)
    assert [(p["questions"], p["validation"]["f1"]) for p in points] == [(1500, 30.0), (3000, 50.2), (6000, 57.2)]
    assert points[-1]["budget"] == "default"


def test_the_shipped_curve_rises_with_the_questions_seen():
    points = curve.points()
    assert len(points) >= 4, "run bench/squad_recipe.py --questions N --validation 1000 --record-curve"
    f1 = [p["validation"]["f1"] for p in points]
    assert f1 == sorted(f1) and all(p["validation"]["questions"] == 1000 for p in points)
