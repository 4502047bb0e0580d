"""Assignment 06's fine-tuning for a budget (course_lib.ner.training_plan): the steps a budget in minutes buys from a
given cost per step, validation passes included; the printout; budgets that make no sense; and one plan measured and
run on a tiny BERT, which keeps the compiled training and validation steps of its measurement."""

from __future__ import annotations

import re

import keras
import numpy as np
import pytest

from autograde.reference.ner.model import build_token_classifier, masked_token_loss
from course_lib import finetuning
from course_lib.heads import tiny_backbone
from course_lib.ner import training_plan
from course_lib.ner.training_plan import plan_tagger, seconds_for, steps_within, train_tagger
from course_lib.time_budget import StepCost

RECIPE = {"epochs": 3, "batch_size": 16, "peak_learning_rate": 1e-3}
# 0.1 s per step and 1 ms per position: a step of 16 sentences 32 wide costs 0.612 s.
COST = StepCost(0.1, 0.001, 5.0, samples=[(512, 0.7)] * 10)


def encoded(lengths, width=64, seed=0):
    """Arrays as encode_sentences makes them, for sentences of these lengths in tokens."""
    rng = np.random.default_rng(seed)
    mask = (np.arange(width)[None] < np.asarray(lengths)[:, None]).astype(np.int32)
    ids = rng.integers(1, 50, mask.shape).astype(np.int32) * mask
    return {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": mask,
            "labels": np.where(mask == 1, ids % 5, -100).astype(np.int32)}


TRAIN = encoded([20] * 160)  # 10 full batches of width 32 per epoch


def test_a_budget_buys_the_most_whole_parts_of_steps_that_fit_with_their_validation():
    # 3 parts of k steps and a 2 s validation pass after each: 0.612 * 3k + 6 <= 60 gives k = 29.
    assert seconds_for(COST, TRAIN, RECIPE, None, 2.0) == pytest.approx(30 * 0.612 + 6)  # 3 epochs of 10 steps
    assert steps_within(COST, TRAIN, RECIPE, 60.0, 2.0) == 87
    assert seconds_for(COST, TRAIN, RECIPE, 87, 2.0) == pytest.approx(87 * 0.612 + 6)
    assert steps_within(COST, TRAIN, RECIPE, 60.0) == 96  # without validation, more steps fit
    assert steps_within(COST, TRAIN, RECIPE, 1.0, 2.0) == 3  # nothing fits: one step per part
    assert steps_within(COST, TRAIN, RECIPE, 600.0) == 978  # 3 * 326: far more than the recipe's 3 epochs


def test_on_sentences_of_many_lengths_the_choice_fits_and_one_step_more_per_part_would_not():
    train = encoded(np.random.default_rng(1).integers(3, 64, 500))
    steps = steps_within(COST, train, RECIPE, 120.0, 1.5)
    assert steps % 3 == 0
    assert seconds_for(COST, train, RECIPE, steps, 1.5) <= 120.0 < seconds_for(COST, train, RECIPE, steps + 3, 1.5)


def test_the_validation_estimate_counts_the_batches_fine_tune_validates_on():
    validation = encoded(np.random.default_rng(2).integers(3, 64, 100))
    shapes = [tuple(inputs["token_ids"].shape) for inputs, _ in finetuning.batches(validation, 32, shuffle=False)]
    plan = training_plan._validation_plan(validation, 16)
    assert [(len(rows), width) for rows, width in plan] == shapes


def plan_printout(capsys, budget="6 min", **keywords):
    plan = plan_tagger(None, masked_token_loss, TRAIN, RECIPE, budget, validation=TRAIN, measured=(COST, 2.0),
                       since=40.0, clock=lambda: 100.0, **keywords)
    return plan, capsys.readouterr().out.splitlines()


def test_the_printout_measures_estimates_each_budget_and_marks_this_run(capsys):
    plan, lines = plan_printout(capsys)  # 6 min, 60 s of them gone: 0.612 * 3k + 6 <= 300 gives k = 160
    assert re.fullmatch(r"Measured 10 training steps of batches of 16 sentences in 7 s on this machine \(a \d+-core "
                        r".*\)\.", lines[0])
    assert lines[1:] == [
        "About 0.61 s per training step; Keras's validation after each of the 3 parts adds about 2 s (timed on a few "
        "of its batches), counted below:",
        "  budget   steps  expected fine-tuning",
        "  default     30  24 s",
        "  6 min      480  5 min 0 s  <- this run",
        "This run: 480 steps of 16 sentences (48.0 passes over 160 sentences) in 3 parts, about 5 min 0 s of "
        "fine-tuning; Keras's progress bar shows the rest."]
    assert (plan.budget, plan.steps, plan.epochs, plan.whole_epochs) == ("6 min", 480, 3, False)
    assert plan.predicted_seconds == pytest.approx(480 * 0.612 + 6)


def test_fast_mode_trains_the_fixed_size_and_still_prints_the_estimate(capsys):
    plan, lines = plan_printout(capsys, fixed=True)
    assert lines[3:6] == ["  default     30  24 s  <- this run", "  6 min      480  5 min 0 s",
                          "Fast mode: the fixed 30 steps of 'default', whatever BUDGET says."]
    assert (plan.budget, plan.steps, plan.whole_epochs) == ("default", 30, True)
    plan, lines = plan_printout(capsys, budget="default")
    assert lines[3:] == ["  default     30  24 s  <- this run",
                         "This run: 30 steps of 16 sentences (3.0 passes over 160 sentences) in 3 parts, about 24 s "
                         "of fine-tuning; Keras's progress bar shows the rest."]


def test_a_budget_too_short_trains_one_step_per_part_and_says_so(capsys):
    plan, lines = plan_printout(capsys, budget="1 min")  # 60 s, all of them gone before the choice
    assert plan.steps == 3
    assert lines[5] == ("Even 3 steps, one per part, take longer than the 0 s left of 1 min: a larger BUDGET trains "
                        "more.")


def test_your_own_file_names_its_recipe_and_its_variable(capsys):
    recipe = {**RECIPE, "epochs": 5}
    plan = plan_tagger(None, masked_token_loss, TRAIN, recipe, "recipe", named={"recipe": 800}, variable="OWN_BUDGET",
                       measured=(COST, 0.0))
    assert (plan.budget, plan.steps, plan.epochs, plan.whole_epochs) == ("recipe", 800, 5, False)
    assert "  recipe    800  8 min 10 s  <- this run" in capsys.readouterr().out  # no validation in 6.9
    with pytest.raises(ValueError, match=r"^OWN_BUDGET = 'soon' is not a budget: write one of 'recipe' \(fixed "
                                         r"sizes\), or a whole number of minutes, at least 1, as \"10 min\"$"):
        plan_tagger(None, masked_token_loss, TRAIN, recipe, "soon", named={"recipe": 800}, variable="OWN_BUDGET",
                    measured=(COST, 0.0))


@pytest.mark.parametrize("budget", ["6", "6 minutes", "0 min", "1.5 min", "longer", 6, None])
def test_a_budget_that_makes_no_sense_names_the_forms_allowed(budget):
    with pytest.raises(ValueError, match=r"^BUDGET = .* is not a budget: write one of 'default' \(fixed sizes\), or "
                                         r"a whole number of minutes, at least 1, as \"10 min\"$"):
        plan_tagger(None, masked_token_loss, TRAIN, RECIPE, budget, measured=(COST, 0.0))


@pytest.mark.thorough  # seconds: the graphs of a tiny BERT built and run
def test_a_plan_measured_on_a_tiny_bert_runs_as_planned_with_its_compiled_steps(capsys):
    keras.utils.set_random_seed(0)
    backbone = tiny_backbone({"vocabulary_size": 50, "num_layers": 1, "num_heads": 2, "hidden_dim": 16,
                              "intermediate_dim": 32, "max_sequence_length": 64, "num_segments": 2})
    model = build_token_classifier(backbone, 5)
    train, validation = encoded(np.random.default_rng(3).integers(3, 64, 96)), encoded([10, 40, 60] * 20, seed=4)
    weights = [w.copy() for w in model.get_weights()]
    plan = plan_tagger(model, masked_token_loss, train, {**RECIPE, "epochs": 2}, "short", validation=validation,
                       named={"short": 6})
    assert all(np.array_equal(a, b) for a, b in zip(weights, model.get_weights(), strict=True))  # put back
    assert plan.measuring_seconds > 0 and plan.predicted_seconds > 0 and plan.steps == 6
    compiled = model.train_function, model.test_function
    history, report = train_tagger(plan, verbose=0)
    assert (model.train_function, model.test_function) == compiled  # the measured graphs, not built again
    assert len(history.steps["step"]) == 6 and len(history.history["val_loss"]) == 2
    assert report.keys() == {"budget", "steps", "sentences", "fine_tuning_seconds", "measuring_seconds",
                             "predicted_seconds"}
    assert (report["budget"], report["steps"], report["sentences"]) == ("short", 6, 96)
    assert "fine-tuned in" not in capsys.readouterr().out  # verbose=0 prints nothing
