"""Reference of squad_em_f1 (assignment 07), written independently of course_lib.layers (which a test keeps equal to
it): the truth the checks grade against. It scores as SQuAD v1.1's official evaluation script does: answers
normalised (lower case, punctuation and the articles a, an, the removed, whitespace collapsed), exact match and
token F1 each its own best over the gold answers (they may come from two gold answers: the same words in another
order score F1 1.0 without an exact match). It returns floats; the checks take a learner's ints or Python bools as well,
since SQuAD's script gives exact match as a bool (averaged over the questions, times 100, afterwards). `tokens` is
the grader's helper."""

from __future__ import annotations

import re
import string
from collections import Counter

__all__ = ["normalize_answer", "squad_em_f1", "tokens"]

PUNCTUATION = str.maketrans("", "", string.punctuation)
ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation, in its order: lower case, punctuation, articles, whitespace."""
    return " ".join(ARTICLES.sub(" ", text.lower().translate(PUNCTUATION)).split())


def tokens(text: str) -> list[str]:
    """The words F1 counts: the normalised text split on whitespace."""
    return normalize_answer(text).split()


def f1(predicted: list[str], gold: list[str]) -> float:
    """Token F1 of two bags of words; two empty answers agree (1.0), one empty answer scores 0.0."""
    if not predicted or not gold:
        return float(predicted == gold)
    shared = sum((Counter(predicted) & Counter(gold)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(predicted), shared / len(gold)
    return 2 * precision * recall / (precision + recall)


def squad_em_f1(prediction, gold_answers) -> tuple[float, float]:
    """(exact match, token F1) of `prediction` as floats, each its own best over `gold_answers` (one string, or
    several); with no gold answer the right prediction is the empty string."""
    golds = [gold_answers] if isinstance(gold_answers, str) else list(gold_answers)
    predicted = tokens(prediction)
    gold_tokens = [tokens(gold) for gold in golds] or [[]]
    em = max(float(predicted == gold) for gold in gold_tokens)
    return em, max(f1(predicted, gold) for gold in gold_tokens)
