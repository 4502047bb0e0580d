"""Assignment 06's fine-tuning, sized for this machine: measure, choose the steps, then train.

`plan_tagger` times a few real training steps of the learner's model on the encoded sentences
(course_lib.finetuning.measure_step_cost; the weights are put back) and a few validation batches, predicts each
budget's fine-tuning here, Keras's validation after each part included, and prints it. A named budget is a fixed
number of optimizer steps (None: the recipe's epochs over the data); for a budget in minutes it chooses the most steps
whose measuring and fine-tuning end within the minutes. `train_tagger` runs the plan with
course_lib.ner.training.fine_tune.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from course_lib import time_budget
from course_lib.finetuning import batch_plan, batches, lengths_of, planned_positions
from course_lib.heads import INPUT_NAMES

NAMED = {"default": None}  # section 6.4: the recipe's epochs over both training splits
VALIDATION_PROBE = 6  # validation batches timed, across their widths
# fine_tune's defaults, given to the measurement too: other settings would compile the step again.
SETTINGS = {"warmup_fraction": 0.1, "weight_decay": 0.01, "clip_norm": None}


@dataclass
class TaggerPlan:
    """What `train_tagger` runs: `steps` optimizer steps in `epochs` parts (by whole epochs when `whole_epochs`)."""

    budget: str
    steps: int
    epochs: int
    whole_epochs: bool
    predicted_seconds: float
    measuring_seconds: float
    estimates: list[tuple[str, str, float]]
    run: dict = field(repr=False, default_factory=dict)  # model, loss, train, validation, recipe


def _settings(recipe: Mapping) -> dict:
    return {key: recipe.get(key, value) for key, value in SETTINGS.items()}


def _validation_plan(validation: Mapping, batch_size: int):
    # The batches fine_tune validates on: sorted by length, at least 32 sentences each.
    return batch_plan(lengths_of(validation), max(batch_size, 32), max_length=validation["token_ids"].shape[1])


def seconds_for(cost: time_budget.StepCost, train: Mapping, recipe: Mapping, steps: int | None,
                validation_pass: float = 0.0) -> float:
    """Predicted seconds of fine_tune with `steps` (None: the recipe's epochs), a validation pass after each part.
    Both graphs are built already: the run keeps the measured training step, and timing the validation built its."""
    positions = planned_positions(train, recipe["batch_size"], epochs=recipe["epochs"], steps=steps)
    return cost.run_seconds(positions, built=True) + recipe["epochs"] * validation_pass


def steps_within(cost: time_budget.StepCost, train: Mapping, recipe: Mapping, seconds: float,
                 validation_pass: float = 0.0) -> int:
    """The most steps, a multiple of the recipe's epochs (fine_tune's equal parts), predicted to fit in `seconds`;
    one step per part when even that does not fit."""
    parts, epoch = recipe["epochs"], planned_positions(train, recipe["batch_size"])
    mean = cost.run_seconds(epoch, built=True) / len(epoch)
    high = max(1, int(2 * seconds / (mean * parts)) + 1)  # twice the rough count: the exact one is below it
    return parts * time_budget.largest_within(
        lambda n: seconds_for(cost, train, recipe, n * parts, validation_pass), seconds, high=high)


def time_validation(model, validation: Mapping, batch_size: int) -> float:
    """Seconds of one validation pass, fitted on a few batches across its widths timed in Keras's `evaluate`, whose
    compiled test step fit's validation then reuses. Run it after measure_step_cost (which compiles the model)."""
    import keras
    import numpy as np

    plan = _validation_plan(validation, batch_size)
    chosen = sorted(time_budget.spread_over_widths(plan, VALIDATION_PROBE))  # in the sorted order batches() makes
    rows = np.concatenate([plan[i][0] for i in chosen])  # batches() cuts these rows into the same batches
    probe = batches({name: np.asarray(validation[name])[rows] for name in (*INPUT_NAMES, "labels")},
                    max(batch_size, 32), shuffle=False)
    repeats = -(-(time_budget.START_STEPS + 2) // len(chosen))  # a tiny split: its batches timed again
    seconds = []

    class Timer(keras.callbacks.Callback):
        def on_test_batch_begin(self, batch, logs=None):
            self.started = time.perf_counter()

        def on_test_batch_end(self, batch, logs=None):
            seconds.append(time.perf_counter() - self.started)

    model.evaluate(probe.repeat(repeats), verbose=0, callbacks=[Timer()])
    positions = [len(plan[i][0]) * plan[i][1] for i in chosen] * repeats
    cost = time_budget.StepCost.fit(list(zip(positions, seconds, strict=True)))
    return cost.run_seconds([len(rows) * width for rows, width in plan], built=True)


def plan_tagger(model, loss: Callable, train: Mapping, recipe: Mapping, budget, *, validation: Mapping | None = None,
                named: Mapping[str, int | None] = NAMED, fixed: bool = False, since: float | None = None,
                variable: str = "BUDGET", measured: tuple[time_budget.StepCost, float] | None = None,
                verbose: bool = True, clock: Callable[[], float] = time.perf_counter) -> TaggerPlan:
    """Measure this machine on `model` and `train`, print each budget's expected fine-tuning, and choose the steps:
    a name of `named` (its steps; None: the recipe's epochs) or minutes ("6 min", counted from `since`, by default
    from this call). `fixed` (fast mode) runs the first named budget whatever `budget` says. `measured`, a StepCost
    and the seconds of a validation pass, stands for the measurement."""
    from course_lib.finetuning import measure_step_cost
    from course_lib.ner.training import token_accuracy

    began = clock()
    try:
        chosen = time_budget.parse_budget(budget, named)
    except ValueError as error:  # named for the variable the learner sets
        raise ValueError(str(error).replace("BUDGET", variable, 1)) from None
    if measured is None:
        settings = _settings(recipe)
        measured = (measure_step_cost(model, loss, train, batch_size=recipe["batch_size"], metrics=(token_accuracy,),
                                      weight_decay=settings["weight_decay"], clip_norm=settings["clip_norm"]),
                    0.0 if validation is None else time_validation(model, validation, recipe["batch_size"]))
    cost, validation_pass = measured[0], 0.0 if validation is None else measured[1]
    sizes = {name: len(planned_positions(train, recipe["batch_size"], epochs=recipe["epochs"], steps=steps))
             for name, steps in named.items()}
    estimates = [(name, f"{sizes[name]:,}", seconds_for(cost, train, recipe, steps, validation_pass))
                 for name, steps in named.items()]
    if chosen.minutes is not None:  # the steps that fit in what is left of the minutes
        left = chosen.seconds - (clock() - (began if since is None else since))
        steps = steps_within(cost, train, recipe, left, validation_pass)
        estimates.append((str(chosen), f"{steps:,}", seconds_for(cost, train, recipe, steps, validation_pass)))
    run_name = next(iter(named)) if fixed else str(chosen)
    steps = sizes[run_name] if run_name in named else steps
    predicted = next(seconds for name, _, seconds in estimates if name == run_name)
    plan = TaggerPlan(run_name, steps, recipe["epochs"], named.get(run_name, 0) is None, predicted, clock() - began,
                      estimates, {"model": model, "loss": loss, "train": train, "validation": validation,
                                  "recipe": recipe})
    if not verbose:
        return plan
    epoch, parts, sentences = planned_positions(train, recipe["batch_size"]), recipe["epochs"], len(train["labels"])
    when = f"after each of the {parts} parts" if parts > 1 else "at the end"
    print(time_budget.measured_line(cost, f"batches of {recipe['batch_size']} sentences"))
    print(f"About {cost.run_seconds(epoch, built=True) / len(epoch):.2f} s per training step"
          + ("" if validation is None else f"; Keras's validation {when} adds about "
             f"{time_budget.duration(validation_pass)} (timed on a few of its batches), counted below") + ":")
    print(time_budget.estimate_table(estimates, chosen=run_name, unit="steps"))
    if run_name != str(chosen):
        print(f"Fast mode: the fixed {steps:,} steps of {run_name!r}, whatever {variable} says.")
    elif chosen.minutes is not None and predicted > left:
        print(f"Even {steps:,} steps, one per part, take longer than the {time_budget.duration(max(left, 0))} left "
              f"of {chosen}: a larger {variable} trains more.")
    passes = steps * recipe["batch_size"] / sentences
    print(f"This run: {steps:,} steps of {recipe['batch_size']} sentences ({passes:.1f} passes over {sentences:,} "
          f"sentences) in {parts} part{'s' * (parts != 1)}, about "
          f"{time_budget.duration(predicted)} of fine-tuning; Keras's progress bar shows the rest.")
    return plan


def train_tagger(plan: TaggerPlan, *, verbose="auto"):
    """Fine-tune the plan's model as planned; return Keras's History and a report (budget, steps, sentences, seconds
    of fine-tuning and of measuring, the prediction)."""
    from course_lib.ner import training

    run, recipe = plan.run, plan.run["recipe"]
    started = time.perf_counter()
    history = training.fine_tune(run["model"], run["loss"], run["train"], run["validation"], epochs=plan.epochs,
                                 steps=None if plan.whole_epochs else plan.steps, batch_size=recipe["batch_size"],
                                 peak_learning_rate=recipe["peak_learning_rate"], verbose=verbose, **_settings(recipe))
    seconds = time.perf_counter() - started
    report = {"budget": plan.budget, "steps": len(history.steps["step"]), "sentences": len(run["train"]["labels"]),
              "fine_tuning_seconds": round(seconds, 1), "measuring_seconds": round(plan.measuring_seconds, 1),
              "predicted_seconds": round(plan.predicted_seconds, 1)}
    if verbose != 0:
        print(f"fine-tuned in {time_budget.duration(seconds)} "
              f"(predicted {time_budget.duration(plan.predicted_seconds)})")
    return history, report
