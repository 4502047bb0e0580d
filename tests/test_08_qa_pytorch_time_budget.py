"""Assignment 08's budget in minutes (course_lib.qa_pytorch.training_budget): the learner's train_step timed on a tiny
torch module leaves its weights, mode and random numbers as they were; the questions chosen for a budget in minutes,
on a fake clock that a step advances by a known cost; the table printed; a budget that makes no sense refused.

No BERT and no SQuAD here: the windows are made up, one per question, and the clock moves only inside train_step."""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch

from course_lib.qa import features
from course_lib.qa_pytorch import loop, training_budget

PER_STEP, PER_POSITION = 0.05, 2e-4  # the fake clock's seconds per step and per position (windows x width)
CONFIG = {"budget": "3 min", "train_questions": 40, "max_length": 64, "stride": 16, "unanswered": 1.0, "epochs": 1,
          "batch_size": 4, "max_grad_norm": 1.0, "weight_decay": 0.01}


class Tiny(torch.nn.Module):
    """Start and end logits from an embedding, a dropout and a Linear(4, 2): a QAModel's interface in a few weights."""

    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(50, 4)
        self.dropout = torch.nn.Dropout(0.5)
        self.qa_outputs = torch.nn.Linear(4, 2)

    def forward(self, token_ids, segment_ids, padding_mask):
        logits = self.qa_outputs(self.dropout(self.embedding(token_ids)))
        return logits[..., 0], logits[..., 1]


def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
    optimizer.zero_grad()
    start, end = model(batch["token_ids"], batch["segment_ids"], batch["padding_mask"])
    loss = (torch.nn.functional.cross_entropy(start, batch["start_positions"])
            + torch.nn.functional.cross_entropy(end, batch["end_positions"])) / 2
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def windows(count: int, max_length: int = 64) -> dict:
    """One answered window per question, of lengths from 8 to max_length tokens."""
    lengths = 8 + np.arange(count) * 7 % (max_length - 7)
    mask = (np.arange(max_length)[None, :] < lengths[:, None]).astype(np.int32)
    return {"token_ids": mask * 7, "segment_ids": np.zeros_like(mask), "padding_mask": mask,
            "labels": np.stack([np.ones(count), np.minimum(3, lengths - 1)], axis=1).astype(np.int32)}


class FakeClock:
    """Time that moves only when a step runs, by PER_STEP + PER_POSITION x its positions."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now

    def stepping(self, step):
        def timed(model, batch, *args):
            self.now += PER_STEP + PER_POSITION * batch["token_ids"].numel()
            return step(model, batch, *args)

        return timed


def state(model) -> dict:
    return {name: value.detach().clone() for name, value in model.state_dict().items()}


@pytest.fixture
def made_up_windows(monkeypatch):
    """plan_training's encoding replaced by windows(len(examples)); sample("train", n) is range(n)."""
    def encode_examples(tokenizer, examples, make_windows, **settings):
        return types.SimpleNamespace(arrays=windows(len(examples)))

    monkeypatch.setattr(features, "encode_examples", encode_examples)
    return lambda split, n: list(range(n))


@pytest.mark.thorough
def test_measuring_leaves_the_weights_the_mode_and_the_random_numbers_as_they_were():
    torch.manual_seed(0)
    model = Tiny().eval()
    before, generator = state(model), torch.get_rng_state()

    def careless_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):  # moves the weights whatever the rate
        loss = train_step(model, batch, optimizer, scheduler, max_grad_norm)
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(1.0)
        return loss

    parameters = list(model.parameters())
    cost = training_budget.measure_train_step(model, careless_step, windows(30), batch_size=4, steps=6)
    assert len(cost.samples) == 6
    assert all(torch.equal(value, before[name]) for name, value in model.state_dict().items())
    assert all(a is b for a, b in zip(model.parameters(), parameters, strict=True))  # in place: the same tensors
    assert all(parameter.grad is None for parameter in model.parameters())
    assert not model.training
    assert torch.equal(torch.get_rng_state(), generator)


def test_a_few_batches_are_timed_again_until_a_cost_can_be_fitted():
    clock = FakeClock()
    cost = training_budget.measure_train_step(Tiny(), clock.stepping(train_step), windows(6), batch_size=4,
                                              clock=clock)
    assert len(cost.samples) == 4  # two batches, each timed twice
    assert cost.per_position == pytest.approx(PER_POSITION) and cost.per_step == pytest.approx(PER_STEP)


@pytest.mark.parametrize("seconds, per_question, epochs, spent, questions", [
    (180, 0.1, 1, 20, 1600), (180, 0.1, 2, 20, 800), (600, 0.25, 3, 0, 800), (180, 0.1, 1, 179.95, 1),
    (60, 0.1, 1, 90, 1)])  # the measuring alone used the budget: one question still
def test_the_questions_that_fit_in_the_minutes_left(seconds, per_question, epochs, spent, questions):
    assert training_budget.questions_within(seconds, per_question, epochs=epochs, spent=spent) == questions


def test_a_cost_of_nothing_per_question_is_refused():
    with pytest.raises(ValueError, match="above 0"):
        training_budget.questions_within(180, 0.0)


@pytest.mark.parametrize("epochs", [1, 2])
def test_a_budget_in_minutes_takes_the_most_questions_that_fit_after_the_measuring(made_up_windows, capsys, epochs):
    clock = FakeClock()
    config = {**CONFIG, "epochs": epochs}
    plan = training_budget.plan_training(Tiny(), clock.stepping(train_step), config, tokenizer=None,
                                         make_windows=None, sample=made_up_windows, clock=clock, began=clock() - 5.0)
    probe = windows(training_budget.PROBE_QUESTIONS)
    pass_seconds = sum(PER_STEP + PER_POSITION * batch["token_ids"].numel()
                       for batch in loop.torch_batches(probe, config["batch_size"], seed=0))
    assert plan.per_question == pytest.approx(pass_seconds / training_budget.PROBE_QUESTIONS)
    assert plan.measuring_seconds == pytest.approx(5.0 + plan.cost.measured_seconds)

    def seconds(questions):
        return plan.measuring_seconds + epochs * plan.per_question * questions

    assert seconds(plan.questions) <= 180 < seconds(plan.questions + 1)
    assert plan.budget == "3 min" and plan.epochs == epochs
    assert plan.predicted_seconds(probe) == pytest.approx(epochs * pass_seconds, rel=0.05)
    printed = capsys.readouterr().out
    assert f"3 min  {plan.questions:>9,}" in printed and printed.count("<- this run") == 1
    assert "<- this run" in next(line for line in printed.splitlines() if line.lstrip().startswith("3 min"))
    assert "fixed         40" in printed and "evaluation on the test windows after each epoch comes on top" in printed


def test_the_fixed_budget_trains_its_questions_and_still_prints_the_estimates(made_up_windows, capsys):
    clock = FakeClock()
    plan = training_budget.plan_training(Tiny(), clock.stepping(train_step), {**CONFIG, "budget": "fixed"},
                                         tokenizer=None, make_windows=None, sample=made_up_windows, clock=clock)
    assert plan.questions == CONFIG["train_questions"]
    assert [row[:2] for row in plan.estimates][0] == ("fixed", "40")
    assert plan.estimates[1][0] == training_budget.MINUTES_SHOWN
    printed = capsys.readouterr().out
    assert "<- this run" in next(line for line in printed.splitlines() if line.lstrip().startswith("fixed"))


@pytest.mark.parametrize("nonsense", ["3 minutes", "three min", "0 min", "1600", "", None])
def test_a_budget_that_makes_no_sense_is_refused_before_any_work(nonsense):
    with pytest.raises(ValueError, match=r"not a budget: write one of 'fixed' \(fixed sizes\), or a whole number of "
                                         r"minutes, at least 1, as \"10 min\""):
        training_budget.plan_training(None, None, {**CONFIG, "budget": nonsense}, tokenizer=None, make_windows=None,
                                      sample=lambda split, n: pytest.fail("sampled before the budget was checked"))
