"""Named mistakes of predictions_to_entities (assignment 06). ENTITIES take (text, offsets, word_ids, label_ids,
id_to_label) and give the entities that mistake produces; the checks compare their (type, start, end). TEXTS give
wrong entity texts, compared once the spans are right. WORD_TAGS give the word tags a mistake hands to entity_spans
(the visible check's stand-in for entity_spans recognises them)."""

from __future__ import annotations

from autograde.mistakes import Mistake
from autograde.mistakes.ner.evaluation import lenient_spans
from autograde.reference.ner import entities as ref
from autograde.reference.ner.evaluation import entity_spans
from course_lib.ner import LABELS

FIRST_TOKEN = "a word's tag is the prediction on its first token"


def words(offsets, word_ids, label_ids, id_to_label, *, tag_from="first", end_from="last", specials=False,
          labels=None):
    """(start, end, tag) of each word as a mistake sees them: the tag from the word's first or last token, the end
    from its first or last token, special tokens as words (word id None, like any other) or not, tags from `labels`
    instead of id_to_label."""
    lookup = id_to_label if labels is None else labels
    found: list[list] = []
    previous = object()
    for (start, end), word, label in zip(offsets, word_ids, label_ids, strict=True):
        if word is None and not specials:
            continue
        try:
            tag = lookup[int(label)]
        except (IndexError, KeyError):
            raise ValueError(f"label id {label} is not in the label list") from None
        if word != previous:  # with `specials`, [SEP] and the padding after it make one word
            found.append([int(start), int(end), tag])
        else:
            if end_from == "last":
                found[-1][1] = int(end)
            if tag_from == "last":
                found[-1][2] = tag
        previous = word
    return [tuple(word) for word in found]


def _entities(spans=entity_spans, **how):
    def produce(text, offsets, word_ids, label_ids, id_to_label):
        found = words(offsets, word_ids, label_ids, id_to_label, **how)
        return ref.entities_of(text, found, spans([tag for _, _, tag in found]))
    return produce


def _is_labels(id_to_label) -> bool:
    try:
        return len(id_to_label) == len(LABELS) and all(id_to_label[i] == label for i, label in enumerate(LABELS))
    except (KeyError, IndexError):
        return False


def _from_labels(produce):
    """A mistake that reads the tags from LABELS: it changes nothing where id_to_label is LABELS."""
    def wrong(*args):
        if _is_labels(args[-1]):
            raise ValueError("id_to_label is LABELS: reading LABELS instead changes nothing")
        return produce(*args)
    return wrong


def _end_inclusive(text, offsets, word_ids, label_ids, id_to_label):
    right = ref.predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label)
    return [{**entity, "end": entity["end"] - 1} for entity in right]


ENTITIES = (
    Mistake("tag_from_last_token", f"a word's tag was taken from its last token; {FIRST_TOKEN} (the model was "
            "trained on first tokens only: the other tokens' labels were -100)", _entities(tag_from="last")),
    Mistake("word_cut", "the entity ends where the first token of its last word ends, cutting that word (\"Wash\" "
            "for \"Washington\"); a word runs from its first token's start to its last token's end",
            _entities(end_from="first")),
    Mistake("end_inclusive", "each end is one character short: `end` is exclusive, the end offset of the last "
            "token (text[start:end] is the entity)", _end_inclusive),
    Mistake("special_tokens_as_words", "[CLS], [SEP] or padding (word id None, offsets (0, 0)) were treated as words "
            "and tagged; skip the tokens whose word id is None", _entities(specials=True)),
    Mistake("lenient", "an I- tag after O (or after another type) started an entity: use strict IOB2, the same rule "
            "as entity_spans (only B-X starts an entity)", _entities(spans=lenient_spans)),
    Mistake("labels_hard_coded", "the tags come from LABELS instead of the id_to_label argument, which may hold "
            "other labels (the check gives other label sets): tag = id_to_label[label_id]",
            _from_labels(_entities(labels=LABELS))),
)


def _joined(text, offsets, word_ids, label_ids, id_to_label):
    found = words(offsets, word_ids, label_ids, id_to_label)
    return [" ".join(text[start:end] for start, end, _ in found if entity["start"] <= start and end <= entity["end"])
            for entity in ref.predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label)]


TEXTS = (
    Mistake("words_joined", "the entity's text was rebuilt from its words joined with spaces, which changes the "
            "text (\"U . S .\" for \"U.S.\", \"York - based\"); take text[start:end] from the original text",
            _joined),
)


def _word_tags(**how):
    def produce(offsets, word_ids, label_ids, id_to_label):
        return [tag for _, _, tag in words(offsets, word_ids, label_ids, id_to_label, **how)]
    return produce


WORD_TAGS = (
    Mistake("tag_from_last_token", ENTITIES[0].message, _word_tags(tag_from="last")),
    Mistake("special_tokens_as_words", ENTITIES[3].message, _word_tags(specials=True)),
    Mistake("labels_hard_coded", ENTITIES[5].message, _from_labels(_word_tags(labels=LABELS))),
)
