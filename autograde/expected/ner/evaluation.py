"""Expected values of the entity_spans and entity_scores checks of assignment 06 (`course_lib.ner.evaluation`):
the reference on the checks' sentences, the results of the named mistakes that differ from it, and every
sentence's entities for the stand-in entity_spans of the entity_scores check."""

from __future__ import annotations

from autograde.mistakes import stored
from autograde.mistakes.ner import evaluation as mistakes
from autograde.reference.ner import evaluation as ref
from course_lib.ner.evaluation import SCORE_CASES, SPAN_CASES


def ordered(spans) -> list[list]:
    """Spans as a list in a fixed order (a JSON file holds no sets)."""
    return [list(span) for span in sorted(spans, key=lambda s: (s[1], s[2], s[0]))]


def _spans_case(tags) -> dict:
    right = ref.entity_spans(tags)
    wrong = stored(mistakes.SPANS, tags)
    return {"expected": ordered(right),
            "mistakes": {name: {"value": ordered(entry["value"]), "message": entry["message"]}
                         for name, entry in wrong.items() if entry["value"] != right}}


def _scores_case(true_tags, predicted_tags) -> dict:
    right = ref.entity_scores(true_tags, predicted_tags)
    wrong = stored(mistakes.SCORES, true_tags, predicted_tags)
    return {"expected": right, "mistakes": {name: entry for name, entry in wrong.items() if entry["value"] != right}}


def generate() -> dict:
    sentences = {tuple(tags) for _, true, predicted in SCORE_CASES for tags in [*true, *predicted]}
    return {"evaluation": {
        "entity_spans": {label: _spans_case(tags) for label, tags in SPAN_CASES},
        "entity_scores": {
            "cases": {label: _scores_case(true, predicted) for label, true, predicted in SCORE_CASES},
            "spans": [[list(tags), ordered(ref.entity_spans(tags))] for tags in sorted(sentences)],
        },
    }}
