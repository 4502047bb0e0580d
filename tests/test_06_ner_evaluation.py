"""Assignment 06, entity_spans and entity_scores: the reference agrees with seqeval's strict IOB2 report (and the
lenient mistake with its default mode) on thousands of random sequences; the visible checks
(course_lib.ner.evaluation) and the hidden checks (autograde.checks.ner.evaluation) refuse always-equal objects and
leave an unfinished exercise unfinished. Also the helpers shared by the three text-side tests: the notebook's
solution cells defined as in the notebook, and their variants.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from cell_checks import beside_companion
from in_process_kernel import InProcessKernel

from autograde.checks.ner import evaluation as hidden
from autograde.mistakes.ner import evaluation as mistakes
from autograde.reference.ner import evaluation as ref
from autograde.remote import Remote
from autograde.variants import solution_cells, variants
from course_lib import calls
from course_lib.checking import CheckFailed
from course_lib.ner import ENTITY_TYPES, LABELS
from course_lib.ner import evaluation as visible

from conftest import AlwaysEqual

STEM = "06_ner"
NOTEBOOK_NAMES = {"np": np, "LABELS": LABELS, "ENTITY_TYPES": ENTITY_TYPES}


@functools.cache
def solutions() -> dict[str, str]:
    return solution_cells(STEM)


def define(name: str, source: str | None = None, *, spans_source: str | None = None):
    """The notebook's function `name` (its solution cell, or `source`) next to the solution's entity_spans (or
    `spans_source`), which entity_scores and predictions_to_entities call."""
    return beside_companion(STEM, "entity_spans", NOTEBOOK_NAMES, name, source, companion_source=spans_source)


def variants_of(name: str, correct: bool) -> list:
    return [v for v in variants(STEM) if v.name == name and v.correct == correct]


def variant_function(variant):
    return define(variant.name, variant.cell(solutions()[variant.name]))


def run_quietly(check, fn, capsys) -> str:
    """Run a check that must pass; return what it printed (one check mark, nothing on stderr)."""
    check(fn)
    out = capsys.readouterr()
    assert out.out.count("\N{CHECK MARK}") == 1 and out.err == "", (out.out, out.err)
    return out.out


def expect_named(check, fn, fragment: str) -> str:
    with pytest.raises(CheckFailed) as failure:
        check(fn)
    message = str(failure.value)
    assert fragment in message, f"{check.__module__}.{check.__name__}: {message}"
    return message


def expect_sound(check, wrong_shapes) -> None:
    """No always-equal object passes `check`, and an unfinished exercise stays unfinished."""
    for value in wrong_shapes:
        with pytest.raises(CheckFailed):
            check(lambda *args, value=value: value)

    def stub(*args):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        check(stub)


def message_of(catalogue, name: str) -> str:
    return next(mistake.message for mistake in catalogue if mistake.name == name)


# ------------------------------------------------------------------------------------------------
# The reference against seqeval


SEQEVAL_TAGS = ["O"] + [f"{prefix}-{kind}" for kind in ("PER", "LOC", "MISC", "WORK-OF-ART", "X") for prefix in "BI"]


def random_sequences(rng, count: int, longest: int):
    return [list(rng.choice(SEQEVAL_TAGS, size=int(rng.integers(0, longest + 1)))) for _ in range(count)]


def test_entity_spans_is_seqeval_strict_iob2():
    from seqeval.scheme import IOB2, Tokens

    rng = np.random.default_rng(0)
    for tags in random_sequences(rng, 5000, 14) + [random_tags for random_tags in hidden.EDGE_CASES]:
        strict = {(entity.tag, entity.start, entity.end - 1) for entity in Tokens(tags, IOB2).entities}
        assert ref.entity_spans(tags) == strict, tags


def test_the_lenient_mistake_is_seqeval_default_mode():
    from seqeval.metrics.sequence_labeling import get_entities

    rng = np.random.default_rng(1)
    for tags in random_sequences(rng, 1500, 14):
        assert mistakes.lenient_spans(tags) == set(get_entities(tags)), tags


def seqeval_scores(true_tags, predicted_tags) -> dict:
    from seqeval.metrics import classification_report
    from seqeval.scheme import IOB2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = classification_report(true_tags, predicted_tags, mode="strict", scheme=IOB2, output_dict=True,
                                       zero_division=0)
    renamed = {"micro avg": "micro"}
    return {renamed.get(key, key): {"precision": entry["precision"], "recall": entry["recall"],
                                    "f1": entry["f1-score"], "support": entry["support"]}
            for key, entry in report.items() if key not in ("macro avg", "weighted avg")}


def expect_same_scores(true_tags, predicted_tags):
    ours, theirs = ref.entity_scores(true_tags, predicted_tags), seqeval_scores(true_tags, predicted_tags)
    assert ours.keys() == theirs.keys(), (true_tags, predicted_tags)
    for key in ours:
        for field in visible.FIELDS:
            assert abs(ours[key][field] - theirs[key][field]) <= 1e-12, (key, field, true_tags, predicted_tags)


@pytest.mark.thorough
def test_entity_scores_is_seqevals_strict_report():
    rng = np.random.default_rng(2)
    for _ in range(1500):
        true = random_sequences(rng, int(rng.integers(1, 6)), 9)
        predicted = [list(rng.choice(SEQEVAL_TAGS, size=len(tags))) for tags in true]
        expect_same_scores(true, predicted)


@pytest.mark.parametrize("seed", [None, 3, 20261123])
def test_entity_scores_is_seqeval_on_the_hidden_checks_inputs(seed):
    """The hidden check's own random cases, at the unit tests' inputs and at grading seeds."""
    from autograde import checks

    checks.use_seed(seed)
    try:
        rng = checks.rng(621)
        kinds = hidden.kinds_for_grading(rng)
        for _, sentences, longest, how in hidden.SCORE_CASES:
            true, predicted = hidden._score_case(rng, sentences, longest, how, kinds)
            if not true:  # seqeval refuses an empty list of sentences; nothing to count: "micro" alone, all 0
                assert ref.entity_scores(true, predicted) == {"micro": ref.ratios(0, 0, 0)}
                continue
            expect_same_scores(true, predicted)
    finally:
        checks.use_seed(None)


def test_reference_by_hand():
    assert ref.entity_spans(["B-PER", "I-PER", "O", "I-LOC", "B-LOC"]) == {("PER", 0, 1), ("LOC", 4, 4)}
    assert ref.entity_spans(("B-DATE", "I-DATE", "I-PER", "I-PER")) == {("DATE", 0, 1)}
    scores = ref.entity_scores([["B-PER", "I-PER", "O", "B-LOC"], ["B-PER"]], [["B-PER", "I-PER", "O", "B-ORG"], ["O"]])
    assert scores["micro"] == {"precision": 0.5, "recall": 1 / 3, "f1": 0.4, "support": 3}
    assert scores["ORG"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    assert list(scores) == ["LOC", "ORG", "PER", "micro"]
    with pytest.raises(ValueError):
        ref.entity_scores([["O"]], [])


def test_format_scores():
    table = visible.format_scores(ref.entity_scores([["B-PER", "I-PER", "O", "B-LOC"]], [["B-PER", "I-PER", "O", "O"]]))
    lines = table.splitlines()
    assert lines[0].split() == ["precision", "recall", "f1", "support"]
    assert lines[2].split() == ["LOC", "0.000", "0.000", "0.000", "1"]
    assert lines[3].split() == ["PER", "1.000", "1.000", "1.000", "1"]
    assert lines[-1].split() == ["micro", "avg", "1.000", "0.500", "0.667", "2"]


# ------------------------------------------------------------------------------------------------
# Helpers of the checks


def test_describe_and_rebuild_keep_plain_data():
    value = {"a": {("PER", np.int64(0), 1), ("LOC", 2, 2)}, "b": [np.float32(0.5), (1, "x")], 3: frozenset({1})}
    assert calls.rebuild(calls.describe(value)) == {"a": {("PER", 0, 1), ("LOC", 2, 2)}, "b": [0.5, (1, "x")],
                                                        3: frozenset({1})}
    assert repr(calls.rebuild(calls.describe(object()))) == "<object object>"
    assert calls.same_data([("a", 1)], [("a", 1)]) and not calls.same_data([("a", 1)], [["a", 1]])


def test_call_each_keeps_a_crash_for_its_case():
    def spans(tags):
        if not tags:
            raise KeyError("empty")
        return {("PER", 0, 0)}

    outcomes = calls.call_each(spans, [["first", [["B-PER"]]], ["second", [[]]]])
    assert calls.returned(outcomes[0]) == {("PER", 0, 0)}
    with pytest.raises(CheckFailed, match=r"\[second\] spans raised KeyError"):
        calls.returned(outcomes[1])


def test_every_named_mistake_is_seen_by_the_visible_checks():
    """The generator keeps only the mistakes that differ from the right answer: each must differ somewhere."""
    from course_lib.expected import load

    expected = load(STEM, "evaluation")
    seen = {name for case in expected["entity_spans"].values() for name in case["mistakes"]}
    assert seen == {mistake.name for mistake in mistakes.SPANS}
    seen = {name for case in expected["entity_scores"]["cases"].values() for name in case["mistakes"]}
    assert seen == {mistake.name for mistake in mistakes.SCORES}


# ------------------------------------------------------------------------------------------------
# entity_spans as learners write it

SPAN_CHECKS = (visible.check_entity_spans, hidden.grade_entity_spans)
# (The solution, the reference and the variants against both checks: tests/test_exercises.py)


def test_entity_spans_that_changes_its_argument_fails():
    def spans(tags):
        tags.append("O")
        return ref.entity_spans(tags)

    for check in SPAN_CHECKS:
        expect_named(check, spans, "changed its argument tags")


@pytest.mark.parametrize("check", SPAN_CHECKS, ids=lambda c: c.__name__)
def test_entity_spans_checks_are_sound(check):
    expect_sound(check, [AlwaysEqual(), {AlwaysEqual()}, {("PER", AlwaysEqual(), AlwaysEqual())}, None,
                         [("PER", 0, 1), ("PER", 0, 1)], {(0, 1)}])


# ------------------------------------------------------------------------------------------------
# entity_scores as learners write it

SCORE_CHECKS = (visible.check_entity_scores, hidden.grade_entity_scores)
# (The solution, the reference and the variants against both checks: tests/test_exercises.py)


@pytest.mark.parametrize("spans", variants_of("entity_spans", False), ids=lambda v: v.what)
def test_a_wrong_entity_spans_costs_entity_scores_nothing(spans, capsys):
    fn = define("entity_scores", spans_source=spans.cell(solutions()["entity_spans"]))
    for check in SCORE_CHECKS:
        run_quietly(check, fn, capsys)


def test_entity_scores_checks_name_the_form():
    solution = define("entity_scores")

    def renamed(true_tags, predicted_tags):
        scores = solution(true_tags, predicted_tags)
        scores["micro avg"] = scores.pop("micro")
        return scores

    def nan(true_tags, predicted_tags):
        scores = solution(true_tags, predicted_tags)
        scores["micro"]["precision"] = float("nan")
        return scores

    def true_types_only(true_tags, predicted_tags):
        scores = solution(true_tags, predicted_tags)
        return {key: entry for key, entry in scores.items() if key == "micro" or entry["support"]}

    for check in SCORE_CHECKS:
        expect_named(check, renamed, "has no \"micro\" entry")
        expect_named(check, nan, "a ratio with nothing to divide by")
        expect_named(check, true_types_only, "one entry per entity type found in the true or the predicted tags")


@pytest.mark.parametrize("check", SCORE_CHECKS, ids=lambda c: c.__name__)
def test_entity_scores_checks_are_sound(check):
    expect_sound(check, [AlwaysEqual(), {"micro": AlwaysEqual()}, None,
                         {"micro": dict.fromkeys(visible.FIELDS, AlwaysEqual())}])


# ------------------------------------------------------------------------------------------------
# Through the grader's Remote, wire and agent (the agent served in this process instead of a sandboxed kernel)


def notebook_namespace(**replaced: str) -> dict:
    """The four text-side solutions defined in one namespace, some replaced by other cells."""
    namespace = dict(NOTEBOOK_NAMES)
    for name in ("entity_spans", "align_labels_with_tokens", "entity_scores", "predictions_to_entities"):
        exec(replaced.get(name, solutions()[name]), namespace)
    return namespace


def test_the_hidden_checks_through_the_wire(tmp_path, capsys):
    """A set returned in the kernel reaches the grader as a set; each check takes a handful of requests; the
    composites are graded with the reference entity_spans even when the learner's is wrong."""
    from autograde.checks.ner import alignment, entities

    wrong_spans = variants_of("entity_spans", False)[0]
    kernel = InProcessKernel(tmp_path, notebook_namespace(
        entity_spans=wrong_spans.cell(solutions()["entity_spans"])))
    remote = Remote(kernel)
    for name, check in [("align_labels_with_tokens", alignment.grade_align_labels_with_tokens),
                        ("entity_scores", hidden.grade_entity_scores),
                        ("predictions_to_entities", entities.grade_predictions_to_entities)]:
        before = kernel.requests
        check(remote.lookup(name))
        assert kernel.requests - before <= 8, (name, kernel.requests - before)
    assert capsys.readouterr().out.count("\N{CHECK MARK}") == 3
    expect_named(hidden.grade_entity_spans, remote.lookup("entity_spans"), wrong_spans.message)
    kernel.agent.namespace.update(notebook_namespace())
    run_quietly(hidden.grade_entity_spans, remote.lookup("entity_spans"), capsys)
