"""Hidden check of `predictions_to_entities` (assignment 06): the learner's function against the reference on
seeded random tokenized texts (words of one to four pieces, punctuation attached to words, non-ASCII letters,
windows whose word ids start above 0, padding, words without a token, no special tokens, no token at all), random
predictions on every token, the course's labels as a dict (its keys in order or not), a tuple or a list and other
label sets with a made-up type or a type named with hyphens (autograde/input_classes/ner.py lists the inputs it must
draw). It is graded with the reference `entity_spans` in place of the learner's. All cases run in one request to the
student's kernel; `grade_predictions_to_entities(fn)` raises `CheckFailed` with a diagnosis or prints one success
line (stdout only)."""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks.judging import call_all, judge_all
from autograde.checks.ner.evaluation import kinds_for_grading, random_tags
from autograde.mistakes import results
from autograde.mistakes.ner import entities as mistakes
from autograde.reference.ner import entities as ref
from autograde.reference.ner.evaluation import entity_spans as reference_spans
from autograde.remote import with_parts
from course_lib.calls import expect_unchanged, rebuild, returned
from course_lib.checking import passed, quiet
from course_lib.ner import LABELS
from course_lib.ner.entities import expect_entities
from course_lib.ner.evaluation import COPY_TAGS

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéüøłñ"
PUNCTUATION = ".,;:-%()'"

# (words, first word id, label set, container of the label ids, padding tokens, [CLS] and [SEP] or not, words
# without a token)
CASES = [
    (1, 0, "LABELS dict", "list", 0, True, 0),
    (5, 0, "LABELS tuple", "list", 0, True, 0),
    (12, 7, "LABELS dict", "int64 array", 0, True, 0),
    (25, 0, "other labels", "list", 0, True, 0),
    (40, 130, "LABELS list", "int32 array", 0, True, 0),
    (0, 0, "LABELS dict", "list", 0, True, 0),
    (60, 0, "other labels", "int64 array", 8, True, 0),
    (30, 45, "LABELS dict", "list", 0, True, 0),
    (20, 0, "LABELS dict", "list", 0, True, 3),
    (12, 0, "LABELS tuple", "list", 0, False, 0),
    (0, 0, "LABELS tuple", "list", 0, False, 0),
    (15, 0, "LABELS dict, keys not in order", "list", 0, True, 0),
    (20, 0, "other labels, a type named with hyphens", "int64 array", 0, True, 0),
]
HYPHENATED_TYPE = "WORK-OF-ART"


def label_set(rng: np.random.Generator, which: str, kinds) -> tuple[tuple[str, ...], object]:
    """(labels, id_to_label): the course's LABELS in a dict (its keys in order, or shuffled), tuple or list, or a
    shuffled set with a made-up type (or a type named with hyphens)."""
    if which == "LABELS dict, keys not in order":
        order = rng.permutation(len(LABELS))
        order = order if np.any(order != np.arange(len(LABELS))) else order[::-1]
        return LABELS, {int(i): LABELS[i] for i in order}
    if which.startswith("LABELS"):
        container = which.split()[1]
        return LABELS, {"dict": dict(enumerate(LABELS)), "tuple": tuple(LABELS), "list": list(LABELS)}[container]
    first = HYPHENATED_TYPE if "hyphens" in which else kinds[-1]
    chosen = [first, *rng.choice(kinds[:-1], size=2, replace=False)]
    labels = ["O", *(f"{prefix}-{kind}" for kind in chosen for prefix in "BI")]
    order = rng.permutation(len(labels))
    return tuple(labels[i] for i in order), {int(i): labels[j] for i, j in enumerate(order)}


def random_text(rng: np.random.Generator, words: int, dropped=()):
    """(text, [(start, end) of each piece] per word): letters and punctuation, pieces of up to four per word; the
    words numbered in `dropped` are zero-width spaces, which the tokenizer gives no piece."""
    text, pieces = "", []
    for number in range(words):
        if number in dropped:
            text += " \u200b"
            pieces.append([])
            continue
        if rng.random() < 0.15:
            word = str(rng.choice(list(PUNCTUATION)))
            gap = "" if rng.random() < 0.7 else " "
        else:
            word = "".join(rng.choice(list(LETTERS), size=int(rng.integers(1, 11))))
            gap = " "
        start = len(text) + (len(gap) if number else 0)
        text += (gap if number else "") + word
        cuts = sorted(rng.choice(np.arange(1, len(word)), size=int(rng.integers(0, min(len(word), 4))),
                                 replace=False).tolist()) if len(word) > 1 else []
        bounds = [0, *cuts, len(word)]
        pieces.append([(start + a, start + b) for a, b in zip(bounds, bounds[1:], strict=False)])
    return text, pieces


def random_case(rng, words: int, first_word: int, which: str, container: str, padding: int, kinds, *,
                special: bool = True, dropped: int = 0):
    """(text, offsets, word_ids, label_ids, id_to_label): random words, their tags on first pieces, random labels
    on the other pieces and on the special tokens ([CLS], [SEP], padding; none without `special`, and then the first
    word begins an entity); `dropped` words inside the text have no piece."""
    skipped = set(rng.choice(np.arange(1, words - 1), size=dropped, replace=False).tolist()) if dropped else set()
    text, pieces = random_text(rng, words, skipped)
    labels, id_to_label = label_set(rng, which, kinds)
    types = sorted({label[2:] for label in labels if label != "O"})
    tags = random_tags(rng, words, types)
    if words and (not special or "hyphens" in which):  # the unusual input must matter: an entity on the first word
        tags[0] = "B-" + (HYPHENATED_TYPE if "hyphens" in which else types[0])
    offsets, word_ids, label_ids = ([(0, 0)], [None], [int(rng.integers(len(labels)))]) if special else ([], [], [])
    for number, word in enumerate(pieces):
        for piece, span in enumerate(word):
            offsets.append(span)
            word_ids.append(first_word + number)
            label_ids.append(labels.index(tags[number]) if piece == 0 else int(rng.integers(len(labels))))
    for _ in range(1 + padding if special else 0):
        offsets.append((0, 0))
        word_ids.append(None)
        label_ids.append(int(rng.integers(len(labels))))
    if container != "list":
        label_ids = np.array(label_ids, dtype=np.int64 if container == "int64 array" else np.int32)
    return text, offsets, word_ids, label_ids, id_to_label


def case_label(words: int, first_word: int, which: str, container: str, padding: int, special: bool,
               dropped: int) -> str:
    """What a case is, for the messages: its unusual inputs named."""
    if not words and not special:
        return f"no token at all (an empty text, without [CLS] and [SEP]), {which}, label ids in a {container}"
    return (f"{words} words, word ids from {first_word}, {which}, label ids in a {container}"
            + (f", {padding} padding tokens" if padding else "")
            + ("" if special else ", no special tokens ([CLS], [SEP]) at all: an entity on the first word")
            + (f", {dropped} words of a zero-width space, without any token (the word ids skip them)" if dropped
               else ""))


def grade_predictions_to_entities(predictions_to_entities) -> None:
    rng = draw(631)
    kinds = kinds_for_grading(rng)
    cases = []
    for words, first_word, which, container, padding, special, dropped in CASES:
        cases.append((case_label(words, first_word, which, container, padding, special, dropped),
                      random_case(rng, words, first_word, which, container, padding, kinds, special=special,
                                  dropped=dropped)))
    with quiet(), with_parts(predictions_to_entities, entity_spans=reference_spans):
        outcomes = call_all(predictions_to_entities, [[label, list(args)] for label, args in cases])

    def judge(case):
        (label, args), outcome = case
        result = returned(outcome)
        after = rebuild(outcome["after"])
        for argument, before, now in zip(("offsets", "word_ids", "label_ids"), args[1:4], after[1:4], strict=True):
            expect_unchanged("predictions_to_entities", argument, before, now, label, advice=COPY_TAGS)
        expect_entities(result, ref.predictions_to_entities(*args), args[0], label=label,
                        mistakes=results(mistakes.ENTITIES, *args), text_mistakes=results(mistakes.TEXTS, *args))

    with quiet():
        judge_all(zip(cases, outcomes, strict=True), judge)
    passed(f"predictions_to_entities matches the reference on {len(cases)} random tokenized texts (other label sets, "
           "windows, padding, words without a token, no special tokens)")
