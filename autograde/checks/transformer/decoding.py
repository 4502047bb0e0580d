"""Hidden checks of assignment 04 (decoding): the learner's greedy decoding and beam search against the
reference on seeded toy models whose log-probabilities depend on the whole prefix (no ties).

The learner's function is given the toy model made where it runs (autograde.remote.part), the reference the
same model made here. Each `grade_<function>(fn)` raises `CheckFailed` with a diagnosis or prints one success
line.
"""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks import seed_of
from autograde.mistakes import results
from autograde.mistakes.transformer import decoding as mistakes
from autograde.reference.transformer import decoding as ref
from autograde.remote import part
from course_lib.checking import passed, quietly
from course_lib.transformer.decoding import inspect_beam, inspect_greedy

START, END = 1, 2

# (case number, vocabulary size, batch, source length, max_length); the toy model's seed is drawn from the number.
GREEDY_CASES = [(11, 6, 1, 3, 1), (12, 7, 4, 5, 6), (13, 12, 8, 9, 10), (14, 5, 3, 2, 15)]

# (seed, vocabulary size, source ids, max_length, beam_width, alpha). Seeds 2, 4 and 5 are cases where
# beam search beats greedy and where length normalisation changes the winner
# (tests/test_04_transformer_decoding.py): those toy models are fixed; the others' seeds are drawn.
CURATED = {2, 4, 5}
BEAM_CASES = [(2, 7, [3, 4, 5], 6, 3, 1.0), (4, 7, [3, 4, 5], 6, 3, 1.0), (5, 7, [3, 4, 5], 6, 3, 0.7),
              (21, 9, [6, 2, 8, 3], 8, 4, 0.6), (22, 6, [5], 5, 2, 1.0), (23, 8, [4, 4], 7, 1, 1.0),
              (24, 7, [3, 4, 5], 6, 3, 0.0)]


def toy_models(learner, seed: int, vocab: int):
    """(the toy model where the learner's function runs, the same model here for the reference)."""
    made_there = part(learner, ref.toy_predict_next)
    return made_there(seed, vocab, START, END), ref.toy_predict_next(seed, vocab, START, END)


def earliest_end_first(predict_next, encoder_ids: np.ndarray, max_length: int) -> np.ndarray:
    """The rows in the order in which the reference's decoding ends them, the earliest first, so that a loop
    that stops when the first row (or any row) has ended leaves the others unfinished."""
    tokens = ref.greedy_decode(predict_next, encoder_ids, START, END, max_length)
    ends = [list(row).index(END) if END in row else max_length for row in tokens]
    return encoder_ids[np.argsort(ends, kind="stable")]


def grade_greedy_decode(greedy_decode) -> None:
    for number, vocab, batch, src_len, max_length in GREEDY_CASES:
        rng = draw(number)
        theirs, ours = toy_models(greedy_decode, seed_of(number), vocab)
        encoder_ids = earliest_end_first(ours, rng.integers(3, vocab, size=(batch, src_len)).astype(np.int32),
                                         max_length)
        inputs = (ours, encoder_ids, START, END, max_length)
        expected, wrong = ref.greedy_decode(*inputs), results(mistakes.GREEDY, *inputs)
        result = quietly(greedy_decode, theirs, *inputs[1:])
        inspect_greedy(result, expected, f"greedy_decode on a toy model (batch {batch}, max_length {max_length})",
                       start_id=START, end_id=END, max_length=max_length, mistakes=wrong)
    passed(f"greedy_decode matches the reference on {len(GREEDY_CASES)} toy models")


def grade_beam_search(beam_search) -> None:
    for seed, vocab, source, max_length, beam_width, alpha in BEAM_CASES:
        theirs, ours = toy_models(beam_search, seed if seed in CURATED else seed_of(seed), vocab)
        inputs = (ours, np.array([source], dtype=np.int32), START, END, max_length, beam_width, alpha)
        expected, wrong = ref.beam_search(*inputs), results(mistakes.BEAM, *inputs)
        greedy = [int(t) for t in ref.greedy_decode(*inputs[:5])[0] if t]
        result = quietly(beam_search, theirs, *inputs[1:])
        inspect_beam(result, expected, f"beam_search on a toy model (vocabulary {vocab}, max_length {max_length}, "
                     f"beam_width {beam_width}, alpha {alpha})",
                     start_id=START, end_id=END, max_length=max_length, greedy_tokens=greedy, mistakes=wrong)
    passed(f"beam_search matches the reference on {len(BEAM_CASES)} toy models")
