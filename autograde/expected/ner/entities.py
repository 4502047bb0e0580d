"""Expected values of the predictions_to_entities check of assignment 06 (`course_lib.ner.entities`): each case's
text tokenized by the course's tokenizer (offsets, word ids with -1 for None), the predicted label ids made from the
words' tags, the reference's entities and word tags, and what the named mistakes give instead."""

from __future__ import annotations

import re

from autograde.expected.tokenizer import course_tokenizer
from autograde.mistakes import stored
from autograde.mistakes.ner import entities as mistakes
from autograde.reference.ner import entities as ref
from autograde.reference.ner.evaluation import entity_spans
from course_lib.ner.entities import PREDICTION_CASES, case_label_set

# Words as a corpus tokenizer would split them: abbreviations (U.S.), words joined by - . , ' (Washington-based,
# 2.1), other characters one by one.
WORD = re.compile(r"[A-Za-z](?:\.[A-Za-z])+\.|\w+(?:[-.,']\w+)*|[^\w\s]")


def tokenize(tokenizer, text: str, split: str, first_word: int, special_tokens: bool = True):
    """(offsets, word_ids, word spans) of `text`: raw, or word by word from `first_word` on as Tagger does; with
    [CLS] and [SEP] unless `special_tokens` is False."""
    if split == "raw":
        encoding = tokenizer.encode(text, add_special_tokens=special_tokens)
        offsets, word_ids = [tuple(o) for o in encoding.offsets], list(encoding.word_ids)
    else:
        spans = [(m.start(), m.end()) for m in WORD.finditer(text)]
        encoding = tokenizer.encode([text[s:e] for s, e in spans[first_word:]], is_pretokenized=True,
                                    add_special_tokens=special_tokens)
        word_ids = [None if w is None else w + first_word for w in encoding.word_ids]
        offsets = [(0, 0) if w is None else (spans[w][0] + s, spans[w][0] + e)
                   for w, (s, e) in zip(word_ids, encoding.offsets, strict=True)]
    words: dict[int, list[int]] = {}
    for (start, end), word in zip(offsets, word_ids, strict=True):
        if word is not None:
            words.setdefault(word, [start, end])[1] = end
    return offsets, word_ids, words


def word_tags(text: str, words: dict, marks) -> dict[int, str]:
    """Each word's tag from the marks (tag, covered text): the first covered word gets the tag, the rest I-."""
    tags, position = dict.fromkeys(words, "O"), 0
    for tag, covered in marks:
        start = text.index(covered, position)
        end = position = start + len(covered)
        inside = [w for w, (s, e) in words.items() if start <= s and e <= end]
        if not inside or words[inside[0]][0] != start or words[inside[-1]][1] != end:
            raise ValueError(f"{covered!r} does not start and end at word boundaries")
        for n, w in enumerate(inside):
            tags[w] = tag if n == 0 else "I-" + tag[2:]
    return tags


def predicted_labels(word_ids, tags, special, labels) -> list[int]:
    """A label id per token: the word's tag on its first token; on the others I-X after B-X, O after I-X and
    [CLS]'s label after O; the given labels on [CLS] and on [SEP] (and any other special token)."""
    ids, previous, specials = [], None, 0
    for word in word_ids:
        if word is None:
            tag, specials = special[min(specials, 1)], specials + 1
        elif word != previous:
            tag = tags[word]
        else:
            tag = {"B": "I-" + tags[word][2:], "I": "O"}.get(tags[word][0], special[0])
        ids.append(labels.index(tag))
        previous = word
    return ids


def _case(tokenizer, text, options, marks) -> dict:
    labels = case_label_set(options["labels"])
    offsets, word_ids, words = tokenize(tokenizer, text, options["split"], options["first_word"],
                                        options.get("special_tokens", True))
    tags = word_tags(text, words, marks)
    label_ids = predicted_labels(word_ids, tags, options["special"], labels)
    id_to_label = dict(enumerate(labels))
    args = (offsets, word_ids, label_ids, id_to_label)
    right = ref.predictions_to_entities(text, *args)
    tags_in_order = [tags[w] for w in sorted(words)]

    def rows(entities, keys=("type", "start", "end")):
        return [[entity[key] for key in keys] for entity in entities]

    wrong = stored(mistakes.ENTITIES, text, *args)
    wrong_texts = stored(mistakes.TEXTS, text, *args)
    wrong_tags = stored(mistakes.WORD_TAGS, *args)
    return {
        "offsets": [list(o) for o in offsets], "word_ids": [-1 if w is None else w for w in word_ids],
        "label_ids": label_ids, "expected": rows(right, ("type", "start", "end", "text")),
        "word_tags": tags_in_order, "spans": [list(s) for s in sorted(entity_spans(tags_in_order))],
        "mistakes": {name: {"value": rows(entry["value"]), "message": entry["message"]} for name, entry in wrong.items()
                     if rows(entry["value"]) != rows(right)},
        "text_mistakes": {name: entry for name, entry in wrong_texts.items()
                          if list(entry["value"]) != [e["text"] for e in right]},
        "wrong_word_tags": {name: entry for name, entry in wrong_tags.items() if list(entry["value"]) != tags_in_order},
    }


def generate() -> dict:
    tokenizer = course_tokenizer()
    return {"entities": {"predictions_to_entities": {
        label: _case(tokenizer, text, options, marks) for label, text, options, marks in PREDICTION_CASES}}}
