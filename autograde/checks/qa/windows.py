"""Hidden check of `make_windows` (assignment 07): the learner's function against the reference on seeded random
questions and contexts (ids, and offsets of words of one to four pieces): a context that fits one window with or
without padding, or one token too long for it, many windows, strides from 0 to room - 1, room for one token, an empty
context or one no longer than the stride, an empty question, answers inside one window, in the overlap of two, cut by
a window's edge, on the context's first or last token, longer than a window, or none; the ids in lists, tuples and
int arrays, the offsets as tuples, lists or an int array, and other special token ids than BERT's; and arguments it
must refuse with a ValueError (no room, a stride outside [0, room)). It is graded with the reference
`char_span_to_token_span` in place of the learner's. All cases run in one request to the student's kernel, each call
stopped after course_lib.qa.window_arguments.TIME_LIMIT seconds (a loop that never ends on stride 0, say);
`grade_make_windows(fn)` raises `CheckFailed` with a diagnosis or prints one success line (stdout only)."""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks.judging import call_all, judge_all
from autograde.checks.qa.spans import characters_of, count, random_offsets
from autograde.mistakes import results
from autograde.mistakes.qa import windows as mistakes
from autograde.reference.qa import windows as ref
from autograde.reference.qa.spans import char_span_to_token_span as reference_spans
from autograde.remote import with_parts
from course_lib.calls import expect_unchanged, rebuild, returned
from course_lib.checking import passed, quiet
from course_lib.qa.window_arguments import TIME_LIMIT, crash_hint_for, expect_refused, refused_because
from course_lib.qa.windows import expect_windows

ANSWERS = ("inside", "in an overlap", "cut by a window's end", "the first token", "the last token",
           "longer than a window", None)
OTHER_IDS = {"cls_id": 2, "sep_id": 3, "pad_id": 1}

# (question tokens, context tokens, max_length, stride, answer, containers of question_ids, context_ids and
# context_offsets, special ids); random ones follow.
CASES = [
    (5, 10, 32, 4, "inside", ("list", "list", "tuples"), "BERT's"),
    (6, 23, 32, 8, "the first token", ("list", "list", "tuples"), "BERT's"),
    (6, 24, 32, 8, "the last token", ("tuple", "list", "lists"), "BERT's"),
    (3, 80, 24, 6, "in an overlap", ("list", "array", "tuples"), "BERT's"),
    (10, 120, 48, 16, "cut by a window's end", ("tuple", "array", "array"), "BERT's"),
    (1, 60, 16, 1, "inside", ("array", "list", "tuples"), "BERT's"),
    (8, 70, 30, 18, "in an overlap", ("list", "list", "lists"), "BERT's"),
    (12, 150, 64, 20, None, ("list", "array", "tuples"), "BERT's"),
    (4, 90, 40, 10, "longer than a window", ("list", "list", "tuples"), "other"),
    (7, 45, 28, 5, "cut by a window's end", ("array", "array", "array"), "other"),
]
# Unusual but allowed: stride 0, room for one token, an empty context, a context no longer than the stride, an empty
# question.
EDGE_CASES = [
    (4, 40, 20, 0, "cut by a window's end", ("list", "list", "tuples"), "BERT's"),
    (3, 9, 7, 0, "the first token", ("list", "array", "tuples"), "BERT's"),
    (5, 0, 24, 4, None, ("list", "list", "tuples"), "BERT's"),
    (6, 1, 24, 3, "the first token", ("tuple", "list", "lists"), "other"),
    (2, 4, 20, 6, "the last token", ("list", "array", "array"), "BERT's"),
    (0, 30, 16, 4, "in an overlap", ("list", "list", "lists"), "BERT's"),
]
# (question tokens, context tokens, max_length, stride) that the exercise refuses with a ValueError: no room (R < 1),
# a stride of R or more, a negative stride. The contexts are short, so that a loop that does not refuse them ends.
REFUSED = [(14, 5, 16, 0), (13, 3, 16, 0), (4, 6, 16, 9), (4, 6, 16, 12), (4, 30, 16, -2)]
RANDOM_CASES = 12


def answer_tokens(rng: np.random.Generator, kind: str, size: int, room: int, stride: int) -> tuple[int, int]:
    """Context indices (first, last) of an answer `kind`, for pieces of `room` tokens that share `stride`."""
    def within(low: int, high: int) -> int:  # both included
        return int(rng.integers(low, max(low, high) + 1))

    second = room - stride  # where the second piece starts
    if kind == "the first token":
        return 0, min(size - 1, within(0, 2))
    if kind == "the last token":
        return max(0, size - 1 - within(0, 2)), size - 1
    if kind == "in an overlap" and second < size:
        first = within(second, min(room, size) - 1)
        return first, within(first, min(room, size) - 1)
    if kind == "cut by a window's end" and room < size:
        return within(max(0, room - 3), room - 1), within(room, min(size, room + 3) - 1)
    if kind == "longer than a window" and room < size:
        first = within(0, size - room - 1)
        return first, first + room
    first = within(0, size - 1)
    return first, min(size - 1, first + within(0, 5))


def _container(values, kind: str):
    if kind == "tuples":
        return [tuple(pair) for pair in values]
    if kind == "lists":
        return [list(pair) for pair in values]
    if kind == "array":
        return np.array(values, dtype=np.int64)
    return tuple(values) if kind == "tuple" else list(values)


def random_case(rng, questions, size, max_length, stride, answer, containers, ids):
    """(label, args, kwargs) of one call of make_windows."""
    room = max_length - questions - 3
    offsets = random_offsets(rng, size)
    kwargs = dict(OTHER_IDS) if ids == "other" else {}
    if answer is not None:
        first, last = answer_tokens(rng, answer, size, room, stride)
        kwargs["answer"] = characters_of(rng, first, last, rng.random() < 0.3, rng.random() < 0.3, offsets)
    args = [_container(rng.integers(1000, 30000, size=questions).tolist(), containers[0]),
            _container(rng.integers(1000, 30000, size=size).tolist(), containers[1]),
            _container(offsets, containers[2]), max_length, stride]
    label = (f"{count(questions, 'question token')}, {count(size, 'context token')}, max_length={max_length}, "
             f"stride={stride}, "
             + (f"the answer {answer} (characters [{kwargs['answer'][0]}, {kwargs['answer'][1]}))" if answer else
                "no answer") + f", {ids} special ids, ids as {containers[0]} and {containers[1]}, offsets as "
             f"{containers[2]}")
    return label, args, kwargs


def _random_row(rng):
    questions, max_length = int(rng.integers(1, 13)), int(rng.integers(16, 65))
    room = max_length - questions - 3
    stride = int(rng.integers(1, max(2, room // 2 + 1)))
    containers = (str(rng.choice(["list", "tuple", "array"])), str(rng.choice(["list", "array"])),
                  str(rng.choice(["tuples", "lists", "array"])))
    answer = ANSWERS[int(rng.integers(0, len(ANSWERS)))]
    return (questions, int(rng.integers(1, 151)), max_length, stride, answer, containers,
            "other" if rng.random() < 0.25 else "BERT's")


def refused_case(rng, questions: int, size: int, max_length: int, stride: int):
    """(label, args, kwargs) of a call of make_windows that must raise a ValueError."""
    args = [rng.integers(1000, 30000, size=questions).tolist(), rng.integers(1000, 30000, size=size).tolist(),
            random_offsets(rng, size), max_length, stride]
    why = refused_because(args[0], max_length, stride)
    return f"{count(questions, 'question token')}, {count(size, 'context token')}, max_length={max_length}, " \
           f"stride={stride}: {why}", args, {}


def grade_make_windows(make_windows) -> None:
    rng = draw(711)
    rows = CASES + EDGE_CASES + [_random_row(rng) for _ in range(RANDOM_CASES)]
    cases = [random_case(rng, *row) for row in rows] + [refused_case(rng, *row) for row in REFUSED]
    cases = [(f"context {number + 1} of {len(cases)}: {label}", args, kwargs)
             for number, (label, args, kwargs) in enumerate(cases)]
    with quiet(), with_parts(make_windows, char_span_to_token_span=reference_spans):
        outcomes = call_all(make_windows, [[label, args, kwargs] for label, args, kwargs in cases],
                            object_arrays_as_lists=True, seconds=TIME_LIMIT)

    def judge(item):
        (label, args, kwargs), outcome = item
        why = refused_because(args[0], args[3], args[4])
        if why:
            expect_refused(outcome, why, label)
            return
        result = returned(outcome, crash_hint_for(outcome.get("raised", ""), label, args[0], args[3], args[4]))
        after = rebuild(outcome["after"])
        for argument, before, now in zip(("question_ids", "context_ids", "context_offsets"), args, after,
                                         strict=False):
            expect_unchanged("make_windows", argument, before, now, label)
        expected = [ref.plain_window(window) for window in ref.make_windows(*args, **kwargs)]
        wrong = [([ref.plain_window(window) for window in value], message)
                 for value, message in results(mistakes.WINDOWS, *args, **kwargs)]
        expect_windows(result, expected, question_ids=args[0], context_length=len(args[1]), max_length=args[3],
                       stride=args[4], with_answer="answer" in kwargs, mistakes=wrong, label=label)

    with quiet():
        judge_all(zip(cases, outcomes, strict=True), judge)
    passed(f"make_windows matches the reference on {len(cases) - len(REFUSED)} random contexts (one window or many, "
           "strides from 0 to room - 1, empty contexts and questions, answers whole, shared, cut or absent, other "
           f"special ids) and refuses {len(REFUSED)} impossible ones")
