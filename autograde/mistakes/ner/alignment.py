"""Named mistakes of align_labels_with_tokens (assignment 06). Each takes (word_labels, word_ids) and gives the
per-token labels that mistake produces; the right answer is in autograde.reference.ner.alignment."""

from __future__ import annotations

from autograde.mistakes import Mistake
from autograde.reference.ner import alignment as ref

IGNORED = ref.IGNORED
RULE = "the word's label on its first token, -100 on its other tokens and wherever the word id is None"


def _last_subtoken(word_labels, word_ids):
    ids = list(word_ids)
    return [int(word_labels[word]) if word is not None and (i + 1 == len(ids) or ids[i + 1] != word) else IGNORED
            for i, word in enumerate(ids)]


def _every_subtoken(word_labels, word_ids):
    return [IGNORED if word is None else int(word_labels[word]) for word in word_ids]


def _continuation_as_inside(word_labels, word_ids):
    """The further exercise's convention: B-X (an odd id in LABELS) becomes I-X (the next id) on later pieces."""
    labels, previous = [], None
    for word in word_ids:
        if word is None:
            labels.append(IGNORED)
        else:
            label = int(word_labels[word])
            labels.append(label + 1 if word == previous and label % 2 == 1 else label)
        previous = word
    return labels


def _special_as(value_of):
    def produce(word_labels, word_ids):
        right = ref.align_labels_with_tokens(word_labels, word_ids)
        if all(word is not None for word in word_ids) or len(word_labels) == 0:
            raise ValueError("no special token, or no word whose label it could take")
        return [value_of(word_labels) if word is None else label for word, label in zip(word_ids, right, strict=True)]
    return produce


def _shifted(by: int):
    def produce(word_labels, word_ids):
        right = ref.align_labels_with_tokens(word_labels, word_ids)
        return right[by:] + [IGNORED] * by if by > 0 else [IGNORED] * -by + right[:by]
    return produce


ALIGNMENT = (
    Mistake("last_subtoken", f"the label is on each word's last token instead of its first; {RULE}", _last_subtoken),
    Mistake("every_subtoken", "every token of a word carries the word's label (the further exercise \"label every "
            f"subtoken\" is another convention); here: {RULE}", _every_subtoken),
    Mistake("continuation_as_inside", "every token of a word is labelled, B-X turned into I-X on the later tokens: "
            f"that is the further exercise's convention, not this one; {RULE}", _continuation_as_inside),
    Mistake("special_as_outside", "[CLS], [SEP] and padding (word id None) got the label 0 (O); they get -100, so "
            "that the loss ignores them", _special_as(lambda labels: 0)),
    Mistake("special_as_first_word", "[CLS], [SEP] and padding (word id None) got the first word's label (None "
            "treated as word 0?); they get -100", _special_as(lambda labels: int(labels[0]))),
    Mistake("special_as_last_word", "[CLS], [SEP] and padding (word id None) got the last word's label (None "
            "turned into -1, which indexes the last word?); they get -100",
            _special_as(lambda labels: int(labels[-1]))),
    Mistake("shifted_left", "the labels are one token too early, as if [CLS] were not there: token i takes the "
            "label meant for token i + 1; follow word_ids position by position", _shifted(1)),
    Mistake("shifted_right", "the labels are one token too late (one -100 too many before them for [CLS]?): "
            "follow word_ids position by position", _shifted(-1)),
)
