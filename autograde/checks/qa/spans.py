"""Hidden check of `char_span_to_token_span` (assignment 07): the learner's function against the reference on seeded
random windows [CLS] question [SEP] piece [SEP] [PAD]... (words of one to four pieces, punctuation, windows at the
start or in the middle of a context, padding), the offsets as the tokenizers library gives them ((0, 0) for the
special tokens, the question's own offsets) or as make_windows does (None), in lists of tuples, lists of lists or
int arrays; answers inside the window, starting or ending inside a token, on its first or last context token, cut by
either edge of the window or outside it. `grade_char_span_to_token_span(fn)` raises `CheckFailed` with a diagnosis
or prints one success line (stdout only). All cases run in one request to the student's kernel
(autograde.checks.judging.call_all; NumPy arrays of objects come back as lists, as in the other text-side checks of
07)."""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks.judging import call_all, judge_all
from autograde.mistakes import results
from autograde.mistakes.qa import spans as mistakes
from autograde.reference.qa import spans as ref
from course_lib.calls import expect_unchanged, rebuild, returned
from course_lib.checking import passed, quiet
from course_lib.qa.spans import NONE_OFFSETS, expect_span

PHRASES = {"inside": "inside the piece", "first": "on the piece's first tokens", "last": "on the piece's last tokens",
           "one token": "one token of the piece", "whole piece": "the whole piece",
           "cut at the start": "cut by the window's start", "cut at the end": "cut by the window's end",
           "over both edges": "over both edges of the window", "before the window": "before the window",
           "after the window": "after the window"}
KINDS = tuple(PHRASES)

# (where the answer is, starts inside a token, ends inside a token, offsets' style, container, the window's place in
# the context, padding tokens); random ones follow.
CASES = [
    ("inside", False, False, "tokenizer", "tuples", "start", 0),
    ("inside", True, False, "windows", "tuples", "middle", 3),
    ("inside", False, True, "tokenizer", "lists", "middle", 0),
    ("inside", True, True, "tokenizer", "tuples", "start", 4),
    ("first", True, False, "tokenizer", "array", "start", 0),
    ("last", False, False, "windows", "tuples", "middle", 5),
    ("last", False, True, "tokenizer", "tuples", "start", 0),
    ("one token", False, False, "windows", "lists", "middle", 0),
    ("whole piece", False, False, "windows", "tuples", "middle", 2),
    ("cut at the start", False, False, "windows", "tuples", "middle", 2),
    ("cut at the end", True, False, "tokenizer", "tuples", "start", 0),
    ("cut at the end", False, False, "windows", "lists", "middle", 6),
    ("over both edges", False, False, "tokenizer", "array", "middle", 0),
    ("before the window", False, False, "windows", "tuples", "middle", 0),
    ("after the window", False, False, "tokenizer", "tuples", "start", 3),
]
RANDOM_CASES = 45


def random_offsets(rng: np.random.Generator, tokens: int) -> list[tuple[int, int]]:
    """Character offsets of `tokens` tokens of a text from character 0: words of one to four pieces (most at least
    two characters long), one or two spaces between words, punctuation glued to the word before."""
    offsets, at = [], 0
    while len(offsets) < tokens:
        if offsets and rng.random() < 0.1:
            offsets.append((at, at + 1))  # punctuation
            at += 1
        else:
            for _ in range(min(int(rng.integers(1, 5)), tokens - len(offsets))):
                length = int(rng.integers(2, 7)) if rng.random() < 0.9 else 1
                offsets.append((at, at + length))
                at += length
        at += int(rng.integers(1, 3))
    return offsets


def characters_of(rng, start: int, end: int, starts_inside: bool, ends_inside: bool, context) -> tuple[int, int]:
    """Characters from token `start` to token `end` (context indices); the first and last characters inside their
    token when asked and the token is long enough."""
    (a, b), (c, d) = context[start], context[end]
    first = int(rng.integers(a + 1, b)) if starts_inside and b - a > 1 else a
    last = int(rng.integers(max(c + 1, first + 1), d)) if ends_inside and d - max(c, first) > 1 else d
    return first, last


def answer_tokens(rng, kind: str, window: int, room: int, size: int) -> tuple[int, int]:
    """Context indices (first, last) of an answer `kind` for the piece [window, window + room) of `size` tokens."""
    end = window + room - 1

    def within(low: int, high: int) -> int:  # low..high, both included
        return int(rng.integers(low, high + 1))

    if kind in ("inside", "one token"):
        first = within(window, end)
        return first, first if kind == "one token" else min(end, first + within(0, 4))
    if kind == "first":
        return window, min(end, window + within(0, 2))
    if kind == "last":
        return max(window, end - within(0, 2)), end
    if kind == "whole piece":
        return window, end
    if kind == "cut at the start":
        return within(max(0, window - 4), window - 1), within(window, end)
    if kind == "cut at the end":
        return within(window, end), within(end + 1, min(size - 1, end + 4))
    if kind == "over both edges":
        return window - 1, end + 1
    if kind == "before the window":
        return max(0, window - 6), window - 1
    return end + 1, min(size - 1, end + 4)  # after the window


def count(number: int, thing: str) -> str:
    """"1 question token", "3 question tokens"."""
    return f"{number} {thing}{'' if number == 1 else 's'}"


def random_window(rng, kind, starts_inside, ends_inside, style, container, place, padding):
    """(label, offsets, sequence_ids, char_start, char_end) of one random window and answer."""
    questions, room = int(rng.integers(1, 12)), int(rng.integers(4, 25))
    window = 0 if place == "start" else int(rng.integers(7, 30))
    if place == "start" and kind in ("cut at the start", "over both edges", "before the window"):
        window = 7
    size = window + room + int(rng.integers(6, 20))
    context = random_offsets(rng, size)
    first, last = answer_tokens(rng, kind, window, room, size)
    char_start, char_end = characters_of(rng, first, last, starts_inside, ends_inside, context)
    special = None if style == "windows" else (0, 0)
    question = [special] * questions if style == "windows" else random_offsets(rng, questions)
    offsets = [special, *question, special, *context[window:window + room], special] + [special] * padding
    sequence_ids = [None, *[0] * questions, None, *[1] * room, None] + [None] * padding
    if container == "array":
        offsets = np.array(offsets, dtype=np.int64)
    elif container == "lists":
        offsets = [None if pair is None else list(pair) for pair in offsets]
    shown = "None" if style == "windows" else "(0, 0)"
    label = (f"{count(questions, 'question token')}, context tokens {window}..{window + room - 1} of {size}"
             + (f", {padding} padding tokens" if padding else "") + f", the answer {PHRASES[kind]} "
             f"(characters [{char_start}, {char_end})), special tokens at {shown}, offsets as {container}")
    return label, offsets, sequence_ids, char_start, char_end


def grade_char_span_to_token_span(char_span_to_token_span) -> None:
    rng = draw(701)
    drawn = list(CASES)
    for _ in range(RANDOM_CASES):
        style = str(rng.choice(["tokenizer", "windows"]))
        containers = ["tuples", "lists"] + (["array"] if style == "tokenizer" else [])
        drawn.append((str(rng.choice(KINDS)), bool(rng.random() < 0.4), bool(rng.random() < 0.4), style,
                      str(rng.choice(containers)), str(rng.choice(["start", "middle"])), int(rng.integers(0, 6))))
    cases = [random_window(rng, *case) for case in drawn]
    cases = [(f"window {number + 1} of {len(cases)}: {label}", *rest) for number, (label, *rest) in enumerate(cases)]
    with quiet():
        outcomes = call_all(char_span_to_token_span, [[label, list(args)] for label, *args in cases],
                            object_arrays_as_lists=True)

        def judge(item):
            (label, offsets, sequence_ids, char_start, char_end), outcome = item
            result = returned(outcome, NONE_OFFSETS if "NoneType" in outcome.get("raised", "") else "")
            after = rebuild(outcome["after"])
            for argument, before, now in zip(("offsets", "sequence_ids"), (offsets, sequence_ids), after[:2],
                                             strict=True):
                expect_unchanged("char_span_to_token_span", argument, before, now, label)
            args = (offsets, sequence_ids, char_start, char_end)
            expect_span(result, ref.char_span_to_token_span(*args), *args, label=label,
                        mistakes=results(mistakes.SPANS, *args))

        judge_all(zip(cases, outcomes, strict=True), judge)
    passed(f"char_span_to_token_span matches the reference on {len(cases)} random windows (answers inside, cut by "
           "either edge or outside; offsets with (0, 0) or None for the special tokens)")
