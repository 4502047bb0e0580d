"""Assignment 07, make_windows: the reference cuts a pair as the tokenizers library does (truncation "only_second"
with a stride, padding to max_length); the visible check (course_lib.qa.windows) and the hidden check
(autograde.checks.qa.windows) do not charge a wrong char_span_to_token_span to make_windows, refuse always-equal
objects and leave an unfinished exercise unfinished; plot_windows draws the windows.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import numpy as np
import pytest
from in_process_kernel import InProcessKernel
from test_06_ner_evaluation import expect_named, expect_sound, run_quietly
from test_07_qa_spans import NOTEBOOK_NAMES, define, solutions, variants_of

from autograde.checks.qa import windows as hidden
from autograde.expected.qa.spans import answer_span, encode_pair, split_pair
from autograde.expected.tokenizer import course_tokenizer
from autograde.mistakes.qa import windows as mistakes
from autograde.reference.qa import windows as ref
from autograde.remote import Remote
from course_lib.checking import CheckFailed
from course_lib.qa import windows as visible
from course_lib.qa.spans import ORESUND

from conftest import AlwaysEqual

CHECKS = (visible.check_make_windows, hidden.grade_make_windows)


# ------------------------------------------------------------------------------------------------
# The reference against the tokenizers library


@pytest.fixture(scope="module")
def tokenizer():
    return course_tokenizer()


@pytest.mark.parametrize("max_length,stride", [(20, 3), (26, 10), (32, 0), (40, 12), (64, 30), (90, 5), (24, 11)])
def test_windows_are_the_tokenizers_librarys(tokenizer, max_length, stride):
    question = "What does the bridge carry across the strait?"
    pieces = encode_pair(tokenizer, question, ORESUND, max_length=max_length, stride=stride)
    windows = ref.make_windows(*split_pair(encode_pair(tokenizer, question, ORESUND)[0]), max_length, stride)
    assert len(windows) == len(pieces)
    for window, piece in zip(windows, pieces, strict=True):
        assert window["input_ids"] == piece.ids and window["attention_mask"] == piece.attention_mask
        assert window["token_type_ids"] == piece.type_ids and window["sequence_ids"] == piece.sequence_ids
        assert window["offsets"] == [tuple(o) if s == 1 else None for o, s in zip(piece.offsets, piece.sequence_ids,
                                                                                   strict=True)]


def test_answer_positions_point_at_the_answer(tokenizer):
    """In every window that holds the answer its positions cover its characters; elsewhere (0, 0)."""
    question_ids, context_ids, offsets = split_pair(encode_pair(tokenizer, "What does the bridge carry?", ORESUND)[0])
    answer = answer_span(ORESUND, "a four-lane motorway")
    windows = ref.make_windows(question_ids, context_ids, offsets, 26, 10, answer=answer)
    held = [w for w in windows if (w["start_position"], w["end_position"]) != (0, 0)]
    assert len(held) == 2
    for window in held:
        first, last = window["offsets"][window["start_position"]], window["offsets"][window["end_position"]]
        assert ORESUND[first[0]:last[1]] == "a four-lane motorway"


def test_reference_by_hand():
    windows = ref.make_windows([7], [11, 12, 13], [(0, 1), (2, 3), (4, 5)], 7, 1, answer=(2, 5), cls_id=1, sep_id=2,
                               pad_id=0)
    assert [w["input_ids"] for w in windows] == [[1, 7, 2, 11, 12, 13, 2]]
    assert (windows[0]["start_position"], windows[0]["end_position"]) == (4, 5)
    windows = ref.make_windows([7], [11, 12, 13, 14], [(0, 1), (2, 3), (4, 5), (6, 7)], 6, 1, answer=(4, 7))
    assert [(w["context_start"], w["start_position"], w["end_position"]) for w in windows] == [(0, 0, 0), (1, 0, 0),
                                                                                               (2, 3, 4)]
    assert windows[-1]["token_type_ids"] == [0, 0, 0, 1, 1, 1] and windows[0]["offsets"][:3] == [None] * 3


def test_every_named_mistake_is_seen_by_the_visible_check():
    from course_lib.expected import load

    cases = load("07_qa", "windows", "make_windows").values()
    assert {name for case in cases for name in case["mistakes"]} == {mistake.name for mistake in mistakes.WINDOWS}


def test_stored_windows_read_back():
    right = [ref.plain_window(w) for w in ref.make_windows([5, 6], list(range(20, 40)), [(i, i + 1) for i in range(20)],
                                                            12, 2, answer=(9, 11))]
    wrong = [ref.plain_window(w) for w in mistakes.WINDOWS[0].produce([5, 6], list(range(20, 40)),
                                                                      [(i, i + 1) for i in range(20)], 12, 2,
                                                                      answer=(9, 11))]
    stored = [visible.stored_window(w) for w in right]
    assert [visible.read_stored(w) for w in stored] == right
    assert [visible.read_stored(w, stored) for w in visible.stored_like(wrong, right)] == wrong


# ------------------------------------------------------------------------------------------------
# make_windows as learners write it

# (The solution, the reference and the variants against both checks: tests/test_exercises.py)


@pytest.mark.thorough
@pytest.mark.parametrize("spans", variants_of("char_span_to_token_span", False), ids=lambda v: v.what)
def test_a_wrong_char_span_to_token_span_costs_make_windows_nothing(spans, capsys):
    fn = define("make_windows", spans_source=spans.source)
    for check in CHECKS:
        run_quietly(check, fn, capsys)


@pytest.mark.thorough
def test_forms_and_other_mistakes_are_explained():
    solution = define("make_windows")

    def one_dict(*args, **kwargs):
        return solution(*args, **kwargs)[0]

    def no_context_start(*args, **kwargs):
        return [{k: v for k, v in w.items() if k != "context_start"} for w in solution(*args, **kwargs)]

    def zero_offsets(*args, **kwargs):
        windows = solution(*args, **kwargs)
        for window in windows:
            window["offsets"] = [(0, 0) if o is None else o for o in window["offsets"]]
        return windows

    def bert_ids(question_ids, context_ids, context_offsets, max_length, stride, *, answer=None, **ids):
        return solution(question_ids, context_ids, context_offsets, max_length, stride, answer=answer)

    def question_in_place(question_ids, *args, **kwargs):
        windows = solution(question_ids, *args, **kwargs)
        if isinstance(question_ids, list):
            question_ids.insert(0, 101)
        return windows

    for check in CHECKS:
        expect_named(check, one_dict, "should return a list of windows (dicts)")
        expect_named(check, no_context_start, "has no 'context_start'")
        expect_named(check, zero_offsets, "every other position gets None")
        expect_named(check, question_in_place, "changed its argument question_ids")
    expect_named(hidden.grade_make_windows, bert_ids, "position 0 is [CLS]")


def test_arrays_of_objects_cross_the_wire_as_lists():
    """sequence_ids and offsets in NumPy arrays of objects (None among ints) reach the grader as lists."""
    from course_lib.calls import call_each, rebuild

    def arrays(*args, **kwargs):
        return [{key: np.array(value, dtype=object) if key in ("sequence_ids", "offsets") else value
                 for key, value in window.items()} for window in ref.make_windows(*args, **kwargs)]

    args = [[5], [20, 21, 22], [(0, 1), (2, 3), (4, 5)], 8, 1]
    (outcome,) = call_each(arrays, [["objects", args, {"answer": (2, 3)}]], object_arrays_as_lists=True)
    windows = rebuild(outcome["result"])
    assert windows[0]["sequence_ids"] == [None, 0, None, 1, 1, 1, None, None]
    assert visible.read_windows(windows, "make_windows(...)", True) == [
        ref.plain_window(w) for w in ref.make_windows(*args, answer=(2, 3))]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_checks_are_sound(check):
    keys = (*visible.LIST_KEYS, "context_start", *visible.ANSWER_KEYS)
    expect_sound(check, [AlwaysEqual(), [AlwaysEqual()], None, [dict.fromkeys(keys, AlwaysEqual())],
                         [dict.fromkeys(keys, [AlwaysEqual()])]])


@pytest.mark.thorough
def test_the_hidden_check_through_the_wire(tmp_path, capsys):
    """Every context in one request (arrays and tuples cross as such); graded with the reference
    char_span_to_token_span in the kernel even when the learner's is wrong; the largest wrong answer (many windows)
    still fits the wire."""
    namespace = dict(NOTEBOOK_NAMES)
    exec(variants_of("char_span_to_token_span", False)[1].source, namespace)
    exec(solutions()["make_windows"], namespace)
    learners = namespace["char_span_to_token_span"]
    kernel = InProcessKernel(tmp_path, namespace)
    remote = Remote(kernel)
    hidden.grade_make_windows(remote.lookup("make_windows"))
    assert kernel.requests <= 8 and capsys.readouterr().out.count("\N{CHECK MARK}") == 1
    assert namespace["char_span_to_token_span"] is learners  # put back after grading
    step = next(v for v in variants_of("make_windows", False) if v.what == "the stride taken as the step")
    exec(step.source, namespace)
    expect_named(hidden.grade_make_windows, remote.lookup("make_windows"), step.message)


def test_plot_windows(tokenizer):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    question_ids, context_ids, offsets = split_pair(encode_pair(tokenizer, "What does the bridge carry?", ORESUND)[0])
    answer = answer_span(ORESUND, "a four-lane motorway")
    windows = ref.make_windows(question_ids, context_ids, offsets, 26, 10, answer=answer)
    tokens = [tokenizer.id_to_token(i) for i in context_ids]
    ax = visible.plot_windows(windows, tokens, answer=answer)
    labels = [label.get_text() for label in ax.get_yticklabels()]
    assert len(labels) == len(windows) == 9 and sum("\N{CHECK MARK}" in label for label in labels) == 2
    assert "share 10" in ax.get_title() and len(ax.get_xticklabels()) == len(tokens)
    plt.close(ax.figure)
    ax = visible.plot_windows(ref.make_windows([5], np.arange(300), [(2 * i, 2 * i + 1) for i in range(300)], 40, 8))
    assert ax.get_xlabel() == "context token"
    plt.close(ax.figure)


def test_a_visible_failure_without_a_named_mistake_says_why():
    right = [ref.plain_window(w) for w in ref.make_windows([5], [20, 21, 22], [(0, 1), (2, 3), (4, 5)], 8, 1)]
    shifted = [dict(right[0], context_start=1)]
    with pytest.raises(CheckFailed, match=r"start at the context tokens \[1\], expected \[0\]"):
        visible.expect_windows(shifted, right, question_ids=[5], context_length=3, max_length=8, stride=1,
                               with_answer=False)
