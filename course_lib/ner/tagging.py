"""Assignment 06, back to text: run a fine-tuned tagger on any text and show its entities.

`Tagger(model, tokenizer, to_entities)` splits the text into words the way the corpus was tokenized (so a
word such as "U.S." or "Washington-based" is one word, as in training), encodes the words with WordPiece,
predicts a label for every piece and hands the pieces' character offsets, word ids and predictions to
`to_entities` (the learner's `predictions_to_entities`). Long texts are cut into windows of whole words,
preferably at sentence ends. `entities_html` draws the entities in the text, one colour per type.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

import numpy as np

from course_lib.ner import ENTITY_TYPES, LABELS

# One colour per entity type, light enough for black text; an unknown type falls back to grey.
COLOURS = {"PER": "#ffd6a5", "ORG": "#a0c4ff", "LOC": "#b9fbc0", "MISC": "#e4c1f9"}
SENTENCE_END = {".", "!", "?"}


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """The corpus tokenizer's words of `text` with their character start and end (end exclusive)."""
    from course_lib.ner.corpus import tokenize

    spans, position = [], 0
    for word in tokenize(text):
        start = text.find(word, position)
        if start < 0:  # the tokenizer only splits, so every word is found in order
            raise ValueError(f"the tokenizer returned {word!r}, which is not in the text after position {position}")
        spans.append((word, start, start + len(word)))
        position = start + len(word)
    return spans


def _windows(spans: Sequence[tuple[str, int, int]], pieces: Sequence[int], room: int) -> list[range]:
    """Ranges of word indices whose pieces fit in `room`, cut after a sentence end when one is near."""
    windows, first = [], 0
    while first < len(spans):
        used, last = 0, first
        while last < len(spans) and used + pieces[last] <= room:
            used += pieces[last]
            last += 1
        if last == first:  # one word longer than a window: it goes alone and is cut by truncation
            last = first + 1
        elif last < len(spans):
            ends = [i + 1 for i in range(first, last) if spans[i][0] in SENTENCE_END]
            if ends and ends[-1] - first >= (last - first) // 2:
                last = ends[-1]
        windows.append(range(first, last))
        first = last
    return windows


class Tagger:
    """`tagger(text)` -> entities `{"type", "start", "end", "text"}` found by a fine-tuned token classifier."""

    def __init__(self, model, tokenizer, to_entities: Callable, *, labels: Sequence[str] = LABELS,
                 max_length: int = 128):
        self.model, self.tokenizer, self.to_entities = model, tokenizer, to_entities
        self.id_to_label = dict(enumerate(labels))
        self.max_length = max_length

    def encode(self, text: str) -> list[dict]:
        """One dict per window: model inputs (1, n) and the pieces' offsets in `text` and word ids."""
        spans = word_spans(text)
        if not spans:
            return []
        words = [word for word, _, _ in spans]
        pieces = [len(encoding.ids) for encoding in self.tokenizer.encode_batch(
            [[word] for word in words], is_pretokenized=True, add_special_tokens=False)]
        windows = []
        for window in _windows(spans, pieces, self.max_length - 2):
            encoding = self.tokenizer.encode(words[window.start:window.stop], is_pretokenized=True)
            ids = encoding.ids[:self.max_length - 1] + encoding.ids[-1:] if len(encoding.ids) > self.max_length \
                else encoding.ids
            keep = len(ids) - 1  # pieces kept before the final [SEP]
            word_ids = [None if w is None else w + window.start for w in encoding.word_ids[:keep]] + [None]
            offsets = [(0, 0) if w is None else (spans[w][1] + start, spans[w][1] + end)
                       for w, (start, end) in zip(word_ids, encoding.offsets[:keep] + [(0, 0)], strict=True)]
            windows.append({
                "inputs": {"token_ids": np.array([ids], np.int32), "segment_ids": np.zeros((1, len(ids)), np.int32),
                           "padding_mask": np.ones((1, len(ids)), np.int32)},
                "offsets": offsets, "word_ids": word_ids,
            })
        return windows

    def predict(self, text: str) -> list[dict]:
        """The windows of `encode`, each with `label_ids`: the most likely label of every piece."""
        return self.predict_many([text])[0]

    def predict_many(self, texts: Sequence[str], *, batch_size: int = 32) -> list[list[dict]]:
        """`predict` for every text, with the windows of all the texts run through the model together, in
        batches of similar lengths (one call per window is several times slower)."""
        from course_lib.heads import INPUT_NAMES
        from course_lib.ner.training import predict_labels

        if isinstance(texts, str):
            raise TypeError("predict_many takes a list of texts; for one text, call predict(text)")
        encoded = [self.encode(text) for text in texts]
        windows = [window for text_windows in encoded for window in text_windows]
        if not windows:
            return encoded
        lengths = [window["inputs"]["token_ids"].shape[1] for window in windows]
        inputs = {name: np.zeros((len(windows), max(lengths)), np.int32) for name in INPUT_NAMES}
        for row, window in enumerate(windows):
            for name, values in window["inputs"].items():
                inputs[name][row, :values.shape[1]] = values[0]
        label_ids = predict_labels(self.model, inputs, batch_size, bucket=8)
        for window, labels, length in zip(windows, label_ids, lengths, strict=True):
            window["label_ids"] = labels[:length].tolist()
        return encoded

    def __call__(self, text: str) -> list[dict]:
        """The entities of `text`, sorted by where they start."""
        if not isinstance(text, str):
            raise TypeError(f"tag(text) takes one string (got {type(text).__name__}); for a list of texts, call "
                            "tag.many(texts)")
        return self.many([text])[0]

    def many(self, texts: Sequence[str], *, batch_size: int = 32) -> list[list[dict]]:
        """The entities of each text of `texts`, the texts' windows batched together: far faster than one
        call per text."""
        results = []
        for text, windows in zip(texts, self.predict_many(texts, batch_size=batch_size), strict=True):
            entities = []
            for window in windows:
                entities += self.to_entities(text, window["offsets"], window["word_ids"], window["label_ids"],
                                             self.id_to_label)
            results.append(sorted(entities, key=lambda entity: entity["start"]))
        return results

    def tag_sentences(self, sentences: Sequence) -> list[list[str]]:
        """IOB2 tags for the words of already tokenized sentences (`.tokens`, as read from a CoNLL file): each
        sentence's words are joined with spaces, tagged as text, and every entity's words get its tags."""
        texts = [" ".join(sentence.tokens) for sentence in sentences]
        tags = []
        for sentence, entities in zip(sentences, self.many(texts), strict=True):
            starts = np.cumsum([0] + [len(word) + 1 for word in sentence.tokens[:-1]])
            here = ["O"] * len(sentence.tokens)
            for entity in entities:
                inside = [i for i, start in enumerate(starts) if entity["start"] <= start < entity["end"]]
                if inside:
                    here[inside[0]] = "B-" + entity["type"]
                    here[inside[0] + 1:inside[-1] + 1] = ["I-" + entity["type"]] * (len(inside) - 1)
            tags.append(here)
        return tags

    def show(self, text: str):
        """The text with its entities highlighted (an IPython HTML object)."""
        from IPython.display import HTML

        return HTML(entities_html(text, self(text)))


def entities_html(text: str, entities: Sequence[dict], *, legend: bool = True) -> str:
    """`text` as HTML with each entity on a background of its type's colour and the type after it."""
    parts, position = [], 0
    for entity in sorted(entities, key=lambda e: e["start"]):
        start, end = int(entity["start"]), int(entity["end"])
        if start < position or end > len(text) or start >= end:
            raise ValueError(f"entity {entity} overlaps the previous one or lies outside the text "
                             f"(length {len(text)})")
        colour = COLOURS.get(entity["type"], "#dddddd")
        parts.append(html.escape(text[position:start]))
        parts.append(f'<mark style="background:{colour}; padding:0 0.2em; border-radius:0.3em">'
                     f'{html.escape(text[start:end])}<sub style="font-size:70%; margin-left:0.2em">'
                     f'{html.escape(entity["type"])}</sub></mark>')
        position = end
    parts.append(html.escape(text[position:]))
    body = f'<div style="line-height:2; color:black; background:white; padding:0.3em">{"".join(parts)}</div>'
    if not legend:
        return body
    keys = " ".join(f'<mark style="background:{COLOURS[kind]}; padding:0 0.3em">{kind}</mark>'
                    for kind in ENTITY_TYPES)
    return body + f'<div style="font-size:85%; color:black">{keys}</div>'
