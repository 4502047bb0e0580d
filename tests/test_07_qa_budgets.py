"""Notebook 07's budgets: the recipes, and the table and sentences the notebooks quote from what the bench recorded."""

from __future__ import annotations

import json

import pytest

from course_lib import time_budget
from course_lib.qa import budgets

MACHINE = {"cpu": "AMD EPYC", "cores": 2, "avx2": True, "avx512": False, "bf16": False, "tensorflow": "2.21.0"}
RUN = {"recipe": {"questions": 100}, "machine": MACHINE, "questions": 100, "windows": 104, "fine_tuning_seconds": 290.4,
       "peak_rss_gib": 2.1, "validation": {"em": 50.0, "f1": 61.0, "questions": 2000},
       "test": {"em": 52.25, "f1": 63.04, "questions": 10570}}


def test_every_budget_has_the_same_keys_and_fast_mode_shrinks_only_sizes():
    keys = set(budgets.BUDGETS["default"])
    assert all(set(recipe) == keys for recipe in budgets.BUDGETS.values())
    assert set(budgets.FAST) <= keys
    fast = budgets.recipe("default", fast=True)
    assert fast["questions"] == budgets.FAST["questions"]
    assert fast["train_from"] == budgets.BUDGETS["default"]["train_from"]


def test_a_recipe_is_a_copy_and_an_unknown_budget_is_named():
    budgets.recipe("default")["questions"] = -1
    assert budgets.BUDGETS["default"]["questions"] > 0
    with pytest.raises(ValueError, match=r"BUDGET = 'huge' is not a budget: write one of 'default', 'longer'"):
        budgets.recipe("huge")


@pytest.mark.parametrize("seconds, shown", [(42, "42 s"), (290.4, "4 min 50 s"), (3000, "50 min")])
def test_durations(seconds, shown):
    assert time_budget.duration(seconds) == shown


def test_the_table_puts_each_recorded_budget_beside_published_readers(tmp_path):
    path = tmp_path / "figures.json"
    budgets.record_figures("default", {**RUN, "note": "not kept", "total_seconds": 300}, path)
    kept = json.loads(path.read_text())
    assert kept == {"default": {key: RUN[key] for key in RUN}}
    table = budgets.figures_markdown(kept).splitlines()
    assert table[2] == ("| this course's reader, recipe `default` (100 questions) | all-MiniLM-L6-v2, 6 layers, "
                        "hidden 384 | 4 min 50 s on a 2-core AMD EPYC with AVX2, without AVX-512 | 52.2 | 63.0 |")
    assert table[3:] == budgets.figures_markdown({}).splitlines()[2:]  # then the published readers (test_published)


def test_a_budget_without_test_scores_is_left_out_of_the_table():
    table = budgets.figures_markdown({"default": {key: RUN[key] for key in RUN if key != "test"}})
    assert "this course" not in table


def test_the_shipped_figures_cover_every_budget_with_the_whole_test_split():
    figures = budgets.read_figures()
    missing = [name for name in budgets.BUDGETS if name not in figures]
    assert not missing, (f"no recorded figures for the budgets {missing}: run .venv/bin/python bench/squad_recipe.py "
                         "--budget NAME --test all --record on a quiet machine")
    for name, run in figures.items():
        # A budget in minutes ("10 min") is the default recipe with the questions this machine chose.
        expected = budgets.BUDGETS.get(name, {**budgets.BUDGETS["default"], "questions": run["questions"]})
        assert run["recipe"] == expected, (
            f"the recorded {name} budget was trained with another recipe than budgets.BUDGETS[{name!r}]: record it "
            "again")
        assert run["test"]["questions"] == 10570, f"budget {name}: the whole test split is scored, not a part"
