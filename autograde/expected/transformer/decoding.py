"""Expected values of the decoding checks of assignment 04 (`course_lib.transformer.decoding`): the reference
on the toy model and the visible checks' cases, with the results of the named mistakes that differ from it."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import stored
from autograde.mistakes.transformer import decoding as mistakes
from autograde.reference.transformer import decoding as ref
from course_lib.transformer.decoding import (
    BEAM_CASES,
    BEAM_MAX_LENGTH,
    BEAM_WIDTH,
    GREEDY_CASES,
    TOY_END,
    TOY_START,
    toy_predict_next,
)


def _wrong_only(entries: dict, expected, same) -> dict:
    """The stored mistakes whose result is not the right one (those could never be recognised)."""
    return {name: entry for name, entry in entries.items() if not same(entry["value"], expected)}


def _greedy(encoder_ids, max_length) -> dict:
    inputs = (toy_predict_next, np.array(encoder_ids), TOY_START, TOY_END, max_length)
    expected = ref.greedy_decode(*inputs)
    return {"expected": expected, "mistakes": _wrong_only(stored(mistakes.GREEDY, *inputs), expected, np.array_equal)}


def _columns(hypotheses) -> dict:
    """[(tokens, score), ...] as {"tokens": [...], "scores": [...]}: one line per list in the file."""
    return {"tokens": [tokens for tokens, _ in hypotheses], "scores": [score for _, score in hypotheses]}


def _beam(encoder_ids, alpha) -> dict:
    inputs = (toy_predict_next, np.array(encoder_ids), TOY_START, TOY_END, BEAM_MAX_LENGTH)
    expected = ref.beam_search(*inputs, BEAM_WIDTH, alpha)
    greedy = ref.greedy_decode(*inputs)[0]
    wrong = _wrong_only(stored(mistakes.BEAM, *inputs, BEAM_WIDTH, alpha), expected, lambda a, b: a == b)
    return {
        "expected": _columns(expected),
        "greedy": greedy[greedy != ref.PAD],
        "mistakes": {name: {**entry, "value": _columns(entry["value"])} for name, entry in wrong.items()},
    }


def generate() -> dict:
    return {"decoding": {
        "greedy_decode": [_greedy(encoder_ids, max_length) for encoder_ids, max_length in GREEDY_CASES],
        "beam_search": [_beam(encoder_ids, alpha) for encoder_ids, alpha in BEAM_CASES],
    }}
