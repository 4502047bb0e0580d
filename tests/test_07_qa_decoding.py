"""Assignment 07, best_span: the reference agrees with an independent all-pairs NumPy search on random windows and
reads the worked example as intended; the visible check (course_lib.qa.decoding) and the hidden check
(autograde.checks.qa.decoding) accept NumPy ints and scalars, refuse always-equal and malformed results and leave an
unfinished exercise unfinished.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import numpy as np
import pytest
from cell_checks import cell_function, failure_messages

from autograde import checks
from autograde.checks.qa import decoding as hidden
from autograde.mistakes.qa import decoding as mistakes
from autograde.reference.qa.decoding import best_span
from autograde.variants.qa.decoding import VARIANTS
from course_lib.checking import CheckFailed, NotImplementedYet
from course_lib.expected import load as load_expected
from course_lib.qa import decoding as visible

from conftest import AlwaysEqual

STEM = "07_qa"
CHECKS = (visible.check_best_span, hidden.grade_best_span)


def message_of(name: str) -> str:
    return next(mistake.message for mistake in mistakes.SPANS if mistake.name == name)


# Named mistakes shown by a wrong answer written in this file rather than by a variant.
SHOWN_HERE = {"context_relative_positions", "best_last"}


def define(source: str):
    return cell_function(source, "best_span")


def both_checks(fn) -> list[str]:
    return failure_messages(CHECKS, fn)


def expect_named(fn, text: str) -> None:
    messages = both_checks(fn)
    assert all(text in message for message in messages), messages


# ------------------------------------------------------------------------------------------------
# The reference


def all_pairs(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20):
    """best_span written another way: every (window, start, end) scored at once, ranked by np.lexsort."""
    start = np.atleast_2d(np.asarray(start_logits, np.float64))
    end = np.atleast_2d(np.asarray(end_logits, np.float64))
    mask = np.atleast_2d(np.asarray(context_mask)).astype(bool)
    w, s, e = np.meshgrid(*(np.arange(n) for n in (start.shape[0], start.shape[1], start.shape[1])), indexing="ij")
    valid = mask[w, s] & mask[w, e] & (s <= e) & (e - s < max_answer_length)
    w, s, e = w[valid], s[valid], e[valid]
    score = start[w, s] + end[w, e]
    order = np.lexsort((e, s, w, -score))[:n_best]
    return [(int(w[i]), int(s[i]), int(e[i]), float(score[i])) for i in order]


def test_reference_agrees_with_an_all_pairs_search():
    rng = np.random.default_rng(0)
    for trial in range(300):
        windows, question = int(rng.integers(1, 5)), int(rng.integers(1, 6))
        seq = question + 3 + int(rng.integers(0, 20))
        mask = visible.window_masks(windows, seq, question, int(rng.integers(0, seq - question - 2)))
        grid = [0.5, 1 / 64][trial % 2]  # many ties, then few
        start, end = (visible.random_logits(rng, mask, grid=grid) for _ in range(2))
        longest, n_best = int(rng.integers(1, 12)), int(rng.integers(1, 40))
        got = visible.as_spans(best_span(start, end, mask, longest, n_best))
        assert got == all_pairs(start, end, mask, longest, n_best), trial


def test_reference_on_the_worked_example():
    example = visible.WORKED_EXAMPLE
    mask = visible.worked_context_mask(example["tokens"])
    context = [token for token, inside in zip(example["tokens"][1], mask[1], strict=True) if inside]
    assert context == ["1921", "by", "ada", "lovelace", "."]
    start, end = np.array(example["start_logits"]), np.array(example["end_logits"])
    spans = best_span(start, end, mask, example["max_answer_length"], example["n_best"])
    top = spans[0]
    assert example["tokens"][top["window"]][top["start"]:top["end"] + 1] == ["ada", "lovelace"]
    assert top["score"] == 8.5 and len(spans) == example["n_best"]
    # what makes it a worked example: [CLS] scores highest, the best other start is in the question, and the two
    # argmax over window 0's context end before they start
    assert start.argmax(axis=1).tolist() == [0, 0] and end.argmax(axis=1).tolist() == [0, 0]
    assert example["tokens"][0][int(np.argsort(start[0])[-2])] == "founded" and mask[0][2] == 0
    inside = np.flatnonzero(mask[0])
    assert inside[np.argmax(end[0, inside])] < inside[np.argmax(start[0, inside])]
    # ties go to the earlier window: rank 3 is window 0's "ada", tied with window 1's "lovelace"
    assert spans[3] == {"window": 0, "start": 12, "end": 12, "score": 4.5}


def test_reference_edges():
    assert best_span([1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [0, 1, 1], max_answer_length=1) == [  # a tie: earlier first
        {"window": 0, "start": 1, "end": 1, "score": 4.0}, {"window": 0, "start": 2, "end": 2, "score": 4.0}]
    assert best_span(np.zeros((2, 5)), np.zeros((2, 5)), np.zeros((2, 5), bool)) == []
    assert len(best_span(np.zeros(6), np.zeros(6), [0, 0, 1, 1, 1, 0], n_best=100)) == 6


def test_window_masks_look_like_make_windows():
    masks = visible.window_masks(3, 12, 4, 2)
    assert masks[:2].tolist() == [[0] * 6 + [1] * 5 + [0]] * 2
    assert masks[2].tolist() == [0] * 6 + [1] * 2 + [0] * 4
    assert visible.count_valid(masks, 3) == 2 * (5 + 4 + 3) + 3


# ------------------------------------------------------------------------------------------------
# The stored expected values


def test_every_mistake_is_told_apart_in_a_visible_case():
    stored = load_expected(STEM, "decoding", "best_span")
    cases = [stored["worked"], *stored["cases"].values()]
    assert {name for case in cases for name in case["mistakes"]} == {m.name for m in mistakes.SPANS}
    assert set(stored["worked"]["mistakes"]) == {m.name for m in mistakes.SPANS}, "the worked example shows each"
    assert any(len(case["expected"]) == 0 for case in cases), "a case without a valid span"


def test_every_named_mistake_has_a_wrong_answer_that_shows_it():
    """Each named mistake is the message of a wrong variant (autograde.variants.qa.decoding) or shown here."""
    shown = {m.name for m in mistakes.SPANS if m.message in {v.message for v in VARIANTS if not v.correct}}
    assert shown | SHOWN_HERE == {m.name for m in mistakes.SPANS}


# ------------------------------------------------------------------------------------------------
# The reference, the solution cell and the variants against both checks: tests/test_exercises.py (at the grading
# seeds); here what is particular to this exercise


def test_hidden_check_passes_the_reference_at_another_seed():
    checks.use_seed(7)
    try:
        hidden.grade_best_span(best_span)
    finally:
        checks.use_seed(None)


def test_whole_cell_variants_and_four_wrong_ones():
    assert sum(not v.correct for v in VARIANTS) >= 4
    assert all(v.source for v in VARIANTS), "whole-cell variants only: the solution cell may still change"


# ------------------------------------------------------------------------------------------------
# Other answers: wrong ones named, odd but right forms accepted, malformed results refused


def reported(change):
    """The reference's spans, each changed by `change(span, start_logits, context_mask)`."""
    def fn(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20):
        spans = best_span(start_logits, end_logits, context_mask, max_answer_length, n_best)
        return [change(dict(span), np.atleast_2d(start_logits), np.atleast_2d(context_mask)) for span in spans]
    return fn


def test_positions_counted_from_the_context_are_named():
    def from_context(span, logits, mask):
        first = int(np.flatnonzero(mask[span["window"]])[0])
        return {**span, "start": span["start"] - first, "end": span["end"] - first}

    expect_named(reported(from_context), message_of("context_relative_positions"))


def test_the_best_last_is_named():
    def best_last(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20):
        return best_span(start_logits, end_logits, context_mask, max_answer_length, n_best)[::-1]

    expect_named(best_last, message_of("best_last"))


def test_numpy_types_and_tuples_of_dicts_are_accepted(capsys):
    def numpy_types(span, logits, mask):
        return {"window": np.int32(span["window"]), "start": np.int64(span["start"]), "end": np.uint8(span["end"]),
                "score": np.float32(span["score"]), "text": "extra keys are fine"}

    def as_tuple(*args, **kwargs):
        return tuple(reported(lambda span, logits, mask: span)(*args, **kwargs))

    for fn in (reported(numpy_types), as_tuple):
        assert both_checks(fn) == ["", ""]
    capsys.readouterr()


def test_wrong_scores_and_positions_are_explained():
    def probability(span, logits, mask):
        return {**span, "score": span["score"] / 100}

    def float_positions(span, logits, mask):
        return {**span, "start": float(span["start"])}

    expect_named(reported(probability), "the score is the sum of the two logits")
    expect_named(reported(float_positions), "it should be an int")


def test_fewer_spans_and_missed_spans_are_explained():
    def fewer(*args, **kwargs):
        return best_span(*args, **kwargs)[:-1]

    def without_the_best(*args, **kwargs):
        return best_span(*args, **kwargs)[1:] + best_span(*args, **kwargs)[:1]

    expect_named(fewer, "valid spans and n_best is")
    expect_named(without_the_best, "sort by score, highest first")


@pytest.mark.thorough
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_checks_are_sound(check):
    for value in [AlwaysEqual(), [AlwaysEqual()] * 20, None, "spans", {"window": 0, "start": 1, "end": 1},
                  [(1, 8, 9, 8.5)], [{"window": 1, "start": 8, "end": 9}], [{"window": 1, "start": 8, "end": 9,
                                                                            "score": float("nan")}]]:
        with pytest.raises(CheckFailed):
            check(lambda *args, value=value, **kwargs: value)

    def unfinished(*args, **kwargs):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        check(unfinished)


def test_unfinished_is_named_as_such_by_the_visible_check():
    def unfinished(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20):
        raise NotImplementedError()

    with pytest.raises(NotImplementedYet):
        visible.check_best_span(unfinished)


def test_a_crash_is_a_failed_check_naming_the_error():
    def crashing(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20):
        return [{"window": 0, "start": int(np.argmax(start_logits)), "end": 0, "score": start_logits[0][0] + {}}]

    expect_named(crashing, "TypeError")


# ------------------------------------------------------------------------------------------------
# Through the wire: all cases in one request to a real agent


def test_hidden_check_through_a_handle(tmp_path, capsys):
    from in_process_kernel import InProcessKernel

    from autograde.remote import Remote

    by_what = {v.what: v for v in VARIANTS}
    namespace = {"right": define(by_what["heapq.nlargest over a generator, float32 scores and NumPy int positions"]
                                 .source),
                 "in_place": define(by_what["the caller's logits masked in place"].source),
                 "ascending": define(by_what["sorted ascending"].source)}
    kernel = InProcessKernel(tmp_path, namespace)
    remote = Remote(kernel)
    hidden.grade_best_span(remote.lookup("right"))
    assert kernel.requests <= 3  # the lookup, the helper, the one call of every case
    assert capsys.readouterr().out.count("\N{CHECK MARK}") == 1
    with pytest.raises(CheckFailed, match="changed its argument start_logits"):
        hidden.grade_best_span(remote.lookup("in_place"))
    with pytest.raises(CheckFailed, match="worst first"):
        hidden.grade_best_span(remote.lookup("ascending"))
