"""07's fine-tuning sized for the machine: a budget in minutes chooses the questions that fit (a fake clock and a
given cost per step), and the measurement leaves the weights as they were and its compiled step to the run, whose
schedule is set for the run's own steps."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from course_lib import finetuning
from course_lib.heads import INPUT_NAMES
from course_lib.qa import budgets, squad_v1
from course_lib.time_budget import StepCost, duration


@pytest.fixture(scope="module")
def bert():
    from course_lib.pretrained import load_bert

    return load_bert()


@pytest.mark.thorough
def test_a_minutes_budget_trains_on_the_questions_that_fit(bert, capsys):
    from autograde.reference.qa.model import build_qa_model
    from course_lib import layers
    from course_lib.qa.training_plan import plan_reader

    pool = squad_v1.sample("train", 3000)
    cost = StepCost(per_step=0.05, per_position=0.0004, start=15.0)
    ticks = itertools.count(0.0, 0.5)  # each reading of the clock is half a second later
    plan = plan_reader(bert, budgets.recipe("2 min"), make_windows=layers.make_windows, build_qa_model=build_qa_model,
                       sample=lambda split, n: pool[:n], measure=lambda model, arrays: cost,
                       clock=lambda: next(ticks))
    printed = capsys.readouterr().out
    recipe = plan.recipe

    def predicted(questions):
        windows = layers_windows(bert, pool[:questions], recipe)
        return cost.run_seconds(finetuning.planned_positions(windows, recipe["batch_size"]), built=True)

    questions = recipe["questions"]
    left = 120 - 1.0  # the clock read 0 at the start and 1.0 s when the questions were chosen
    assert len(plan.examples) == questions and predicted(questions) <= left < predicted(questions + 1)
    assert plan.predicted_seconds == pytest.approx(predicted(questions))
    shown = re.escape(f"{questions:,}  {duration(plan.predicted_seconds)}  <- this run")
    assert re.search(rf"^  2 min +{shown}$", printed, re.M), printed
    assert re.search(r"^  default +6,000  \d+ min( \d+ s)?$", printed, re.M), printed


def layers_windows(bert, examples, recipe):
    from course_lib import layers
    from course_lib.qa.features import encode_examples, thin_unanswered

    windows = encode_examples(bert.tokenizer, examples, layers.make_windows, max_length=recipe["max_length"],
                              stride=recipe["stride"])
    return thin_unanswered(windows.arrays, recipe["unanswered"], seed=0)


def tiny_tagger():
    import keras

    inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in INPUT_NAMES}
    hidden = keras.layers.Embedding(50, 8)(inputs["token_ids"])
    return keras.Model(inputs, keras.layers.Dense(3)(hidden))


def token_arrays(count=37, max_length=24, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, max_length + 1, count)
    mask = (np.arange(max_length) < lengths[:, None]).astype(np.int32)
    return {"token_ids": rng.integers(1, 50, (count, max_length)).astype(np.int32) * mask,
            "segment_ids": np.zeros((count, max_length), np.int32), "padding_mask": mask,
            "labels": rng.integers(0, 3, (count, max_length)).astype(np.int32)}


@pytest.mark.thorough
def test_measuring_changes_no_weight_and_the_run_keeps_its_step_with_a_schedule_for_its_own_steps():
    import keras

    keras.utils.set_random_seed(0)
    model, arrays = tiny_tagger(), token_arrays()
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    before = [weight.copy() for weight in model.get_weights()]
    cost = finetuning.measure_step_cost(model, loss, arrays, batch_size=4)
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights(), strict=True))
    assert len(cost.samples) == 10 and cost.per_position > 0
    measured_step = model.train_function
    history = finetuning.fine_tune(model, loss, arrays, epochs=2, steps=13, batch_size=4, peak_learning_rate=1e-2,
                                   verbose=0)
    assert model.train_function is measured_step  # the graph built while measuring trained the run
    assert (history.schedule.total_steps, history.schedule.warmup_steps) == (14, 1)  # 13 steps in 2 parts of 7
    assert len(history.steps["step"]) == 14 == len(finetuning.planned_positions(arrays, 4, epochs=2, steps=13))
    assert history.steps["learning_rate"][:2] == pytest.approx([0.0, 1e-2])
    assert history.steps["learning_rate"][-1] == pytest.approx(1e-2 / 13)
    assert not all(np.array_equal(a, b) for a, b in zip(before, model.get_weights(), strict=True))
