"""Hidden check of `best_span` (assignment 07): the learner's function against the reference
(autograde.reference.qa.decoding) on seeded random logits and context masks laid out as make_windows lays
them out ([CLS] and the question scoring high, as a fine-tuned model's often do), or with context tokens from a
window's first position to its last, with one to six windows, float32, float64 and float16 arrays, lists and 1-D
inputs, arguments passed by position, by keyword or left to their defaults, ties (logits on a coarse grid), n_best of
1 or above the number of valid spans, a window without context tokens among others, and no valid span at all. Every
logit lies on a grid of powers of two, so every sum is exact in float32 and float64 (and in float16, on its coarser
grid). All cases run in one request to the student's kernel; the arguments must come back unchanged.
`grade_best_span(fn)` raises `CheckFailed` with a diagnosis or prints one success line (stdout only)."""

from __future__ import annotations

from autograde.checks import rng as draw
from autograde.checks.judging import call_all, judge_all
from autograde.mistakes import results
from autograde.mistakes.qa import decoding as mistakes
from autograde.reference.qa.decoding import best_span as reference
from course_lib.calls import rebuild, returned
from course_lib.checking import passed, quiet
from course_lib.qa.decoding import (
    Case,
    arguments,
    crash_hint,
    expect_arguments_unchanged,
    expect_best_span,
    random_logits,
    window_masks,
)

# windows, seq, question tokens (None: no special tokens, the context fills the window), context tokens of the last
# window (None: full), grid, container, how the call passes max_answer_length and n_best ("defaults": not at all),
# max_answer_length, n_best
CASES = [
    (1, 16, 3, None, 2 ** -10, "float32", "positional", 30, 20),
    (3, 24, 4, 7, 2 ** -10, "float64", "keywords", 5, 20),
    (1, 12, 2, None, 2 ** -8, "1-D", "keywords", 3, 5),
    (2, 20, 5, 4, 2 ** -6, "lists", "positional", 30, 200),
    (4, 32, 6, 10, 2 ** -10, "float32", "keywords", 8, 10),
    (1, 9, 6, 0, 2 ** -4, "float64", "keywords", 30, 20),
    (3, 12, 2, 5, 0.5, "float64", "keywords", 4, 12),
    (2, 14, 3, 2, 2 ** -4, "float32", "positional", 1, 6),
    (6, 64, 10, 20, 2 ** -10, "float32", "defaults", 30, 20),
    (5, 16, 3, 1, 2 ** -10, "lists", "keywords", 2, 7),
    (1, 40, 4, None, 2 ** -10, "1-D lists", "defaults", 30, 20),
    (2, 12, None, 7, 2 ** -4, "float16", "keywords", 4, 80),
    (3, 14, 3, 0, 2 ** -10, "float64", "keywords", 5, 1),
    (1, 10, None, None, 2 ** -10, "1-D", "positional", 3, 1),
    (4, 16, 2, 0, 2 ** -4, "float16", "defaults", 30, 20),
]
RANDOM_CASES = 4  # and these many with every size drawn at grading time


def _random_spec(rng) -> tuple:
    windows, question = int(rng.integers(1, 6)), int(rng.integers(1, 9))
    seq = question + 3 + int(rng.integers(4, 31))
    last = int(rng.integers(0, seq - question - 2))
    container = str(rng.choice(["float32", "float64", "float16", "lists"]))
    call = str(rng.choice(["positional", "keywords", "defaults"]))
    longest, n_best = (30, 20) if call == "defaults" else (int(rng.integers(1, 13)), int(rng.integers(1, 41)))
    return windows, seq, question, last, 2 ** -4 if container == "float16" else 2 ** -10, container, call, longest, \
        n_best


def _label(number: int, windows: int, seq: int, question: int | None, last: int | None, grid: float, container: str,
           call: str, longest: int, n_best: int) -> str:
    given = "defaults" if call == "defaults" else f"max_answer_length {longest}, n_best {n_best} ({call})"
    ties = ", logits on a grid of 0.5 (ties)" if grid >= 0.5 else ""
    plural = "s" if windows > 1 else ""
    layout = ", context tokens from each window's first position (no special tokens)" if question is None else ""
    if last == 0 and windows > 1:
        layout += ", the last window without context tokens"
    return (f"case {number + 1} of {len(CASES) + RANDOM_CASES}: {windows} window{plural} of {seq} tokens{layout}, "
            f"{container}, {given}{ties}")


def _call(args: list, call: str, longest: int, n_best: int) -> tuple[list, dict]:
    if call == "positional":
        return [*args, longest, n_best], {}
    if call == "keywords":
        return list(args), {"max_answer_length": longest, "n_best": n_best}
    return list(args), {}


def grade_best_span(best_span) -> None:
    rng = draw(1100)
    cases = []
    specs = CASES + [_random_spec(rng) for _ in range(RANDOM_CASES)]
    for number, (windows, seq, question, last, grid, container, call, longest, n_best) in enumerate(specs):
        mask = window_masks(windows, seq, question, last)
        scale = 1.0 if grid >= 0.5 else 3.0
        start = random_logits(rng, mask, grid=grid, scale=scale)
        end = random_logits(rng, mask, grid=grid, scale=scale)
        args, kwargs = _call(arguments(start, end, mask, container), call, longest, n_best)
        label = _label(number, windows, seq, question, last, grid, container, call, longest, n_best)
        cases.append((label, args, kwargs, longest, n_best))
    with quiet():
        outcomes = call_all(best_span, [[label, args, kwargs] for label, args, kwargs, _, _ in cases])

        def judge(item):
            (label, args, kwargs, longest, n_best), outcome = item
            result = returned(outcome, crash_hint(args[2]))
            expect_arguments_unchanged(args, rebuild(outcome["after"]), label)
            full = (*args[:3], longest, n_best)
            shown = ", ".join(["start_logits, end_logits, context_mask", *(f"{k}={v}" for k, v in kwargs.items())]
                              + (["max_answer_length", "n_best"] if len(args) > 3 else []))
            expect_best_span(result, reference(*full), f"[{label}] best_span({shown})", Case(*full),
                             mistakes=results(mistakes.SPANS, *full))

        judge_all(zip(cases, outcomes, strict=True), judge)
    passed(f"best_span matches the reference on {len(cases)} random cases (1 to 6 windows, float32, float64, float16, "
           "lists and 1-D inputs, defaults, ties, n_best 1 or above the valid spans, context at a window's edges, no "
           "valid span)")
