"""Assignment 07's fine-tuning, sized for this machine: measure, choose the questions, then train.

`plan_reader` encodes the first questions of the seeded training sample with the learner's `make_windows`, builds the
learner's model on the pretrained encoder with the lower layers frozen, and times a few real training steps on them
(course_lib.finetuning.measure_step_cost; the weights are put back). From that it predicts each budget's fine-tuning
time on this machine and prints them; for a budget in minutes it chooses how many questions fit, so that the
measurement and the fine-tuning together take the minutes asked. `train_reader` then fine-tunes: AdamW with warm-up
and linear decay set for the steps of the run, the same for the notebook and the bench.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from course_lib import time_budget
from course_lib.qa.budgets import BUDGETS

# Questions whose windows the measurement trains on; the windows per question come from them too.
PROBE_QUESTIONS = 400
# Questions encoded beyond the first estimate for a budget in minutes, so that the exact plan can still grow.
MARGIN = 1.15


@dataclass
class ReaderPlan:
    """What `train_reader` trains: the model, the questions and their windows, and the predicted time."""

    recipe: dict
    model: object
    frozen: list[str]
    examples: Sequence
    arrays: dict
    cost: time_budget.StepCost
    predicted_seconds: float
    measuring_seconds: float
    estimates: list[tuple[str, str, float]] = field(default_factory=list)


def _windows(tokenizer, examples, recipe, make_windows, verbose=False):
    from course_lib.qa.features import encode_examples

    return encode_examples(tokenizer, examples, make_windows, max_length=recipe["max_length"],
                           stride=recipe["stride"], verbose=verbose)


def _first(windows, arrays_of: Callable, count: int) -> dict:
    """The training arrays of the first `count` questions (thinning draws one number per window in order, so the
    windows kept of a prefix are the prefix of those kept of all)."""
    return arrays_of({name: values[windows.example < count] for name, values in windows.arrays.items()})


def plan_reader(bert, recipe: dict, *, make_windows: Callable, build_qa_model: Callable, examples=None,
                verbose: bool = True, sample: Callable | None = None, measure: Callable | None = None,
                clock: Callable[[], float] = time.perf_counter) -> ReaderPlan:
    """Measure this machine on `recipe`'s model and windows, print each budget's expected fine-tuning time, and
    choose the questions: `examples` when given, else the first `recipe["questions"]` of the seeded training sample,
    or as many as fit in the minutes of a budget in minutes (recipe["questions"] None). `sample`, `measure` (model,
    arrays -> StepCost) and `clock` stand in for SQuAD, the timed steps and the clock in tests."""
    import keras

    from course_lib.finetuning import measure_step_cost, planned_positions
    from course_lib.heads import train_top_layers
    from course_lib.qa.features import thin_unanswered
    from course_lib.qa.training import exact_span, span_loss, stacked

    if sample is None:
        from course_lib.qa.squad_v1 import sample
    began = clock()
    budget = time_budget.parse_budget(recipe.get("budget", "default"), BUDGETS)
    pool = list(examples) if examples is not None else None
    questions = len(pool) if pool is not None else recipe["questions"]
    probe_count = min(PROBE_QUESTIONS, questions or PROBE_QUESTIONS)
    probe_examples = pool[:probe_count] if pool is not None else sample("train", probe_count)

    def arrays_of(arrays):
        return thin_unanswered(arrays, recipe["unanswered"], seed=0)

    def positions(arrays):
        return planned_positions(arrays, recipe["batch_size"], epochs=recipe["epochs"])

    probe_arrays = arrays_of(_windows(bert.tokenizer, probe_examples, recipe, make_windows).arrays)
    keras.utils.set_random_seed(0)
    model = build_qa_model(bert.backbone)
    frozen = train_top_layers(model, recipe["train_from"])
    if measure is None:
        def measure(model, arrays):
            return measure_step_cost(stacked(model), span_loss, arrays, batch_size=recipe["batch_size"],
                                     weight_decay=recipe["weight_decay"], clip_norm=recipe.get("clip_norm"),
                                     metrics=(exact_span,))
    cost = measure(model, probe_arrays)
    # The run keeps the measured step's compiled graph: its steps cost what the steady steps cost.
    per_question = cost.run_seconds(positions(probe_arrays), built=True) / len(probe_examples)
    windows_per_question = len(probe_arrays["labels"]) / len(probe_examples)
    measuring = clock() - began

    def rough(count):
        return per_question * count

    if questions is None:  # a budget in minutes: the questions that fit in what is left of it
        questions = max(1, int((budget.seconds - measuring) / per_question))
        pool = sample("train", max(probe_count, int(questions * MARGIN)))
    elif pool is None:
        pool = sample("train", questions)
    windows = _windows(bert.tokenizer, pool, recipe, make_windows, verbose=verbose)
    if budget.minutes is not None and examples is None and recipe["questions"] is None:
        left = budget.seconds - (clock() - began)
        questions = time_budget.largest_within(
            lambda n: cost.run_seconds(positions(_first(windows, arrays_of, n)), built=True), left, high=len(pool))
    arrays = _first(windows, arrays_of, questions)
    predicted = cost.run_seconds(positions(arrays), built=True)
    estimates = [(name, f"{BUDGETS[name]['questions']:,}", rough(BUDGETS[name]["questions"])) for name in BUDGETS]
    this_run = str(budget)
    if budget.name is not None and BUDGETS[budget.name]["questions"] == questions:
        estimates = [(name, amount, predicted if name == this_run else seconds) for name, amount, seconds in estimates]
    else:  # minutes, or a recipe whose questions were changed
        this_run = this_run if budget.minutes is not None else "this run"
        estimates.append((this_run, f"{questions:,}", predicted))
    plan = ReaderPlan(recipe={**recipe, "questions": questions}, model=model, frozen=frozen,
                      examples=pool[:questions], arrays=arrays, cost=cost, predicted_seconds=predicted,
                      measuring_seconds=clock() - began, estimates=estimates)
    if verbose:
        print(time_budget.measured_line(cost, f"{recipe['batch_size']} windows of up to {recipe['max_length']} tokens"))
        print(f"About {windows_per_question:.2f} training windows and {per_question:.2f} s of fine-tuning per "
              "question:")
        print(time_budget.estimate_table(estimates, chosen=this_run, unit="questions"))
        print(f"This run: {questions:,} questions, {len(arrays['labels']):,} windows, about "
              f"{time_budget.duration(predicted)} of fine-tuning; Keras's progress bar shows the rest.")
    return plan


def train_reader(plan: ReaderPlan, *, verbose="auto"):
    """Fine-tune the plan's model on its windows; return the model and a report (questions, windows, tokens,
    seconds of fine-tuning and of measuring, the prediction, the History)."""
    from course_lib.finetuning import lengths_of
    from course_lib.qa.training import fine_tune_spans

    recipe, arrays = plan.recipe, plan.arrays
    if verbose != 0:
        print(f"{len(arrays['labels'])} windows kept for training: every one with its answer, "
              f"{recipe['unanswered']:.0%} of the others; frozen: {', '.join(plan.frozen) or 'nothing'}")
    started = time.perf_counter()
    history = fine_tune_spans(plan.model, arrays, epochs=recipe["epochs"], batch_size=recipe["batch_size"],
                              peak_learning_rate=recipe["peak_learning_rate"],
                              warmup_fraction=recipe["warmup_fraction"], weight_decay=recipe["weight_decay"],
                              clip_norm=recipe.get("clip_norm"), verbose=verbose)
    seconds = time.perf_counter() - started
    report = {"budget": recipe.get("budget", "default"), "questions": len(plan.examples),
              "windows": int(len(arrays["labels"])), "tokens": int(np.sum(lengths_of(arrays))),
              "fine_tuning_seconds": round(seconds, 1), "measuring_seconds": round(plan.measuring_seconds, 1),
              "predicted_seconds": round(plan.predicted_seconds, 1), "history": history}
    if verbose != 0:
        print(f"fine-tuned on {report['windows']} windows of {report['questions']} questions in "
              f"{time_budget.duration(seconds)} (predicted {time_budget.duration(plan.predicted_seconds)}; "
              f"{recipe['epochs'] * report['windows'] / seconds:.1f} windows per second)")
    return plan.model, report
