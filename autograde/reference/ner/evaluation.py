"""Reference entity-level evaluation (assignment 06), as seqeval 1.2.2 counts with mode="strict", scheme=IOB2.

Strict IOB2: an entity starts at a B-X tag and continues over the I-X tags (same type) right after it; any other
I- tag (after O, at the start, after another type) belongs to no entity. Entities are (type, first, last) with
`last` included. Scores count entities, exact in type and boundaries within their own sentence; a ratio with
nothing to divide by is 0.0, as with seqeval's zero_division=0. tests/test_06_ner_evaluation.py compares both
functions with seqeval on thousands of random sequences.

Only the standard library here: `entity_spans` is shipped into the student's kernel as a reference part.
"""

from __future__ import annotations


def entity_spans(tags) -> set[tuple[str, int, int]]:
    """The entities of one sentence's IOB2 tags under strict IOB2."""
    spans, kind, first = set(), None, 0
    for i, tag in enumerate([*tags, "O"]):  # the final "O" closes an entity that runs to the end
        prefix, _, name = str(tag).partition("-")
        if kind is not None and not (prefix == "I" and name == kind):
            spans.add((kind, first, i - 1))
            kind = None
        if prefix == "B":
            kind, first = name, i
    return spans


def ratios(correct: int, predicted: int, true: int) -> dict[str, float]:
    """Precision, recall, F1 and support from counts; 0.0 where there is nothing to divide by."""
    precision = correct / predicted if predicted else 0.0
    recall = correct / true if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "support": true}


def sentence_entities(sentences, spans=entity_spans) -> set[tuple[int, str, int, int]]:
    """Every entity of every sentence as (sentence index, type, first, last)."""
    return {(index, *span) for index, tags in enumerate(sentences) for span in spans(tags)}


def entity_scores(true_tags, predicted_tags) -> dict[str, dict[str, float]]:
    """{type: {"precision", "recall", "f1", "support"}} for every type found in either, and "micro" over all."""
    if len(true_tags) != len(predicted_tags):
        raise ValueError(f"{len(true_tags)} true sentences but {len(predicted_tags)} predicted ones")
    true, predicted = sentence_entities(true_tags), sentence_entities(predicted_tags)
    scores = {}
    for kind in sorted({entity[1] for entity in true | predicted}):
        true_kind = {entity for entity in true if entity[1] == kind}
        predicted_kind = {entity for entity in predicted if entity[1] == kind}
        scores[kind] = ratios(len(true_kind & predicted_kind), len(predicted_kind), len(true_kind))
    scores["micro"] = ratios(len(true & predicted), len(predicted), len(true))
    return scores
