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
    from course_lib.machine import label
    from course_lib.published import SQUAD_V1_DEV

    reader = figures["reader"]
    default = reader["default"]
    text = (f"The `default` recipe's reader finds exactly the right words for {default['test']['em']:.0f} questions "
            f"in 100 (F1 {default['test']['f1']:.1f}), after {_duration(default['fine_tuning_seconds'])} of "
            f"fine-tuning on {default['questions']:,} questions, on {label(default['machine'])}.")
    if "longer" in reader:
        longer = reader["longer"]
        text += (f" The `longer` budget, {longer['questions']:,} questions in "
                 f"{_duration(longer['fine_tuning_seconds'])}, reaches EM {longer['test']['em']:.1f} and F1 "
                 f"{longer['test']['f1']:.1f}.")
    low, high = (min(SQUAD_V1_DEV, key=lambda result: result.scores["EM"]),
                 max(SQUAD_V1_DEV, key=lambda result: result.scores["EM"]))
    return text + (
        f" The published readers in the table score from EM {low.scores['EM']:.1f} ({low.system}, "
        f"{low.source}) to {high.scores['EM']:.1f} ({high.system}, {high.source}), with a bigger budget on every "
        "count: encoders that are deeper or wider, whose last training was language modelling (all-MiniLM-L6-v2's "
        "was sentence similarity, which scores whole sentences rather than positions in them), fine-tuned on every "
        "training question for several passes on accelerators. On this encoder the score keeps rising with the "
        "questions seen, so time buys quality. Times depend on the machine, which is why the notebook measures "
        "yours before it trains.")


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
            f"interval from {low:.1f} to {high:.1f}: {high - low:.0f} points wide.{_qa_course_gap(recorded)}")


def _overlap(first: dict, second: dict) -> str:
    """Whether two scores' 95% intervals overlap, as a verb phrase."""
    (low, high), (other_low, other_high) = first["interval"], second["interval"]
    return "overlaps" if low <= other_high and other_low <= high else "does not overlap"


def _qa_course_gap(recorded: dict) -> str:
    """The course set's sample beside SQuAD's validation and test samples: its score, and which intervals overlap."""
    scores = recorded["scores"]
    course, validation, test = scores["course set, test"], scores["SQuAD validation"], scores["SQuAD test (dev)"]
    (low, high), (other_low, other_high) = course["interval"], validation["interval"]
    return (f" The course set's {course['questions']:,} questions scored F1 {course['f1']:.1f} ({low:.1f} to "
            f"{high:.1f}) and SQuAD's {validation['questions']:,} validation questions F1 {validation['f1']:.1f} "
            f"({other_low:.1f} to {other_high:.1f}): the course set's interval {_overlap(course, validation)} "
            f"validation's and {_overlap(course, test)} the test sample's.")


# Where a missed answer's span lay against SQuAD's answers' (course_lib.qa.demo.miss_kind), in words.
DEMO_MISSES = {"empty": "no valid span", "longer": "its span holds one of SQuAD's answers and runs past it",
               "shorter": "its span lies inside one of SQuAD's answers",
               "overlapping": "its span shares part of one of SQuAD's answers, not all",
               "elsewhere": "its span lies elsewhere in the paragraph, apart from SQuAD's answers"}


def _qa_demo_misses(figures: dict) -> str:
    """07's seeded demo (section 7.7) in its recorded run: how many drawn questions were right, by question word,
    and each miss by its number in the notebook's list, with where its span lay (the record holds no SQuAD text)."""
    run = figures["notebooks"]["07_qa"]
    recorded = run["recorded"]
    drawn = recorded["demo"]
    rows = drawn["questions"]
    kinds: dict[str, list[bool]] = {}
    for row in rows:
        kinds.setdefault(row["kind"], []).append(bool(row["em"]))
    by_kind = ", ".join(f"*{kind}* {sum(marks)} of {len(marks)}"
                        for kind, marks in sorted(kinds.items(), key=lambda item: (-len(item[1]), item[0])))
    mean_f1 = 100 * sum(row["f1"] for row in rows) / len(rows)
    text = (f"In the recorded run (full mode, `BUDGET = \"{recorded['budget']}\"`, on {_label(run['machine'])}), the "
            f"reader answered {sum(1 for row in rows if row['em'])} of the {len(rows)} drawn questions (seed "
            f"{drawn['seed']}) exactly as one of SQuAD's answers, with a mean F1 of {mean_f1:.1f}. By the question's "
            f"first wh-word, right of asked: {by_kind}.")
    misses = [f"- question {number} (*{row['kind']}*, {row['title'].replace('_', ' ')}): "
              f"{DEMO_MISSES[row['miss']]}; F1 {row['f1']:.2f}"
              for number, row in enumerate(rows, 1) if not row["em"]]
    if not misses:
        return text + " It missed none."
    return text + " Its misses, numbered as in the list above:\n\n" + "\n".join(misses)


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
    """6.4's recorded run, the notebook's default budget, with its machine (the estimate table that the cell prints
    gives the fixed recipe's time on the learner's own machine)."""
    run = figures["notebooks"]["06_ner"]
    recorded = run["recorded"]
    scores = (f"a validation F1 of {recorded['real_validation_scores']['micro']['f1']:.3f} on the real-text corpus and "
              f"{recorded['validation_scores']['micro']['f1']:.3f} on the course corpus")
    passes = recorded["steps"] * 16 / recorded["train_sentences"]  # batches of 16 sentences (CONFIG)
    return (f"On {_label(run['machine'])}, the default budget of {recorded['budget']} trained "
            f"{recorded['steps']:,} steps ({passes:.1f} passes over {recorded['train_sentences']:,} sentences) in "
            f"{_duration(recorded['fine_tuning_seconds'])} (predicted {_duration(recorded['predicted_seconds'])}), "
            f"after {_duration(recorded['measuring_seconds'])} of measuring, for {scores}.")


def _ner_own_file(figures: dict) -> str:
    """6.9's budget, measured by bench/ner_recipe.py with the real-text corpus standing in for a learner's file."""
    own = figures["ner"]["own-file"]
    return (f"Measured with the real-text corpus standing in for your file ({own['train_sentences']:,} training "
            f"sentences; its test split to score), on {_label(own['machine'])}: the default budget of "
            f"{own['budget']} trained {own['steps']:,} steps, every layer, in {_duration(own['seconds'])} "
            f"(predicted {_duration(own['predicted_seconds'])}, after {_duration(own['measuring_seconds'])} of "
            f"measuring), and reached a test F1 of {_f1(own, 'real', 'test')} (`bench/ner_recipe.py --train real "
            f"--budget \"{own['budget']}\" --steps 800 --train-from 0 --lr {own['lr']:g} --test`).")


def _transformer_time(figures: dict) -> str:
    """04's **Long runs.** sentence: its recorded training and whole-notebook times, with the machine."""
    run = figures["notebooks"]["04_transformer"]
    recorded = run["recorded"]
    return (f"**Long runs.** In full mode, training ({recorded['training_steps']:,} steps on "
            f"{recorded['training_examples']:,} dates) took {_duration(recorded['training_seconds'])} and the whole "
            f"notebook {_duration(run['wall_seconds'])} on {_label(run['machine'])}, with at most "
            f"{run['peak_memory_mib'] / 1024:.1f} GiB of memory.")


def _published_conll_features(figures: dict) -> str:
    """05's sentence on which layer's vectors tag best: the BERT paper's feature-based rows."""
    from course_lib.published import CONLL_FEATURES

    score = CONLL_FEATURES.scores
    return (f"Which layer's vectors are best for a task is an empirical question. For named-entity recognition on "
            f"CoNLL-2003, Devlin et al. report a dev F1 of {score['first layer (embeddings)']:.1f} with the first "
            f"layer's vectors, {score['last hidden layer']:.1f} with the last, "
            f"{score['second-to-last hidden layer']:.1f} with the second-to-last, and "
            f"{score['concatenation of the last four']:.1f} by concatenating the last four (BERT-base, features "
            f"without fine-tuning; {CONLL_FEATURES.source}).")


def _published_conll_fine_tuned(figures: dict) -> str:
    """06's sentence on what BERT-base reaches on CoNLL-2003 when the whole encoder is fine-tuned."""
    from course_lib.published import CONLL_FINE_TUNED

    score = CONLL_FINE_TUNED.scores
    return (f"The lecture's CoNLL-2003 figures for BERT-base fine-tuned whole (cased, 12 layers) are "
            f"{score['dev F1']:.1f} F1 on the development set and {score['test F1']:.1f} on the test set "
            f"({CONLL_FINE_TUNED.source}, averaged over five restarts).")


RENDERERS: dict[str, Callable[[dict], str]] = {
    "transformer-time": _transformer_time,
    "ner-time": _ner_time,
    "ner-frozen-layers": _ner_frozen_layers,
    "ner-own-file": _ner_own_file,
    "reader-budgets": _reader_budgets,
    "published-conll-features": _published_conll_features,
    "published-conll-fine-tuned": _published_conll_fine_tuned,
    "reader-budgets-comment": _reader_budgets_comment,
    "qa-time": _qa_time,
    "qa-evaluation": _qa_evaluation,
    "qa-demo-misses": _qa_demo_misses,
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
