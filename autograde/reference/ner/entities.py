"""Reference of assignment 06's last step, predictions back to text: the entities of one encoded text with their
character offsets. A word's tag is the prediction on its first token, its characters run from its first token's
start to its last token's end, and the entities are the strict IOB2 spans of the word tags."""

from __future__ import annotations

from autograde.reference.ner.evaluation import entity_spans


def words_of(offsets, word_ids, label_ids, id_to_label) -> list[tuple[int, int, str]]:
    """(start, end, tag) of each word, in order; special tokens and padding (word id None) are no word."""
    words: list[list] = []
    previous = None
    for (start, end), word, label in zip(offsets, word_ids, label_ids, strict=True):
        if word is None:
            continue
        if word != previous:
            words.append([int(start), int(end), id_to_label[int(label)]])
        else:
            words[-1][1] = int(end)
        previous = word
    return [tuple(word) for word in words]


def entities_of(text: str, words, spans) -> list[dict]:
    """Entities {"type", "start", "end", "text"} (end exclusive) of word spans (type, first, last), by start."""
    entities = []
    for kind, first, last in sorted(spans, key=lambda span: span[1]):
        start, end = words[first][0], words[last][1]
        entities.append({"type": kind, "start": start, "end": end, "text": text[start:end]})
    return entities


def predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label) -> list[dict]:
    """The entities of one tokenized text (one window), in order of their start."""
    words = words_of(offsets, word_ids, label_ids, id_to_label)
    return entities_of(text, words, entity_spans([tag for _, _, tag in words]))
