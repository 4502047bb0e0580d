"""Named mistakes of squad_em_f1 (assignment 07). Each takes (prediction, gold_answers) and gives the (exact match,
F1) that mistake produces; the right answer is in autograde.reference.qa.metrics. They are one scorer, `scores`, with
one of its steps done wrong."""

from __future__ import annotations

import re
import string
from collections import Counter

from autograde.mistakes import Mistake
from autograde.reference.qa import metrics as ref
from course_lib.qa.metrics import EMPTY, F1_RULE, NORMALISE

PUNCTUATION = set(string.punctuation)
ARTICLES = r"\b(a|an|the)\b"


def normaliser(*, lower: bool = True, punctuation: str = "removed", articles: str | None = ARTICLES):
    """SQuAD's normalisation with one step changed: no lower case, punctuation kept or made spaces, the articles
    kept (None) or removed by another pattern."""
    def normalise(text: str) -> str:
        text = text.lower() if lower else text
        if punctuation != "kept":
            gap = " " if punctuation == "spaces" else ""
            text = "".join(gap if character in PUNCTUATION else character for character in text)
        if articles:
            text = re.sub(articles, " ", text)
        return " ".join(text.split())
    return normalise


def scores(prediction, gold_answers, *, normalise=ref.normalize_answer, raw_exact: bool = False, units=str.split,
           overlap: str = "counter", best=max, both_empty: float = 1.0, no_gold: str = "empty string"):
    """(exact match, F1) as SQuAD computes them, unless a step is changed: the normalisation, exact match on the raw
    texts, F1 over other units (characters), a set instead of a Counter, the mean over the gold answers instead of
    the best, F1 of two empty texts, no gold answer scored 0."""
    golds = list(gold_answers)
    if not golds:
        if no_gold == "zero":
            return 0.0, 0.0
        golds = [""]
    exact, f1 = [], []
    for gold in golds:
        predicted, expected = normalise(prediction), normalise(gold)
        exact.append(float(prediction == gold if raw_exact else predicted == expected))
        mine, theirs = units(predicted), units(expected)
        if not mine or not theirs:
            f1.append(both_empty if mine == theirs else 0.0)
            continue
        shared = sum((Counter(mine) & Counter(theirs)).values()) if overlap == "counter" else \
            len(set(mine) & set(theirs))
        f1.append(2 * shared / (len(mine) + len(theirs)))
    return float(best(exact)), float(best(f1))


def _mean(values):
    return sum(values) / len(values)


def _scorer(**changes):
    def produce(prediction, gold_answers):
        return scores(prediction, gold_answers, **changes)
    return produce


METRICS = (
    Mistake("articles_kept", f"the articles a, an and the were not removed: {NORMALISE}",
            _scorer(normalise=normaliser(articles=None))),
    Mistake("punctuation_kept", f"the punctuation was not removed: {NORMALISE}",
            _scorer(normalise=normaliser(punctuation="kept"))),
    Mistake("case_kept", f"the case was kept (\"Bridge\" is not \"bridge\", and \"The\" stays): {NORMALISE}",
            _scorer(normalise=normaliser(lower=False))),
    Mistake("punctuation_as_space", "each punctuation mark became a space, which splits \"double-track\" into two "
            f"words: SQuAD deletes it (\"doubletrack\"); {NORMALISE}",
            _scorer(normalise=normaliser(punctuation="spaces"))),
    Mistake("articles_in_words", "a, an and the were removed inside words too (\"another\", \"theatre\"): remove them "
            f"as whole words only, with the pattern {ARTICLES} (\\b: a word's edge); {NORMALISE}",
            _scorer(normalise=normaliser(articles=r"(a|an|the)"))),
    Mistake("characters", f"F1 was counted over characters; SQuAD counts words (the normalised text split on "
            f"whitespace): {F1_RULE}", _scorer(units=list)),
    Mistake("mean_over_golds", "the scores are the mean over the gold answers: each of them is a right answer, so "
            "the best one counts (max over the gold answers, for exact match and F1 alike)", _scorer(best=_mean)),
    Mistake("set_overlap", "the shared words were counted as a set, so a word repeated in both texts counts once: "
            f"{F1_RULE}", _scorer(overlap="set")),
    Mistake("empty_f1_zero", f"F1 of two texts that are both empty once normalised is 0.0, but they agree: {EMPTY}",
            _scorer(both_empty=0.0)),
    Mistake("no_gold_zero", f"with no gold answer the scores are 0.0 even for an empty prediction: {EMPTY}",
            _scorer(no_gold="zero")),
    Mistake("exact_raw", "exact match compared the texts as they are; it compares the normalised texts (so \"The "
            f"Bridge!\" matches \"bridge\"): {NORMALISE}", _scorer(raw_exact=True)),
)
