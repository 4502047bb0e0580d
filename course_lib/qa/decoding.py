"""Assignment 07, from logits to spans: the visible check of `best_span` and its diagnostics (shared with the hidden
check in autograde.checks.qa.decoding).

`best_span(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20)` returns the n_best valid spans
over all windows, best first, as dicts {window, start, end, score}: both ends in the context, start <= end, at most
max_answer_length tokens, the score the sum of the start and the end logit, ties to the earlier window, start and
end; 1-D inputs are one window. The check runs a worked example (two windows of a question and its context, where
[CLS] scores highest, the best start lies in the question and the two argmax of the context end before they start)
and generated cases (`course_lib/expected/07_qa.json`, from autograde/expected/qa/decoding.py): float32 and float64
arrays, lists, 1-D inputs, the default arguments, ties, n_best above the number of valid spans, no valid span.
Logits lie on a grid of powers of two, so that every sum is exact in float32 and float64 and ties are real ties.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import numpy as np

from course_lib.calls import expect_unchanged, named
from course_lib.checking import CheckFailed, call_learner, passed
from course_lib.expected import load as load_expected

STEM = "07_qa"
FIELDS = ("window", "start", "end", "score")
SCORE_TOLERANCE = 1e-5
ARGUMENTS = ("start_logits", "end_logits", "context_mask", "max_answer_length", "n_best")
COPY_ARRAYS = ("(setting the logits outside the context to -inf in place, say): work on copies or masked copies "
               "(np.where(mask, logits, -np.inf)), never on the caller's arrays")
RULE = ("a valid span has both ends in the context (context_mask 1), start <= end and at most max_answer_length "
        "tokens; its score is start_logits[window][start] + end_logits[window][end]")

# ----------------------------------------------------------------------------------------------
# Inputs: windows laid out as make_windows lays them out, logits on a grid


def window_masks(windows: int, seq: int, question: int | None, last_context: int | None = None) -> np.ndarray:
    """(windows, seq) int context masks of [CLS] question [SEP] context [SEP] [PAD]...: every window's context
    fills the room left by the question, but the last one's holds `last_context` tokens. With `question` None the
    windows have no special token: the context starts at position 0 and fills the window."""
    room = seq if question is None else seq - question - 3
    first = 0 if question is None else question + 2
    masks = np.zeros((windows, seq), dtype=np.int64)
    for window in range(windows):
        length = room if last_context is None or window < windows - 1 else last_context
        masks[window, first:first + length] = 1
    return masks


def random_logits(rng: np.random.Generator, masks: np.ndarray, *, grid: float, scale: float = 3.0) -> np.ndarray:
    """Logits like a fine-tuned model's, on a grid of `grid` (a power of two): [CLS] high, the question's tokens
    often high too, the context spread out."""
    logits = scale * rng.standard_normal(masks.shape)
    logits[:, 0] += scale * rng.uniform(1.0, 2.0)
    outside = masks == 0
    outside[:, 0] = False
    logits[outside] += scale * rng.uniform(0.0, 1.5, size=int(outside.sum()))
    return np.round(logits / grid) * grid


def arguments(start_logits, end_logits, context_mask, container: str) -> list:
    """The three arrays as a case passes them: "float32", "float64" (bool mask), "float16" (bool mask), "lists",
    "1-D" (one window's rows, float32), "1-D lists"."""
    start, end, mask = (np.asarray(x) for x in (start_logits, end_logits, context_mask))
    if container.startswith("1-D"):
        start, end, mask = start.reshape(-1), end.reshape(-1), mask.reshape(-1)
    if container.endswith("lists"):
        return [start.astype(float).tolist(), end.astype(float).tolist(), mask.astype(int).tolist()]
    if container in ("float64", "float16"):
        return [start.astype(container), end.astype(container), mask.astype(bool)]
    return [start.astype(np.float32), end.astype(np.float32), mask.astype(np.int32)]


def crash_hint(context_mask) -> str:
    """What a crash on these windows may come from ("" when nothing stands out)."""
    mask = np.atleast_2d(np.asarray(context_mask)).astype(bool)
    if not mask.any():
        return "no window holds a context token here, so there is no valid span: return []"
    if not mask.any(axis=1).all():
        return ("a window here holds no context token (the last window of a short context, say): it has no valid "
                "span, and the other windows still have theirs")
    return ""


def expect_arguments_unchanged(before: Sequence, after: Sequence, label: str) -> None:
    """Fail if best_span changed any of the arguments it was given by position."""
    for name, old, new in zip(ARGUMENTS, before, after, strict=False):
        expect_unchanged("best_span", name, old, new, label, advice=COPY_ARRAYS)


# ----------------------------------------------------------------------------------------------
# Reading and judging the learner's spans


def _integer(value) -> int | None:
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value)
    return None


def _number(value) -> float | None:
    if hasattr(value, "numpy") and not isinstance(value, (np.ndarray, np.generic)):
        value = value.numpy()
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        return float(value)
    return None


def read_spans(result, call: str) -> list[tuple[int, int, int, float]]:
    """The learner's spans as (window, start, end, score), or a failure saying what is wrong with their form."""
    if result is None:
        raise CheckFailed(f"{call} returned None: did you forget to return the list of spans?")
    if not isinstance(result, (list, tuple)):
        raise CheckFailed(f"{call} should return a list of dicts {{\"window\", \"start\", \"end\", \"score\"}}, best "
                          f"first; got {type(result).__name__}")
    spans = []
    for rank, item in enumerate(result):
        if not isinstance(item, Mapping):
            raise CheckFailed(f"{call}[{rank}] is a {type(item).__name__}: each span is a dict with the keys window, "
                              "start, end and score")
        missing = [field for field in FIELDS if field not in item]
        if missing:
            raise CheckFailed(f"{call}[{rank}] has no {', '.join(map(repr, missing))}: each span is a dict with the "
                              f"keys window, start, end and score (it has {sorted(map(str, item))})")
        numbers = [_integer(item[field]) for field in FIELDS[:3]] + [_number(item["score"])]
        for field, value in zip(FIELDS, numbers, strict=True):
            if value is None:
                kind = "a number" if field == "score" else "an int (a token position or a window number)"
                raise CheckFailed(f"{call}[{rank}][{field!r}] is {item[field]!r}: it should be {kind}")
        if not np.isfinite(numbers[3]):
            raise CheckFailed(f"{call}[{rank}] has the score {numbers[3]}: a valid span's score is a finite sum of "
                              "two logits; leave out the spans you masked with -inf")
        spans.append(tuple(numbers))
    return spans


def as_spans(value) -> list[tuple[int, int, int, float]]:
    """Expected spans (dicts, from the reference or the expected-values file) as tuples."""
    return [(int(s["window"]), int(s["start"]), int(s["end"]), float(s["score"])) for s in list(value)]


def same_spans(a, b) -> bool:
    return len(a) == len(b) and all(x[:3] == y[:3] and abs(x[3] - y[3]) <= SCORE_TOLERANCE
                                    for x, y in zip(a, b, strict=True))


def count_valid(context_mask: np.ndarray, max_answer_length: int) -> int:
    """How many valid spans the windows hold."""
    total = 0
    for row in context_mask:
        inside = np.flatnonzero(row)
        total += sum(int(np.sum((inside >= first) & (inside < first + max_answer_length))) for first in inside)
    return total


class Case:
    """One call's inputs as 2-D float64 arrays and a boolean mask, with its arguments, for the messages."""

    def __init__(self, start_logits, end_logits, context_mask, max_answer_length: int, n_best: int,
                 tokens: Sequence | None = None):
        self.start = np.atleast_2d(np.asarray(start_logits, dtype=np.float64))
        self.end = np.atleast_2d(np.asarray(end_logits, dtype=np.float64))
        self.mask = np.atleast_2d(np.asarray(context_mask)).astype(bool)
        self.one_d = np.ndim(start_logits) == 1
        self.max_answer_length, self.n_best, self.tokens = int(max_answer_length), int(n_best), tokens

    def token(self, window: int, position: int) -> str:
        if self.tokens is not None:
            return f"position {position} ({self.tokens[window][position]!r})"
        return f"position {position}"

    def show(self, span) -> str:
        window, start, end, score = span
        text = f"{{window {window}, start {start}, end {end}, score {score:g}}}"
        windows, seq = self.start.shape
        if self.tokens is not None and 0 <= window < windows and 0 <= start <= end < seq:
            text += f" {' '.join(self.tokens[window][start:end + 1])!r}"
        return text

    def problem(self, span) -> str:
        """Why a returned span is not a valid one, or ""."""
        window, start, end, score = span
        windows, seq = self.start.shape
        if not 0 <= window < windows:
            there = "is one window, 0" if windows == 1 else f"are {windows} windows, 0 to {windows - 1}"
            return (f"window {window} does not exist: there {there}"
                    f"{' (1-D inputs are one window)' if self.one_d else ''}")
        for name, position in (("start", start), ("end", end)):
            if not 0 <= position < seq:
                flat = f" ({position} = {position // seq} * {seq} + {position % seq}: a position in the windows laid " \
                       "end to end?)" if position >= seq else ""
                return f"{name} {position} is not a position in a window of {seq} tokens{flat}"
        for name, position in (("start", start), ("end", end)):
            if not self.mask[window, position]:
                return (f"its {name} is at {self.token(window, position)}, outside the context (context_mask 0): an "
                        "answer lies in the context, never in [CLS], the question, [SEP] or padding")
        if start > end:
            return "it ends before it starts: a valid span has start <= end"
        if end - start + 1 > self.max_answer_length:
            return (f"it is {end - start + 1} tokens long (end - start + 1), more than max_answer_length = "
                    f"{self.max_answer_length}")
        right = self.start[window, start] + self.end[window, end]
        if abs(score - right) > SCORE_TOLERANCE:
            return (f"its score is {score:.6g}, but start_logits[{window}][{start}] + end_logits[{window}][{end}] = "
                    f"{right:.6g}: the score is the sum of the two logits")
        return ""

    def diagnosis(self, spans, expected) -> str:
        for rank, span in enumerate(spans):
            problem = self.problem(span)
            if problem:
                return f"the span at rank {rank}, {self.show(span)}, is not valid: {problem}"
        seen = set()
        for span in spans:
            if span[:3] in seen:
                return f"{self.show(span)} is in the list twice: each span once"
            seen.add(span[:3])
        for rank in range(len(spans) - 1):
            if spans[rank][3] < spans[rank + 1][3] - SCORE_TOLERANCE:
                return (f"the spans are not best first: rank {rank} scores {spans[rank][3]:g}, rank {rank + 1} "
                        f"{spans[rank + 1][3]:g}; sort by score, highest first")
        valid = count_valid(self.mask, self.max_answer_length)
        if len(spans) != len(expected):
            if len(spans) > self.n_best:
                return f"it returned {len(spans)} spans: keep only the n_best = {self.n_best} best"
            return (f"it returned {len(spans)} spans, but the windows hold {valid} valid spans and n_best is "
                    f"{self.n_best}: expected the best {len(expected)}")
        for rank, (got, want) in enumerate(zip(spans, expected, strict=True)):
            if got[:3] != want[:3]:
                if abs(got[3] - want[3]) <= SCORE_TOLERANCE:
                    return (f"rank {rank} is {self.show(got)}, expected {self.show(want)}, of the same score: ties go "
                            "to the earlier window, then the earlier start, then the earlier end")
                return (f"rank {rank} is {self.show(got)}, but {self.show(want)} is valid and scores higher: search "
                        "every window, and every start and end in the context")
        return "the spans differ from the expected ones"


def expect_best_span(result, expected, call: str, case: Case, *, mistakes=()) -> None:
    """Compare the learner's spans with `expected` (dicts); `mistakes` are (wrong spans, explanation) pairs."""
    got, expected = read_spans(result, call), as_spans(expected)
    if same_spans(got, expected):
        return
    listed = [("; ".join(case.show(span) for span in spans) or "no span") for spans in (expected, got)]
    shown = f" Expected: {listed[0]}. Got: {listed[1]}." if max(len(got), len(expected)) <= 5 else ""
    matching = list(dict.fromkeys(message for wrong, message in mistakes if same_spans(got, as_spans(wrong))))
    if matching:
        raise named(f"{call} is wrong: {matching[0]}.{shown}", len(matching))
    raise named(f"{call} is wrong: {case.diagnosis(got, expected)} ({RULE}).{shown}", 0)


# ----------------------------------------------------------------------------------------------
# The visible check

# Two windows of one question, 14 tokens each (the second padded): the answer, "ada lovelace", is in window 1. [CLS]
# scores highest, the best start outside [CLS] is "founded" in the question, and in window 0 the context's best
# start ("ada", 12) comes after its best end ("was", 7).
_QUESTION = ["[CLS]", "who", "founded", "acme", "?", "[SEP]"]
WORKED_EXAMPLE = {
    "tokens": [_QUESTION + ["acme", "was", "founded", "in", "1921", "by", "ada", "[SEP]"],
               _QUESTION + ["1921", "by", "ada", "lovelace", ".", "[SEP]", "[PAD]", "[PAD]"]],
    "start_logits": [[6.0, 0.0, 5.0, 1.0, 0.0, 0.0, 0.5, -1.0, 1.0, -1.0, 1.5, -1.0, 3.0, 0.0],
                     [5.5, 0.0, 4.5, 0.5, 0.0, 0.0, 0.5, -1.0, 4.0, 0.0, -2.0, 0.0, 1.0, 1.0]],
    "end_logits": [[6.0, 0.0, 0.5, 4.5, 0.0, 0.0, 0.0, 2.5, 0.0, 0.0, 1.0, 0.0, 1.5, 0.0],
                   [5.5, 0.0, 0.5, 4.0, 0.0, 0.0, 0.5, -1.0, 1.5, 4.5, 1.0, 0.0, 1.0, 1.0]],
    "max_answer_length": 3,
    "n_best": 4,
}


def worked_context_mask(tokens: Sequence[Sequence[str]]) -> np.ndarray:
    """1 for the tokens between the first and the second [SEP] of each window: the context."""
    masks = np.zeros((len(tokens), len(tokens[0])), dtype=np.int64)
    for window, row in enumerate(tokens):
        first = row.index("[SEP]")
        second = row.index("[SEP]", first + 1)
        masks[window, first + 1:second] = 1
    return masks


def _worked_call(best_span, stored: Mapping) -> None:
    example = WORKED_EXAMPLE
    mask = worked_context_mask(example["tokens"])
    given = [np.array(example["start_logits"], np.float32), np.array(example["end_logits"], np.float32), mask]
    kept = copy.deepcopy(given)
    label = "the worked example"
    result = call_learner(best_span, *given, max_answer_length=example["max_answer_length"], n_best=example["n_best"])
    expect_arguments_unchanged(kept, given, label)
    case = Case(*kept, example["max_answer_length"], example["n_best"], tokens=example["tokens"])
    mistakes = [(entry["value"], entry["message"]) for entry in stored["mistakes"].values()]
    expect_best_span(result, stored["expected"], f"[{label}] best_span(start_logits, end_logits, context_mask, "
                     f"max_answer_length={example['max_answer_length']}, n_best={example['n_best']})", case,
                     mistakes=mistakes)


def check_best_span(best_span) -> None:
    """best_span on a worked example of two windows, then on generated cases: containers, defaults, ties, n_best."""
    stored = load_expected(STEM, "decoding", "best_span")
    _worked_call(best_span, stored["worked"])
    for label, case in stored["cases"].items():
        given = arguments(case["start_logits"], case["end_logits"], case["context_mask"], case["container"])
        kept = copy.deepcopy(given)
        defaults = case["call"] == "defaults"
        options = {} if defaults else {"max_answer_length": int(case["max_answer_length"]),
                                       "n_best": int(case["n_best"])}
        try:
            result = call_learner(best_span, *given, **options)
        except CheckFailed as failure:
            hint = crash_hint(kept[2])
            raise CheckFailed(f"[{label}] {failure}" + (f": {hint}" if hint else "")) from None
        expect_arguments_unchanged(kept, given, label)
        mistakes = [(entry["value"], entry["message"]) for entry in case["mistakes"].values()]
        arguments_shown = "" if defaults else ", ".join(f"{k}={v}" for k, v in options.items())
        call = f"[{label}] best_span(start_logits, end_logits, context_mask{', ' if options else ''}{arguments_shown})"
        expect_best_span(result, case["expected"], call, Case(*kept, int(case["max_answer_length"]),
                                                              int(case["n_best"])), mistakes=mistakes)
    passed(f"best_span finds the best valid spans over all windows in the worked example and {len(stored['cases'])} "
           "other cases (lists, 1-D inputs, float32 and float64, ties, n_best, no valid span)")
