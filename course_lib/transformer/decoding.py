"""Assignment 04 (decoding): a toy model, the shared diagnostics and the visible checks.

Token ids of the toy model: 0 padding, 1 start, 2 end, 3 "a", 4 "b". Its next-token
probabilities depend only on the previous token and on whether the first encoder id is even or
odd, so every answer of the checks can be worked out by hand. The checks compare with values generated
from the reference (`course_lib/expected/04_transformer.json`), so this module holds no solution code.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from course_lib.checking import CheckFailed, call_learner, expect_close, passed, stored_mistakes, to_array
from course_lib.expected import load as load_expected

TOY_PAD, TOY_START, TOY_END = 0, 1, 2
TOY_TOKENS = ["<pad>", "<s>", "</s>", "a", "b"]
# TOY_PROBABILITIES[first encoder id % 2][previous token] = probabilities of the next token (pad, start, end, a, b).
TOY_PROBABILITIES = {
    0: {1: [0, 0, .10, .50, .40], 3: [0, 0, .45, .30, .25], 4: [0, 0, .90, .05, .05],
        2: [0, 0, 1, 0, 0], 0: [0, 0, 1, 0, 0]},
    1: {1: [0, 0, .05, .60, .35], 3: [0, 0, .20, .50, .30], 4: [0, 0, .70, .10, .20],
        2: [0, 0, 1, 0, 0], 0: [0, 0, 1, 0, 0]},
}


def toy_predict_next(encoder_ids, decoder_ids) -> np.ndarray:
    """Log-probabilities (batch, 5) of the next token after the last one of each row of `decoder_ids`."""
    encoder_ids = np.asarray(encoder_ids.numpy() if hasattr(encoder_ids, "numpy") else encoder_ids)
    decoder_ids = np.asarray(decoder_ids.numpy() if hasattr(decoder_ids, "numpy") else decoder_ids)
    if decoder_ids.ndim != 2 or encoder_ids.ndim != 2 or len(decoder_ids) != len(encoder_ids):
        raise ValueError(f"predict_next expects encoder ids (batch, src_len) and decoder ids (batch, t) with the "
                         f"same batch; got shapes {encoder_ids.shape} and {decoder_ids.shape}")
    pairs = zip(encoder_ids, decoder_ids, strict=True)
    rows = [TOY_PROBABILITIES[int(source[0]) % 2][int(prefix[-1])] for source, prefix in pairs]
    return np.log(np.array(rows) + 1e-9)


# ----------------------------------------------------------------------------------------------
# Shared diagnostics (also used by the hidden checks in autograde.checks.transformer.decoding)


def inspect_greedy(result, expected, name: str, *, start_id: int, end_id: int, max_length: int,
                   mistakes: Sequence[tuple[object, str]] = ()) -> None:
    """Compare greedy token ids with `expected` (batch, max_length), diagnosing the usual mistakes."""
    actual = to_array(result, name)
    expected = np.asarray(expected, dtype=np.float64)
    batch = expected.shape[0]
    if actual.ndim != 2 or actual.shape[0] != batch:
        raise CheckFailed(f"{name} has shape {actual.shape}, expected {expected.shape}: one row of token ids "
                          "per sentence")
    starts_with_start = bool(np.all(actual[:, 0] == start_id)) and not np.all(expected[:, 0] == start_id)
    if starts_with_start:
        raise CheckFailed(f"{name} starts with the start token {start_id}: return only the generated tokens, "
                          "without the start token you fed the decoder first")
    if actual.shape[1] > max_length:
        raise CheckFailed(f"{name} has {actual.shape[1]} tokens per row: the loop did not stop at max_length="
                          f"{max_length} generated tokens")
    if actual.shape[1] < max_length:
        raise CheckFailed(f"{name} has {actual.shape[1]} tokens per row, expected max_length={max_length}: pad "
                          "every row with 0 up to max_length, even when all sentences ended early")
    for row in actual:
        ends = np.flatnonzero(row == end_id)
        if len(ends) and np.any(row[ends[0] + 1:] != 0):
            raise CheckFailed(f"{name} has tokens after the end token {end_id} (row {row.astype(int).tolist()}): "
                              "once a sentence has produced the end token, fill the rest of its row with 0")
    if np.any(np.isin(expected, [end_id])) and not np.any(np.isin(actual, [end_id])):
        raise CheckFailed(f"{name} contains no end token {end_id}: keep the end token in the result, then pad "
                          "with 0")
    _expect_no_row_cut_short(actual, expected, name)
    expect_close(actual, expected, name, atol=0, rtol=0, mistakes=mistakes,
                 hint="At each step take the argmax of predict_next over the vocabulary and append it")


def _expect_no_row_cut_short(actual: np.ndarray, expected: np.ndarray, name: str) -> None:
    """A row that agrees with the expected one, then is padded while the expected row goes on: the loop stopped
    when another row ended (`finished.any()`, or the first row only)."""
    for index, (row, wanted) in enumerate(zip(actual, expected, strict=True)):
        padded = np.flatnonzero(row == 0)
        stop = int(padded[0]) if len(padded) else len(row)
        if 0 < stop < len(row) and np.all(row[stop:] == 0) and wanted[stop] != 0 and np.array_equal(
                row[:stop], wanted[:stop]):
            raise CheckFailed(f"{name}: row {index} stops after {stop} tokens, before its end token (got "
                              f"{row.astype(int).tolist()}, expected {wanted.astype(int).tolist()}): the loop must "
                              "go on until every row has produced the end token (finished.all()) or max_length")


def _as_hypotheses(result, name: str) -> list[tuple[list[int], float]]:
    if not isinstance(result, (list, tuple)):
        raise CheckFailed(f"{name} should be a list of (tokens, score) pairs, got {type(result).__name__}")
    hypotheses = []
    for rank, item in enumerate(result):
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise CheckFailed(f"{name}[{rank}] should be a pair (tokens, score), got {type(item).__name__}")
        tokens = to_array(item[0], f"the tokens of {name}[{rank}]")
        score = to_array(item[1], f"the score of {name}[{rank}]")
        if tokens.ndim != 1 or score.shape != ():
            raise CheckFailed(f"{name}[{rank}] should hold a 1-D sequence of token ids and one number, got shapes "
                              f"{tokens.shape} and {score.shape}")
        hypotheses.append(([int(t) for t in tokens], float(score)))
    return hypotheses


def _same(actual, expected, atol: float) -> bool:
    return len(actual) == len(expected) and all(
        a_tokens == list(e_tokens) and abs(a_score - e_score) <= atol
        for (a_tokens, a_score), (e_tokens, e_score) in zip(actual, expected, strict=True))


def _show(hypotheses) -> str:
    return "[" + ", ".join(f"({list(tokens)}, {score:.4f})" for tokens, score in hypotheses) + "]"


def inspect_beam(result, expected, name: str, *, start_id: int, end_id: int, max_length: int,
                 greedy_tokens: Sequence[int] | None = None, mistakes: Sequence[tuple[object, str]] = (),
                 atol: float = 1e-4) -> None:
    """Compare beam-search hypotheses [(tokens, score), ...] with `expected`, diagnosing the usual mistakes."""
    actual = _as_hypotheses(result, name)
    if actual and all(tokens[:1] == [start_id] for tokens, _ in actual):
        raise CheckFailed(f"{name}: every hypothesis starts with the start token {start_id}; return only the "
                          "generated tokens (and count only them in the length)")
    for tokens, _ in actual:
        if len(tokens) > max_length:
            raise CheckFailed(f"{name}: the hypothesis {tokens} has {len(tokens)} tokens; the search did not stop "
                              f"at max_length={max_length}")
        if end_id in tokens[:-1]:
            raise CheckFailed(f"{name}: the hypothesis {tokens} kept expanding after the end token {end_id}; set "
                              "a hypothesis aside as finished as soon as it ends with the end token")
    if _same(actual, expected, atol):
        return
    for candidate, explanation in mistakes:
        if _same(actual, candidate, atol):
            raise CheckFailed(f"{name} is wrong: {explanation}")
    if greedy_tokens is not None and actual and actual[0][0] == list(greedy_tokens) != list(expected[0][0]):
        raise CheckFailed(f"{name}: the best hypothesis {actual[0][0]} is the greedy answer, but beam search finds "
                          f"{list(expected[0][0])}; keep the beam_width best extensions of the live hypotheses "
                          "at each step, not only the best one")
    if len(actual) != len(expected):
        raise CheckFailed(f"{name} holds {len(actual)} hypotheses, expected {len(expected)}: return the best "
                          "beam_width hypotheses (finished and unfinished together)")
    scores = [score for _, score in actual]
    if any(later > earlier + atol for earlier, later in zip(scores, scores[1:], strict=False)):
        if _same(sorted(actual, key=lambda h: -h[1]), expected, atol):
            raise CheckFailed(f"{name} has the right hypotheses in the wrong order: return them best first "
                              "(highest normalised score first)")
    raise CheckFailed(f"{name} is {_show(actual)}, expected {_show(expected)}")


# ----------------------------------------------------------------------------------------------
# Visible checks: the toy model above. The expected results and the named mistakes' results are generated
# by the reference on these inputs (autograde/expected/transformer/decoding.py).

STEM = "04_transformer"
# (encoder ids, max_length): one sentence ends after two tokens, the other never ends and stops at max_length.
GREEDY_CASES = [([[2, 5], [1, 5]], 4), ([[4, 7]], 3)]
# (encoder ids, alpha) with max_length 4 and beam width 3: for [[2, 5]] beam search beats greedy; for
# [[1, 5]] length normalisation changes the winner.
BEAM_CASES = [([[2, 5]], 1.0), ([[2, 5]], 0.0), ([[1, 5]], 1.0)]
BEAM_MAX_LENGTH, BEAM_WIDTH = 4, 3


def stored_hypotheses(value) -> list[tuple[list[int], float]]:
    """[(tokens, score), ...] from a generated file's {"tokens": [...], "scores": [...]}."""
    return [([int(t) for t in tokens], float(score))
            for tokens, score in zip(value["tokens"], value["scores"], strict=True)]


def check_greedy_decode(greedy_decode) -> None:
    """Two toy sentences: one ends after two tokens, the other never ends and stops at max_length."""
    for (encoder_ids, max_length), case in zip(GREEDY_CASES, load_expected(STEM, "decoding", "greedy_decode"),
                                               strict=True):
        result = call_learner(greedy_decode, toy_predict_next, np.array(encoder_ids), TOY_START, TOY_END, max_length)
        inspect_greedy(result, case["expected"],
                       f"greedy_decode(toy_predict_next, {encoder_ids}, {TOY_START}, {TOY_END}, {max_length})",
                       start_id=TOY_START, end_id=TOY_END, max_length=max_length,
                       mistakes=stored_mistakes(case["mistakes"]))
    passed("greedy_decode gives the expected tokens on the toy model (end token kept, padding after it, "
           "max_length respected)")


def check_beam_search(beam_search) -> None:
    """Sentence [[2, 5]]: beam search beats greedy; sentence [[1, 5]]: normalisation changes the winner."""
    for (encoder_ids, alpha), case in zip(BEAM_CASES, load_expected(STEM, "decoding", "beam_search"), strict=True):
        name = (f"beam_search(toy_predict_next, {encoder_ids}, {TOY_START}, {TOY_END}, max_length={BEAM_MAX_LENGTH}, "
                f"beam_width={BEAM_WIDTH}, alpha={alpha})")
        result = call_learner(beam_search, toy_predict_next, np.array(encoder_ids), TOY_START, TOY_END,
                              BEAM_MAX_LENGTH, BEAM_WIDTH, alpha)
        mistakes = [(stored_hypotheses(entry["value"]), entry["message"]) for entry in case["mistakes"].values()]
        inspect_beam(result, stored_hypotheses(case["expected"]), name, start_id=TOY_START, end_id=TOY_END,
                     max_length=BEAM_MAX_LENGTH, greedy_tokens=[int(t) for t in case["greedy"]], mistakes=mistakes)
    passed("beam_search finds the expected hypotheses and normalised scores on the toy model")
