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
from course_lib.checking import CheckFailed, passed, quietly
from course_lib.transformer.decoding import inspect_beam, inspect_greedy

START, END = 1, 2  # the notebook's; the last case of each check takes other ids, which the learner must not write in

# (case number, vocabulary size, batch, source length, max_length, start id, end id); the toy model's seed is drawn
# from the number.
GREEDY_CASES = [(11, 6, 1, 3, 1, START, END), (12, 7, 4, 5, 6, START, END), (13, 12, 8, 9, 10, START, END),
                (14, 5, 3, 2, 15, START, END), (15, 9, 4, 3, 8, 6, 3)]

# (seed, vocabulary size, source ids, max_length, beam_width, alpha, start id, end id). Seeds 2, 4 and 5 are cases
# where beam search beats greedy and where length normalisation changes the winner
# (tests/test_04_transformer_decoding.py): those toy models are fixed; the others' seeds are drawn.
CURATED = {2, 4, 5}
BEAM_CASES = [(2, 7, [3, 4, 5], 6, 3, 1.0, START, END), (4, 7, [3, 4, 5], 6, 3, 1.0, START, END),
              (5, 7, [3, 4, 5], 6, 3, 0.7, START, END), (21, 9, [6, 2, 8, 3], 8, 4, 0.6, START, END),
              (22, 6, [5], 5, 2, 1.0, START, END), (23, 8, [4, 4], 7, 1, 1.0, START, END),
              (24, 7, [3, 4, 5], 6, 3, 0.0, START, END), (25, 9, [5, 8, 1], 6, 3, 0.8, 7, 4)]


def toy_models(learner, seed: int, vocab: int, start_id: int = START, end_id: int = END):
    """(the toy model where the learner's function runs, the same model here for the reference)."""
    made_there = part(learner, ref.toy_predict_next)
    return made_there(seed, vocab, start_id, end_id), ref.toy_predict_next(seed, vocab, start_id, end_id)


def _end_steps(predict_next, encoder_ids: np.ndarray, max_length: int, start_id: int, end_id: int) -> np.ndarray:
    """The step at which the reference's decoding ends each row (max_length for a row that never ends)."""
    tokens = ref.greedy_decode(predict_next, encoder_ids, start_id, end_id, max_length)
    return np.array([list(row).index(end_id) if end_id in row else max_length for row in tokens])


def earliest_end_first(predict_next, encoder_ids: np.ndarray, max_length: int, start_id: int = START,
                       end_id: int = END) -> np.ndarray:
    """The rows in the order in which the reference's decoding ends them, the earliest first, so that a loop
    that stops when the first row (or any row) has ended leaves the others unfinished."""
    ends = _end_steps(predict_next, encoder_ids, max_length, start_id, end_id)
    return encoder_ids[np.argsort(ends, kind="stable")]


def with_unended_row(predict_next, pool: np.ndarray, batch: int, max_length: int, start_id: int,
                     end_id: int) -> np.ndarray:
    """The first `batch` rows of `pool`, the last replaced by a row of the pool that never ends within max_length
    when none of them does (and the pool has one): a row stopped by max_length has no end token to pad after."""
    rows = pool[:batch]
    ends = _end_steps(predict_next, pool, max_length, start_id, end_id)
    unended = np.flatnonzero(ends == max_length)
    if len(unended) and not np.any(ends[:batch] == max_length):
        rows = np.concatenate([rows[:-1], pool[unended[:1]]])
    return rows


def _expect_ids_from_arguments(result, name: str, wrong, same) -> None:
    """Before the shape and padding are judged (a wrong end id leaves tokens after the real one): the result is not
    what the toy model's ids 1 and 2, written into the code, give (`same(result, candidate)`)."""
    for candidate, message in wrong:
        try:
            found = same(result, candidate)
        except (TypeError, ValueError, IndexError):  # not even shaped like an answer: the inspection says why
            return
        if found:
            raise CheckFailed(f"{name} is wrong: {message}")


def _same_tokens(result, candidate) -> bool:
    return np.array_equal(np.asarray(result, dtype=np.int64), candidate)


def _same_hypotheses(result, candidate) -> bool:
    return len(result) == len(candidate) and all(
        [int(t) for t in tokens] == list(other) and abs(float(score) - other_score) <= 1e-4
        for (tokens, score), (other, other_score) in zip(result, candidate, strict=True))


def grade_greedy_decode(greedy_decode) -> None:
    for number, vocab, batch, src_len, max_length, start_id, end_id in GREEDY_CASES:
        rng = draw(number)
        theirs, ours = toy_models(greedy_decode, seed_of(number), vocab, start_id, end_id)
        pool = rng.integers(3, vocab, size=(8 * batch, src_len)).astype(np.int32)
        encoder_ids = earliest_end_first(ours, with_unended_row(ours, pool, batch, max_length, start_id, end_id),
                                         max_length, start_id, end_id)
        inputs = (ours, encoder_ids, start_id, end_id, max_length)
        expected, wrong = ref.greedy_decode(*inputs), results(mistakes.GREEDY, *inputs)
        result = quietly(greedy_decode, theirs, *inputs[1:])
        name = (f"greedy_decode on a toy model (batch {batch}, max_length {max_length}, start_id {start_id}, "
                f"end_id {end_id})")
        if (start_id, end_id) != (START, END):
            _expect_ids_from_arguments(result, name, results(mistakes.GREEDY_IDS, *inputs), _same_tokens)
        inspect_greedy(result, expected, name, start_id=start_id, end_id=end_id, max_length=max_length,
                       mistakes=wrong)
    passed(f"greedy_decode matches the reference on {len(GREEDY_CASES)} toy models (start and end ids 1 and 2, and "
           "others)")


def grade_beam_search(beam_search) -> None:
    for seed, vocab, source, max_length, beam_width, alpha, start_id, end_id in BEAM_CASES:
        theirs, ours = toy_models(beam_search, seed if seed in CURATED else seed_of(seed), vocab, start_id, end_id)
        inputs = (ours, np.array([source], dtype=np.int32), start_id, end_id, max_length, beam_width, alpha)
        expected, wrong = ref.beam_search(*inputs), results(mistakes.BEAM, *inputs)
        greedy = [int(t) for t in ref.greedy_decode(*inputs[:5])[0] if t]
        result = quietly(beam_search, theirs, *inputs[1:])
        name = (f"beam_search on a toy model (vocabulary {vocab}, max_length {max_length}, beam_width {beam_width}, "
                f"alpha {alpha}, start_id {start_id}, end_id {end_id})")
        if (start_id, end_id) != (START, END):
            _expect_ids_from_arguments(result, name, results(mistakes.BEAM_IDS, *inputs), _same_hypotheses)
        inspect_beam(result, expected, name, start_id=start_id, end_id=end_id, max_length=max_length,
                     greedy_tokens=greedy, mistakes=wrong)
    passed(f"beam_search matches the reference on {len(BEAM_CASES)} toy models (start and end ids 1 and 2, and "
           "others)")
