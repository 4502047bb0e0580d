"""Assignment 07, section 7.7: a few paragraphs of SQuAD's test split, drawn by a seed, read by the reader and
marked against SQuAD's own answers.

The seed is fixed here, in the course's code, and was fixed before any reader read the paragraphs it draws: they
are what the draw gives, not paragraphs chosen for how a reader does on them. `outcomes` marks each answer; its
rows hold ids, kinds and scores but no SQuAD text, so that a run can record them in the repository (SQuAD is CC
BY-SA 4.0 and its text stays in its package: data/SQUAD.md). `report` shows the text, for the notebook's output.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from course_lib.qa import squad_v1
from course_lib.qa.corpus import question_kind
from course_lib.qa.squad import Answer, QAExample

SEED = 2026  # fixed with this module, before any reader read what it draws; never tuned
PARAGRAPHS = 3  # each from a different article
QUESTIONS = 5  # at most, per paragraph: its first ones, in the file's order
# How a wrong answer's characters lie against SQuAD's answers' (the first that applies, in this order).
MISSES = ("empty", "longer", "shorter", "overlapping", "elsewhere")


def paragraphs_of(examples: Sequence[QAExample]) -> list[list[QAExample]]:
    """The examples grouped by paragraph (article and context), in the order of each paragraph's first question."""
    groups: dict[tuple[str, str], list[QAExample]] = {}
    for example in examples:
        groups.setdefault((example.title, example.context), []).append(example)
    return list(groups.values())


def draw(examples: Sequence[QAExample], *, seed: int = SEED, paragraphs: int = PARAGRAPHS,
         questions: int = QUESTIONS) -> list[list[QAExample]]:
    """`paragraphs` paragraphs of as many different articles, drawn with `seed`, each with its first `questions`
    questions: the same examples and seed give the same draw on every machine."""
    if paragraphs < 1 or questions < 1:
        raise ValueError(f"draw at least one paragraph and one question each, not {paragraphs} and {questions}")
    groups = paragraphs_of(examples)
    order = list(range(len(groups)))
    random.Random(f"demo-{seed}").shuffle(order)  # a string seed: the same order in every process
    chosen, titles = [], set()
    for index in order:
        group = groups[index]
        if group[0].title not in titles:
            chosen.append(group[:questions])
            titles.add(group[0].title)
            if len(chosen) == paragraphs:
                return chosen
    raise ValueError(f"the examples hold {len(titles)} articles: too few to draw {paragraphs} paragraphs of "
                     "different ones")


def from_test_split(*, seed: int = SEED, paragraphs: int = PARAGRAPHS,
                     questions: int = QUESTIONS) -> list[list[QAExample]]:
    """The draw from the test split (SQuAD v1.1's dev set, on which no recipe is tuned), with SQuAD's answers."""
    return draw(squad_v1.load_split("test"), seed=seed, paragraphs=paragraphs, questions=questions)


def miss_kind(prediction, answers: Sequence[Answer]) -> str:
    """Where a wrong answer's span (`prediction.start`, `.end`) lies against the gold answers' spans: `empty` (no
    span), `longer` (it holds one of them whole), `shorter` (it lies inside one), `overlapping` (it shares
    characters with one), else `elsewhere`."""
    start, end = prediction.start, prediction.end
    spans = [(answer.start, answer.end) for answer in answers]
    if start >= end:
        return "empty"
    if any(start <= first and last <= end for first, last in spans):
        return "longer"
    if any(first <= start and end <= last for first, last in spans):
        return "shorter"
    if any(start < last and first < end for first, last in spans):
        return "overlapping"
    return "elsewhere"


def outcomes(examples: Sequence[QAExample], predictions: Sequence, squad_em_f1: Callable) -> list[dict]:
    """One row per question: its id, article, kind (first question word), exact match and F1 against SQuAD's
    answers, and for a miss where its span lies (`miss_kind`; "" for a hit). No SQuAD text: a run may record them."""
    rows = []
    for example, prediction in zip(examples, predictions, strict=True):
        em, f1 = squad_em_f1(prediction.text, [answer.text for answer in example.answers])
        rows.append({"id": example.id, "title": example.title, "kind": question_kind(example.question),
                     "em": float(em), "f1": float(f1),
                     "miss": "" if em else miss_kind(prediction, example.answers)})
    return rows


def golds(example: QAExample) -> list[str]:
    """SQuAD's answers to a question, each text once, in the file's order (annotators often agree)."""
    return list(dict.fromkeys(answer.text for answer in example.answers))


def report(drawn: Sequence[Sequence[QAExample]], predictions: Sequence, rows: Sequence[dict]) -> str:
    """Every drawn question, numbered, with the reader's answer beside SQuAD's: ✓ for an exact match, F1, and the
    tally; paragraph by paragraph."""
    lines, number = [], 0
    for paragraph in drawn:
        lines.append(f"{paragraph[0].title.replace('_', ' ')} ({paragraph[0].id}, {len(paragraph)} questions)")
        for example in paragraph:
            prediction, row = predictions[number], rows[number]
            number += 1
            lines.append(f"{number:2d} {'✓' if row['em'] else '✗'} {example.question}")
            lines.append(f"     answer {prediction.text!r}, SQuAD {' | '.join(map(repr, golds(example)))}, "
                         f"F1 {row['f1']:.2f}" + (f" ({row['miss']})" if row["miss"] else ""))
    right = sum(1 for row in rows if row["em"])
    mean_f1 = 100 * sum(row["f1"] for row in rows) / max(len(rows), 1)
    lines.append(f"{right} of {len(rows)} exactly right, mean F1 {mean_f1:.1f}")
    return "\n".join(lines)
