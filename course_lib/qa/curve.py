"""Assignment 07: the reader's quality against the questions it trained on, and a score's uncertainty.

The bench trains the default recipe on nested seeded samples of SQuAD's training questions (1,500, 3,000, and the
budgets' 6,000 and 12,000) and scores each on the same 1,000 validation questions (bench/squad_recipe.py
--record-curve; the named budgets' points come from reader_figures.json). `plot_curve` draws them with the learner's
own run marked, and `bootstrap_interval` gives the 95% interval of a mean score over a sample of questions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from course_lib.qa.budgets import BUDGETS, read_figures

CURVE = Path(__file__).resolve().parent / "data" / "reader_curve.json"


def bootstrap_interval(values: Sequence[float], *, level: float = 0.95, draws: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """The `level` interval of the mean of `values` by the bootstrap: the mean of `draws` resamples (with
    replacement, as many as the values), cut at the tails."""
    values = np.asarray(values, float)
    if values.size == 0:
        raise ValueError("no scores to bootstrap: evaluate at least one question")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, (draws, values.size))].mean(axis=1)
    tail = (1.0 - level) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))


def scored_with_interval(result: dict) -> str:
    """"F1 57.2 (95% interval 54.1-60.3), EM 42.3 on 1,000 questions" for an answering.evaluate result."""
    low, high = bootstrap_interval([100 * row["f1"] for row in result["rows"]])
    return (f"F1 {result['f1']:4.1f} (95% interval {low:.1f}-{high:.1f}), EM {result['exact_match']:4.1f} "
            f"on {result['questions']:,} questions")


def read_curve(path: Path = CURVE) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def record_point(row: dict, path: Path = CURVE) -> None:
    """Keep a bench run of the default recipe (any number of questions) as a point of the curve."""
    from course_lib.machine import describe

    recipe = {key: value for key, value in row["recipe"].items() if key not in ("questions", "budget")}
    default = {key: value for key, value in BUDGETS["default"].items() if key != "questions"}
    if recipe != default:
        raise ValueError("a point of the curve is the default recipe with another number of questions; this run "
                         f"differs in {sorted(key for key in default if recipe.get(key) != default[key])}")
    curve = read_curve(path)
    curve[str(row["questions"])] = {"questions": row["questions"], "windows": row["windows"],
                                    "fine_tuning_seconds": row["fine_tuning_seconds"],
                                    "validation": row["validation"], "machine": row.get("machine") or describe()}
    path.write_text(json.dumps(curve, indent=1, sort_keys=True) + "\n")


def points(curve: dict | None = None, figures: dict | None = None) -> list[dict]:
    """Every measured point, by questions: the curve's runs and the named budgets' validation scores."""
    curve = read_curve() if curve is None else curve
    figures = read_figures() if figures is None else figures
    found = {int(point["questions"]): point for point in curve.values()}
    for name, figure in figures.items():
        if figure.get("recipe", {}).get("questions") == figure.get("questions") and "validation" in figure:
            found.setdefault(int(figure["questions"]), {**figure, "budget": name})
    return [found[questions] for questions in sorted(found)]


def plot_curve(mine: dict | None = None, *, curve: dict | None = None, figures: dict | None = None):
    """Validation F1 against training questions (log scale), the learner's run (questions, f1, interval) marked."""
    import matplotlib.pyplot as plt

    measured = points(curve, figures)
    fig, axis = plt.subplots(figsize=(6.5, 3.6), constrained_layout=True)
    axis.plot([p["questions"] for p in measured], [p["validation"]["f1"] for p in measured], "o-", color="#4c72b0",
              label="the course's bench (1,000 validation questions)")
    for point in measured:
        axis.annotate(point.get("budget") or f"{point['questions']:,}", (point["questions"], point["validation"]["f1"]),
                      textcoords="offset points", xytext=(4, -12), fontsize=8)
    if mine is not None:
        low, high = mine.get("interval", (mine["f1"], mine["f1"]))
        axis.errorbar([mine["questions"]], [mine["f1"]], yerr=[[mine["f1"] - low], [high - mine["f1"]]], fmt="D",
                      color="#c44e52", capsize=4, label="your reader (95% interval)")
    axis.set_xscale("log")
    axis.set_xlabel("training questions seen (one pass)")
    axis.set_ylabel("validation F1")
    axis.set_title("This encoder's quality follows the data it sees")
    axis.legend(loc="lower right", fontsize=8)
    return fig
