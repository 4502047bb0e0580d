"""Assignment 07, from characters to tokens: the visible check of `char_span_to_token_span` and its diagnostics
(shared with the hidden check in autograde.checks.qa.spans), and the small helpers the three text-side checks of 07
share (calling the learner where its code runs and judging the cases in order: course_lib.calls).

The check's windows are real: a question and a paragraph tokenized by the course's tokenizer when the expected values
are generated (`course_lib/expected/07_qa.json`, from autograde/expected/qa/spans.py), whole or cut into windows,
either as the tokenizers library gives them (special tokens at offsets (0, 0), the question's tokens with offsets
into the question) or as make_windows gives them (None for every position that is not a context token).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from course_lib.calls import expect_unchanged, judge_all, named
from course_lib.checking import CheckFailed, call_learner, passed
from course_lib.expected import load as load_expected

STEM = "07_qa"
RULE = ("(first, last) are the window positions of the first and the last context token (sequence id 1) that the "
        "answer's characters [char_start, char_end) touch, last included; None when the window's context does not "
        "hold the whole answer")
CUT = "an answer cut by the window's edge counts as absent"
NONE_OFFSETS = ("the offsets of the question and special tokens may be None (make_windows gives them so): read the "
                "offsets of the context tokens (sequence id 1) only")

# ----------------------------------------------------------------------------------------------
# Shared by the checks of assignment 07's text side


def is_index(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def crash_hint(message: str) -> str:
    return f": {NONE_OFFSETS}" if "NoneType" in message else ""


def span_crash_hint(message: str, offsets, sequence_ids, char_start: int, char_end: int) -> str:
    """What a crash of char_span_to_token_span on this window may come from ("" when nothing stands out)."""
    if "NoneType" in message:
        return NONE_OFFSETS
    context = [position for position, sequence in enumerate(sequence_ids) if sequence == 1]
    if not context:
        return "this window holds no context token (its question fills it, or the context is empty): return None"
    held = [[p for p in context if offsets[p][0] <= c < offsets[p][1]] for c in (char_start, char_end - 1)]
    if not all(held):
        return ("the answer starts or ends with whitespace, which no token holds: the first token is the first context "
                "token with end > char_start, the last the last one with start < char_end")
    if 0 not in list(sequence_ids):
        return ("this window holds no question token (an empty question): the context is the tokens of sequence id 1, "
                "wherever they are")
    return ""


# ----------------------------------------------------------------------------------------------
# char_span_to_token_span: shared diagnostics


def read_span(result, call: str) -> tuple[int, int] | None:
    """The learner's answer as (first, last) or None, or a failure saying what is wrong with its form."""
    if result is None:
        return None
    if hasattr(result, "numpy") and not isinstance(result, np.ndarray):
        result = result.numpy()
    if not isinstance(result, (tuple, list, np.ndarray)) or (isinstance(result, np.ndarray) and result.ndim != 1):
        raise CheckFailed(f"{call} should return a tuple (first, last) of token positions, or None, got "
                          f"{type(result).__name__}")
    values = list(result)
    if len(values) != 2:
        raise CheckFailed(f"{call} returned {len(values)} value{'' if len(values) == 1 else 's'}: return (first, "
                          "last), two token positions, or None")
    if not all(is_index(value) for value in values):
        raise CheckFailed(f"{call} returned {tuple(values)!r}: first and last are token positions (int)")
    return int(values[0]), int(values[1])


def as_span(value) -> tuple[int, int] | None:
    """A stored or computed answer as (first, last) or None ([] stands for None in the expected values' file)."""
    if value is None or len(value) == 0:
        return None
    return int(value[0]), int(value[1])


def token_text(position: int, offsets, tokens=None) -> str:
    """"position 12 ('##res', characters [5, 8))" for the messages."""
    shown = f"{tokens[position]!r}, " if tokens is not None else ""
    where = offsets[position]
    characters = "no offsets" if where is None else f"characters [{int(where[0])}, {int(where[1])})"
    return f"position {position} ({shown}{characters})"


def _why(got, expected, offsets, sequence_ids, char_start: int, char_end: int, tokens) -> str:
    """What is wrong with a span that no named mistake explains."""
    if got is not None:
        for position in got:
            if not 0 <= position < len(sequence_ids):
                return f"position {position} is outside the window ({len(sequence_ids)} tokens)"
            if sequence_ids[position] == 0:
                return (f"{token_text(position, offsets, tokens)} is a question token (sequence id 0): only the "
                        "context tokens, sequence id 1, can hold the answer")
            if sequence_ids[position] is None:
                return (f"position {position} is a special token ([CLS], [SEP] or padding, sequence id None): only "
                        "the context tokens, sequence id 1, can hold the answer")
        if got[0] > got[1]:
            return "first comes after last"
    context = [position for position, sequence in enumerate(sequence_ids) if sequence == 1]
    if expected is None:
        if not context:
            return "the window has no context token, so it cannot hold the answer: return None"
        covered = f"[{int(offsets[context[0]][0])}, {int(offsets[context[-1]][1])})"
        return (f"the window's context covers the characters {covered} only, and the answer [{char_start}, {char_end}) "
                f"is not all inside them: return None ({CUT})")
    if got is None:
        return (f"the window's context holds the whole answer, from {token_text(expected[0], offsets, tokens)} to "
                f"{token_text(expected[1], offsets, tokens)}: return {expected}")
    spaces = [not any(offsets[p][0] <= c < offsets[p][1] for p in context) for c in (char_start, char_end - 1)]
    if got[0] != expected[0]:
        if spaces[0]:
            return (f"the answer starts on whitespace (no token holds char_start = {char_start}): first is the first "
                    f"context token that ends after it, {token_text(expected[0], offsets, tokens)}")
        return (f"first is the context token whose characters hold char_start = {char_start}: "
                f"{token_text(expected[0], offsets, tokens)}")
    if spaces[1]:
        return (f"the answer ends on whitespace (no token holds char_end - 1 = {char_end - 1}): last is the last "
                f"context token that starts before char_end, {token_text(expected[1], offsets, tokens)}")
    return (f"last is the last context token that starts before char_end = {char_end}, included: "
            f"{token_text(expected[1], offsets, tokens)}")


def expect_span(result, expected, offsets, sequence_ids, char_start: int, char_end: int, *, mistakes=(),
                label: str = "", tokens=None, text: str | None = None) -> None:
    """Compare the learner's answer with `expected` ((first, last) or None); `mistakes` are (wrong answer,
    explanation); `tokens` and `text` (the context) make the message concrete."""
    call = f"{f'[{label}] ' if label else ''}char_span_to_token_span(offsets, sequence_ids, {char_start}, {char_end})"
    got, expected = read_span(result, call), as_span(expected)
    if got == expected:
        return
    answer = f" (the answer {text[char_start:char_end]!r})" if text is not None else ""
    matching = list(dict.fromkeys(message for wrong, message in mistakes if as_span(wrong) == got))
    if matching:
        raise named(f"{call} returned {got}, expected {expected}: {matching[0]}{answer}", len(matching))
    why = _why(got, expected, offsets, sequence_ids, char_start, char_end, tokens)
    raise CheckFailed(f"{call} returned {got}, expected {expected}: {why}{answer}. {RULE}")


# ----------------------------------------------------------------------------------------------
# The visible check

ORESUND = ("The Øresund Bridge opened on 1 July 2000. It carries a double-track railway and a four-lane motorway "
           "across the strait between Copenhagen and Malmö, and its cable-stayed main span is 490 metres long. The "
           "name joins Øre, an old word for a gravel beach, and sund, the Danish word for a strait.")

# Each case: a label, the question, the answer's text in ORESUND and which occurrence of it (from 1), and how the
# pair is cut: `window` k of the windows of `max_length` tokens (or of `room` context tokens) sharing `stride`
# ("whole": not cut), made by the tokenizers library ("tokenizer") or by make_windows ("windows"), the offsets given as
# a list of tuples, of lists or as an int array; `context` is another text to cut instead of ORESUND (the answer's
# characters stay those in ORESUND).
SPAN_CASES = [
    ("the whole pair, the answer at the start of the context", "Which bridge opened on 1 July 2000?",
     "The Øresund Bridge", 1, {"style": "tokenizer", "window": "whole", "offsets": "tuples"}),
    ("the answer starts inside a token", "Which part of the bridge's name means a strait?", "sund", 1,
     {"style": "tokenizer", "window": "whole", "offsets": "array"}),
    ("the answer ends inside a token", "Which old word for a gravel beach begins the bridge's name?", "Øre", 1,
     {"style": "tokenizer", "window": "whole", "offsets": "lists"}),
    ("a window of make_windows that ends with the answer", "What does the bridge carry?",
     "a double-track railway", 1, {"style": "windows", "window": 0, "max_length": 27, "stride": 6,
                                   "offsets": "tuples"}),
    ("the answer cut by the window's end", "What does the bridge carry across the strait?",
     "a double-track railway and a four-lane motorway", 1,
     {"style": "tokenizer", "window": 0, "max_length": 32, "stride": 8, "offsets": "lists"}),
    ("the answer cut by the window's start", "What does the bridge carry across the strait?",
     "a double-track railway and a four-lane motorway", 1,
     {"style": "windows", "window": 1, "max_length": 32, "stride": 4, "offsets": "tuples"}),
    ("the answer is the window's first context token", "Which city lies across the strait from Copenhagen?",
     "Malmö", 1, {"style": "tokenizer", "window": 2, "max_length": 32, "stride": 5, "offsets": "tuples"}),
    ("the answer in a later window", "What is the length of the main span?", "490 metres", 1,
     {"style": "tokenizer", "window": 0, "max_length": 40, "stride": 10, "offsets": "lists"}),
    ("the answer starts with the space before its word", "Which city lies across the strait from Copenhagen?",
     " Malmö", 1, {"style": "tokenizer", "window": "whole", "offsets": "tuples"}),
    ("the answer inside one token, a part of a word", "Which letters of 'carries' are asked for?", "arri", 1,
     {"style": "windows", "window": 0, "max_length": 64, "stride": 8, "offsets": "tuples"}),
    ("an empty question", "", "Copenhagen and Malmö", 1, {"style": "tokenizer", "window": "whole", "offsets": "lists"}),
    ("a window of one context token, the answer", "Which city lies across the strait from Copenhagen?", "Malmö", 1,
     {"style": "windows", "window": 30, "room": 1, "stride": 0, "offsets": "tuples"}),
    ("a window without context tokens (an empty context)", "Which city lies across the strait from Copenhagen?",
     "Malmö", 1, {"style": "windows", "window": 0, "context": "", "max_length": 32, "stride": 4, "offsets": "tuples"}),
]


def case_inputs(case: Mapping, container: str):
    """(offsets, sequence_ids) of a stored case (-1 stands for None), the offsets in the case's container."""
    sequence_ids = [None if s < 0 else int(s) for s in case["sequence_ids"]]
    pairs = [None if start < 0 else (int(start), int(end)) for start, end in case["offsets"]]
    if container == "array":
        return np.array(pairs, dtype=np.int64), sequence_ids
    if container == "lists":
        return [None if pair is None else list(pair) for pair in pairs], sequence_ids
    return pairs, sequence_ids


def check_char_span_to_token_span(char_span_to_token_span) -> None:
    """char_span_to_token_span on 13 real windows: whole answers, answers starting or ending in a token or on a
    space, cut ones, an empty question, windows of one context token or none."""
    expected = load_expected(STEM, "spans", "char_span_to_token_span")

    def judge(case):
        label, _, _, _, options = case
        stored = expected[label]
        offsets, sequence_ids = case_inputs(stored, options["offsets"])
        given = [np.copy(offsets) if isinstance(offsets, np.ndarray) else [
            None if pair is None else type(pair)(pair) for pair in offsets], list(sequence_ids)]
        char_start, char_end = int(stored["char_start"]), int(stored["char_end"])
        try:
            result = call_learner(char_span_to_token_span, *given, char_start, char_end)
        except CheckFailed as failure:
            hint = span_crash_hint(str(failure), offsets, sequence_ids, char_start, char_end)
            raise CheckFailed(f"[{label}] {failure}" + (f": {hint}" if hint else "")) from None
        for argument, before, after in zip(("offsets", "sequence_ids"), (offsets, sequence_ids), given, strict=True):
            expect_unchanged("char_span_to_token_span", argument, before, after, label)
        mistakes = [(entry["value"], entry["message"]) for entry in stored["mistakes"].values()]
        expect_span(result, stored["expected"], offsets, sequence_ids, char_start, char_end, mistakes=mistakes,
                    label=label, tokens=stored["tokens"], text=ORESUND)

    judge_all(SPAN_CASES, judge)
    passed(f"char_span_to_token_span finds the answer's tokens in {len(SPAN_CASES)} real windows, and None where a "
           "window cuts the answer")
