"""Hidden checks of assignment 04 (decoding): the learner's greedy decoding and beam search against the
reference on seeded toy models whose log-probabilities depend on the whole prefix (no ties).

Each `grade_<function>(fn)` raises `CheckFailed` with a diagnosis or prints one success line.
"""

from __future__ import annotations

import numpy as np

from autograde.reference.transformer import decoding as ref
from course_lib.checking import call_learner, passed, quiet
from course_lib.transformer.decoding import inspect_beam, inspect_greedy

START, END = 1, 2

# (seed, vocabulary size, batch, source length, max_length)
GREEDY_CASES = [(11, 6, 1, 3, 1), (12, 7, 4, 5, 6), (13, 12, 8, 9, 10), (14, 5, 3, 2, 15)]

# (seed, vocabulary size, source ids, max_length, beam_width, alpha). Seeds 2, 4 and 5 are cases where
# beam search beats greedy and where length normalisation changes the winner (tests/test_04_decoding.py).
BEAM_CASES = [(2, 7, [3, 4, 5], 6, 3, 1.0), (4, 7, [3, 4, 5], 6, 3, 1.0), (5, 7, [3, 4, 5], 6, 3, 0.7),
              (21, 9, [6, 2, 8, 3], 8, 4, 0.6), (22, 6, [5], 5, 2, 1.0), (23, 8, [4, 4], 7, 1, 1.0),
              (24, 7, [3, 4, 5], 6, 3, 0.0)]


def _quietly(fn, *args):
    with quiet():
        return call_learner(fn, *args)


def grade_greedy_decode(greedy_decode) -> None:
    for seed, vocab, batch, src_len, max_length in GREEDY_CASES:
        rng = np.random.default_rng(seed)
        encoder_ids = rng.integers(3, vocab, size=(batch, src_len)).astype(np.int32)
        predict_next = ref.toy_predict_next(seed, vocab, START, END)
        expected = ref.greedy_decode(predict_next, encoder_ids, START, END, max_length)
        def least_probable(e, d, model=predict_next):
            return -model(e, d)

        mistakes = [(ref.greedy_decode(least_probable, encoder_ids, START, END, max_length),
                     "it picks the least probable token; take the argmax of the log-probabilities")]
        result = _quietly(greedy_decode, predict_next, encoder_ids, START, END, max_length)
        inspect_greedy(result, expected, f"greedy_decode on a toy model (batch {batch}, max_length {max_length})",
                       start_id=START, end_id=END, max_length=max_length, mistakes=mistakes)
    passed(f"greedy_decode matches the reference on {len(GREEDY_CASES)} toy models")


def _beam_mistakes(predict_next, encoder_ids, max_length, beam_width, alpha):
    def variant(**flags):
        return ref.beam_search(predict_next, encoder_ids, START, END, max_length, beam_width, alpha, **flags)

    mistakes = [
        (variant(normalise_ranking=False, normalise_scores=False),
         "the scores are not length-normalised: rank the hypotheses by log P / length ** alpha at the end"),
        (variant(normalise_ranking=False),
         "the final ranking uses summed log-probabilities; rank by the normalised score log P / length ** alpha"),
        (variant(normalise_scores=False),
         "the ranking is right but the scores returned are summed log-probabilities; return log P / "
         "length ** alpha"),
        (variant(length_offset=1),
         "the length counts the start token; count only the generated tokens (end token included)"),
    ]
    try:
        mistakes.append((variant(length_offset=-1),
                         "the length leaves out the end token; count every generated token, end token included"))
    except ZeroDivisionError:  # a one-token hypothesis: that mistake would crash, not give a result
        pass
    return mistakes


def grade_beam_search(beam_search) -> None:
    for seed, vocab, source, max_length, beam_width, alpha in BEAM_CASES:
        encoder_ids = np.array([source], dtype=np.int32)
        predict_next = ref.toy_predict_next(seed, vocab, START, END)
        expected = ref.beam_search(predict_next, encoder_ids, START, END, max_length, beam_width, alpha)
        greedy = [int(t) for t in ref.greedy_decode(predict_next, encoder_ids, START, END, max_length)[0] if t]
        result = _quietly(beam_search, predict_next, encoder_ids, START, END, max_length, beam_width, alpha)
        inspect_beam(result, expected,
                     f"beam_search on a toy model (vocabulary {vocab}, max_length {max_length}, "
                     f"beam_width {beam_width}, alpha {alpha})",
                     start_id=START, end_id=END, max_length=max_length, greedy_tokens=greedy,
                     mistakes=_beam_mistakes(predict_next, encoder_ids, max_length, beam_width, alpha))
    passed(f"beam_search matches the reference on {len(BEAM_CASES)} toy models")
