"""Hidden check of `align_labels_with_tokens` (assignment 06): the learner's function against the reference on
seeded random tokenizations (words of one to six pieces, padding, truncation inside a word, no word at all, words
the tokenizer drops, no special tokens, no token at all), with the word labels in lists, tuples and NumPy arrays and
the word ids in a list or a tuple (autograde/input_classes/ner.py lists the inputs it must draw).
`grade_align_labels_with_tokens(fn)` raises `CheckFailed` with a diagnosis or prints one success line (stdout only).
All cases run in one request to the student's kernel."""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks.judging import call_all, judge_all
from autograde.mistakes import results
from autograde.mistakes.ner import alignment as mistakes
from autograde.reference.ner import alignment as ref
from course_lib.calls import expect_unchanged, rebuild, returned
from course_lib.checking import passed, quiet
from course_lib.ner import LABELS
from course_lib.ner.alignment import expect_aligned
from course_lib.ner.evaluation import COPY_TAGS

# (words, most pieces per word, padding tokens, words cut off at the end, container of the word labels, words
# without any token, the word ids: "list", "tuple", or "bare": a list without [CLS] and [SEP])
CASES = [
    (1, 1, 0, 0, "list", 0, "list"),
    (5, 3, 0, 0, "list", 0, "list"),
    (8, 6, 6, 0, "int64 array", 0, "list"),
    (12, 4, 0, 3, "tuple", 0, "list"),
    (0, 1, 4, 0, "list", 0, "list"),
    (30, 3, 10, 5, "int32 array", 0, "list"),
    (60, 5, 0, 0, "tuple", 0, "list"),
    (20, 1, 3, 0, "list", 0, "list"),
    (14, 3, 2, 0, "list", 3, "list"),
    (9, 3, 2, 0, "list", 0, "tuple"),
    (6, 3, 0, 0, "list", 0, "bare"),
    (0, 1, 0, 0, "list", 0, "bare"),
]


def random_word_ids(rng: np.random.Generator, words: int, max_pieces: int, padding: int, cut: int, *,
                    dropped: int = 0, special: bool = True) -> list:
    """Word ids as the tokenizers library gives them: None for [CLS], each word's index once per piece, None for
    [SEP] and the padding; with `cut`, truncation ends the tokens inside one of the last `cut` + 1 words; `dropped`
    words (the first word among them) have no piece, as a word of zero-width or control characters; without
    `special`, no [CLS] and [SEP] (nor padding)."""
    pieces = rng.integers(1, max_pieces + 1, size=words)
    if dropped:  # never among the words truncation reads (the last cut + 1)
        candidates = np.arange(1, words - cut - (1 if cut else 0))
        pieces[[0, *rng.choice(candidates, size=dropped - 1, replace=False)]] = 0
    tokens = [w for w in range(words) for _ in range(pieces[w])]
    if cut:
        first_cut = words - cut
        tokens = tokens[:tokens.index(first_cut) - int(rng.integers(0, pieces[first_cut - 1]))]
    return [None, *tokens, None] + [None] * padding if special else tokens


def case_label(words: int, max_pieces: int, padding: int, cut: int, container: str, dropped: int, ids: str) -> str:
    """What a case is, for the messages: its unusual inputs named."""
    if ids == "bare" and not words:
        return f"no token at all (word_ids empty, word_labels an empty {container})"
    label = f"{words} words of up to {max_pieces} pieces" if words else "no words, only [CLS], [SEP]"
    return (label + (f", {padding} padding tokens" if padding else "")
            + (f", truncated: the last {cut} words cut off" if cut else "")
            + (f", {dropped} words without any token (the word ids skip them; word 0 is one of them)" if dropped
               else "")
            + {"list": "", "tuple": ", word_ids a tuple", "bare": ", no special tokens ([CLS], [SEP]) at all"}[ids]
            + f", labels in a {container}")


def _container(labels: list[int], kind: str):
    return {"list": labels, "tuple": tuple(labels), "int64 array": np.array(labels, dtype=np.int64),
            "int32 array": np.array(labels, dtype=np.int32)}[kind]


def grade_align_labels_with_tokens(align_labels_with_tokens) -> None:
    rng = draw(601)
    cases = []
    for words, max_pieces, padding, cut, container, dropped, ids in CASES:
        word_ids = random_word_ids(rng, words, max_pieces, padding, cut, dropped=dropped, special=ids != "bare")
        word_labels = _container(rng.integers(0, len(LABELS), size=words).tolist(), container)
        label = case_label(words, max_pieces, padding, cut, container, dropped, ids)
        cases.append((label, word_labels, tuple(word_ids) if ids == "tuple" else word_ids))
    with quiet():
        outcomes = call_all(align_labels_with_tokens,
                            [[label, [word_labels, word_ids]] for label, word_labels, word_ids in cases])

        def judge(case):
            (label, word_labels, word_ids), outcome = case
            result = returned(outcome)
            expect_unchanged("align_labels_with_tokens", "word_ids", word_ids, rebuild(outcome["after"])[1], label,
                             advice=COPY_TAGS)
            expect_aligned(result, ref.align_labels_with_tokens(word_labels, word_ids), word_labels, word_ids,
                           label=label, mistakes=results(mistakes.ALIGNMENT, word_labels, word_ids))

        judge_all(zip(cases, outcomes, strict=True), judge)
    passed(f"align_labels_with_tokens matches the reference on {len(CASES)} random tokenizations (padding, "
           "truncation, words without a token, no special tokens, lists, tuples and arrays)")
