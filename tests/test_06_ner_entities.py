"""Assignment 06, predictions_to_entities: the reference finds the entities of the visible check's texts with their
exact characters (as the course's tokenizer splits them: raw, or word by word as Tagger does); the visible check
(course_lib.ner.entities) and the hidden check (autograde.checks.ner.entities) do not charge a wrong entity_spans to
predictions_to_entities, refuse always-equal objects and leave an unfinished exercise unfinished.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import numpy as np
import pytest
from test_06_ner_evaluation import (
    define,
    expect_named,
    expect_sound,
    run_quietly,
    solutions,
    variants_of,
)

from autograde.checks.ner import entities as hidden
from autograde.expected.ner import entities as generator
from autograde.expected.tokenizer import course_tokenizer
from autograde.mistakes.ner import entities as mistakes
from autograde.reference.ner import entities as ref
from course_lib.ner import LABELS
from course_lib.ner import entities as visible

from conftest import AlwaysEqual

CHECKS = (visible.check_predictions_to_entities, hidden.grade_predictions_to_entities)


# ------------------------------------------------------------------------------------------------
# The reference on the visible check's texts


@pytest.fixture(scope="module")
def tokenizer():
    return course_tokenizer()


def entities_of_case(tokenizer, number: int) -> list[tuple[str, str]]:
    label, text, options, marks = visible.PREDICTION_CASES[number]
    labels = visible.case_label_set(options["labels"])
    offsets, word_ids, words = generator.tokenize(tokenizer, text, options["split"], options["first_word"])
    label_ids = generator.predicted_labels(word_ids, generator.word_tags(text, words, marks), options["special"],
                                           labels)
    found = ref.predictions_to_entities(text, offsets, word_ids, label_ids, dict(enumerate(labels)))
    assert all(entity["text"] == text[entity["start"]:entity["end"]] for entity in found)
    return [(entity["type"], entity["text"]) for entity in found]


def test_reference_on_raw_text(tokenizer):
    """Punctuation, a hyphenated name, "U.S.", a word of many pieces and a stray I- tag, in two sentences."""
    assert entities_of_case(tokenizer, 0) == [("PER", "Ngozi Okonjo-Iweala"), ("LOC", "U.S."), ("LOC", "Düsseldorf"),
                                              ("ORG", "Rheinmetall"), ("LOC", "New York")]


def test_reference_on_a_later_window_of_words(tokenizer):
    """Words as Tagger gives them: "Washington-based" is one word of several pieces; B-ORG I-PER is ORG alone."""
    assert entities_of_case(tokenizer, 1) == [("MISC", "Washington-based"), ("ORG", "Goldman"), ("ORG", "Bundesbank"),
                                              ("PER", "Schwarzenegger"), ("LOC", "Reykjavík")]
    label, text, options, _ = visible.PREDICTION_CASES[1]
    _, word_ids, _ = generator.tokenize(tokenizer, text, options["split"], options["first_word"])
    assert min(w for w in word_ids if w is not None) == options["first_word"] > 0


def test_reference_with_another_label_set(tokenizer):
    assert entities_of_case(tokenizer, 2) == [("PER", "Ada Lovelace"), ("DATE", "27 November 1852")]


def test_reference_by_hand():
    text = "Rio de Janeiro!"
    offsets = [(0, 0), (0, 2), (2, 3), (4, 6), (7, 14), (14, 15), (0, 0)]
    word_ids = [None, 0, 0, 1, 2, 3, None]
    label_ids = np.array([1, 5, 2, 6, 6, 0, 3])
    assert ref.predictions_to_entities(text, offsets, word_ids, label_ids, LABELS) == [
        {"type": "LOC", "start": 0, "end": 14, "text": "Rio de Janeiro"}]
    assert ref.predictions_to_entities("", [(0, 0), (0, 0)], [None, None], [1, 1], LABELS) == []


def test_every_named_mistake_is_seen_by_the_visible_check():
    from course_lib.expected import load

    cases = load("06_ner", "entities", "predictions_to_entities").values()
    for kind, catalogue in (("mistakes", mistakes.ENTITIES), ("text_mistakes", mistakes.TEXTS),
                            ("wrong_word_tags", mistakes.WORD_TAGS)):
        assert {name for case in cases for name in case[kind]} == {mistake.name for mistake in catalogue}, kind


# ------------------------------------------------------------------------------------------------
# predictions_to_entities as learners write it

# (The solution, the reference and the variants against both checks: tests/test_exercises.py)


@pytest.mark.parametrize("spans", variants_of("entity_spans", False), ids=lambda v: v.what)
def test_a_wrong_entity_spans_costs_predictions_to_entities_nothing(spans, capsys):
    fn = define("predictions_to_entities", spans_source=spans.cell(solutions()["entity_spans"]))
    for check in CHECKS:
        run_quietly(check, fn, capsys)


def test_forms_and_changed_arguments_are_explained():
    solution = define("predictions_to_entities")

    def reversed_order(*args):
        return solution(*args)[::-1]

    def tuples(*args):
        return [tuple(entity.values()) for entity in solution(*args)]

    def drops_specials_in_place(text, offsets, word_ids, label_ids, id_to_label):
        result = solution(text, offsets, word_ids, label_ids, id_to_label)
        while None in word_ids:
            del offsets[word_ids.index(None)]
            word_ids.remove(None)
        return result

    for check in CHECKS:
        expect_named(check, reversed_order, "in order of start")
        expect_named(check, tuples, "each entity is a dict with the keys")
        expect_named(check, drops_specials_in_place, "changed its argument offsets")


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_checks_are_sound(check):
    expect_sound(check, [AlwaysEqual(), [AlwaysEqual()], None,
                         [dict.fromkeys(visible.KEYS, AlwaysEqual())]])
