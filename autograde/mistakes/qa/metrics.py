"""Named mistakes of squad_em_f1 (assignment 07). Each takes (prediction, gold_answers) and gives the (exact match,
F1) that mistake produces; the right answer is in autograde.reference.qa.metrics. They are one scorer, `scores`, with
one of its steps done wrong."""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter

from autograde.mistakes import Mistake
from autograde.reference.qa import metrics as ref
from course_lib.qa.metrics import BEST, EMPTY, F1_RULE, NORMALISE

PUNCTUATION = set(string.punctuation)
ARTICLES = r"\b(a|an|the)\b"


def _unicode_punctuation(character: str) -> bool:
    return character in PUNCTUATION or unicodedata.category(character).startswith("P")


def normaliser(*, lower: bool = True, punctuation: str = "removed", articles: str | None = ARTICLES,
               articles_first: bool = False, ascii_letters: bool = False, ascii_spaces: bool = False):
    """SQuAD's normalisation with one step changed: no lower case, punctuation kept, made spaces or removed outside
    ASCII too ("unicode"), the articles kept (None), removed by another pattern or before the punctuation, the text
    folded to ASCII (ö to o, 🙂 dropped), or split on ASCII whitespace only."""
    def normalise(text: str) -> str:
        text = text.lower() if lower else text
        if ascii_letters:
            text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
        if articles and articles_first:
            text = re.sub(articles, " ", text)
        if punctuation != "kept":
            gap = " " if punctuation == "spaces" else ""
            removed = _unicode_punctuation if punctuation == "unicode" else PUNCTUATION.__contains__
            text = "".join(gap if removed(character) else character for character in text)
        if articles and not articles_first:
            text = re.sub(articles, " ", text)
        return " ".join(ascii_words(text) if ascii_spaces else text.split())
    return normalise


def ascii_words(text: str) -> list[str]:
    """The words between runs of ASCII whitespace only (a no-break space stays inside a word)."""
    return [word for word in re.split(r"[ \t\n\r\f\v]+", text) if word]


def scores(prediction, gold_answers, *, normalise=ref.normalize_answer, raw_exact: bool = False, units=str.split,
           overlap: str = "counter", best=max, both_empty: float = 1.0, no_gold: str = "empty string",
           exact_of_best_f1: bool = False):
    """(exact match, F1) as SQuAD computes them, unless a step is changed: the normalisation, exact match on the raw
    texts, F1 over other units (characters), a set instead of a Counter, the mean over the gold answers instead of
    the best, F1 of two empty texts, no gold answer scored 0, exact match taken from the gold answer with the best F1
    instead of its own maximum."""
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
    if exact_of_best_f1:
        # Gold answers that tie on F1 (the same words in another order) are picked first or last by learners' code;
        # whichever rule it is, when it is wrong it picked one that does not match: the smallest exact match of the tie.
        top = max(f1)
        return float(min(e for e, score in zip(exact, f1, strict=True) if score == top)), float(top)
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
    Mistake("articles_before_punctuation", "the articles were removed before the punctuation, so an article joined to "
            "a word by punctuation (a-team, the-end) was removed: SQuAD removes the punctuation first, and \"ateam\" "
            f"is a word, not an article; {NORMALISE}", _scorer(normalise=normaliser(articles_first=True))),
    Mistake("unicode_punctuation_removed", "punctuation outside ASCII (’ — … « ») was removed: SQuAD removes "
            f"string.punctuation only, and keeps the rest as part of the words; {NORMALISE}",
            _scorer(normalise=normaliser(punctuation="unicode"))),
    Mistake("non_ascii_changed", "letters and symbols outside ASCII were changed or dropped (ö became o, 🙂 or 東京 "
            f"vanished): SQuAD only lower-cases them; {NORMALISE}",
            _scorer(normalise=normaliser(ascii_letters=True))),
    Mistake("ascii_whitespace", "only ASCII whitespace separates words here, so a no-break space (\\xa0) joined two "
            "words: split with str.split(), which splits on every kind of whitespace; " + NORMALISE,
            _scorer(normalise=normaliser(ascii_spaces=True), units=ascii_words)),
    Mistake("exact_of_best_f1", f"exact match was taken from the gold answer with the best F1; {BEST}: the same words "
            "in another order (\"malmö and copenhagen\", \"copenhagen and malmö\") give F1 1.0 but no exact match, so "
            "the gold answer with the best F1 need not be the one that matches", _scorer(exact_of_best_f1=True)),
    Mistake("exact_raw", "exact match compared the texts as they are; it compares the normalised texts (so \"The "
            f"Bridge!\" matches \"bridge\"): {NORMALISE}", _scorer(raw_exact=True)),
)
