"""Assignment 06, back to text: the visible check of `predictions_to_entities` and its diagnostics (shared with
the hidden check in autograde.checks.ner.entities).

The check's texts are tokenized by the course's tokenizer when the expected values are generated
(autograde/expected/ner/entities.py): as raw text, or word by word the way `Tagger` does it (a later window of a
text, whose word ids do not start at 0). Predicted labels are made from each word's tag: its first token gets the
tag, its other tokens and the special tokens something else, as a model's untrained outputs there would be. The
learner's `entity_spans` is replaced by a stand-in that answers for the right word tags and names the usual
mistakes in the tags it is given.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from course_lib.calls import expect_unchanged, named
from course_lib.checking import CheckFailed, call_learner, parts_replaced, passed
from course_lib.expected import load as load_expected
from course_lib.ner import LABELS
from course_lib.ner.evaluation import COPY_TAGS, show, span_key, spans_double

STEM = "06_ner"
KEYS = ("type", "start", "end", "text")
FIRST_TOKEN = "a word's tag is id_to_label[label] of the prediction on its first token"
RULE = ("a word's tag is the prediction on its first token, a word runs from its first token's start to its last "
        "token's end, the entities are the strict IOB2 spans of the word tags, and each is {\"type\", \"start\", "
        "\"end\", \"text\"} with end exclusive and text == text[start:end], in order of start")


def _is_index(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def read_entities(result, call: str) -> list[dict]:
    """The learner's entities as dicts of the four keys, or a failure saying what is wrong with their form."""
    if result is None:
        raise CheckFailed(f"{call} returned None: did you forget to return the list of entities?")
    if not isinstance(result, (list, tuple)):
        raise CheckFailed(f"{call} should return a list of dicts {{\"type\", \"start\", \"end\", \"text\"}}, got "
                          f"{type(result).__name__}")
    entities = []
    for number, entity in enumerate(result):
        if not isinstance(entity, Mapping):
            raise CheckFailed(f"{call}[{number}] is a {type(entity).__name__}: each entity is a dict with the keys "
                              f"{', '.join(KEYS)}")
        missing = [key for key in KEYS if key not in entity]
        if missing:
            raise CheckFailed(f"{call}[{number}] has no {', '.join(map(repr, missing))}: each entity has the keys "
                              f"{', '.join(KEYS)}")
        if not (isinstance(entity["type"], str) and isinstance(entity["text"], str)):
            raise CheckFailed(f"{call}[{number}]: \"type\" and \"text\" are strings, got {entity['type']!r} and "
                              f"{entity['text']!r}")
        if not (_is_index(entity["start"]) and _is_index(entity["end"])):
            raise CheckFailed(f"{call}[{number}]: \"start\" and \"end\" are character offsets (int), got "
                              f"{entity['start']!r} and {entity['end']!r}")
        entities.append({"type": str(entity["type"]), "start": int(entity["start"]), "end": int(entity["end"]),
                         "text": str(entity["text"])})
    return entities


def _spans(entities) -> list[tuple[str, int, int]]:
    return [(str(e["type"]), int(e["start"]), int(e["end"])) for e in entities]


def format_spans(spans, text: str) -> str:
    return "[" + ", ".join(f"{kind} {start}:{end} {text[start:end]!r}" for kind, start, end in spans) + "]"


def format_entities(entities, text: str) -> str:
    return format_spans(_spans(entities), text)


def expect_entities(result, expected, text: str, *, mistakes=(), text_mistakes=(), label: str = "") -> None:
    """Compare the learner's entities with `expected`. `mistakes` are (wrong entities, explanation), compared by
    type, start and end; `text_mistakes` are (wrong texts, explanation), compared once those are right."""
    call = f"[{label}] predictions_to_entities(...)" if label else "predictions_to_entities(...)"
    got = read_entities(result, call)
    shown = f" (text {text!r}; expected {format_entities(expected, text)}, got {format_entities(got, text)})" \
        if len(text) <= 200 else ""
    if _spans(got) != _spans(expected):
        if sorted(_spans(got), key=lambda s: (s[1], s[2], s[0])) == _spans(expected):
            raise CheckFailed(f"{call} has the right entities in another order: return them in order of start{shown}")
        matching = list(dict.fromkeys(message for wrong, message in mistakes if _spans(got) == _spans(wrong)))
        if matching:
            raise named(f"{call} is wrong: {matching[0]}{shown}", len(matching))
        missing = [s for s in _spans(expected) if s not in _spans(got)]
        extra = [s for s in _spans(got) if s not in _spans(expected)]
        why = "; ".join(filter(None, [f"missing {format_spans(missing, text)}" if missing else "",
                                      f"not entities {format_spans(extra, text)}" if extra else ""]))
        raise CheckFailed(f"{call} is wrong: {why} ({RULE}){shown}")
    texts = [entity["text"] for entity in got]
    right = [entity["text"] for entity in expected]
    if texts != right:
        matching = list(dict.fromkeys(message for wrong, message in text_mistakes if texts == list(wrong)))
        number = next(i for i, (a, b) in enumerate(zip(texts, right, strict=True)) if a != b)
        why = matching[0] if matching else "the text of an entity is text[start:end], from the original text"
        raise named(f"{call}[{number}][\"text\"] is {texts[number]!r}, expected {right[number]!r}: {why}",
                    len(matching))


def tags_diagnosis(expected_tags, wrong_tags, caller: str = "predictions_to_entities"):
    """For the stand-in entity_spans: what is wrong with the word tags it was given. `wrong_tags` are (word tags
    of a named mistake, explanation); `caller` names the call in the message."""
    def diagnose(tags):
        key = span_key(tags)
        why = next((message for wrong, message in wrong_tags if span_key(wrong) == key), None)
        if why is None and len(tags) != len(expected_tags):
            why = f"one tag per word: {len(expected_tags)} words here (the tokens whose word id is not None, " \
                  "grouped by word id)"
        return (f"{caller} gave entity_spans the wrong word tags: {why or FIRST_TOKEN}. Expected "
                f"{show(expected_tags)}, got {show(tags)}")
    return diagnose


# Each case: a label, the text, how it is tokenized ("raw": the text as one string; "words": word by word as
# Tagger does, from word `first_word` on; "special_tokens" False: without [CLS] and [SEP]), the words' tags as (tag,
# words it covers) in the text's order (the first of them gets the tag, the others I- of its type), the labels of
# [CLS] and [SEP], the label set and containers ("id_to_label" "reversed": a dict from the last id down).
PREDICTION_CASES = [
    ("two sentences tokenized as raw text",
     "Ngozi Okonjo-Iweala left the U.S. for Düsseldorf on 3 March. Rheinmetall, a New York-based firm, gained 3.5%.",
     {"split": "raw", "first_word": 0, "special": ("B-MISC", "I-LOC"), "labels": "LABELS dict",
      "label_ids": "list"},
     [("B-PER", "Ngozi Okonjo-Iweala"), ("B-LOC", "U.S."), ("B-LOC", "Düsseldorf"), ("B-ORG", "Rheinmetall"),
      ("B-LOC", "New York"), ("I-MISC", "3.5%")]),
    ("words as Tagger splits them, a later window (word ids from 5)",
     "Shares fell 2.1% on Friday. Washington-based analysts at Goldman Sachs said the Bundesbank and "
     "Schwarzenegger agreed in Reykjavík.",
     {"split": "words", "first_word": 5, "special": ("B-PER", "I-ORG"), "labels": "LABELS tuple",
      "label_ids": "array"},
     [("B-MISC", "Washington-based"), ("B-ORG", "Goldman"), ("I-PER", "Sachs"), ("B-ORG", "Bundesbank"),
      ("B-PER", "Schwarzenegger"), ("B-LOC", "Reykjavík")]),
    ("another label set, with a DATE type",
     "Ada Lovelace died on 27 November 1852 in London, aged 36.",
     {"split": "raw", "first_word": 0, "special": ("B-PER", "I-DATE"),
      "labels": ("O", "B-DATE", "I-DATE", "B-PER", "I-PER"), "label_ids": "list"},
     [("B-PER", "Ada Lovelace"), ("B-DATE", "27 November 1852"), ("I-PER", "36")]),
    ("words as Tagger splits them, a zero-width space that gets no token (the word ids skip it), id_to_label a dict "
     "from the last id down",
     "Grace Hopper \u200b joined the U.S. Navy in 1943.",
     {"split": "words", "first_word": 0, "special": ("B-ORG", "I-LOC"), "labels": "LABELS dict",
      "id_to_label": "reversed", "label_ids": "list"},
     [("B-PER", "Grace Hopper"), ("B-LOC", "U.S."), ("B-ORG", "Navy")]),
    ("encoded without [CLS] and [SEP], a type named WORK-OF-ART on the first word",
     "Mrs Dalloway, a novel by Virginia Woolf, appeared in 1925.",
     {"split": "raw", "first_word": 0, "special": ("O", "O"), "special_tokens": False,
      "labels": ("O", "B-PER", "I-PER", "B-WORK-OF-ART", "I-WORK-OF-ART"), "label_ids": "array"},
     [("B-WORK-OF-ART", "Mrs Dalloway"), ("B-PER", "Virginia Woolf")]),
]


def case_label_set(labels) -> tuple[str, ...]:
    return tuple(LABELS) if isinstance(labels, str) else tuple(labels)


def case_inputs(case: Mapping, options: Mapping):
    """(offsets, word_ids, label_ids, id_to_label) of a stored case, in the case's containers."""
    offsets = [(int(start), int(end)) for start, end in case["offsets"]]
    word_ids = [None if w < 0 else int(w) for w in case["word_ids"]]  # stored with -1 for None
    label_ids = [int(label) for label in case["label_ids"]]
    if options["label_ids"] == "array":
        label_ids = np.array(label_ids, dtype=np.int64)
    labels = case_label_set(options["labels"])
    id_to_label = labels if options["labels"] == "LABELS tuple" else dict(enumerate(labels))
    if options.get("id_to_label") == "reversed":
        id_to_label = dict(reversed(list(enumerate(labels))))
    return offsets, word_ids, label_ids, id_to_label


def check_predictions_to_entities(predictions_to_entities) -> None:
    """predictions_to_entities on 5 tokenized texts (a later window, other labels, a word without a token, no special
    tokens), with a stand-in entity_spans (your own is checked on its own)."""
    expected = load_expected(STEM, "entities", "predictions_to_entities")
    for label, text, options, _ in PREDICTION_CASES:
        case = expected[label]
        inputs = case_inputs(case, options)
        given = [list(inputs[0]), list(inputs[1]), np.copy(inputs[2]) if isinstance(inputs[2], np.ndarray)
                 else list(inputs[2]), inputs[3]]
        wrong_tags = [(entry["value"], entry["message"]) for entry in case["wrong_word_tags"].values()]
        double = spans_double({span_key(case["word_tags"]): case["spans"]}, "predictions_to_entities",
                              tags_diagnosis(list(case["word_tags"]), wrong_tags,
                                             f"[{label}] predictions_to_entities"))
        with parts_replaced(predictions_to_entities, entity_spans=double):
            try:
                result = call_learner(predictions_to_entities, text, *given)
            except CheckFailed as failure:
                if failure.__cause__ is None:  # the stand-in entity_spans' diagnosis names the case already
                    raise
                raise CheckFailed(f"[{label}] {failure}") from failure.__cause__  # a crash: on which text
        for argument, before, after in zip(("offsets", "word_ids", "label_ids"), inputs, given, strict=False):
            expect_unchanged("predictions_to_entities", argument, before, after, label, advice=COPY_TAGS)
        mistakes = [(entry["value"], entry["message"]) for entry in case["mistakes"].values()]
        text_mistakes = [(entry["value"], entry["message"]) for entry in case["text_mistakes"].values()]
        expected_entities = [dict(zip(KEYS, entity, strict=True)) for entity in case["expected"]]
        wrong = [([dict(zip(KEYS[:3], e, strict=True)) for e in value], message) for value, message in mistakes]
        expect_entities(result, expected_entities, text, mistakes=wrong, text_mistakes=text_mistakes, label=label)
    passed(f"predictions_to_entities finds the entities and their characters in {len(PREDICTION_CASES)} tokenized "
           "texts")
