"""Assignment 06: the course's NER corpus, from its inline-markup sources to CoNLL splits.

The sources (`data/source/*.txt`, UTF-8) hold documents, each a `# doc: <register>-<NNN>` line followed by
one sentence per line, entities marked `[TYPE words]` with TYPE one of PER, ORG, LOC, MISC:

    # doc: news-001
    [PER Amara Okafor] joined [ORG Siemens] in [LOC Munich] after the [MISC Winter Olympics].

`build()` tokenizes them with `tokenize` (the same function `tagging.Tagger` splits new text with, so a model
sees words cut the same way in training and in use), splits the documents into train/validation/test within
each register, writes the three CoNLL files, `splits.json` (which documents went where) and the counts in
`DATA_CARD.md`. Run it with `python -m course_lib.ner.corpus build`; `... check` lists the strings labelled
two ways that the card does not justify. `load_corpus()` reads the splits back; `augment` makes entity-swapped
copies of training sentences on request (never of validation or test).
"""

from __future__ import annotations

import json
import os
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from course_lib.ner import ENTITY_TYPES
from course_lib.ner.annotations import (  # noqa: F401  (the corpus's counts and consistency, also from here)
    gold_entities,
    inconsistent_strings,
    justified_strings,
    label_occurrences,
    statistics,
    unjustified_strings,
)
from course_lib.ner.augment import augment
from course_lib.ner.conll import Sentence, read_conll, write_conll
from course_lib.ner.words import OUTSIDE_ENTITIES, token_spans, tokenize  # noqa: F401  (tokenize: the corpus's words)

DATA_DIR = Path(__file__).resolve().parent / "data"
SOURCE_DIR = DATA_DIR / "source"
SPLITS = ("train", "validation", "test")
SPLIT_FRACTIONS = {"validation": 0.15, "test": 0.15}  # train gets the rest, about 70%
# Documents written after the test split was fixed live in source/added/: they go to train and validation only
# (this share to validation), so that scores on the test split compare across versions of the corpus.
ADDED_DIR, ADDED_VALIDATION = "added", 0.2
CARD = "DATA_CARD.md"
COUNTS_BEGIN, COUNTS_END = "<!-- counts: begin -->", "<!-- counts: end -->"


# ---------------------------------------------------------------------------------------------------------
# Markup and documents

class MarkupError(ValueError):
    """A source line or file that breaks the markup rules; the message names file:line."""


# Tokens that must stay outside an entity's brackets (convention: punctuation and possessives are outside).
# A possessive 's may end a name (McDonald's, Sainsbury's), so it is not in this set.


def parse_markup(line: str, *, where: str = "") -> tuple[list[str], list[str]]:
    """Tokens and IOB2 tags of one source line. Raises MarkupError for an unbalanced or nested bracket, an
    unknown type, an empty entity, square brackets that are not entity markup, an entity edge inside a word
    (`[LOC Berlin]-based`) and punctuation inside the brackets at an entity's edge."""
    prefix = f"{where}: " if where else ""

    def fail(message: str):
        raise MarkupError(f"{prefix}{message}: {line.strip()!r}")

    plain, entities, cursor, opened = [], [], 0, None
    length = 0  # characters of `plain` so far
    for match in re.finditer(r"[\[\]]", line):
        column = match.start()
        if match.group() == "[":
            if opened is not None:
                fail(f"'[' at column {column + 1} is nested inside the entity opened at column {opened + 1}")
            plain.append(line[cursor:column])
            length += column - cursor
            opened = column
            continue
        if opened is None:
            fail(f"']' at column {column + 1} closes no '['")
        inner = line[opened + 1:column]
        kind, _, text = inner.strip().partition(" ") if inner[:1].strip() else ("", "", inner)
        text = text.strip()
        if kind not in ENTITY_TYPES:
            looks_like_type = re.fullmatch(r"[A-Za-z]{2,12}", kind) and (kind.isupper() or kind.upper() in ENTITY_TYPES)
            if looks_like_type and (text or kind.upper() in ENTITY_TYPES):
                fail(f"unknown entity type {kind!r} at column {opened + 2} (types: {', '.join(ENTITY_TYPES)})")
            fail(f"square brackets at column {opened + 1} that are not an entity [TYPE words]")
        if not text:
            fail(f"empty entity [{kind}] at column {opened + 1}")
        plain.append(text)
        entities.append((kind, length, length + len(text), opened))
        length += len(text)
        cursor, opened = column + 1, None
    if opened is not None:
        fail(f"'[' at column {opened + 1} is never closed")
    plain.append(line[cursor:])
    text = "".join(plain)
    spans = token_spans(text)
    tokens = [token for token, _, _ in spans]
    tags = ["O"] * len(tokens)
    for kind, start, end, column in entities:
        inside = [i for i, (_, a, b) in enumerate(spans) if a < end and b > start]
        cut = [tokens[i] for i in inside if spans[i][1] < start or spans[i][2] > end]
        if cut:
            fail(f"the entity [{kind} {text[start:end]}] at column {column + 1} starts or ends inside the word "
                 f"{cut[0]!r}: rephrase, or tag the whole word")
        edges = {tokens[inside[0]], tokens[inside[-1]]}
        if tokens[inside[-1]] == ")" and "(" in tokens[inside[0]:inside[-1]]:  # a name ending in brackets: "(UML)"
            edges.discard(")")
        for edge in edges & OUTSIDE_ENTITIES:
            fail(f"the entity [{kind} {text[start:end]}] at column {column + 1} has {edge!r} at its edge: put "
                 "punctuation and possessives outside the brackets")
        tags[inside[0]] = f"B-{kind}"
        for i in inside[1:]:
            tags[i] = f"I-{kind}"
    return tokens, tags


@dataclass(frozen=True)
class Document:
    """A source document: its id (`<register>-<NNN>`), its sentences and where its header is (file:line)."""

    id: str
    sentences: tuple[Sentence, ...]
    where: str = ""
    added: bool = False  # from source/added/: never in the test split

    @property
    def register(self) -> str:
        """The id's prefix before the first '-' ("news", "sport", ...)."""
        return self.id.split("-", 1)[0]


_HEADER = re.compile(r"#\s*doc:\s*(\S+)")


def read_source(path: str | os.PathLike) -> list[Document]:
    """The documents of one markup source file. Every problem in the file is reported in one MarkupError."""
    path = Path(path)
    problems, documents = [], []
    current_id, current_where, sentences = None, "", []

    def close():
        if current_id is None:
            return
        if sentences:
            documents.append(Document(current_id, tuple(sentences), current_where))
        else:
            problems.append(f"{current_where}: document {current_id!r} has no sentences")

    seen = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8-sig").split("\n"), start=1):
        line, where = raw.strip(), f"{path}:{number}"
        if not line:
            continue
        if line.startswith("#"):
            header = _HEADER.fullmatch(line)
            if not header:
                problems.append(f"{where}: a line starting with '#' that is not a '# doc: <id>' header: {line!r}")
                continue
            close()
            current_id, current_where, sentences = header.group(1), where, []
            if current_id in seen:
                problems.append(f"{where}: document id {current_id!r} is also used at {seen[current_id]}")
            seen[current_id] = where
            continue
        if current_id is None:
            problems.append(f"{where}: a sentence before the first '# doc: <id>' header")
            continue
        try:
            tokens, tags = parse_markup(line, where=where)
        except MarkupError as error:
            problems.append(str(error))
            continue
        if tokens:
            sentences.append(Sentence(tokens, tags, current_id))
    close()
    if problems:
        raise MarkupError(f"{len(problems)} problem(s) in {path}:\n" + "\n".join(problems))
    return documents


def read_sources(source_dir: str | os.PathLike | None = None) -> list[Document]:
    """The documents of every `*.txt` in `source_dir` (default: the package's sources), then of every
    `added/*.txt` (marked `added`); a document id used in two files is an error."""
    source_dir = Path(source_dir) if source_dir is not None else SOURCE_DIR
    documents, where, problems = [], {}, []
    paths = [(path, False) for path in sorted(source_dir.glob("*.txt"))]
    paths += [(path, True) for path in sorted((source_dir / ADDED_DIR).glob("*.txt"))]
    for path, added in paths:
        for document in read_source(path):
            if added:
                document = replace(document, added=True)
            if document.id in where:
                problems.append(f"{document.where}: document id {document.id!r} is also used at {where[document.id]}")
            where[document.id] = document.where
            documents.append(document)
    if problems:
        raise MarkupError("duplicate document ids:\n" + "\n".join(problems))
    return documents


# ---------------------------------------------------------------------------------------------------------
# Splits, files and the data card

def split_documents(documents: Sequence[Document], seed: int = 0) -> dict[str, list[Document]]:
    """Documents into train/validation/test, about 70/15/15 within each register (every register with three
    or more documents is in every split). Deterministic: each register's documents sorted by id, then shuffled
    by a random.Random seeded with the seed and the register, so adding a register moves no other document.
    Added documents are split apart, ADDED_VALIDATION of each register to validation and the rest to train, so
    that they move no original document."""
    by_register, added = defaultdict(list), defaultdict(list)
    for document in documents:
        (added if document.added else by_register)[document.register].append(document)
    splits = {name: [] for name in SPLITS}
    for register, members in sorted(added.items()):
        members = sorted(members, key=lambda document: document.id)
        random.Random(f"{seed}:added:{register}").shuffle(members)
        size = round(ADDED_VALIDATION * len(members))
        splits["validation"] += members[:size]
        splits["train"] += members[size:]
    for register, members in sorted(by_register.items()):
        members = sorted(members, key=lambda document: document.id)
        random.Random(f"{seed}:{register}").shuffle(members)
        n = len(members)
        sizes = {name: (max(1, round(fraction * n)) if n >= 3 else 0) for name, fraction in SPLIT_FRACTIONS.items()}
        splits["test"] += members[:sizes["test"]]
        splits["validation"] += members[sizes["test"]:sizes["test"] + sizes["validation"]]
        splits["train"] += members[sizes["test"] + sizes["validation"]:]
    return {name: sorted(members, key=lambda document: document.id) for name, members in splits.items()}


def _table(header: Sequence[str], rows: Iterable[Sequence]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " if i == 0 else " ---: " for i in
                                                              range(len(header))) + "|"]
    lines += ["| " + " | ".join(f"{cell:,}" if isinstance(cell, int) else str(cell) for cell in row) + " |"
              for row in rows]
    return lines


def counts_markdown(splits: dict[str, list[Sentence]]) -> str:
    """The data card's counts section: per split, then per register (the register of each sentence's
    document), sentences, tokens, documents and entities per type."""
    header = ["", "sentences", "tokens", "documents", *ENTITY_TYPES, "entities"]

    def row(name, sentences):
        numbers = statistics(sentences)
        entities = [numbers["entities"][kind] for kind in ENTITY_TYPES]
        return [name, numbers["sentences"], numbers["tokens"], numbers["documents"], *entities, sum(entities)]

    everything = [sentence for name in SPLITS for sentence in splits[name]]
    lines = ["Per split:", ""] + _table(["split", *header[1:]], [row(name, splits[name]) for name in SPLITS]
                                         + [row("all", everything)])
    registers = sorted({sentence.document.split("-", 1)[0] for sentence in everything})
    lines += ["", "Per register (documents in train / validation / test, then all splits together):", ""]
    register_rows = []
    for register in registers:
        docs = [len({s.document for s in splits[name] if s.document.split("-", 1)[0] == register}) for name in SPLITS]
        numbers = row(register, [s for s in everything if s.document.split("-", 1)[0] == register])
        register_rows.append([register, " / ".join(map(str, docs)), *numbers[1:3], *numbers[4:]])
    lines += _table(["register", "documents", "sentences", "tokens", *ENTITY_TYPES, "entities"], register_rows)
    return "\n".join(lines)


def update_card(card: Path, counts: str) -> None:
    """Replace the text between the card's counts markers (a card without markers gets them appended; a
    missing card is created with only the counts)."""
    from course_lib.data_cards import update_card as with_blocks

    text = card.read_text(encoding="utf-8") if card.exists() else "# Data card\n\n## Counts\n\n"
    card.write_text(with_blocks(text, {"counts": counts}), encoding="utf-8", newline="\n")


def build(source_dir: str | os.PathLike | None = None, out_dir: str | os.PathLike | None = None, *,
          seed: int = 0) -> dict:
    """Read every source file, split by document, drop from a later split any sentence (token sequence) already
    in an earlier one, write `train/validation/test.conll` (a -DOCSTART- line before each document),
    `splits.json` (split -> document ids, in file order) and the counts of `DATA_CARD.md`. Returns a report:
    {"counts": ..., "dropped_duplicates": [...], "warnings": [...]}. Nothing is augmented here."""
    source_dir = Path(source_dir) if source_dir is not None else SOURCE_DIR
    out_dir = Path(out_dir) if out_dir is not None else DATA_DIR
    documents = read_sources(source_dir)
    if not documents:
        raise FileNotFoundError(f"no documents in {source_dir}/*.txt: the corpus sources are missing")
    warnings = [f"register {register!r} has {n} document(s): it cannot be in every split" for register, n in
                sorted(Counter(document.register for document in documents).items()) if n < 3]
    split_docs = split_documents(documents, seed)
    seen, dropped, splits, ids, kept = {}, [], {}, {}, {}
    # Original documents first, so that an added sentence never takes a validation or test sentence's place.
    for added in (False, True):
        for name in SPLITS:
            for document in split_docs[name]:
                if document.added != added:
                    continue
                for sentence in document.sentences:
                    first = seen.setdefault(sentence.tokens, name)
                    if first != name:
                        dropped.append({"split": name, "document": document.id,
                                        "sentence": " ".join(sentence.tokens), "kept_in": first})
                    else:
                        kept[id(sentence)] = sentence
    for name in SPLITS:
        splits[name] = [sentence for document in split_docs[name] for sentence in document.sentences
                        if id(sentence) in kept]
        ids[name] = list(dict.fromkeys(sentence.document for sentence in splits[name]))
        warnings += [f"document {d.id} in {name} is empty after dropping duplicates"
                     for d in split_docs[name] if d.id not in ids[name]]
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in SPLITS:
        write_conll(out_dir / f"{name}.conll", splits[name])
    splits_json = {"seed": seed, **ids, "dropped_duplicates": dropped}
    (out_dir / "splits.json").write_text(json.dumps(splits_json, indent=1, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    counts = counts_markdown(splits)
    update_card(out_dir / CARD, counts)
    return {"counts": {name: statistics(splits[name]) for name in SPLITS}, "dropped_duplicates": dropped,
            "warnings": warnings, "documents": {name: len(ids[name]) for name in SPLITS}}


def load_corpus(data_dir: str | os.PathLike | None = None, *, augment_train: int = 0,
                seed: int = 0) -> dict[str, list[Sentence]]:
    """{"train", "validation", "test"} -> sentences of the built corpus (default: the package's data folder),
    with their document ids from splits.json. `augment_train` > 0 appends that many entity-swapped copies of
    each training sentence that has a PER, ORG or LOC entity (see `augment`); validation and test never change."""
    data_dir = Path(data_dir) if data_dir is not None else DATA_DIR
    missing = [name for name in SPLITS if not (data_dir / f"{name}.conll").is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(f'{name}.conll' for name in missing)} missing in {data_dir}: run "
                                "python -m course_lib.ner.corpus build")
    ids = {}
    if (data_dir / "splits.json").is_file():
        ids = json.loads((data_dir / "splits.json").read_text(encoding="utf-8"))
    corpus = {}
    for name in SPLITS:
        sentences = read_conll(data_dir / f"{name}.conll", scheme="iob2", types=ENTITY_TYPES)
        names = list(dict.fromkeys(sentence.document for sentence in sentences))
        if len(ids.get(name, [])) == len(names):  # the reader names documents <split>-<n>: restore the real ids
            rename = dict(zip(names, ids[name], strict=True))
            sentences = [Sentence(s.tokens, s.tags, rename[s.document]) for s in sentences]
        corpus[name] = sentences
    if augment_train:
        corpus["train"] = corpus["train"] + augment(corpus["train"], random.Random(seed), copies=augment_train)
    return corpus




def _main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m course_lib.ner.corpus", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("build", "check"),
                        help="build: write the splits and the card's counts; check: list unjustified strings")
    parser.add_argument("--source", type=Path, default=SOURCE_DIR)
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "build":
        report = build(args.source, args.out, seed=args.seed)
        for name in SPLITS:
            numbers = report["counts"][name]
            print(f"{name:10s} {report['documents'][name]:4d} documents {numbers['sentences']:6,d} sentences "
                  f"{numbers['tokens']:7,d} tokens  " + " ".join(f"{k} {v:,}" for k, v in numbers["entities"].items()))
        for item in report["dropped_duplicates"]:
            print(f"dropped from {item['split']} ({item['document']}), already in {item['kept_in']}: "
                  f"{item['sentence']}")
        for warning in report["warnings"]:
            print(f"warning: {warning}")
        print(f"wrote {args.out}/{{train,validation,test}}.conll, splits.json and the counts of {CARD}")
        return 0
    documents = read_sources(args.source)
    problems = unjustified_strings(documents, args.out / CARD)
    for key, labels in problems.items():
        print(f"{key!r}: " + "; ".join(f"{label} x{len(docs)} ({', '.join(sorted(set(docs))[:6])})"
                                       for label, docs in sorted(labels.items())))
    print(f"{len(problems)} string(s) with two or more labels not justified in {args.out / CARD}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(_main())
