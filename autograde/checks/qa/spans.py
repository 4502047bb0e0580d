"""Hidden check of `char_span_to_token_span` (assignment 07): the learner's function against the reference on seeded
random windows [CLS] question [SEP] piece [SEP] [PAD]... (words of one to four pieces, punctuation, now and then a
character cut into several tokens of the same offsets as Hangul syllables are, windows at the start or in the middle
of a context, padding, an empty question, a piece of one token or of none), the offsets as the tokenizers library
gives them ((0, 0) for the special tokens, the question's own offsets) or as make_windows does (None), in lists of
tuples, lists of lists or int arrays; answers inside the window, starting or ending inside a token or on the
whitespace between two, inside one token, on its first or last context token, cut by either edge of the window or
outside it. `grade_char_span_to_token_span(fn)` raises `CheckFailed` with a diagnosis or prints one success line
(stdout only). All cases run in one request to the student's kernel (autograde.checks.judging.call_all; NumPy arrays
of objects come back as lists, as in the other text-side checks of 07)."""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks.judging import call_all, judge_all
from autograde.mistakes import results
from autograde.mistakes.qa import spans as mistakes
from autograde.reference.qa import spans as ref
from course_lib.calls import expect_unchanged, rebuild, returned
from course_lib.checking import passed, quiet
from course_lib.qa.spans import expect_span, span_crash_hint

PHRASES = {"inside": "inside the piece", "first": "on the piece's first tokens", "last": "on the piece's last tokens",
           "one token": "one token of the piece", "whole piece": "the whole piece",
           "cut at the start": "cut by the window's start", "cut at the end": "cut by the window's end",
           "over both edges": "over both edges of the window", "before the window": "before the window",
           "after the window": "after the window", "within one token": "inside one token of the piece",
           "no context": "somewhere in the context"}
KINDS = tuple(kind for kind in PHRASES if kind != "no context")

# (where the answer is, starts inside a token, ends inside a token, offsets' style, container, the window's place in
# the context, padding tokens[, what else is unusual: EXTRAS]); random ones follow.
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
    ("within one token", True, True, "windows", "tuples", "middle", 2, {"room": 10}),
    ("inside", False, False, "tokenizer", "lists", "middle", 0, {"gap_start": True}),
    ("inside", False, False, "windows", "tuples", "start", 3, {"gap_end": True}),
    ("inside", False, False, "windows", "lists", "middle", 1, {"gap_start": True, "gap_end": True}),
    ("inside", False, False, "tokenizer", "tuples", "middle", 2, {"shared": 0.6, "questions": 10}),
    ("first", False, False, "windows", "tuples", "start", 0, {"shared": 0.6, "questions": 10}),
    ("no context", False, False, "windows", "tuples", "start", 4, {"room": 0}),
    ("no context", False, False, "tokenizer", "tuples", "middle", 0, {"room": 0}),
    ("one token", False, False, "windows", "lists", "middle", 3, {"room": 1}),
    ("before the window", False, False, "tokenizer", "array", "middle", 0, {"room": 1}),
    ("inside", True, False, "tokenizer", "tuples", "start", 2, {"questions": 0}),
]
RANDOM_CASES = 45
# What else a case may change (a label names the gaps in these words).
EXTRAS = {"questions": "question tokens (None: 1 to 11)", "room": "context tokens in the window (None: 4 to 24)",
          "gap_start": "the answer begins with the whitespace before its first token",
          "gap_end": "the answer ends with the whitespace after its last token",
          "shared": "the chance that a word is written in characters cut into several tokens of the same offsets"}


def random_offsets(rng: np.random.Generator, tokens: int, shared: float = 0.0) -> list[tuple[int, int]]:
    """Character offsets of `tokens` tokens of a text from character 0: words of one to four pieces (most at least
    two characters long), one or two spaces between words, punctuation glued to the word before. With `shared`, that
    share of the words are one to three characters each cut into two or three tokens of the same offsets (as the
    course's tokenizer cuts a Hangul syllable into its letters)."""
    offsets, at = [], 0
    while len(offsets) < tokens:
        if offsets and rng.random() < 0.1:
            offsets.append((at, at + 1))  # punctuation
            at += 1
        elif shared and rng.random() < shared:
            for _ in range(int(rng.integers(1, 4))):
                offsets += [(at, at + 1)] * min(int(rng.integers(2, 4)), tokens - len(offsets))
                at += 1
        else:
            for _ in range(min(int(rng.integers(1, 5)), tokens - len(offsets))):
                length = int(rng.integers(2, 7)) if rng.random() < 0.9 else 1
                offsets.append((at, at + length))
                at += length
        at += int(rng.integers(1, 3))
    return offsets[:tokens]


def characters_of(rng, start: int, end: int, starts_inside: bool, ends_inside: bool, context) -> tuple[int, int]:
    """Characters from token `start` to token `end` (context indices); the first and last characters inside their
    token when asked and the token is long enough."""
    (a, b), (c, d) = context[start], context[end]
    first = int(rng.integers(a + 1, b)) if starts_inside and b - a > 1 else a
    last = int(rng.integers(max(c + 1, first + 1), d)) if ends_inside and d - max(c, first) > 1 else d
    return first, last


def answer_tokens(rng, kind: str, window: int, room: int, size: int, context) -> tuple[int, int]:
    """Context indices (first, last) of an answer `kind` for the piece [window, window + room) of `size` tokens."""
    end = window + room - 1

    def within(low: int, high: int) -> int:  # low..high, both included
        return int(rng.integers(low, high + 1))

    if kind == "no context":
        first = within(0, size - 1)
        return first, min(size - 1, first + within(0, 3))
    if kind == "within one token":
        long = [i for i in range(window, end + 1) if context[i][1] - context[i][0] >= 3]
        first = int(rng.choice(long)) if long else within(window, end)
        return first, first
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


def with_gaps(rng, first: int, last: int, window: int, end: int, context, gap_start: bool,
              gap_end: bool) -> tuple[int, int, bool, bool]:
    """(first, last) moved, where they must be, to a token that follows or precedes whitespace inside the piece, and
    whether each end of the answer can take in that whitespace."""
    if gap_start:
        after = [i for i in range(window + 1, end + 1) if context[i - 1][1] < context[i][0]]
        gap_start = bool(after)
        if after and not (first in after and first > window):
            first = int(rng.choice(after[:2]))
        last = max(first, last)
    if gap_end:
        before = [i for i in range(first, end) if context[i][1] < context[i + 1][0]]
        gap_end = bool(before)
        if before and last not in before:
            last = int(rng.choice(before[-2:]))
    return first, last, gap_start, gap_end


def count(number: int, thing: str) -> str:
    """"1 question token", "3 question tokens"."""
    return f"{number} {thing}{'' if number == 1 else 's'}"


def random_window(rng, kind, starts_inside, ends_inside, style, container, place, padding, extras=None):
    """(label, offsets, sequence_ids, char_start, char_end) of one random window and answer; `extras` (EXTRAS) make
    it unusual."""
    extras = extras or {}
    questions = int(rng.integers(1, 12)) if extras.get("questions") is None else extras["questions"]
    gaps = extras.get("gap_start") or extras.get("gap_end")
    room = (int(rng.integers(12 if gaps else 4, 25)) if extras.get("room") is None else extras["room"])
    window = 0 if place == "start" else int(rng.integers(7, 30))
    if place == "start" and kind in ("cut at the start", "over both edges", "before the window"):
        window = 7
    size = window + room + int(rng.integers(6, 20))
    context = random_offsets(rng, size, extras.get("shared", 0.0))
    first, last = answer_tokens(rng, kind, window, room, size, context)
    first, last, gap_start, gap_end = with_gaps(rng, first, last, window, window + room - 1, context,
                                                bool(extras.get("gap_start")), bool(extras.get("gap_end")))
    char_start, char_end = characters_of(rng, first, last, starts_inside and not gap_start,
                                         ends_inside and not gap_end, context)
    if gap_start:
        char_start = context[first][0] - 1
    if gap_end:
        char_end = context[last][1] + 1
    low, high = context[first]
    if kind == "within one token" and high - low >= 3:  # strictly inside: after its first character, before its last
        char_start = int(rng.integers(low + 1, high - 1))
        char_end = int(rng.integers(char_start + 1, high))
    special = None if style == "windows" else (0, 0)
    question = [special] * questions if style == "windows" else random_offsets(rng, questions)
    offsets = [special, *question, special, *context[window:window + room], special] + [special] * padding
    sequence_ids = [None, *[0] * questions, None, *[1] * room, None] + [None] * padding
    if container == "array":
        offsets = np.array(offsets, dtype=np.int64)
    elif container == "lists":
        offsets = [None if pair is None else list(pair) for pair in offsets]
    shown = "None" if style == "windows" else "(0, 0)"
    piece = (f"context tokens {window}..{window + room - 1} of {size}" if room else
             f"no context token (the question fills the window; the context has {size} tokens)")
    unusual = [EXTRAS[key] for key, on in (("gap_start", gap_start), ("gap_end", gap_end)) if on]
    if extras.get("shared"):
        unusual.append("some characters split into several tokens of the same offsets")
    label = (f"{count(questions, 'question token')}, {piece}"
             + (f", {padding} padding tokens" if padding else "") + f", the answer {PHRASES[kind]} "
             f"(characters [{char_start}, {char_end}))" + "".join(f", {phrase}" for phrase in unusual)
             + f", special tokens at {shown}, offsets as {container}")
    return label, offsets, sequence_ids, char_start, char_end


def _random_case(rng) -> tuple:
    style = str(rng.choice(["tokenizer", "windows"]))
    containers = ["tuples", "lists"] + (["array"] if style == "tokenizer" else [])
    case = (str(rng.choice(KINDS)), bool(rng.random() < 0.4), bool(rng.random() < 0.4), style,
            str(rng.choice(containers)), str(rng.choice(["start", "middle"])), int(rng.integers(0, 6)))
    extras = {"gap_start": bool(rng.random() < 0.15), "gap_end": bool(rng.random() < 0.15),
              "shared": 0.3 if rng.random() < 0.2 else 0.0}
    if case[0] != "inside":
        extras["gap_start"] = extras["gap_end"] = False
    return (*case, extras)


def grade_char_span_to_token_span(char_span_to_token_span) -> None:
    rng = draw(701)
    drawn = list(CASES) + [_random_case(rng) for _ in range(RANDOM_CASES)]
    cases = [random_window(rng, *case) for case in drawn]
    cases = [(f"window {number + 1} of {len(cases)}: {label}", *rest) for number, (label, *rest) in enumerate(cases)]
    with quiet():
        outcomes = call_all(char_span_to_token_span, [[label, list(args)] for label, *args in cases],
                            object_arrays_as_lists=True)

        def judge(item):
            (label, offsets, sequence_ids, char_start, char_end), outcome = item
            plain = [None if pair is None else (int(pair[0]), int(pair[1])) for pair in offsets]
            result = returned(outcome, span_crash_hint(outcome.get("raised", ""), plain, sequence_ids, char_start,
                                                       char_end))
            after = rebuild(outcome["after"])
            for argument, before, now in zip(("offsets", "sequence_ids"), (offsets, sequence_ids), after[:2],
                                             strict=True):
                expect_unchanged("char_span_to_token_span", argument, before, now, label)
            args = (offsets, sequence_ids, char_start, char_end)
            expect_span(result, ref.char_span_to_token_span(*args), *args, label=label,
                        mistakes=results(mistakes.SPANS, *args))

        judge_all(zip(cases, outcomes, strict=True), judge)
    passed(f"char_span_to_token_span matches the reference on {len(cases)} random windows (answers inside, cut by "
           "either edge or outside, on whitespace or inside one token; windows of one context token or none; offsets "
           "with (0, 0) or None for the special tokens)")
