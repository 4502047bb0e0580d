"""Assignment 06: the entities of annotated sentences - counts for the data card and the notebook, and the
strings the corpus labels two ways (which the data card must justify)."""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from course_lib.ner import ENTITY_TYPES
from course_lib.ner.conll import Sentence

CARD = Path(__file__).resolve().parent / "data" / "DATA_CARD.md"


def gold_entities(sentence: Sentence) -> list[tuple[str, int, int]]:
    """(type, start, end exclusive) of each entity of a sentence in valid IOB2 (as read_conll and parse_markup
    return them); an I- tag that does not continue an entity is an error here, not an entity."""
    found = []
    for i, tag in enumerate(sentence.tags):
        if tag.startswith("B-"):
            found.append([tag[2:], i, i + 1])
        elif tag.startswith("I-"):
            if not found or found[-1][2] != i or found[-1][0] != tag[2:]:
                raise ValueError(f"{tag} at word {i} does not continue an entity (not IOB2): {sentence}")
            found[-1][2] = i + 1
    return [tuple(entity) for entity in found]


def statistics(sentences: Sequence[Sentence]) -> dict:
    """Counts for plots and the data card: sentences, tokens, documents, entities per type, and histograms
    {length: count} of entity lengths (tokens) and sentence lengths."""
    entities, entity_lengths = Counter({kind: 0 for kind in ENTITY_TYPES}), Counter()
    for sentence in sentences:
        for kind, start, end in gold_entities(sentence):
            entities[kind] += 1
            entity_lengths[end - start] += 1
    return {
        "sentences": len(sentences),
        "tokens": sum(len(sentence) for sentence in sentences),
        "documents": len({sentence.document for sentence in sentences}),
        "entities": dict(entities),
        "entity_lengths": dict(sorted(entity_lengths.items())),
        "sentence_lengths": dict(sorted(Counter(len(sentence) for sentence in sentences).items())),
    }


def _sentences_of(items) -> list[Sentence]:
    if isinstance(items, dict):
        items = [item for value in items.values() for item in value]
    return [s for item in items for s in (item.sentences if hasattr(item, "sentences") else [item])]


def label_occurrences(sentences_or_docs) -> dict[str, dict[str, list[str]]]:
    """For every entity string (its tokens joined by spaces, exact case): label -> the document id of each
    occurrence, with label "O" for each place where the same tokens stand untagged (every token O)."""
    sentences = _sentences_of(sentences_or_docs)
    found: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for sentence in sentences:
        for kind, start, end in gold_entities(sentence):
            found[" ".join(sentence.tokens[start:end])][kind].append(sentence.document)
    lengths = sorted({key.count(" ") + 1 for key in found})
    for sentence in sentences:
        outside = [tag == "O" for tag in sentence.tags]
        for n in lengths:
            for start in range(len(sentence) - n + 1):
                if all(outside[start:start + n]):
                    key = " ".join(sentence.tokens[start:start + n])
                    if key in found:
                        found[key]["O"].append(sentence.document)
    return {key: dict(labels) for key, labels in found.items()}


def inconsistent_strings(sentences_or_docs) -> dict[str, dict[str, int]]:
    """Every entity string labelled two or more ways in the corpus: with two entity types, or as an entity in
    one place and untagged ("O") in another (`May` the month and `[PER May]`). {string: {label: count}}."""
    return {key: {label: len(docs) for label, docs in sorted(labels.items())}
            for key, labels in sorted(label_occurrences(sentences_or_docs).items()) if len(labels) > 1}


def justified_strings(card: str | os.PathLike | None = None) -> dict[str, set[str]]:
    """The data card's table of strings with two labels: {string: labels it may have}. Rows are
    `| string | labels | why |`, labels written like `LOC, ORG` (O for untagged)."""
    path = Path(card) if card is not None else CARD
    text = path.read_text(encoding="utf-8")
    section = text.split("## Strings with two labels", 1)
    if len(section) < 2:
        raise ValueError(f"{path} has no '## Strings with two labels' section")
    table = {}
    for line in section[1].split("\n## ", 1)[0].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not line.lstrip().startswith("|") or set(cells[0]) <= set("-: ") or cells[0] == "string":
            continue
        table[cells[0].strip("`")] = set(re.findall(r"\b(?:PER|ORG|LOC|MISC|O)\b", cells[1]))
    return table


def unjustified_strings(sentences_or_docs, card: str | os.PathLike | None = None) -> dict[str, dict[str, list[str]]]:
    """The inconsistent strings whose labels the card's table does not all allow: {string: {label: doc ids}}."""
    allowed = justified_strings(card)
    occurrences = label_occurrences(sentences_or_docs)
    return {key: occurrences[key] for key, labels in inconsistent_strings(sentences_or_docs).items()
            if not set(labels) <= allowed.get(key, set())}
