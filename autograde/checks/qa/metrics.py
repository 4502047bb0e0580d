"""Hidden check of `squad_em_f1` (assignment 07): the learner's function against the reference on the edge cases of
SQuAD's scores (empty texts, no gold answer, texts of whitespace only or that normalise to nothing, articles joined to
a word by punctuation, punctuation beyond the common marks and outside ASCII, letters and spaces outside ASCII, gold
answers with the same words in another order) and on seeded random predictions and gold answers: random words in
random case (some outside ASCII), articles (also inside words), punctuation around and inside words, runs of spaces,
tabs, newlines and no-break spaces, repeated words, empty strings, one to four gold answers made from the prediction
or not, in lists and tuples, and in some pairs two more: the prediction and its words in another order (F1 1.0 for
both, exact match for one). All cases run in one request to the student's kernel; `grade_squad_em_f1(fn)` raises
`CheckFailed` with a diagnosis or prints one success line (stdout only)."""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks.judging import call_all, judge_all
from autograde.mistakes import results
from autograde.mistakes.qa import metrics as mistakes
from autograde.reference.qa import metrics as ref
from course_lib.calls import expect_unchanged, rebuild, returned
from course_lib.checking import passed, quiet
from course_lib.qa.metrics import EMPTY, expect_em_f1

WORDS = ("bridge", "railway", "motorway", "strait", "malmö", "copenhagen", "490", "metres", "july", "2000", "sund",
         "theatre", "another", "banana", "then", "x", "e", "double-track", "cable-stayed", "u.s.", "it's", "an", "the",
         "a", "other", "and", "of", "straße", "東京", "🙂", "a.k.a.", "the-end")
ARTICLES = ("a", "an", "the")
MARKS = ".,;:!?'\"()-"
RARE_MARKS = "$%/_&@#*+=[]’—…«»"  # ASCII punctuation SQuAD removes, and punctuation outside ASCII it keeps
GAPS = (" ", " ", " ", " ", "  ", "\t", "\n", " \n ", "\u00a0")

# Pairs every implementation must score right: the edges of SQuAD's rules.
EDGE_CASES = [
    ("", []), ("", [""]), ("", ["x"]), ("x", [""]), ("x", []), ("The", []), ("the", ["A"]), ("...", ["!"]),
    ("a an the", ("",)), ("x x", ["x"]), ("x", ["x x"]), ("Bridge", ["bridge", "BRIDGE"]), ("x y", ("y z", "z")),
    ("  x\t", ["x"]), ("theatre", ["atre"]), ("double-track", ["double track"]),
    ("   ", [""]), ("", ["\t \n"]), ("x", [" "]), ("the-end", ["end"]), ("a.k.a. Sund", ["k sund"]),
    ("double-track a-team", ["end team"]), ("$490 / 50%", ["490 50"]), ("snake_case", ["snakecase"]),
    ("Malmö’s", ["Malmös"]), ("Copenhagen — Malmö…", ["copenhagen malmö"]), ("«bridge»", ["bridge"]),
    ("東京 bridge’s", ["bridges"]), ("🙂 bridge", ["bridge"]), ("Straße", ["STRASSE"]), ("Malmö", ["Malmo"]),
    ("東京 tower", ["東京"]), ("copenhagen\u00a0malmö", ["copenhagen malmö"]),
    # The same words in another order: F1 1.0 for both gold answers, exact match for one, first or last.
    ("car the red", ["the red car", "car the red"]), ("The red car", ("the red car", "car, the red")),
    ("x y z", ["y z x", "x y z", "z x y"]),
]
RANDOM_CASES = 260


def _cased(rng: np.random.Generator, word: str) -> str:
    return [word, word.upper(), word.capitalize(), word][int(rng.integers(0, 4))]


def random_text(rng: np.random.Generator, words: int) -> str:
    """Words (some articles, some repeated) in random case, with punctuation around them and random gaps."""
    chosen = []
    for _ in range(words):
        if chosen and rng.random() < 0.15:
            word = chosen[-1]
        elif rng.random() < 0.2:
            word = _cased(rng, str(rng.choice(ARTICLES)))
        else:
            word = _cased(rng, str(rng.choice(WORDS)))
        if rng.random() < 0.25:
            word += str(rng.choice(list(MARKS)))
        if rng.random() < 0.1:
            word = str(rng.choice(list(MARKS))) + word
        if rng.random() < 0.05:
            word += str(rng.choice(list(RARE_MARKS)))
        chosen.append(word)
    text = "".join(str(rng.choice(GAPS)) + word for word in chosen)
    return text if rng.random() < 0.2 else text.strip()


def gold_from(rng: np.random.Generator, prediction: str) -> str:
    """A gold answer: the prediction changed (case, articles, punctuation, words dropped, added or repeated, spaces),
    another random text, or an empty one."""
    words = prediction.split()
    how = rng.random()
    if how < 0.1:
        return ""
    if how < 0.3 or not words:
        return random_text(rng, int(rng.integers(1, 7)))
    if how < 0.45:
        return _cased(rng, prediction)
    changed = []
    for word in words:
        u = rng.random()
        if u < 0.15:
            continue  # dropped
        if u < 0.3:
            changed.append(str(rng.choice(ARTICLES)))
        changed.append(word.strip(MARKS) if u < 0.5 else word)
        if u > 0.9:
            changed.append(word)  # repeated
    if rng.random() < 0.3:
        changed.append(str(rng.choice(WORDS)))
    return " ".join(changed)


def reordered(rng: np.random.Generator, text: str) -> str:
    """The text's words shuffled: the same words for F1, but an exact match only if the order comes out the same."""
    words = text.split()
    return " ".join(words[i] for i in rng.permutation(len(words)))


def random_pair(rng: np.random.Generator):
    prediction = "" if rng.random() < 0.08 else random_text(rng, int(rng.integers(1, 8)))
    golds = [gold_from(rng, prediction) for _ in range(0 if rng.random() < 0.06 else int(rng.integers(1, 5)))]
    if len(prediction.split()) > 1 and rng.random() < 0.12:  # the prediction and its words in another order
        both = [_cased(rng, prediction), reordered(rng, prediction)]
        at = int(rng.integers(0, len(golds) + 1))
        golds[at:at] = both if rng.random() < 0.5 else both[::-1]
    return prediction, tuple(golds) if rng.random() < 0.3 else golds


def grade_squad_em_f1(squad_em_f1) -> None:
    rng = draw(721)
    pairs = [(prediction, list(golds) if isinstance(golds, list) else golds) for prediction, golds in EDGE_CASES]
    pairs += [random_pair(rng) for _ in range(RANDOM_CASES)]
    labels = [f"pair {number + 1} of {len(pairs)}" for number in range(len(pairs))]
    with quiet():
        outcomes = call_all(squad_em_f1, [[label, [prediction, golds]]
                                          for label, (prediction, golds) in zip(labels, pairs, strict=True)],
                            object_arrays_as_lists=True)

        def judge(item):
            label, (prediction, golds), outcome = item
            crashed = outcome.get("raised", "")
            result = returned(outcome, EMPTY if "ZeroDivision" in crashed or (crashed and not golds) else "")
            expect_unchanged("squad_em_f1", "gold_answers", golds, rebuild(outcome["after"])[1], label)
            normalised = (ref.normalize_answer(prediction), [ref.normalize_answer(gold) for gold in golds])
            expect_em_f1(result, ref.squad_em_f1(prediction, golds), prediction, golds, label=label,
                         mistakes=results(mistakes.METRICS, prediction, golds), normalised=normalised)

        judge_all(zip(labels, pairs, outcomes, strict=True), judge)
    passed(f"squad_em_f1 matches SQuAD's exact match and F1 on {len(pairs)} predictions (case, articles, punctuation, "
           "spaces, repeated words, empty texts, text outside ASCII, several or no gold answers, the same words in "
           "another order)")
