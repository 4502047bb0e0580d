"""Assignments 07 and 08: how the reader is trained on SQuAD, and what each recipe scores.

`BUDGETS` holds the recipes of notebook 07's CONFIG: "default" for a laptop, "longer" trains twice as long for a
better reader. `FIGURES` keeps what bench/squad_recipe.py measured for each (`--budget NAME --test all --record`),
which the notebooks and the README quote, never typed by hand.

`train_reader` is the fine-tuning of section 7.4, the same for the notebook and the bench: questions to windows
(the learner's `make_windows`), a share of the windows without the answer dropped, the learner's model on the
pretrained encoder, the lower layers frozen, AdamW with warm-up and linear decay.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

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
    """The recipe of a budget (a copy, to change freely), shrunk to fast mode's size when `fast`."""
    if budget not in BUDGETS:
        raise ValueError(f"unknown budget {budget!r}: choose one of {', '.join(BUDGETS)}")
    return {**BUDGETS[budget], **(FAST if fast else {})}

# SQuAD v1.1 dev, exact match / F1, as their papers report them.
PUBLISHED = (
    ("BERT-base (Devlin et al., 2019)", "12 layers, hidden 768", 80.8, 88.5),
    ("DistilBERT (Sanh et al., 2019)", "6 layers, hidden 768", 79.1, 86.9),
    ("MiniLM-L12-H384 (Wang et al., 2020)", "12 layers, hidden 384", 77.6, 85.7),
)


def train_reader(bert, examples: Sequence, recipe: dict, *, make_windows: Callable, build_qa_model: Callable,
                 verbose="auto"):
    """Fine-tune a reader on `examples` with `recipe` (a BUDGETS entry or the notebook's CONFIG), using the learner's
    `make_windows` and `build_qa_model` (the bench passes the references); return the model and a report (windows,
    tokens, seconds of fine-tuning, the History)."""
    import keras

    from course_lib.finetuning import lengths_of
    from course_lib.heads import train_top_layers
    from course_lib.qa.features import encode_examples, thin_unanswered
    from course_lib.qa.training import fine_tune_spans

    windows = encode_examples(bert.tokenizer, examples, make_windows, max_length=recipe["max_length"],
                              stride=recipe["stride"], verbose=verbose != 0)
    arrays = thin_unanswered(windows.arrays, recipe["unanswered"], seed=0)
    del windows
    keras.utils.set_random_seed(0)
    model = build_qa_model(bert.backbone)
    frozen = train_top_layers(model, recipe["train_from"])
    if verbose != 0:
        print(f"{len(arrays['labels'])} windows kept for training: every one with its answer, "
              f"{recipe['unanswered']:.0%} of the others; frozen: {', '.join(frozen) or 'nothing'}")
    started = time.perf_counter()
    history = fine_tune_spans(model, arrays, epochs=recipe["epochs"], batch_size=recipe["batch_size"],
                              peak_learning_rate=recipe["peak_learning_rate"],
                              warmup_fraction=recipe["warmup_fraction"], weight_decay=recipe["weight_decay"],
                              clip_norm=recipe.get("clip_norm"), verbose=verbose)
    seconds = time.perf_counter() - started
    report = {"questions": len(examples), "windows": int(len(arrays["labels"])),
              "tokens": int(lengths_of(arrays).sum()), "fine_tuning_seconds": round(seconds, 1), "history": history}
    if verbose != 0:
        print(f"fine-tuned on {report['windows']} windows of {len(examples)} questions in {seconds:.0f} s "
              f"({recipe['epochs'] * report['windows'] / seconds:.1f} windows per second)")
    return model, report


def read_figures(path: Path = FIGURES) -> dict:
    """What the bench measured for each budget ({} before the first --record)."""
    return json.loads(path.read_text()) if path.is_file() else {}


def record_figures(budget: str, row: dict, path: Path = FIGURES) -> None:
    """Keep a bench run's figures for `budget` (bench/squad_recipe.py --record)."""
    figures = read_figures(path)
    keep = ("questions", "windows", "fine_tuning_seconds", "peak_rss_gib", "validation", "test")
    figures[budget] = {"recipe": row["recipe"], **{key: row[key] for key in keep if key in row}}
    path.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")


def minutes(seconds: float) -> str:
    """A duration as the notebooks write it: "4 min 50 s", "52 min"."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds >= 600:
        return f"{round(seconds / 60)} min"
    return f"{seconds // 60} min {seconds % 60} s"


def figures_markdown(figures: dict | None = None) -> str:
    """The budgets next to published readers on SQuAD v1.1 dev: a Markdown table for the notebooks and the README."""
    figures = read_figures() if figures is None else figures
    lines = ["| reader | encoder | fine-tuning | SQuAD v1.1 dev EM | F1 |", "| --- | --- | --- | --- | --- |"]
    for name in BUDGETS:
        if name in figures and "test" in figures[name]:
            row = figures[name]
            label = f"this course's reader, recipe `{name}` ({row['questions']:,} questions)"
            lines.append(f"| {label} | all-MiniLM-L6-v2, 6 layers, hidden 384 | "
                         f"{minutes(row['fine_tuning_seconds'])} on 2 CPU cores | "
                         f"{row['test']['em']:.1f} | {row['test']['f1']:.1f} |")
    for name, encoder, em, f1 in PUBLISHED:
        lines.append(f"| {name} | {encoder} | on GPUs or TPUs | {em:.1f} | {f1:.1f} |")
    return "\n".join(lines)
