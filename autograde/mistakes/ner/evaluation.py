"""Named mistakes of entity_spans and entity_scores (assignment 06).

SPANS take a sentence's tags and give the set of (type, first, last) that mistake produces; SCORES take
(true_tags, predicted_tags) and give the dict of scores. `lenient_spans` is conlleval's default reading (seqeval
without mode="strict"), which the tests compare with seqeval's own; it also serves the mistakes of
predictions_to_entities."""

from __future__ import annotations

from autograde.mistakes import Mistake
from autograde.reference.ner import evaluation as ref

STRICT = "under strict IOB2 only B-X starts an entity, and it continues over the I-X tags right after it"


def _spans(*, starts, continues, flush=True, last_inclusive=True):
    """A span reader: `starts(prefix, kind, open_kind, previous_tag, tag)` and `continues(prefix, kind, open_kind)`."""
    def read(tags):
        tags = [str(tag) for tag in tags]
        spans, open_kind, first = set(), None, 0
        for i, tag in enumerate([*tags, "O"] if flush else tags):
            prefix, _, kind = tag.partition("-")
            if open_kind is not None and not continues(prefix, kind, open_kind):
                spans.add((open_kind, first, i - 1 if last_inclusive else i))
                open_kind = None
            if starts(prefix, kind, open_kind, tags[i - 1] if i else "O", tag):
                open_kind, first = kind, i
        return spans
    return read


def _strict_continues(prefix, kind, open_kind):
    return prefix == "I" and kind == open_kind


def _b_starts(prefix, kind, open_kind, previous, tag):
    return prefix == "B"


lenient_spans = _spans(starts=lambda prefix, kind, open_kind, previous, tag: prefix == "B" or (
    prefix == "I" and open_kind is None), continues=_strict_continues)

SPANS = (
    Mistake("end_exclusive", "the last index is one past the entity: `last` is the index of the entity's last word, "
            "included (a one-word entity at index 3 is (type, 3, 3))",
            _spans(starts=_b_starts, continues=_strict_continues, last_inclusive=False)),
    Mistake("lenient", "an I- tag that continues no entity of its type (after O, at the start or after another "
            f"type) started a new entity, as conlleval's default (lenient) mode does; {STRICT}: such I- tags belong "
            "to no entity", lenient_spans),
    Mistake("stray_run_kept", "the stray I- tag (one that continues no entity) was dropped, but the I- tags after "
            f"it became an entity; {STRICT}, so the whole run of I- tags after O belongs to no entity",
            _spans(starts=lambda prefix, kind, open_kind, previous, tag: prefix == "B" or (
                prefix == "I" and open_kind is None and previous == tag), continues=_strict_continues)),
    Mistake("types_merged", "B-X followed by I-Y (another type) was read as one entity; an I- tag continues an "
            "entity only when its type is the entity's type",
            _spans(starts=_b_starts, continues=lambda prefix, kind, open_kind: prefix == "I")),
    Mistake("b_continues", "B-X right after an entity of type X was read as its continuation; every B- tag begins "
            "a new entity",
            _spans(starts=lambda prefix, kind, open_kind, previous, tag: prefix == "B" and open_kind is None,
                   continues=lambda prefix, kind, open_kind: prefix in ("B", "I") and kind == open_kind)),
    Mistake("last_lost", "an entity that runs to the end of the sentence is missing: after the loop, close the entity "
            "still open (or loop over a copy of the tags with \"O\" appended)",
            _spans(starts=_b_starts, continues=_strict_continues, flush=False)),
)


# ----------------------------------------------------------------------------------------------
# entity_scores


def _per_type(true: set, predicted: set, kind_at: int = 1) -> dict:
    """Scores of entity sets, per type (the type at position `kind_at` of each entity) and micro-averaged."""
    scores = {}
    for kind in sorted({entity[kind_at] for entity in true | predicted}):
        t = {entity for entity in true if entity[kind_at] == kind}
        p = {entity for entity in predicted if entity[kind_at] == kind}
        scores[kind] = ref.ratios(len(t & p), len(p), len(t))
    scores["micro"] = ref.ratios(len(true & predicted), len(predicted), len(true))
    return scores


def _edit(change):
    """The reference's scores, each entry changed by `change(entry)`."""
    def produce(true_tags, predicted_tags):
        return {kind: change(dict(entry)) for kind, entry in ref.entity_scores(true_tags, predicted_tags).items()}
    return produce


def _macro(true_tags, predicted_tags):
    scores = ref.entity_scores(true_tags, predicted_tags)
    kinds = [kind for kind in scores if kind != "micro"]
    if not kinds:
        raise ValueError("no entity type: macro and micro agree")
    for name in ("precision", "recall", "f1"):
        scores["micro"][name] = sum(scores[kind][name] for kind in kinds) / len(kinds)
    return scores


def _tokens(sentences) -> set[tuple[int, int, str, str]]:
    return {(s, i, str(tag).partition("-")[2], str(tag)) for s, tags in enumerate(sentences)
            for i, tag in enumerate(tags) if str(tag) != "O"}


def _token_level(true_tags, predicted_tags):
    return _per_type(_tokens(true_tags), _tokens(predicted_tags), kind_at=2)


def _no_sentence_index(true_tags, predicted_tags):
    pooled = [{span for tags in sentences for span in ref.entity_spans(tags)}
              for sentences in (true_tags, predicted_tags)]
    return _per_type(*pooled, kind_at=0)


def _swapped(entry):
    entry["precision"], entry["recall"] = entry["recall"], entry["precision"]
    return entry


def _f1_mean(entry):
    entry["f1"] = (entry["precision"] + entry["recall"]) / 2
    return entry


def _support_predicted(true_tags, predicted_tags):
    scores = ref.entity_scores(true_tags, predicted_tags)
    predicted = ref.sentence_entities(predicted_tags)
    for kind, entry in scores.items():
        entry["support"] = len(predicted) if kind == "micro" else sum(1 for e in predicted if e[1] == kind)
    return scores


SCORES = (
    Mistake("macro", "the \"micro\" scores are the mean of the per-type scores (the macro average); micro-averaging "
            "counts the entities of every type together: precision = correct / predicted over all types", _macro),
    Mistake("token_level", "the scores count tagged words, not entities; an entity is correct only if its type, "
            "first word and last word all match a true entity (compare the sets of entity_spans)", _token_level),
    Mistake("no_sentence_index", "entities are compared without their sentence: an entity of one sentence matched "
            "(or merged with) one at the same words of another sentence; add the sentence index to each span, "
            "(sentence, type, first, last)", _no_sentence_index),
    Mistake("swapped", "precision and recall are swapped: precision = correct / predicted entities, recall = "
            "correct / true entities", _edit(_swapped)),
    Mistake("f1_mean", "F1 is the arithmetic mean of precision and recall; it is their harmonic mean, "
            "2 * precision * recall / (precision + recall)", _edit(_f1_mean)),
    Mistake("support_predicted", "the support counts the predicted entities; it is the number of true entities",
            _support_predicted),
)
