"""Assignment 07, squad_em_f1: the reference scores as SQuAD's evaluation does (by hand: normalisation, Counter
overlap, the best gold answer, empty texts); the visible check (course_lib.qa.metrics) and the hidden check
(autograde.checks.qa.metrics) refuse always-equal objects and leave an unfinished exercise unfinished.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import numpy as np
import pytest
from in_process_kernel import InProcessKernel
from test_06_ner_evaluation import expect_named, expect_sound
from test_07_qa_spans import NOTEBOOK_NAMES, define, solutions, variants_of

from autograde.checks.qa import metrics as hidden
from autograde.mistakes.qa import metrics as mistakes
from autograde.reference.qa import metrics as ref
from autograde.remote import Remote
from course_lib.qa import metrics as visible

from conftest import AlwaysEqual

CHECKS = (visible.check_squad_em_f1, hidden.grade_squad_em_f1)


# ------------------------------------------------------------------------------------------------
# The reference


def test_normalisation_by_hand():
    assert ref.normalize_answer("  The Øresund   Bridge!\n") == "øresund bridge"
    assert ref.normalize_answer("double-track, a.k.a. 'the' railway") == "doubletrack aka railway"
    assert ref.normalize_answer("another theatre AN apple") == "another theatre apple"
    assert ref.normalize_answer("The... a!") == ""


def test_scores_by_hand():
    assert ref.squad_em_f1("the Øresund Bridge", ["Øresund bridge."]) == (1.0, 1.0)
    em, f1 = ref.squad_em_f1("in July 2000", ["1 July 2000"])  # 2 of 3 words shared each way
    assert em == 0.0 and f1 == pytest.approx(2 / 3)
    em, f1 = ref.squad_em_f1("railway and railway", ["a railway and another railway"])  # P = 1, R = 3/4
    assert em == 0.0 and f1 == pytest.approx(6 / 7)
    assert ref.squad_em_f1("Copenhagen and Malmö", ("Malmö", "Copenhagen and Malmö")) == (1.0, 1.0)
    assert ref.squad_em_f1("", []) == (1.0, 1.0) and ref.squad_em_f1("x", []) == (0.0, 0.0)
    assert ref.squad_em_f1("The", ["a"]) == (1.0, 1.0) and ref.squad_em_f1("", ["x"]) == (0.0, 0.0)
    assert all(type(score) is float for score in ref.squad_em_f1("x", ["x y"]))
    # The same words in another order: F1 1.0 against both gold answers, exact match against one, first or last.
    assert ref.squad_em_f1("car the red", ["the red car", "car the red"]) == (1.0, 1.0)
    assert ref.squad_em_f1("the red car", ["the red car", "car the red"]) == (1.0, 1.0)
    assert ref.squad_em_f1("car red", ["red car"]) == (0.0, 1.0)


def test_the_scorer_of_the_mistakes_is_the_reference_unchanged():
    rng = np.random.default_rng(5)
    for _ in range(400):
        prediction, golds = hidden.random_pair(rng)
        assert mistakes.scores(prediction, golds) == pytest.approx(ref.squad_em_f1(prediction, golds), abs=1e-12)


def test_every_named_mistake_is_seen_by_the_visible_check():
    from course_lib.expected import load

    cases = load("07_qa", "metrics", "squad_em_f1").values()
    assert {name for case in cases for name in case["mistakes"]} == {mistake.name for mistake in mistakes.METRICS}


@pytest.mark.parametrize("seed", [None, 3, 20261123])
def test_every_named_mistake_shows_in_the_hidden_checks_pairs(seed):
    from autograde import checks

    checks.use_seed(seed)
    try:
        rng = checks.rng(721)
        pairs = list(hidden.EDGE_CASES) + [hidden.random_pair(rng) for _ in range(hidden.RANDOM_CASES)]
    finally:
        checks.use_seed(None)
    for mistake in mistakes.METRICS:
        assert any(np.max(np.abs(np.subtract(mistake.produce(p, g), ref.squad_em_f1(p, g)))) > 1e-9
                   for p, g in pairs), mistake.name


# ------------------------------------------------------------------------------------------------
# squad_em_f1 as learners write it

# (The solution, the reference and the variants against both checks: tests/test_exercises.py)


@pytest.mark.thorough
def test_named_mistakes_fail_naming_themselves():
    for mistake in mistakes.METRICS:
        for check in CHECKS:
            expect_named(check, mistake.produce, mistake.message)


@pytest.mark.thorough
def test_forms_and_other_mistakes_are_explained():
    solution = define("squad_em_f1")

    def percentages(prediction, gold_answers):
        em, f1 = solution(prediction, gold_answers)
        return 100 * em, 100 * f1

    def as_dict(prediction, gold_answers):
        return dict(zip(("em", "f1"), solution(prediction, gold_answers), strict=True))

    def crashes_without_gold(prediction, gold_answers):
        return max(solution(prediction, [gold]) for gold in gold_answers)

    def divides_by_zero(prediction, gold_answers):
        if not prediction.strip(" .").replace("The", ""):
            return 1 / 0
        return solution(prediction, gold_answers)

    def fills_in_the_empty_string(prediction, gold_answers):
        if isinstance(gold_answers, list) and not gold_answers:
            gold_answers.append("")
        return solution(prediction, gold_answers)

    def some_overlap_matches(prediction, gold_answers):
        f1 = solution(prediction, gold_answers)[1]
        return float(f1 > 0), f1

    for check in CHECKS:
        expect_named(check, percentages, "not a ratio between 0.0 and 1.0")
        expect_named(check, as_dict, f"should return a tuple (exact_match, f1), got dict: {visible.FORM}")
        expect_named(check, lambda p, g: tuple(str(score) for score in solution(p, g)), "a str; return (exact_match")
        expect_named(check, crashes_without_gold, "with no gold answer at all the right answer is the empty string")
        expect_named(check, divides_by_zero, visible.EMPTY)
        expect_named(check, fills_in_the_empty_string, "changed its argument gold_answers")
        expect_named(check, some_overlap_matches, "exact match is 1.0 when the prediction equals one of the gold")


@pytest.mark.thorough
def test_ints_and_bools_are_scores_too(capsys):
    """SQuAD's script gives exact match as a bool, and its F1 is the int 0 when no word is shared: floats, ints and
    Python bools from 0 to 1 pass, as the exercise's text says; a NumPy bool is refused by both checks alike (the
    hidden one cannot read it back from the kernel), naming what to do."""
    solution = define("squad_em_f1")

    def as_bool(prediction, gold_answers):
        em, f1 = solution(prediction, gold_answers)
        return em == 1.0, f1

    def as_int(prediction, gold_answers):
        em, f1 = solution(prediction, gold_answers)
        return int(em), int(f1) if f1 in (0.0, 1.0) else f1

    def as_numpy(prediction, gold_answers):
        em, f1 = solution(prediction, gold_answers)
        return np.int64(em), np.float32(f1) if f1 in (0.0, 1.0) else f1

    def as_numpy_bool(prediction, gold_answers):
        em, f1 = solution(prediction, gold_answers)
        return np.bool_(em), f1

    for fn in (as_bool, as_int, as_numpy):
        for check in CHECKS:
            check(fn)
    assert capsys.readouterr().out.count("\N{CHECK MARK}") == 6
    for check in CHECKS:
        expect_named(check, as_numpy_bool, "the exact match is a NumPy bool (numpy.bool_")


def test_exact_match_of_the_gold_answer_with_the_best_f1_is_named():
    """Exact match taken from the gold answer that wins on F1, ties going to the first or to the last of them, fails
    both checks naming the mistake: both hold gold answers with the same words in another order, in both orders."""
    message = next(mistake.message for mistake in mistakes.METRICS if mistake.name == "exact_of_best_f1")

    def first_of_ties(prediction, gold_answers):
        golds = list(gold_answers) or [""]
        best = max(golds, key=lambda gold: ref.squad_em_f1(prediction, [gold])[1])
        return ref.squad_em_f1(prediction, [best])

    def last_of_ties(prediction, gold_answers):
        golds = list(gold_answers) or [""]
        best = max(reversed(golds), key=lambda gold: ref.squad_em_f1(prediction, [gold])[1])
        return ref.squad_em_f1(prediction, [best])

    for fn in (first_of_ties, last_of_ties):
        for check in CHECKS:
            expect_named(check, fn, message)


@pytest.mark.thorough
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_checks_are_sound(check):
    expect_sound(check, [AlwaysEqual(), (AlwaysEqual(), AlwaysEqual()), None, (1.0,), "1.0", {1.0, 0.5}])


def test_the_hidden_check_through_the_wire(tmp_path, capsys):
    namespace = dict(NOTEBOOK_NAMES)
    exec(solutions()["squad_em_f1"], namespace)
    kernel = InProcessKernel(tmp_path, namespace)
    remote = Remote(kernel)
    hidden.grade_squad_em_f1(remote.lookup("squad_em_f1"))
    assert kernel.requests <= 4 and capsys.readouterr().out.count("\N{CHECK MARK}") == 1
    wrong = variants_of("squad_em_f1", False)[0]
    exec(wrong.source, namespace)
    expect_named(hidden.grade_squad_em_f1, remote.lookup("squad_em_f1"), wrong.message)
    # A Python bool travels back from the kernel as a bool and passes; a NumPy bool does not, and is named.
    exec(solutions()["squad_em_f1"].replace("return best_em, best_f1", "return best_em == 1.0, best_f1"), namespace)
    hidden.grade_squad_em_f1(remote.lookup("squad_em_f1"))
    assert capsys.readouterr().out.count("\N{CHECK MARK}") == 1
    exec(solutions()["squad_em_f1"].replace("return best_em, best_f1", "return np.bool_(best_em), best_f1"), namespace)
    expect_named(hidden.grade_squad_em_f1, remote.lookup("squad_em_f1"), "the exact match is a NumPy bool")
