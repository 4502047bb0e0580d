"""Assignment 04, decoding: the reference, the catalogue of named mistakes, the visible checks and the hidden
checks of greedy_decode and beam_search, with correct and typical wrong learner implementations."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from autograde.checks.transformer import decoding as hidden
from autograde.mistakes.transformer import decoding as mistakes
from autograde.reference.transformer import decoding as ref
from course_lib.checking import CheckFailed
from course_lib.transformer import decoding as visible

from conftest import AlwaysEqual

# ----------------------------------------------------------------------------------------------
# Learner-style implementations: a correct one and the usual mistakes, selected by flags.


def learner_greedy(predict_next, encoder_ids, start_id, end_id, max_length, *, keep_start=False, pad=True,
                   extra_step=False, drop_end=False, pad_to_length=True, argmin=False, stop_at_first_end=False):
    import tensorflow as tf

    batch = int(tf.shape(encoder_ids)[0])
    output = tf.fill((batch, 1), start_id)
    done = tf.zeros((batch,), tf.bool)
    for _ in range(max_length + int(extra_step)):
        log_probs = tf.convert_to_tensor(predict_next(encoder_ids, output))
        choose = tf.argmin if argmin else tf.argmax
        next_id = tf.cast(choose(log_probs, axis=-1), tf.int32)
        if pad:
            next_id = tf.where(done, 0, next_id)
        if drop_end:
            next_id = tf.where(next_id == end_id, 0, next_id)
        output = tf.concat([output, next_id[:, None]], axis=1)
        done = done | (next_id == end_id)
        if bool((tf.reduce_any if stop_at_first_end else tf.reduce_all)(done)):
            break
    tokens = output if keep_start else output[:, 1:]
    if pad_to_length:
        width = max_length + int(keep_start) + int(extra_step)
        tokens = tf.pad(tokens, [[0, 0], [0, width - int(tokens.shape[1])]])
    return tokens.numpy()


def learner_beam(predict_next, encoder_ids, start_id, end_id, max_length, beam_width, alpha, *, greedy=False,
                 normalise=True, set_aside=True, keep_start=False, extra_step=False, length_offset=0,
                 worst_first=False):
    beams = [((start_id,), 0.0)]
    done = []
    for _ in range(max_length + int(extra_step)):
        decoder_ids = np.array([tokens for tokens, _ in beams])
        log_probs = np.asarray(predict_next(np.repeat(encoder_ids, len(beams), axis=0), decoder_ids))
        options = []
        for (tokens, score), row in zip(beams, log_probs, strict=True):
            for token, value in enumerate(row):
                options.append((score + value, tokens + (token,)))
        options.sort(key=lambda option: option[0], reverse=True)
        beams = []
        for score, tokens in options[:1 if greedy else beam_width]:
            if set_aside and tokens[-1] == end_id:
                done.append((tokens, score))
            else:
                beams.append((tokens, score))
        if not beams:
            break
    results = []
    for tokens, score in done + beams:
        generated = list(tokens if keep_start else tokens[1:])
        length = len(generated) + length_offset
        results.append((generated, score / length ** alpha if normalise else score))
    results.sort(key=lambda result: result[1], reverse=True)
    return results[:beam_width][::-1] if worst_first else results[:beam_width]


def raises_not_implemented(*args, **kwargs):
    raise NotImplementedError()


# ----------------------------------------------------------------------------------------------
# The reference and the toy model


def test_reference_greedy_on_the_toy_model_matches_hand_computation():
    # Sentence [2, 5] (even): start -> a (0.50) -> end (0.45). Sentence [1, 5] (odd): a -> a -> a -> a, never ends.
    result = ref.greedy_decode(visible.toy_predict_next, np.array([[2, 5], [1, 5]]), 1, 2, 4)
    assert result.tolist() == [[3, 2, 0, 0], [3, 3, 3, 3]]
    assert result.dtype == np.int32


def test_reference_beam_on_the_toy_model_matches_hand_computation():
    best = ref.beam_search(visible.toy_predict_next, np.array([[2, 5]]), 1, 2, 4, 3, 1.0)
    # b then end: 0.40 * 0.90 = 0.36 beats the greedy a then end: 0.50 * 0.45 = 0.225; two tokens each.
    assert [tokens for tokens, _ in best[:2]] == [[4, 2], [3, 2]]
    assert best[0][1] == pytest.approx(math.log(0.36) / 2, abs=1e-6)
    assert best[1][1] == pytest.approx(math.log(0.225) / 2, abs=1e-6)
    raw = ref.beam_search(visible.toy_predict_next, np.array([[1, 5]]), 1, 2, 4, 3, 0.0)
    normalised = ref.beam_search(visible.toy_predict_next, np.array([[1, 5]]), 1, 2, 4, 3, 1.0)
    assert raw[0][0] == [4, 2] and raw[0][1] == pytest.approx(math.log(0.35 * 0.70), abs=1e-6)
    assert normalised[0][0] == [3, 3, 3, 3]
    assert normalised[0][1] == pytest.approx(math.log(0.6 * 0.5 ** 3) / 4, abs=1e-6)


def test_beam_width_one_is_greedy():
    for seed in range(5):
        predict_next = ref.toy_predict_next(seed, 7, 1, 2)
        encoder_ids = np.array([[3, 4, 5]])
        greedy = [int(t) for t in ref.greedy_decode(predict_next, encoder_ids, 1, 2, 6)[0] if t]
        [(tokens, _)] = ref.beam_search(predict_next, encoder_ids, 1, 2, 6, 1, 0.0)
        assert tokens == greedy


def test_hidden_beam_cases_separate_greedy_beam_and_normalisation():
    beats_greedy = changes_winner = 0
    for seed, vocab, source, max_length, beam_width, alpha, start, end in hidden.BEAM_CASES:
        predict_next = ref.toy_predict_next(seed, vocab, start, end)
        encoder_ids = np.array([source])
        best = ref.beam_search(predict_next, encoder_ids, start, end, max_length, beam_width, alpha)[0][0]
        greedy = [int(t) for t in ref.greedy_decode(predict_next, encoder_ids, start, end, max_length)[0] if t]
        raw = ref.beam_search(predict_next, encoder_ids, start, end, max_length, beam_width, 0.0)[0][0]
        beats_greedy += best != greedy
        changes_winner += alpha > 0 and best != raw
    assert beats_greedy >= 2 and changes_winner >= 2


def test_toy_model_has_no_ties_and_ignores_nothing():
    predict_next = ref.toy_predict_next(3, 9, 1, 2)
    values = predict_next(np.array([[3, 4]] * 2), np.array([[1, 5], [1, 6]]))
    assert values.shape == (2, 9)
    assert np.allclose(np.exp(values).sum(axis=1), 1.0)
    assert not np.allclose(values[0], values[1])  # depends on the prefix
    assert all(len(set(np.round(row[2:], 9))) == 7 for row in values)  # pad and start: -30, never chosen


# ----------------------------------------------------------------------------------------------
# Checks: correct implementations pass, mistakes are diagnosed


@pytest.mark.parametrize("check", [visible.check_greedy_decode, hidden.grade_greedy_decode])
def test_correct_greedy_passes(check, capsys):
    check(learner_greedy)
    check(lambda *args: ref.greedy_decode(*args).tolist())
    assert "\N{CHECK MARK}" in capsys.readouterr().out


@pytest.mark.parametrize("check", [visible.check_beam_search, hidden.grade_beam_search])
def test_correct_beam_passes(check, capsys):
    check(learner_beam)  # the reference: tests/test_exercises.py
    assert "\N{CHECK MARK}" in capsys.readouterr().out


GREEDY_MISTAKES = [
    (dict(keep_start=True), "starts with the start token"),
    (dict(keep_start=True, pad_to_length=False), "starts with the start token"),
    (dict(pad=False), "tokens after the end token"),
    (dict(extra_step=True), "did not stop at max_length"),
    (dict(pad_to_length=False), "pad every row with 0 up to max_length"),
    (dict(drop_end=True), "no end token"),
    (dict(argmin=True), "least probable"),
    (dict(stop_at_first_end=True), "stops after .* tokens, before its end token"),
]


@pytest.mark.parametrize("flags, message", GREEDY_MISTAKES, ids=[m for _, m in GREEDY_MISTAKES])
@pytest.mark.parametrize("check", [visible.check_greedy_decode, hidden.grade_greedy_decode])
def test_greedy_mistakes_are_diagnosed(check, flags, message):
    if check is visible.check_greedy_decode and flags.get("argmin"):
        message = "no end token"
    with pytest.raises(CheckFailed, match=message):
        check(lambda *args: learner_greedy(*args, **flags))


BEAM_MISTAKES = [
    (dict(greedy=True), "greedy answer"),
    (dict(normalise=False), "not length-normalised|summed log-probabilities"),
    (dict(set_aside=False), "kept expanding after the end token"),
    (dict(keep_start=True), "starts with the start token"),
    (dict(extra_step=True, set_aside=False), "did not stop at max_length|kept expanding"),
    (dict(length_offset=1), "counts the start token"),
    (dict(worst_first=True), "wrong order"),
]


@pytest.mark.parametrize("flags, message", BEAM_MISTAKES, ids=[m for _, m in BEAM_MISTAKES])
@pytest.mark.parametrize("check", [visible.check_beam_search, hidden.grade_beam_search])
def test_beam_mistakes_are_diagnosed(check, flags, message):
    with pytest.raises(CheckFailed, match=message):
        check(lambda *args: learner_beam(*args, **flags))


def crash_free(produce):
    """A named mistake as a learner's function; where it cannot run (a hypothesis of length 0), the right answer."""
    def learner(*args):
        try:
            return produce(*args)
        except ValueError:
            return ref.beam_search(*args)
    return learner


@pytest.mark.parametrize("mistake", mistakes.GREEDY + mistakes.BEAM, ids=lambda mistake: mistake.name)
def test_the_hidden_checks_name_each_catalogued_mistake(mistake):
    check = hidden.grade_greedy_decode if mistake in mistakes.GREEDY else hidden.grade_beam_search
    with pytest.raises(CheckFailed, match=re.escape(mistake.message)):
        check(crash_free(mistake.produce))


@pytest.mark.parametrize("mistake", mistakes.GREEDY_IDS + mistakes.BEAM_IDS,
                         ids=lambda mistake: f"{mistake.name}-{'greedy' if mistake in mistakes.GREEDY_IDS else 'beam'}")
def test_the_hidden_checks_name_ids_written_into_the_code(mistake):
    """The last case of each hidden check takes ids other than 1 and 2; the visible checks' toy model has only those."""
    check = hidden.grade_greedy_decode if mistake in mistakes.GREEDY_IDS else hidden.grade_beam_search
    with pytest.raises(CheckFailed, match=re.escape(mistake.message)):
        check(mistake.produce)


NAMED = {mistake.name: mistake for mistake in mistakes.GREEDY + mistakes.BEAM}
# The least probable token never ends a toy sentence (a structural message comes first); a hypothesis of length
# 0 rules out leaving the end token out of the length.
VISIBLE_NAMES = [(visible.check_greedy_decode, "beam_answer"), *((visible.check_beam_search, name) for name in (
    "not_normalised", "ranking_not_normalised", "scores_not_normalised", "length_counts_start"))]


@pytest.mark.parametrize(("check", "name"), VISIBLE_NAMES, ids=[name for _, name in VISIBLE_NAMES])
def test_the_visible_checks_name_the_catalogued_mistakes_of_their_cases(check, name):
    with pytest.raises(CheckFailed, match=re.escape(NAMED[name].message)):
        check(NAMED[name].produce)


def test_beam_length_without_end_token_is_diagnosed_by_the_hidden_check():
    with pytest.raises(CheckFailed, match="leaves out the end token"):
        hidden.grade_beam_search(lambda *args: learner_beam(*args, length_offset=-1)
                                 if all(len(t) > 1 for t, _ in learner_beam(*args)) else learner_beam(*args))


def test_beam_that_never_stops_is_diagnosed():
    def too_long(predict_next, encoder_ids, start_id, end_id, max_length, beam_width, alpha):
        return [([3] * (max_length + 1), -1.0)] * beam_width

    with pytest.raises(CheckFailed, match="did not stop at max_length"):
        hidden.grade_beam_search(too_long)


@pytest.mark.parametrize("check", [visible.check_greedy_decode, hidden.grade_greedy_decode,
                                   visible.check_beam_search, hidden.grade_beam_search])
def test_always_equal_objects_fail(check):
    with pytest.raises(CheckFailed):
        check(lambda *args: AlwaysEqual())
    with pytest.raises(CheckFailed):
        check(lambda *args: [(AlwaysEqual(), AlwaysEqual())] * 3)


@pytest.mark.parametrize("check", [visible.check_greedy_decode, hidden.grade_greedy_decode,
                                   visible.check_beam_search, hidden.grade_beam_search])
def test_not_implemented_passes_through(check):
    with pytest.raises(NotImplementedError):
        check(raises_not_implemented)


@pytest.mark.parametrize("check", [visible.check_greedy_decode, hidden.grade_beam_search])
def test_a_crash_names_the_error(check):
    def crashes(*args):
        raise IndexError("index 7 is out of bounds")

    with pytest.raises(CheckFailed, match="IndexError: index 7"):
        check(crashes)
