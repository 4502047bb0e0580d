"""Assignment 06, what goes wrong: entity-level confusion between types, and the sentences with most errors.

Entities are compared by their exact word span. A span the model found with the right boundaries but the
wrong type is a confusion between types; a true entity whose span the model did not find at all is "missed"
(which includes boundary errors), a predicted span that matches no true one is "spurious".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from course_lib.ner import ENTITY_TYPES

MISSED, SPURIOUS = "missed", "spurious"


def _by_span(spans) -> dict[tuple[int, int], str]:
    return {(first, last): kind for kind, first, last in spans}


def type_confusion(true_tags: Sequence[Sequence[str]], predicted_tags: Sequence[Sequence[str]],
                   spans: Callable, types: Sequence[str] = ENTITY_TYPES) -> tuple[np.ndarray, list[str], list[str]]:
    """Counts (rows: true type, then "spurious"; columns: predicted type, then "missed") and the labels.

    `spans(tags)` gives a sentence's entities as (type, first, last), e.g. the learner's `entity_spans`."""
    if len(true_tags) != len(predicted_tags):
        raise ValueError(f"{len(true_tags)} true sentences but {len(predicted_tags)} predicted ones")
    rows, columns = [*types, SPURIOUS], [*types, MISSED]
    counts = np.zeros((len(rows), len(columns)), dtype=np.int64)
    for true, predicted in zip(true_tags, predicted_tags, strict=True):
        gold, guess = _by_span(spans(true)), _by_span(spans(predicted))
        for span, kind in gold.items():
            found = guess.get(span)
            counts[rows.index(kind), columns.index(found) if found in columns else columns.index(MISSED)] += 1
        for span, kind in guess.items():
            if span not in gold and kind in columns:
                counts[rows.index(SPURIOUS), columns.index(kind)] += 1
    return counts, rows, columns


def plot_type_confusion(counts: np.ndarray, rows: Sequence[str], columns: Sequence[str], *, ax=None):
    """The confusion table as a heatmap with the counts written in each cell."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5))
    shown = np.log1p(counts)  # a log scale keeps the rare confusions visible beside the diagonal
    ax.imshow(shown, cmap="Blues")
    for (i, j), value in np.ndenumerate(counts):
        ax.text(j, i, str(value), ha="center", va="center", color="white" if shown[i, j] > shown.max() / 2 else "black")
    ax.set_xticks(range(len(columns)), columns)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title("Entities by exact span (colour: log count)")
    return ax


def worst_sentences(tokens: Sequence[Sequence[str]], true_tags, predicted_tags, spans: Callable,
                    count: int = 5) -> list[dict]:
    """The `count` sentences with the most entity errors, each with its missed and spurious entities."""
    found = []
    for index, (words, true, predicted) in enumerate(zip(tokens, true_tags, predicted_tags, strict=True)):
        gold, guess = set(spans(true)), set(spans(predicted))
        missed, spurious = gold - guess, guess - gold
        if missed or spurious:
            found.append({"index": index, "errors": len(missed) + len(spurious), "sentence": " ".join(words),
                          "missed": [_show(words, e) for e in sorted(missed, key=lambda e: e[1])],
                          "spurious": [_show(words, e) for e in sorted(spurious, key=lambda e: e[1])]})
    found.sort(key=lambda item: (-item["errors"], item["index"]))
    return found[:count]


def _show(words: Sequence[str], entity: tuple[str, int, int]) -> str:
    kind, first, last = entity
    return f"{' '.join(words[first:last + 1])} ({kind})"
