"""Assignment 08: section 8.6's fine-tuning sized for this machine, with a budget in minutes.

`plan_training` encodes the windows of the first seeded training questions, times the learner's own `train_step` on
a few batches of them, chosen across their widths (`measure_train_step`), and fits a cost per step
(course_lib.time_budget). From that: the seconds of training steps per question, how many questions fit in a budget
in minutes once the measuring is paid for, and a table of what each budget would take here. A budget covers the
measuring and the training steps; the evaluation on the test windows after each epoch comes on top.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from course_lib import time_budget
from course_lib.qa_pytorch import loop

FIXED = "fixed"  # the budget of fixed size: CONFIG["train_questions"] on every machine
MINUTES_SHOWN = "3 min"  # the minutes row the table shows beside a fixed budget
# Questions whose windows the steps are timed on: a few dozen batches, enough for every width.
PROBE_QUESTIONS = 300


def _positions(arrays: Mapping, batch_size: int, seed: int) -> list[int]:
    """Windows x width of each batch of an epoch, as loop.torch_batches makes them for the training loop."""
    return [batch["token_ids"].numel() for batch in loop.torch_batches(arrays, batch_size, seed=seed)]


@dataclass
class TrainingPlan:
    """What the measuring chose: the budget, the questions, and the cost that predicts the run."""

    budget: str
    questions: int
    cost: time_budget.StepCost
    per_question: float  # seconds of training steps per question and pass
    batch_size: int
    epochs: int
    measuring_seconds: float
    estimates: list[tuple[str, str, float]] = field(default_factory=list)

    def predicted_seconds(self, arrays: Mapping) -> float:
        """The training steps' predicted time on these windows, every epoch's batches as the loop makes them (the
        measuring warmed this process up: no start-up cost)."""
        return sum(self.cost.run_seconds(_positions(arrays, self.batch_size, epoch), built=True)
                   for epoch in range(self.epochs))


def measure_train_step(model, train_step: Callable, arrays: Mapping, *, batch_size: int, max_grad_norm: float = 1.0,
                       weight_decay: float = 0.01, steps: int = time_budget.PROBE_STEPS,
                       seconds: float = time_budget.PROBE_SECONDS, device=None,
                       clock: Callable[[], float] = time.perf_counter) -> time_budget.StepCost:
    """Time `train_step(model, batch, optimizer, scheduler, max_grad_norm)` on up to `steps` training batches of
    `arrays` across their widths (about `seconds` at most); return the fitted StepCost. Afterwards the model's
    weights, its mode and torch's random numbers are exactly as before, and it holds no gradients."""
    import torch

    batches = loop.torch_batches(arrays, batch_size, seed=0)
    chosen = time_budget.spread_over_widths([(range(len(b["token_ids"])), b["token_ids"].shape[1]) for b in batches],
                                            steps)
    while len(chosen) < time_budget.START_STEPS + 2:  # too few batches to fit a cost (fast mode): time them again
        chosen = chosen + chosen
    # AdamW on the run's parameter groups, at a learning rate of 0: a step costs what the run's steps will cost.
    optimizer = torch.optim.AdamW(loop.parameter_groups(model, weight_decay), lr=0.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    synchronize = device is not None and torch.device(device).type == "cuda"

    def run(batch):
        train_step(model, batch, optimizer, scheduler, max_grad_norm)
        if synchronize:  # a GPU returns before it has computed: wait, or the time is only the launch's
            torch.cuda.synchronize()

    # A learning rate of 0 moves nothing in AdamW, but a learner's train_step might: the weights are put back from a
    # copy, whatever it did, in place, so that an optimizer built afterwards holds the same parameters.
    saved = {name: value.detach().clone() for name, value in model.state_dict().items()}
    was_training = model.training
    model.train()
    try:
        # Dropout draws random numbers; forking leaves the run's draws as they would be without the measuring.
        with torch.random.fork_rng(devices=[]):
            pairs = ((batches[i]["token_ids"].numel(),
                      batches[i] if device is None else loop.to_device(batches[i], device)) for i in chosen)
            samples = time_budget.time_steps(run, pairs, steps=len(chosen), seconds=seconds, clock=clock)
    finally:
        model.load_state_dict(saved)
        model.zero_grad(set_to_none=True)  # the measured gradients' memory goes back
        model.train(was_training)
    return time_budget.StepCost.fit(samples)


def questions_within(seconds: float, per_question: float, *, epochs: int = 1, spent: float = 0.0) -> int:
    """The most questions whose training steps (`epochs` passes, `per_question` seconds each) end within `seconds`
    once `spent` seconds are gone; at least 1."""
    if per_question <= 0:
        raise ValueError(f"per_question is a time in seconds, above 0; got {per_question}")

    def needed(questions):
        return spent + epochs * per_question * questions

    # The division's answer, plus one for its rounding: largest_within checks each count against the budget itself.
    guess = int((seconds - spent) / (epochs * per_question))
    return time_budget.largest_within(needed, seconds, high=max(1, guess + 1))


def plan_training(model, train_step: Callable, config: Mapping, *, tokenizer, make_windows: Callable, device=None,
                  began: float | None = None, sample: Callable | None = None, verbose: bool = True,
                  clock: Callable[[], float] = time.perf_counter) -> TrainingPlan:
    """Time `train_step` on `model` with the windows of the first training questions and choose the questions:
    config["train_questions"] for the budget "fixed", else as many as fit in config["budget"]'s minutes counted
    from `began` (default: now). Prints the estimates when `verbose`."""
    from course_lib.qa.features import encode_examples, thin_unanswered

    if sample is None:
        from course_lib.qa.squad_v1 import sample
    began = clock() if began is None else began
    budget = time_budget.parse_budget(config["budget"], (FIXED,))  # a mistyped budget fails before any work
    fixed, epochs, batch_size = config["train_questions"], config["epochs"], config["batch_size"]
    count = PROBE_QUESTIONS if budget.minutes is not None else min(PROBE_QUESTIONS, fixed)
    # The first questions of the run (samples nest), thinned as the run thins them: the probe's windows are the
    # first of the run's.
    windows = encode_examples(tokenizer, sample("train", count), make_windows, max_length=config["max_length"],
                              stride=config["stride"])
    arrays = thin_unanswered(windows.arrays, config["unanswered"], seed=0)
    cost = measure_train_step(model, train_step, arrays, batch_size=batch_size, max_grad_norm=config["max_grad_norm"],
                              weight_decay=config["weight_decay"], device=device, clock=clock)
    per_question = cost.run_seconds(_positions(arrays, batch_size, 0), built=True) / count
    measuring = clock() - began
    shown = budget if budget.minutes is not None else time_budget.parse_budget(MINUTES_SHOWN, ())
    fitting = questions_within(shown.seconds, per_question, epochs=epochs, spent=measuring)
    questions = fitting if budget.minutes is not None else fixed
    estimates = [(FIXED, f"{fixed:,}", epochs * per_question * fixed),
                 (str(shown), f"{fitting:,}", epochs * per_question * fitting)]
    plan = TrainingPlan(str(budget), questions, cost, per_question, batch_size, epochs, measuring, estimates)
    if verbose:
        passes = "one pass" if epochs == 1 else f"{epochs} passes"
        what = f"batches of {batch_size} windows of up to {config['max_length']} tokens"
        print(time_budget.measured_line(cost, what))
        print(f"About {len(arrays['labels']) / count:.2f} training windows and {per_question:.2f} s of training steps "
              f"per question and pass; {passes}:")
        print(time_budget.estimate_table(estimates, chosen=str(budget), unit="questions"))
        print(f"This run: {questions:,} questions. A budget in minutes covers the measuring "
              f"({time_budget.duration(measuring)}) and the training steps;\nthe evaluation on the test windows after "
              "each epoch comes on top.")
    return plan
