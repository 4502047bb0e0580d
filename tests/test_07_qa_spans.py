"""Assignment 07, char_span_to_token_span: the reference finds the answers of the visible check's real windows (the
course's tokenizer, whole pairs and windows cut by the tokenizers library or by make_windows); the visible check
(course_lib.qa.spans) and the hidden check (autograde.checks.qa.spans) refuse always-equal objects and leave an
unfinished exercise unfinished. Also the helpers shared by the three text-side tests of 07: the notebook's solution
cells defined as in the notebook, and their variants.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from cell_checks import beside_companion
from in_process_kernel import InProcessKernel
from test_06_ner_evaluation import expect_named, expect_sound

from autograde.checks.qa import spans as hidden
from autograde.expected.qa import spans as generator
from autograde.expected.tokenizer import course_tokenizer
from autograde.mistakes.qa import spans as mistakes
from autograde.reference.qa import spans as ref
from autograde.remote import Remote
from autograde.variants import solution_cells, variants
from course_lib.checking import CheckFailed
from course_lib.qa import spans as visible

from conftest import AlwaysEqual

STEM = "07_qa"
NOTEBOOK_NAMES = {"np": np}
CHECKS = (visible.check_char_span_to_token_span, hidden.grade_char_span_to_token_span)


@functools.cache
def solutions() -> dict[str, str]:
    return solution_cells(STEM)


def define(name: str, source: str | None = None, *, spans_source: str | None = None):
    """The notebook's function `name` (its solution cell, or `source`) next to the solution's
    char_span_to_token_span (or `spans_source`), which make_windows calls."""
    return beside_companion(STEM, "char_span_to_token_span", NOTEBOOK_NAMES, name, source,
                            companion_source=spans_source)


def variants_of(name: str, correct: bool) -> list:
    return [v for v in variants(STEM) if v.name == name and v.correct == correct]


def variant_function(variant):
    return define(variant.name, variant.cell(solutions()[variant.name]))


# ------------------------------------------------------------------------------------------------
# The reference on real windows


@pytest.fixture(scope="module")
def tokenizer():
    return course_tokenizer()


def answer_text(tokenizer, question, answer, occurrence, options) -> str:
    """The characters of the context that the reference's tokens cover, or "" for None."""
    window = generator.window_of(tokenizer, question, visible.ORESUND, options)
    span = ref.char_span_to_token_span(window["offsets"], window["sequence_ids"],
                                       *generator.answer_span(visible.ORESUND, answer, occurrence))
    if span is None:
        return ""
    return visible.ORESUND[window["offsets"][span[0]][0]:window["offsets"][span[1]][1]]


def test_reference_on_the_visible_checks_windows(tokenizer):
    """Whole answers come back as their tokens' characters (the tokens of "sund" and "Øre" are longer than the
    answer); cut or absent answers are None."""
    found = {label: answer_text(tokenizer, *rest) for label, *rest in visible.SPAN_CASES}
    assert list(found.values()) == ["The Øresund Bridge", "resund", "Øres", "a double-track railway", "", "", "Malmö",
                                    "", "Malmö", "carries", "Copenhagen and Malmö", "Malmö", ""]


def test_reference_by_hand():
    offsets = [(0, 0), (0, 4), (0, 0), (0, 3), (4, 5), (5, 8), (8, 11), (12, 18), (0, 0)]
    sequence_ids = [None, 0, None, 1, 1, 1, 1, 1, None]
    assert ref.char_span_to_token_span(offsets, sequence_ids, 4, 11) == (4, 6)
    assert ref.char_span_to_token_span(offsets, sequence_ids, 7, 15) == (5, 7)  # inside tokens at both ends
    assert ref.char_span_to_token_span(offsets, sequence_ids, 12, 19) is None  # past the window's end
    assert ref.char_span_to_token_span([None, None, (3, 5), None], [None, None, 1, None], 1, 5) is None
    assert ref.char_span_to_token_span([(0, 0), (0, 0)], [None, None], 0, 1) is None
    assert ref.touched(offsets, sequence_ids, 12, 19) == [7]


def test_every_named_mistake_is_seen_by_the_visible_check():
    from course_lib.expected import load

    cases = load(STEM, "spans", "char_span_to_token_span").values()
    assert {name for case in cases for name in case["mistakes"]} == {mistake.name for mistake in mistakes.SPANS}


ABSENT = ("cut at the start", "cut at the end", "over both edges", "before the window", "after the window",
          "no context")  # the kinds of answers a window does not hold


def test_the_hidden_windows_are_well_formed():
    from autograde import checks

    for seed in (None, 20261123):
        checks.use_seed(seed)
        try:
            rng = checks.rng(701)
            for case in hidden.CASES:
                label, offsets, sequence_ids, char_start, char_end = hidden.random_window(rng, *case)
                context = [tuple(offsets[i]) for i, s in enumerate(sequence_ids) if s == 1]
                assert len(offsets) == len(sequence_ids) and 0 <= char_start < char_end, label
                # in order; tokens of one character cut into several share its offsets
                assert all(a[1] <= b[0] or a == b for a, b in zip(context, context[1:], strict=False)), label
                span = ref.char_span_to_token_span(offsets, sequence_ids, char_start, char_end)
                assert (span is None) == (case[0] in ABSENT), label
        finally:
            checks.use_seed(None)


# ------------------------------------------------------------------------------------------------
# char_span_to_token_span as learners write it

# (The solution, the reference and the variants against both checks: tests/test_exercises.py)


def test_forms_and_other_mistakes_are_explained():
    solution = define("char_span_to_token_span")

    def as_list(*args):
        span = solution(*args)
        return None if span is None else [np.int64(span[0]), span[1]]

    def floats(*args):
        span = solution(*args)
        return None if span is None else (float(span[0]), float(span[1]))

    def three(*args):
        span = solution(*args)
        return None if span is None else (*span, 0)

    def cls_when_absent(*args):
        return solution(*args) or (0, 0)

    def marks_in_place(offsets, sequence_ids, char_start, char_end):
        sequence_ids[0] = 0
        return solution(offsets, sequence_ids, char_start, char_end)

    def none_offsets_crash(offsets, sequence_ids, char_start, char_end):
        offsets[0][0]  # noqa: B018 - reads the first offset, None in make_windows' windows
        return solution(offsets, sequence_ids, char_start, char_end)

    for check in CHECKS:
        check(as_list)
        expect_named(check, floats, "first and last are token positions (int)")
        expect_named(check, three, "return (first, last), two token positions, or None")
        expect_named(check, cls_when_absent, "is a special token")
        expect_named(check, marks_in_place, "changed its argument sequence_ids")
        expect_named(check, none_offsets_crash, visible.NONE_OFFSETS)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_checks_are_sound(check):
    expect_sound(check, [AlwaysEqual(), (AlwaysEqual(), AlwaysEqual()), "span", {"first": 1}, [1, 2, 3]])


def test_the_hidden_check_through_the_wire(tmp_path, capsys):
    """Every window in one request; a wrong cell is named through the wire as in this process."""
    namespace = dict(NOTEBOOK_NAMES)
    exec(solutions()["char_span_to_token_span"], namespace)
    kernel = InProcessKernel(tmp_path, namespace)
    remote = Remote(kernel)
    hidden.grade_char_span_to_token_span(remote.lookup("char_span_to_token_span"))
    assert kernel.requests <= 4 and capsys.readouterr().out.count("\N{CHECK MARK}") == 1
    wrong = variants_of("char_span_to_token_span", False)[1]
    exec(wrong.source, namespace)
    expect_named(hidden.grade_char_span_to_token_span, remote.lookup("char_span_to_token_span"),
                 wrong.message)


def test_a_visible_failure_without_a_named_mistake_says_why():
    offsets, sequence_ids = [(0, 0), (0, 3), (4, 9), (0, 0)], [None, 1, 1, None]
    with pytest.raises(CheckFailed, match="first is the context token whose characters hold char_start = 4"):
        visible.expect_span((1, 2), (2, 2), offsets, sequence_ids, 4, 9)
    with pytest.raises(CheckFailed, match="the window's context holds the whole answer"):
        visible.expect_span(None, (2, 2), offsets, sequence_ids, 4, 9)
    with pytest.raises(CheckFailed, match=r"covers the characters \[0, 9\) only"):
        visible.expect_span((2, 2), None, offsets, sequence_ids, 4, 12)
