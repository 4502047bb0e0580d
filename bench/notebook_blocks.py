"""Sentences and tables of figures in the notebooks and the README, written from what the benches recorded.

    .venv/bin/python bench/notebook_blocks.py           # rewrite every block in solutions/*/*.ipynb and README.md
    .venv/bin/python bench/notebook_blocks.py --check   # exit 1, naming each block that differs (a test runs it)

A block is Markdown between two HTML comments, which JupyterLab and GitHub do not show:

    <!-- figures: reader-budgets -->
    ...generated text...
    <!-- end figures -->

Its name picks a renderer in RENDERERS, which writes it from the recorded figures: bench/notebook_figures.json
(bench/notebook_time.py --record: a notebook's time, memory and what it recorded with env.record_results),
course_lib/qa/data/reader_figures.json (bench/squad_recipe.py --record) and bench/ner_figures.json
(bench/ner_recipe.py --record). Run `make release` after a rewrite, so
that notebooks/ follows solutions/.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
NOTEBOOK_FIGURES = REPO / "bench" / "notebook_figures.json"
NER_FIGURES = REPO / "bench" / "ner_figures.json"  # bench/ner_recipe.py --record
BLOCK = re.compile(r"(<!-- figures: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end figures -->)", re.S)


class BlockError(ValueError):
    """A block whose name has no renderer, or whose figures were never recorded."""


def recorded_figures() -> dict:
    from course_lib.qa.budgets import read_figures

    notebooks = json.loads(NOTEBOOK_FIGURES.read_text()) if NOTEBOOK_FIGURES.is_file() else {}
    ner = json.loads(NER_FIGURES.read_text()) if NER_FIGURES.is_file() else {}
    return {"notebooks": notebooks, "reader": read_figures(), "ner": ner}


def _label(machine: dict) -> str:
    from course_lib.machine import label

    return label(machine)


def _machine(figures: dict, stem: str) -> str:
    """The machine a notebook's recorded run was measured on, in words."""
    return _label(figures["notebooks"][stem]["machine"])


def _reader_budgets(figures: dict) -> str:
    from course_lib.qa.budgets import figures_markdown

    return figures_markdown(figures["reader"])


def _duration(seconds: float) -> str:
    from course_lib.time_budget import duration

    return duration(seconds)


def _reader_budgets_comment(figures: dict) -> str:
    from course_lib.qa.budgets import PUBLISHED

    reader = figures["reader"]
    default = reader["default"]
    best_em = min(em for _, _, em, _ in PUBLISHED)
    from course_lib.machine import label

    text = (f"The `default` recipe's reader finds exactly the right words for {default['test']['em']:.0f} questions "
            f"in 100 "
            f"(F1 {default['test']['f1']:.1f}), after {_duration(default['fine_tuning_seconds'])} of fine-tuning on "
            f"{default['questions']:,} questions, on {label(default['machine'])}.")
    if "longer" in reader:
        longer = reader["longer"]
        text += (f" The `longer` budget, {longer['questions']:,} questions in "
                 f"{_duration(longer['fine_tuning_seconds'])}, reaches EM {longer['test']['em']:.1f} and F1 "
                 f"{longer['test']['f1']:.1f}.")
    return text + (
        f" Published readers reach EM {best_em:.1f} and more, with a bigger budget on every count: encoders that are "
        "deeper or wider, whose last training was language modelling (all-MiniLM-L6-v2's was sentence similarity, "
        "which scores whole sentences rather than positions in them), fine-tuned on every training question for "
        "several passes on accelerators. On this encoder the score keeps rising with the questions seen, so time "
        "buys quality. Times depend on the machine: the same recipe took about half as long on a two-core CPU "
        "with AVX-512, which is why the notebook measures yours before it trains.")


def _qa_pytorch(figures: dict) -> dict:
    """What notebook 08 recorded (env.record_results) when bench/notebook_time.py last ran it with --record."""
    return figures["notebooks"]["08_qa_pytorch"]["recorded"]


def _power_of_ten(value: float) -> str:
    """A small positive number in LaTeX, as 9.9 times 10 to the -5."""
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"${mantissa} \\times 10^{{{int(exponent)}}}$"


def _time_sentence(figures: dict, stem: str, section: str) -> str:
    """A notebook's **Time.** sentence: its recorded wall time and peak memory, its budget, and the share of
    measuring the machine and fine-tuning."""
    run = figures["notebooks"][stem]
    recorded = run["recorded"]
    tuning = recorded.get("fine_tuning_seconds", recorded.get("fine_tune_seconds"))
    measuring = recorded.get("measuring_seconds", 0.0)
    budget = f", with the default budget of {recorded['budget']}," if "min" in str(recorded.get("budget", "")) else ""
    spent = (f"{_duration(measuring + tuning)} of it measuring the machine and fine-tuning (section {section})"
             if measuring else f"{_duration(tuning)} of it the fine-tuning of section {section}")
    return (f"**Time.** In full mode{budget} the notebook took about {_duration(run['wall_seconds'])} on "
            f"{_label(run['machine'])}, and at most {run['peak_memory_mib'] / 1024:.1f} GiB of memory, {spent}. "
            "Nothing in it needs a network.")


def _qa_time(figures: dict) -> str:
    return _time_sentence(figures, "07_qa", "7.4")


def _qa_evaluation(figures: dict) -> str:
    """07's evaluation in its recorded run: how long the samples took, what the whole split would, an interval."""
    run = figures["notebooks"]["07_qa"]
    recorded = run["recorded"]
    read = sum(score["questions"] for score in recorded["scores"].values())
    test = recorded["scores"]["SQuAD test (dev)"]
    low, high = test["interval"]
    whole = recorded["reading_seconds"] * 10570 / read
    return (f"On {_label(run['machine'])}, the three samples, {read:,} questions, were read in "
            f"{_duration(recorded['reading_seconds'])}; the whole test split would have taken about "
            f"{_duration(whole)}. The {test['questions']:,} test questions scored F1 {test['f1']:.1f}, with a 95% "
            f"interval from {low:.1f} to {high:.1f}: {high - low:.0f} points wide.")


def _qa_pytorch_time(figures: dict) -> str:
    return _time_sentence(figures, "08_qa_pytorch", "8.6")


def _qa_pytorch_run(figures: dict) -> str:
    import math

    recorded = _qa_pytorch(figures)
    seconds, windows, epochs = recorded["fine_tune_seconds"], recorded["train_windows"], recorded["epochs"]
    scores, width = recorded["scores"], recorded["test_width"]
    em, questions = scores["exact_match"], scores["questions"]
    # EM is a share of questions answered exactly: its standard error on n questions is sqrt(p (1 - p) / n).
    error = 100 * math.sqrt(em / 100 * (1 - em / 100) / questions)
    passes = "one pass" if epochs == 1 else f"{epochs} passes"
    on = _machine(figures, "08_qa_pytorch")
    return (f"In full mode, on {on}, {passes} over {windows:,} windows of {recorded['train_questions']:,} "
            f"training questions took {_duration(seconds)} ({epochs * windows / seconds:.1f} windows per second). "
            f"After it the loss on the test windows was {recorded['test_loss']:.2f}; a model that knows nothing, "
            f"with equal logits at the {width} positions of a test batch, scores $\\log {width} \\approx "
            f"{math.log(width):.2f}$. The answers scored EM {em:.1f} and F1 {scores['f1']:.1f} on {questions:,} "
            f"questions of SQuAD dev (on so few questions EM's standard error is about {error:.1f} points: another "
            "sample of as many could score a few points higher or lower).")


def _qa_pytorch_vs_budget(figures: dict) -> str:
    recorded, budget = _qa_pytorch(figures), figures["reader"]["default"]
    test, ours = budget["test"], recorded["train_questions"]
    ratio = budget["questions"] / ours
    text = (f"Assignment 7's `default` recipe, of fixed size, trains the same recipe with Keras's `fit` on "
            f"{budget['questions']:,} "
            f"questions in {_duration(budget['fine_tuning_seconds'])} (on {_label(budget['machine'])}), and scores EM "
            f"{test['em']:.1f} and F1 "
            f"{test['f1']:.1f} on {test['questions']:,} questions of SQuAD dev.")
    if ratio >= 1.1 and test["f1"] > recorded["scores"]["f1"]:
        text += (f" With the same recipe, and frameworks that compute the same thing (section 8.7), its "
                 f"{ratio:.1f} times as many training questions make the better reader.")
    return text


def _qa_pytorch_agreement(figures: dict) -> str:
    recorded = _qa_pytorch(figures)
    difference, scale = recorded["max_logit_difference"], recorded["logit_scale"]
    return (f"In full mode, over the {recorded['compared_windows']} windows compared, the largest difference was "
            f"{_power_of_ten(difference)}, on logits as large as {scale:.1f}: {_power_of_ten(difference / scale)} "
            "of their size.")


def _qa_pytorch_throughput(figures: dict) -> str:
    recorded = _qa_pytorch(figures)
    rates, timing = recorded["throughput"], recorded["timing"]
    tensorflow, pytorch = rates["TensorFlow"], rates["PyTorch"]
    faster, slower = ("TensorFlow", "PyTorch") if tensorflow >= pytorch else ("PyTorch", "TensorFlow")
    ratio = max(tensorflow, pytorch) / min(tensorflow, pytorch)
    verdict = ("within 10% of each other" if ratio < 1.1
               else f"{faster}'s step {ratio:.1f} times as fast as {slower}'s")
    loop = recorded["epochs"] * recorded["train_windows"] / recorded["fine_tune_seconds"]
    threads = f"{timing['threads']} CPU thread{'s' * (timing['threads'] != 1)}"
    return (f"In full mode, on {_machine(figures, '08_qa_pytorch')}, with {threads} in each framework and batches of "
            f"{timing['batch_size']} windows of {timing['width']} tokens, TensorFlow's step ran at {tensorflow:.1f} "
            f"examples per second and PyTorch's at {pytorch:.1f}: {verdict}. Section 8.6's loop, the same PyTorch "
            f"step on batches of every width, averaged {loop:.1f} windows per second.")


def _ner_time(figures: dict) -> str:
    return _time_sentence(figures, "06_ner", "6.4")


def _f1(run: dict, corpus: str, split: str = "validation") -> str:
    return f"{run[f'{split}_f1'][corpus]['micro']:.3f}"


def _ner_frozen_layers(figures: dict) -> str:
    """6.4's recorded run (the notebook's default budget) and the fixed recipe's bench figures, with their machines."""
    run = figures["notebooks"]["06_ner"]
    recorded, fixed = run["recorded"], figures["ner"]["notebook"]
    scores = (f"a validation F1 of {recorded['real_validation_scores']['micro']['f1']:.3f} on the real-text corpus and "
              f"{recorded['validation_scores']['micro']['f1']:.3f} on the course corpus")
    if "min" in str(recorded.get("budget", "")):
        passes = recorded["steps"] * 16 / recorded["train_sentences"]  # batches of 16 sentences (CONFIG)
        text = (f"On {_label(run['machine'])}, the default budget of {recorded['budget']} trained "
                f"{recorded['steps']:,} steps ({passes:.1f} passes over {recorded['train_sentences']:,} sentences) in "
                f"{_duration(recorded['fine_tuning_seconds'])}, after {_duration(recorded['measuring_seconds'])} of "
                f"measuring, for {scores}.")
    else:
        text = (f"On {_label(run['machine'])} this recipe ({recorded['epochs']} epochs over "
                f"{recorded['train_sentences']:,} sentences) fine-tuned in "
                f"{_duration(recorded['fine_tune_seconds'])}, for {scores}.")
    return text + (f" The fixed recipe `\"default\"` ({fixed['epochs']} epochs, {fixed['steps']:,} steps) took "
                   f"{_duration(fixed['seconds'])} on {_label(fixed['machine'])} (bench/ner_recipe.py), for "
                   f"validation F1s of {_f1(fixed, 'real')} and {_f1(fixed, 'course')}. Section 6.9's recipe trains "
                   "every layer.")


def _ner_own_file(figures: dict) -> str:
    own, long = figures["ner"]["own-file"], figures["ner"]["own-file-long"]
    return (f"Measured with the real-text corpus standing in for your file ({own['train_sentences']:,} training "
            f"sentences; its test split to score): {own['steps']:,} steps, every layer trained (`OWN_RECIPE`'s "
            f"800 rounded up to whole epochs, as the notebook then did), reached a test F1 of "
            f"{_f1(own, 'real', 'test')} in {_duration(own['seconds'])} on {_label(own['machine'])}; a run "
            f"{long['steps'] / own['steps']:.0f} times as long ({long['steps']:,} steps, {_duration(long['seconds'])}) "
            f"reached {_f1(long, 'real', 'test')} "
            f"(`bench/ner_recipe.py --train real --steps N --train-from 0 --lr {own['lr']:g} --test`).")


RENDERERS: dict[str, Callable[[dict], str]] = {
    "ner-time": _ner_time,
    "ner-frozen-layers": _ner_frozen_layers,
    "ner-own-file": _ner_own_file,
    "reader-budgets": _reader_budgets,
    "reader-budgets-comment": _reader_budgets_comment,
    "qa-time": _qa_time,
    "qa-evaluation": _qa_evaluation,
    "qa-pytorch-time": _qa_pytorch_time,
    "qa-pytorch-run": _qa_pytorch_run,
    "qa-pytorch-vs-budget": _qa_pytorch_vs_budget,
    "qa-pytorch-agreement": _qa_pytorch_agreement,
    "qa-pytorch-throughput": _qa_pytorch_throughput,
}



def rewrite(text: str, figures: dict, where: str = "text") -> str:
    """`text` with every block rendered again from `figures`."""

    def render(match: re.Match) -> str:
        name = match["name"]
        if name not in RENDERERS:
            raise BlockError(f"{where}: a block names {name!r}, which has no renderer in bench/notebook_blocks.py "
                             f"(known: {', '.join(sorted(RENDERERS))})")
        try:
            body = RENDERERS[name](figures)
        except KeyError as missing:
            raise BlockError(f"{where}: block {name!r} needs figures that were never recorded ({missing}): run "
                             "the bench that records them") from None
        return match.group(1) + body + "\n" + match.group(4)

    return BLOCK.sub(render, text)


def targets() -> list[Path]:
    return sorted(REPO.glob("solutions/*/*.ipynb")) + [REPO / "README.md"]


def rewritten(path: Path, figures: dict) -> str:
    """The file's new text (a notebook: each Markdown cell's blocks rewritten, the JSON laid out as nbformat does)."""
    text = path.read_text()
    if path.suffix != ".ipynb":
        return rewrite(text, figures, str(path.relative_to(REPO)))
    import nbformat

    notebook = nbformat.reads(text, as_version=4)
    changed = False
    for number, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown" and "<!-- figures:" in cell.source:
            new = rewrite(cell.source, figures, f"{path.relative_to(REPO)}, cell {number}")
            changed, cell.source = changed or new != cell.source, new
    # Only a changed notebook is written again (as nbformat lays it out, like make release).
    return nbformat.writes(notebook) + "\n" if changed else text


def main(argv=None) -> int:
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    figures = recorded_figures()
    stale = []
    for path in targets():
        new = rewritten(path, figures)
        if new != path.read_text():
            stale.append(str(path.relative_to(REPO)))
            if not check:
                path.write_text(new)
    if check and stale:
        print(f"figures differ from the recorded ones in {', '.join(stale)}: run .venv/bin/python "
              "bench/notebook_blocks.py, then make release")
        return 1
    print(("rewrote " + ", ".join(stale)) if stale and not check else "every block is up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
