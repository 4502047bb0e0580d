"""Assignment 06: the real-text corpus, stand-off annotations over Wikipedia paragraphs of SQuAD v1.1.

The text is never in the repository. `data/realtext/annotations.jsonl` holds, per paragraph of the official
`train-v1.1.json` (CC BY-SA 4.0, installed with the package SQuAD comes in, see `course_lib.squad_files`): the
article's title, the paragraph's index in it, its split, and each entity as (start, end, type), character
offsets into the paragraph. Its first line names the source file and its SHA-256. `load_realtext()` reads the
installed file, checks the checksum, cuts each paragraph into sentences and words with the course's own
tokenizer and turns the spans into IOB2 tags; a span that does not fall on word edges of the text is refused
with a message naming the paragraph.

Paragraphs annotated twice keep both annotations (`first`, `second`) beside the adjudicated one (`entities`):
`agreement()` is the entity F1 of one against the other. How the annotations were made, and the tools that made
them, are in `course_lib.ner.annotating` and the data card beside the annotations.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from course_lib.ner import ENTITY_TYPES
from course_lib.ner.conll import Sentence
from course_lib.ner.words import token_spans
from course_lib.squad_files import official_file

DATA_DIR = Path(__file__).resolve().parent / "data" / "realtext"
ANNOTATIONS = DATA_DIR / "annotations.jsonl"
SOURCE_FILE = "train-v1.1.json"
SPLITS = ("train", "validation", "test")
# Shares of the articles, by a hash of the title (so neither the file's order nor the choice of paragraphs
# moves an article between splits).
SPLIT_SHARES = {"test": 0.2, "validation": 0.15}
SENTENCE_END = {".", "!", "?"}
CLOSERS = {"\"", "'", "”", "’", ")", "]"}


class AnnotationError(ValueError):
    """An annotation that does not fit the installed text; the message names the article and paragraph."""


def split_of(title: str) -> str:
    """The split of an article: the lowest 20% of a SHA-256 of its title to test, the next 15% to validation."""
    value = int.from_bytes(hashlib.sha256(f"ner:{title}".encode()).digest()[:8], "big") / 2**64
    if value < SPLIT_SHARES["test"]:
        return "test"
    return "validation" if value < SPLIT_SHARES["test"] + SPLIT_SHARES["validation"] else "train"


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`: a sentence ends at a word '.', '!' or '?' (closing quotes and
    brackets right after it included) when the next word starts with a capital, a digit or an opening quote. The
    tokenizer keeps abbreviations' dots (U.S., Dr., J.), so they never end a sentence."""
    words = token_spans(text)
    spans, first = [], 0
    index = 0
    while index < len(words):
        if words[index][0] in SENTENCE_END:
            last = index
            # A closing quote or bracket touches the mark ('."'); a straight quote after a space opens the next one.
            while last + 1 < len(words) and words[last + 1][0] in CLOSERS and words[last + 1][1] == words[last][2]:
                last += 1
            after = words[last + 1][0] if last + 1 < len(words) else ""
            if not after or after[0].isupper() or after[0].isdigit() or after[0] in "\"“'‘(":
                spans.append((words[first][1], words[last][2]))
                first = last + 1
            index = last
        index += 1
    if first < len(words):
        spans.append((words[first][1], words[-1][2]))
    return spans


# ---------------------------------------------------------------------------------------------------------
# The installed source

def source_path() -> Path:
    """The installed, MD5-checked `train-v1.1.json` (a clear SquadFilesMissing when the package is absent)."""
    return official_file(SOURCE_FILE)


@functools.cache
def _sha256(path: Path, size: int, mtime: float) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_sha256() -> str:
    path = source_path()
    stat = path.stat()
    return _sha256(path, stat.st_size, stat.st_mtime)


@functools.cache
def _articles(path: Path, size: int, mtime: float) -> dict[str, tuple[str, ...]]:
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    return {article["title"]: tuple(paragraph["context"] for paragraph in article["paragraphs"]) for article in data}


def articles() -> dict[str, tuple[str, ...]]:
    """title -> the article's paragraphs, from the installed file."""
    path = source_path()
    stat = path.stat()
    return _articles(path, stat.st_size, stat.st_mtime)


def choose_paragraphs(per_article: int = 2, seed: int = 0) -> list[tuple[str, int]]:
    """(title, paragraph index) of `per_article` seeded paragraphs of every article, skipping paragraphs with
    square brackets (they would read as markup on a sheet) or line breaks: how the corpus's paragraphs were
    chosen."""
    chosen = []
    for title, paragraphs in sorted(articles().items()):
        usable = [i for i, text in enumerate(paragraphs) if not set("[]\n") & set(text)]
        rng = random.Random(f"{seed}:{title}")
        chosen += [(title, index) for index in sorted(rng.sample(usable, min(per_article, len(usable))))]
    return chosen


# ---------------------------------------------------------------------------------------------------------
# The stand-off annotations and the loader

Span = tuple[int, int, str]


def read_annotations(path: str | Path | None = None) -> tuple[dict, list[dict]]:
    """(header, records) of an annotations file; a malformed line is refused with its number."""
    path = Path(path) if path is not None else ANNOTATIONS
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the real-text corpus's annotations ship with the course")
    header, records = None, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise AnnotationError(f"{path}:{number}: not a JSON line ({error.msg})") from None
        if header is None:
            if not isinstance(value, dict) or "sha256" not in value:
                raise AnnotationError(f"{path}:{number}: the first line should name the source file and its sha256")
            header = value
            continue
        if not (isinstance(value, dict) and isinstance(value.get("title"), str)
                and isinstance(value.get("paragraph"), int) and isinstance(value.get("entities"), list)):
            raise AnnotationError(f"{path}:{number}: a record needs a title, a paragraph index and entities")
        records.append({**value, "line": number})
    if header is None:
        raise AnnotationError(f"{path} is empty")
    return header, records


def _words_and_sentences(text: str):
    words = token_spans(text)
    sentences = []
    for start, end in sentence_spans(text):
        sentences.append([i for i, (_, a, b) in enumerate(words) if a >= start and b <= end])
    return words, sentences


def paragraph_sentences(text: str, entities: Sequence[Sequence], where: str) -> list[tuple[list[str], list[str]]]:
    """(words, IOB2 tags) of each sentence of a paragraph, from its entity spans. A span that does not start at a
    word's start and end at a word's end, crosses a sentence end, overlaps another or has an unknown type is
    refused with `where` in the message."""
    words, sentences = _words_and_sentences(text)
    starts = {a: i for i, (_, a, _) in enumerate(words)}
    ends = {b: i for i, (_, _, b) in enumerate(words)}
    tags = ["O"] * len(words)
    sentence_of = {i: n for n, members in enumerate(sentences) for i in members}
    for entity in entities:
        if len(entity) != 3 or entity[2] not in ENTITY_TYPES:
            raise AnnotationError(f"{where}: {entity!r} is not (start, end, type) with a type in {ENTITY_TYPES}")
        start, end, kind = entity
        if start not in starts or end not in ends or ends[end] < starts[start]:
            shown = text[max(0, start - 20):end + 20] if 0 <= start < end <= len(text) else "outside the paragraph"
            raise AnnotationError(f"{where}: the span {start}-{end} ({kind}) does not fall on the text's words "
                                  f"(near {shown!r}); the source text may have changed")
        first, last = starts[start], ends[end]
        if sentence_of.get(first) != sentence_of.get(last):
            raise AnnotationError(f"{where}: the span {start}-{end} ({kind}) crosses a sentence end")
        if any(tag != "O" for tag in tags[first:last + 1]):
            raise AnnotationError(f"{where}: the span {start}-{end} ({kind}) overlaps another entity")
        tags[first] = f"B-{kind}"
        tags[first + 1:last + 1] = [f"I-{kind}"] * (last - first)
    return [([words[i][0] for i in members], [tags[i] for i in members]) for members in sentences if members]


def load_realtext(path: str | Path | None = None) -> dict[str, list[Sentence]]:
    """{"train", "validation", "test"} -> the real-text corpus's sentences, rebuilt from the installed SQuAD file
    and the adjudicated annotations; each sentence's document is its article's title."""
    header, records = read_annotations(path)
    installed = source_sha256()
    if header["sha256"] != installed:
        raise AnnotationError(f"the installed {SOURCE_FILE} is not the file the annotations were made on (its "
                              f"SHA-256 is {installed}, the annotations' {header['sha256']})")
    texts = articles()
    corpus: dict[str, list[Sentence]] = {name: [] for name in SPLITS}
    for record in records:
        title, index = record["title"], record["paragraph"]
        where = f"{path or ANNOTATIONS}:{record['line']} ({title} | {index})"
        if title not in texts or not 0 <= index < len(texts[title]):
            raise AnnotationError(f"{where}: {SOURCE_FILE} has no such paragraph")
        split = split_of(title)
        if record.get("split", split) != split:
            raise AnnotationError(f"{where}: the record says {record['split']}, the article belongs to {split}")
        for words, tags in paragraph_sentences(texts[title][index], record["entities"], where):
            corpus[split].append(Sentence(words, tags, title))
    return corpus


def agreement(pairs: Iterable[tuple[Iterable[Sequence], Iterable[Sequence]]]) -> dict[str, dict[str, float]]:
    """Entity F1 between two annotations of the same paragraphs, exact span and type, per type and over all
    ("micro"): {type: {"f1", "first", "second", "both"}}, counts of entities in each and in both. F1 is
    symmetric: which annotation plays the reference does not matter."""
    counts = {kind: [0, 0, 0] for kind in (*ENTITY_TYPES, "micro")}
    for first, second in pairs:
        a, b = {tuple(span) for span in first}, {tuple(span) for span in second}
        for kind in ENTITY_TYPES:
            a_kind, b_kind = {s for s in a if s[2] == kind}, {s for s in b if s[2] == kind}
            for key in (kind, "micro"):
                counts[key][0] += len(a_kind)
                counts[key][1] += len(b_kind)
                counts[key][2] += len(a_kind & b_kind)
    return {kind: {"f1": 2 * both / (n_a + n_b) if n_a + n_b else 1.0, "first": n_a, "second": n_b, "both": both}
            for kind, (n_a, n_b, both) in counts.items()}
