"""The inputs assignment 06's graded functions must handle (autograde/input_classes/__init__.py), in notebook order."""

from __future__ import annotations

import numpy as np

from autograde.input_classes import InputClass
from autograde.reference.ner import entities as entities_ref
from autograde.reference.ner.evaluation import entity_spans
from course_lib.ner import ENTITY_TYPES, LABELS

# ----------------------------------------------------------------------------------------------
# align_labels_with_tokens(word_labels, word_ids)


def _words(word_ids) -> list:
    """The word ids of the real tokens, in order."""
    return [word for word in word_ids if word is not None]


def _pieces(word_ids) -> dict:
    """word id -> how many tokens it has."""
    counts: dict = {}
    for word in _words(word_ids):
        counts[word] = counts.get(word, 0) + 1
    return counts


def _first_labels(a) -> list[int]:
    """The labels of the words that have a token, in order."""
    return [int(a["word_labels"][word]) for word in dict.fromkeys(_words(a["word_ids"]))]


def _skips_a_word(word_ids) -> bool:
    words = set(_words(word_ids))
    return bool(words) and words != set(range(max(words) + 1))


def _labels_in(kind, dtype: str = ""):
    def drawn(a) -> bool:
        labels = a["word_labels"]
        return type(labels) is kind and (not dtype or labels.dtype == np.dtype(dtype))
    return drawn


ALIGNMENT = (
    InputClass("no_tokens", "no token at all: word_ids is empty", lambda a: len(a["word_ids"]) == 0),
    InputClass("no_words", "a sentence of no words: word_labels empty, word_ids only None ([CLS], [SEP], padding)",
               lambda a: len(a["word_ids"]) > 0 and not _words(a["word_ids"])),
    InputClass("one_word", "a sentence of one word", lambda a: len(set(_words(a["word_ids"]))) == 1),
    InputClass("no_special_tokens", "no special token: every word id is a word's index (encoded without [CLS] and "
               "[SEP])", lambda a: len(a["word_ids"]) > 0 and None not in list(a["word_ids"])),
    InputClass("padding", "padding after [SEP]: more than two word ids None",
               lambda a: list(a["word_ids"]).count(None) > 2),
    InputClass("many_pieces", "a word split into four tokens or more",
               lambda a: max(_pieces(a["word_ids"]).values(), default=0) >= 4),
    InputClass("one_piece_each", "several words, each one token",
               lambda a: len(_pieces(a["word_ids"])) > 1 and set(_pieces(a["word_ids"]).values()) == {1}),
    InputClass("truncated", "truncation: the last words have no token, their labels are left over",
               lambda a: 0 < len(_pieces(a["word_ids"])) and max(_words(a["word_ids"])) + 1 < len(a["word_labels"])),
    InputClass("word_without_token", "a word without any token (the tokenizer drops a word of control or zero-width "
               "characters): the word ids skip it", lambda a: _skips_a_word(a["word_ids"])),
    InputClass("labels_list", "word_labels a list", _labels_in(list)),
    InputClass("labels_tuple", "word_labels a tuple", _labels_in(tuple)),
    InputClass("labels_int64_array", "word_labels a NumPy int64 array", _labels_in(np.ndarray, "int64")),
    InputClass("labels_int32_array", "word_labels a NumPy int32 array", _labels_in(np.ndarray, "int32")),
    InputClass("word_ids_tuple", "word_ids a tuple", lambda a: type(a["word_ids"]) is tuple),
    InputClass("outside_label", "a word labelled 0 (O)", lambda a: 0 in _first_labels(a)),
    InputClass("last_label", f"a word labelled {len(LABELS) - 1}, the last label id",
               lambda a: len(LABELS) - 1 in _first_labels(a)),
    InputClass("same_label_next_word", "two words in a row with the same label", lambda a: any(
        x == y for x, y in zip(_first_labels(a), _first_labels(a)[1:], strict=False))),
)

# ----------------------------------------------------------------------------------------------
# masked_token_loss(labels, logits)

IGNORE = -100


def _dtype(tensor) -> str:
    return getattr(getattr(tensor, "dtype", None), "name", "")


def _eager(a, name: str) -> np.ndarray:
    """The values of an eager tensor (a traced one has none: the predicate then raises, which is False)."""
    return np.asarray(a[name].numpy())


def _highest_absent(a) -> bool:
    labels = _eager(a, "labels").astype(np.int64)
    return bool(np.any(labels != IGNORE)) and not np.any(labels == a["logits"].shape[-1] - 1)


LOSS = (
    InputClass("int32_labels", "int32 labels", lambda a: _dtype(a["labels"]) == "int32"),
    InputClass("int64_labels", "int64 labels", lambda a: _dtype(a["labels"]) == "int64"),
    InputClass("float32_labels", "float32 labels, as Keras passes them", lambda a: _dtype(a["labels"]) == "float32"),
    InputClass("traced", "called as Keras calls a loss: in a tf.function, batch and sequence sizes unknown",
               lambda a: a["labels"].shape[0] is None and a["logits"].shape[1] is None),
    InputClass("batch_of_one", "a batch of one sentence", lambda a: a["labels"].shape[0] == 1),
    InputClass("sentence_without_labels", "a sentence without any labelled position, beside labelled ones", lambda a: (
        lambda labels: bool(np.any(labels != IGNORE)) and bool(np.any(np.all(labels == IGNORE, axis=1))))(
        _eager(a, "labels"))),
    InputClass("nothing_labelled", "every position -100 (the loss is 0)",
               lambda a: bool(np.all(_eager(a, "labels") == IGNORE))),
    InputClass("everything_labelled", "no position -100", lambda a: not np.any(_eager(a, "labels") == IGNORE)),
    InputClass("two_labels", "two labels (num_labels 2)", lambda a: a["logits"].shape[-1] == 2),
    InputClass("more_labels", f"more labels than LABELS' {len(LABELS)}", lambda a: a["logits"].shape[-1] > len(LABELS)),
    InputClass("highest_label_absent", "the last label id on no position of the batch", _highest_absent),
    InputClass("large_logits", "logits above 89 in size, whose exp overflows float32",
               lambda a: float(np.max(np.abs(_eager(a, "logits")))) > 89),
)

# ----------------------------------------------------------------------------------------------
# entity_spans(tags)


def _kind(tag) -> str:
    return str(tag).partition("-")[2]


def _kinds(sentences) -> set[str]:
    return {_kind(tag) for tags in sentences for tag in tags if str(tag) != "O"}


def _pairs(tags):
    """(previous tag, tag) of each tag; "O" before the first."""
    tags = [str(tag) for tag in tags]
    return zip(["O", *tags], tags, strict=False)


def _continues(previous: str, tag: str) -> bool:
    return previous != "O" and tag == "I-" + _kind(previous)


def _type_classes(get_kinds) -> tuple[InputClass, ...]:
    """Classes of unusual but valid entity types (any name after the first hyphen)."""
    def some(test):
        return lambda a: any(test(kind) for kind in get_kinds(a))
    return (
        InputClass("made_up_type", f"a type other than {', '.join(ENTITY_TYPES)}",
                   some(lambda kind: kind not in ENTITY_TYPES)),
        InputClass("type_with_underscore", "a type with an underscore (WORK_OF_ART)", some(lambda kind: "_" in kind)),
        InputClass("type_with_hyphen", "a type with a hyphen (B-WORK-OF-ART: the type is all after the first hyphen)",
                   some(lambda kind: "-" in kind)),
        InputClass("type_lower_case_or_digits", "a type with lower-case letters or digits (B-person, as in WNUT-17)",
                   some(lambda kind: any(c.islower() or c.isdigit() for c in kind))),
    )


SPANS = (
    InputClass("empty", "a sentence of no tags", lambda a: len(a["tags"]) == 0),
    InputClass("all_outside", "only O tags", lambda a: len(a["tags"]) > 0 and all(str(t) == "O" for t in a["tags"])),
    InputClass("one_tag", "a sentence of one tag", lambda a: len(a["tags"]) == 1),
    InputClass("entity_at_start", "an entity on the first word",
               lambda a: any(s[1] == 0 for s in entity_spans(a["tags"]))),
    InputClass("entity_at_end", "an entity running to the last word",
               lambda a: any(s[2] == len(a["tags"]) - 1 for s in entity_spans(a["tags"]))),
    InputClass("stray_inside_first", "an I- tag on the first word", lambda a: str(a["tags"][0]).startswith("I-")),
    InputClass("stray_after_outside", "an I- tag after O", lambda a: any(
        p == "O" and t.startswith("I-") for p, t in _pairs(a["tags"]))),
    InputClass("inside_of_other_type", "I-Y right after B-X or I-X", lambda a: any(
        p != "O" and t.startswith("I-") and _kind(t) != _kind(p) for p, t in _pairs(a["tags"]))),
    InputClass("adjacent_same_type", "B-X right after B-X or I-X", lambda a: any(
        p != "O" and t == "B-" + _kind(p) for p, t in _pairs(a["tags"]))),
    InputClass("long_entity", "an entity of four words or more", lambda a: any(
        s[2] - s[1] >= 3 for s in entity_spans(a["tags"]))),
    InputClass("tags_list", "the tags in a list", lambda a: type(a["tags"]) is list),
    InputClass("tags_tuple", "the tags in a tuple", lambda a: type(a["tags"]) is tuple),
    *_type_classes(lambda a: _kinds([a["tags"]])),
    InputClass("type_begins_another", "I-Y after an entity of type X whose name begins Y's (I-PERCENT after B-PER)",
               lambda a: any(p != "O" and t.startswith("I-") and _kind(t) != _kind(p) and _kind(t).startswith(_kind(p))
                             for p, t in _pairs(a["tags"]))),
)

# ----------------------------------------------------------------------------------------------
# entity_scores(true_tags, predicted_tags)


def _entities(sentences) -> set:
    return {(number, *span) for number, tags in enumerate(sentences) for span in entity_spans(tags)}


def _types(sentences) -> set[str]:
    return {entity[1] for entity in _entities(sentences)}


SCORES = (
    InputClass("no_sentences", "no sentences at all", lambda a: len(a["true_tags"]) == 0),
    InputClass("one_sentence", "one sentence", lambda a: len(a["true_tags"]) == 1),
    InputClass("many_sentences", "a hundred sentences or more", lambda a: len(a["true_tags"]) >= 100),
    InputClass("empty_sentence", "a sentence of no words among others", lambda a: len(a["true_tags"]) > 1 and any(
        len(tags) == 0 for tags in a["true_tags"])),
    InputClass("no_entity", "no entity in either (only \"micro\", all 0)",
               lambda a: not _entities(a["true_tags"]) and not _entities(a["predicted_tags"])),
    InputClass("nothing_predicted", "true entities, none predicted",
               lambda a: bool(_entities(a["true_tags"])) and not _entities(a["predicted_tags"])),
    InputClass("no_true_entity", "predicted entities, no true one",
               lambda a: not _entities(a["true_tags"]) and bool(_entities(a["predicted_tags"]))),
    InputClass("type_only_predicted", "a type only in the predictions",
               lambda a: bool(_types(a["predicted_tags"]) - _types(a["true_tags"]))),
    InputClass("type_only_true", "a type only in the true tags",
               lambda a: bool(_types(a["true_tags"]) - _types(a["predicted_tags"]))),
    InputClass("all_found", "every entity found, nothing else predicted", lambda a: bool(_entities(a["true_tags"]))
               and _entities(a["true_tags"]) == _entities(a["predicted_tags"])),
    InputClass("same_span_in_two_sentences", "the same (type, first, last) in two sentences", lambda a: (
        lambda spans: len(spans) > len({span[1:] for span in spans}))(_entities(a["true_tags"]))),
    *[c for c in _type_classes(lambda a: _types(a["true_tags"]) | _types(a["predicted_tags"]))
      if c.name in ("made_up_type", "type_with_hyphen")],
)

# ----------------------------------------------------------------------------------------------
# predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label)


def _result(a) -> list[dict]:
    return entities_ref.predictions_to_entities(a["text"], a["offsets"], a["word_ids"], a["label_ids"],
                                                a["id_to_label"])


def _label_names(id_to_label) -> list[str]:
    return list(id_to_label.values()) if isinstance(id_to_label, dict) else list(id_to_label)


def _word_bounds(a) -> list[tuple[int, int]]:
    return [(start, end) for start, end, _ in entities_ref.words_of(a["offsets"], a["word_ids"], a["label_ids"],
                                                                     a["id_to_label"])]


def _label_ids_in(kind, dtype: str = ""):
    def drawn(a) -> bool:
        ids = a["label_ids"]
        return type(ids) is kind and (not dtype or ids.dtype == np.dtype(dtype))
    return drawn


ENTITIES = (
    InputClass("no_tokens", "no token at all (an empty text encoded without special tokens)",
               lambda a: len(a["word_ids"]) == 0),
    InputClass("no_words", "no word: only [CLS] and [SEP] (an empty text)",
               lambda a: len(a["word_ids"]) > 0 and not _words(a["word_ids"])),
    InputClass("no_special_tokens", "no special token: every word id a word's (encoded without [CLS] and [SEP])",
               lambda a: len(a["word_ids"]) > 0 and None not in list(a["word_ids"])),
    InputClass("padding", "padding after [SEP]", lambda a: list(a["word_ids"]).count(None) > 2),
    InputClass("window", "a later window: word ids start above 0", lambda a: min(_words(a["word_ids"])) > 0),
    InputClass("word_without_token", "a word without any token: the word ids skip it", lambda a: any(
        b - w > 1 for w, b in zip(_words(a["word_ids"]), _words(a["word_ids"])[1:], strict=False))),
    InputClass("many_pieces", "a word of three tokens or more", lambda a: max(_pieces(a["word_ids"]).values()) >= 3),
    InputClass("non_ascii", "letters outside ASCII in the text", lambda a: any(ord(c) > 127 for c in a["text"])),
    InputClass("attached_punctuation", "a word right after another, without a space (\"U.S.\", \"3.5%\")",
               lambda a: any(end == start for (_, end), (start, _) in
                             zip(_word_bounds(a), _word_bounds(a)[1:], strict=False))),
    InputClass("entity_at_start", "an entity at the first character",
               lambda a: any(e["start"] == 0 for e in _result(a))),
    InputClass("entity_at_end", "an entity up to the last character",
               lambda a: any(e["end"] == len(a["text"]) for e in _result(a))),
    InputClass("labels_dict", "id_to_label a dict", lambda a: isinstance(a["id_to_label"], dict)),
    InputClass("labels_tuple", "id_to_label a tuple", lambda a: type(a["id_to_label"]) is tuple),
    InputClass("labels_list", "id_to_label a list", lambda a: type(a["id_to_label"]) is list),
    InputClass("labels_dict_out_of_order", "id_to_label a dict whose keys are not 0, 1, 2, ... in that order",
               lambda a: isinstance(a["id_to_label"], dict)
               and list(a["id_to_label"]) != list(range(len(a["id_to_label"])))),
    InputClass("other_label_set", "a label set other than LABELS",
               lambda a: sorted(_label_names(a["id_to_label"])) != sorted(LABELS)),
    *[c for c in _type_classes(lambda a: {_kind(tag) for tag in _label_names(a["id_to_label"]) if tag != "O"})
      if c.name == "type_with_hyphen"],
    InputClass("label_ids_list", "label_ids a list", _label_ids_in(list)),
    InputClass("label_ids_int64_array", "label_ids a NumPy int64 array", _label_ids_in(np.ndarray, "int64")),
    InputClass("label_ids_int32_array", "label_ids a NumPy int32 array", _label_ids_in(np.ndarray, "int32")),
)

CLASSIFIER = (
    InputClass("second_size", "a second backbone size: one layer, three heads, hidden size 12",
               lambda a: a["backbone"].num_layers == 1 and a["backbone"].hidden_dim == 12),
    InputClass("num_labels_not_9", "a tag set other than the course's nine labels (5 here)",
               lambda a: a["num_labels"] not in (3, 9)),
    InputClass("three_labels", "the smallest IOB2 tag set of one type: O, B-X, I-X", lambda a: a["num_labels"] == 3),
    InputClass("dropout_zero", "dropout=0.0: nothing dropped, even in training", lambda a: a["dropout"] == 0.0),
    InputClass("dropout_half", "dropout=0.5, not the default", lambda a: a["dropout"] == 0.5),
)


CLASSES = {
    "align_labels_with_tokens": ALIGNMENT,
    "build_token_classifier": CLASSIFIER,
    "masked_token_loss": LOSS,
    "entity_spans": SPANS,
    "entity_scores": SCORES,
    "predictions_to_entities": ENTITIES,
}
