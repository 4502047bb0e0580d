"""Expected values of the best_span check of assignment 07 (`course_lib.qa.decoding`): the reference's spans on the
worked example and on generated cases (their logits drawn here from fixed seeds, on a grid of powers of two, and
stored with them), and the spans of the named mistakes that differ from the reference's."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import stored
from autograde.mistakes.qa import decoding as mistakes
from autograde.reference.qa.decoding import best_span
from course_lib.qa.decoding import (
    WORKED_EXAMPLE,
    as_spans,
    random_logits,
    same_spans,
    window_masks,
    worked_context_mask,
)

# label, windows, seq, question tokens (None: no special tokens, the context fills the window), context tokens of the
# last window (None: full), grid, container, how the call passes max_answer_length and n_best ("defaults": not at
# all), max_answer_length, n_best, seed
CASES = [
    ("3 windows of 20 tokens, float32 arrays", 3, 20, 4, 6, 1 / 64, "float32", "keywords", 4, 6, 7101),
    ("one window as 1-D lists, n_best above the number of valid spans", 1, 12, 3, None, 1 / 64, "1-D lists",
     "keywords", 3, 50, 7102),
    ("ties: logits on a grid of 0.5, float64 arrays and a bool mask", 2, 10, 2, None, 0.5, "float64", "keywords", 3,
     8, 7103),
    ("the defaults, max_answer_length 30 and n_best 20: 2 windows of 48 tokens", 2, 48, 5, 25, 1 / 256, "float32",
     "defaults", 30, 20, 7104),
    ("single-token answers, max_answer_length 1, as lists", 2, 9, 2, 3, 1 / 16, "lists", "keywords", 1, 5, 7105),
    ("a window without context: no valid span", 1, 8, 5, 0, 1 / 16, "float32", "keywords", 30, 20, 7106),
    ("float16 logits, context from each window's first token to its last, n_best above the valid spans", 2, 10, None,
     6, 1 / 16, "float16", "keywords", 3, 60, 7107),
    ("n_best 1, the last of 3 windows without context tokens", 3, 12, 3, 0, 1 / 64, "float64", "keywords", 4, 1,
     7108),
]


def _spans(start, end, mask, max_answer_length, n_best) -> dict:
    args = (start, end, mask, max_answer_length, n_best)
    right = best_span(*args)
    wrong = {name: entry for name, entry in stored(mistakes.SPANS, *args).items()
             if not same_spans(as_spans(entry["value"]), as_spans(right))}
    return {"expected": right, "mistakes": wrong}


def _case(windows, seq, question, last, grid, container, call, max_answer_length, n_best, seed) -> dict:
    rng = np.random.default_rng(seed)
    mask = window_masks(windows, seq, question, last)
    start, end = random_logits(rng, mask, grid=grid), random_logits(rng, mask, grid=grid)
    return {"start_logits": start, "end_logits": end, "context_mask": mask, "container": container, "call": call,
            "max_answer_length": max_answer_length, "n_best": n_best,
            **_spans(start, end, mask, max_answer_length, n_best)}


def generate() -> dict:
    example = WORKED_EXAMPLE
    worked = _spans(np.array(example["start_logits"]), np.array(example["end_logits"]),
                    worked_context_mask(example["tokens"]), example["max_answer_length"], example["n_best"])
    return {"decoding": {"best_span": {"worked": worked,
                                       "cases": {label: _case(*spec) for label, *spec in CASES}}}}
