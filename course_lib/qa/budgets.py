"""Assignments 07 and 08: how the reader is trained on SQuAD, and what each recipe scores.

`BUDGETS` holds the recipes of notebook 07's CONFIG, of fixed sizes: "default", and "longer", which trains twice as
long for a better reader. A budget in minutes ("10 min", the notebooks' default) is the default recipe with as many
questions as this machine fine-tunes on in that time (course_lib.qa.training_plan). `FIGURES` keeps what
bench/squad_recipe.py measured for each (`--budget NAME --test all --record`), with the machine it ran on, which the
notebooks and the README quote, never typed by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from course_lib.published import SQUAD_V1_DEV
from course_lib.time_budget import duration, parse_budget

FIGURES = Path(__file__).resolve().parent / "data" / "reader_figures.json"

BUDGETS = {
    "default": {
        "questions": 6000,  # seeded SQuAD training questions (course_lib.qa.squad_v1.sample)
        "max_length": 192,  # tokens per training window, [CLS] and [SEP]s included
        "stride": 64,  # tokens shared by consecutive windows of a long context
        "read_max_length": 256,  # tokens per window when reading: fewer answers cut, and reading needs no backward pass
        "unanswered": 0.2,  # share of the training windows without the answer that are kept
        "train_from": 2,  # encoder layers from this one up train; the embeddings and the layers below do not
        "epochs": 1,
        "batch_size": 8,
        # Far above BERT's 5e-5 for SQuAD v1.1: a small encoder, frozen lower layers and one short pass need it.
        "peak_learning_rate": 4e-4,
        "warmup_fraction": 0.1,
        "weight_decay": 0.01,
        "clip_norm": 1.0,  # the gradients' global norm at most 1, as BERT and notebook 08's loop do
    },
}
# Twice the questions, every other value the default's: more questions seen bought more F1 per CPU-minute
# than training every layer did, and training windows of 128 tokens cost more time for a lower validation F1.
BUDGETS["longer"] = {**BUDGETS["default"], "questions": 12000}
# Fast mode (COURSE_FAST=1, CI): a few steps on a few short windows, only to see the loss fall.
FAST = {"questions": 16, "epochs": 2, "max_length": 128, "read_max_length": 128, "stride": 32}


def recipe(budget: str = "default", *, fast: bool = False) -> dict:
    """The recipe of a budget, "default", "longer" or minutes ("10 min": the default recipe, its questions chosen
    when the machine is measured), as a copy to change freely, with its "budget"; shrunk to fast mode's size when
    `fast`."""
    chosen = parse_budget(budget, BUDGETS)
    base = dict(BUDGETS[chosen.name or "default"])
    if chosen.minutes is not None:
        base["questions"] = None  # chosen from this machine's measured speed (training_plan.plan_reader)
    return {"budget": str(chosen), **base, **(FAST if fast else {})}

def read_figures(path: Path = FIGURES) -> dict:
    """What the bench measured for each budget ({} before the first --record)."""
    return json.loads(path.read_text()) if path.is_file() else {}


def record_figures(budget: str, row: dict, path: Path = FIGURES) -> None:
    """Keep a bench run's figures for `budget` (bench/squad_recipe.py --record), with the machine it ran on; the
    same budget measured on another kind of machine stays beside it."""
    from course_lib.machine import describe, kept_beside

    figures = read_figures(path)
    keep = ("questions", "windows", "fine_tuning_seconds", "measuring_seconds", "predicted_seconds", "peak_rss_gib",
            "validation", "test")
    measured = {"recipe": {key: value for key, value in row["recipe"].items() if key != "budget"},
                **{key: row[key] for key in keep if key in row}, "machine": row.get("machine") or describe()}
    figures[budget] = kept_beside(figures.get(budget), measured)
    path.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")


def figures_markdown(figures: dict | None = None) -> str:
    """The budgets next to published readers on SQuAD v1.1 dev: a Markdown table for the notebooks and the README."""
    figures = read_figures() if figures is None else figures
    from course_lib.machine import label

    lines = ["| reader | encoder | fine-tuning | SQuAD v1.1 dev EM | F1 |", "| --- | --- | --- | --- | --- |"]
    named = [name for name in BUDGETS if name in figures]
    for name in named + sorted(set(figures) - set(named)):  # the named budgets, then budgets in minutes
        row = figures[name]
        if "test" not in row:
            continue
        kind = "recipe" if name in BUDGETS else "budget"
        reader = f"this course's reader, {kind} `{name}` ({row['questions']:,} questions)"
        lines.append(f"| {reader} | all-MiniLM-L6-v2, 6 layers, hidden 384 | "
                     f"{duration(row['fine_tuning_seconds'])} on {label(row['machine'])} | "
                     f"{row['test']['em']:.1f} | {row['test']['f1']:.1f} |")
    for result in SQUAD_V1_DEV:
        reader = f"{result.system}: {result.note}" if result.note else result.system
        lines.append(f"| {reader} ({result.source}) | {result.encoder} | on GPUs or TPUs | "
                     f"{result.scores['EM']:.1f} | {result.scores['F1']:.1f} |")
    return "\n".join(lines)
