"""Budgets in minutes (course_lib.time_budget, shared by 06-08): the parse, the fitted cost per step, the choice of
how much training fits, the printout, and 07's plan on a fake clock."""

from __future__ import annotations

import itertools

import pytest

from course_lib import time_budget
from course_lib.time_budget import Budget, StepCost, parse_budget


@pytest.mark.parametrize("text, budget", [("default", Budget(name="default")), ("10 min", Budget(minutes=10)),
                                          (" 3  min ", Budget(minutes=3)), ("120 min", Budget(minutes=120))])
def test_a_budget_is_a_name_or_whole_minutes(text, budget):
    assert parse_budget(text, ("default", "longer")) == budget
    assert str(budget) in (text.strip(), "3 min")


@pytest.mark.parametrize("text", ["10", "10 minutes", "10min!", "1.5 min", "0 min", "huge", 10, None, "10 s"])
def test_a_budget_that_makes_no_sense_names_the_forms_allowed(text):
    with pytest.raises(ValueError, match=r"is not a budget: write one of 'default', 'longer' \(fixed sizes\), or a "
                                         r"whole number of minutes, at least 1, as \"10 min\""):
        parse_budget(text, ("default", "longer"))


def test_the_cost_of_a_step_is_a_fixed_part_and_a_part_per_position():
    # Two graph-building steps, then steps whose time is 0.2 s + 1 ms per position.
    samples = [(1536, 30.0), (512, 9.0)] + [(p, 0.2 + 0.001 * p) for p in (1536, 1024, 512, 1280, 768)]
    cost = StepCost.fit(samples)
    assert cost.per_step == pytest.approx(0.2) and cost.per_position == pytest.approx(0.001)
    assert cost.start == pytest.approx((30.0 - 1.736) + (9.0 - 0.712))
    assert cost.run_seconds([1000, 2000]) == pytest.approx(cost.start + 1.2 + 2.2)
    assert cost.run_seconds([1000, 2000], built=True) == pytest.approx(3.4)


def test_steps_of_one_width_give_one_rate_and_too_few_steps_are_refused():
    cost = StepCost.fit([(1536, 20.0), (1536, 2.0), (1536, 1.5), (1536, 1.6)])
    assert (cost.per_step, cost.per_position) == (0.0, pytest.approx(3.1 / 3072))
    with pytest.raises(ValueError, match="need at least 4 timed steps"):
        StepCost.fit([(1536, 20.0), (1536, 2.0), (1536, 1.5)])


def test_timing_stops_after_the_steps_or_the_seconds_on_a_fake_clock():
    ticks = itertools.count(0.0, 3.0)  # every reading of the clock is 3 s later
    ran = []
    samples = time_budget.time_steps(ran.append, [(100 * i, i) for i in range(20)], steps=10, seconds=20,
                                     clock=lambda: next(ticks))
    assert ran == [0, 1, 2, 3] and [s for _, s in samples] == [3.0] * 4  # 4 steps (the least) reach 21 s > 20 s


def test_the_timed_batches_span_the_widths_with_two_widths_first():
    plan = [([0] * 8, width) for width in (64, 192, 192, 128, 192, 96, 192, 160, 192, 80)]
    chosen = time_budget.spread_over_widths(plan, 5)
    widths = [plan[i][1] for i in chosen]
    assert widths[0] == 192 and widths[1] == 64 and len(set(chosen)) == 5


def test_the_largest_amount_that_fits_the_minutes():
    def seconds_for(n):
        return 10 + 0.25 * n

    assert time_budget.largest_within(seconds_for, 600, high=10_000) == 2360
    assert time_budget.largest_within(seconds_for, 600, high=1000) == 1000  # everything fits
    assert time_budget.largest_within(seconds_for, 5, high=1000) == 1  # nothing fits: the least


def test_the_estimate_table_marks_this_run():
    table = time_budget.estimate_table([("default", "6,000", 1298.0), ("10 min", "2,700", 575.0)], chosen="10 min",
                                       unit="questions")
    assert table.splitlines() == ["  budget   questions  expected fine-tuning",
                                  "  default      6,000  22 min",
                                  "  10 min       2,700  9 min 35 s  <- this run"]
