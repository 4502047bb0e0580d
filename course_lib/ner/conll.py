"""Assignment 06: CoNLL files, read and written.

A CoNLL file has one token per line, its columns separated by whitespace: the token first, the NER tag last
(CoNLL-2003 has a part-of-speech and a chunk column in between; any number of columns >= 2 is read, the same
number on every line of a file). A blank line ends a sentence; a `-DOCSTART-` line starts a new document,
named `<file stem>-<n>` (n counts the file's documents from 1); a line `# doc: <id>` (the course's own
extension, never written into the corpus files) names the next document instead.

Tags are IOB2 (`B-X` begins an entity of type X, `I-X` continues it, `O` is outside) or IOB1 (`I-X` also
begins an entity; `B-X` only separates two adjacent entities of the same type). `read_conll` returns IOB2.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from course_lib.datasets_hub import DatasetUnavailableError, load_dataset

DOCSTART = "-DOCSTART-"
SCHEMES = ("auto", "iob2", "iob1")
_DOC_HEADER = re.compile(r"#\s*doc:\s*(\S+)")
_TAG = re.compile(r"(?:O|[BI]-(\S+))")
# Suffixes that mark a source as a file even when it does not exist (then the error is FileNotFoundError).
_FILE_SUFFIXES = (".conll", ".conll03", ".conllu", ".iob", ".iob2", ".bio", ".txt", ".tsv")


class ConllFormatError(ValueError):
    """A CoNLL file that cannot be read; the message names the file, the line and what is wrong."""


@dataclass(frozen=True)
class Sentence:
    """One sentence: its tokens, one IOB2 tag per token, and the id of its document ("" when there is none)."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    document: str = ""

    def __post_init__(self):
        # Accept lists for convenience but store tuples, so sentences are hashable and compare by value.
        object.__setattr__(self, "tokens", tuple(self.tokens))
        object.__setattr__(self, "tags", tuple(self.tags))
        if len(self.tokens) != len(self.tags):
            raise ValueError(f"{len(self.tokens)} tokens but {len(self.tags)} tags: {self.tokens} {self.tags}")

    def __len__(self) -> int:
        return len(self.tokens)


def _type(tag: str) -> str | None:
    return None if tag == "O" else tag[2:]


def _starts_entity_as_iob1(tags: Sequence[str], index: int) -> bool:
    """True when `tags[index]` is an I- tag that begins an entity: IOB1, or a broken IOB2 sequence."""
    tag = tags[index]
    return tag.startswith("I-") and (index == 0 or _type(tags[index - 1]) != tag[2:])


def iob1_to_iob2(tags: Sequence[str]) -> list[str]:
    """IOB2 tags of one sentence tagged in IOB1: an I-X that begins an entity becomes B-X. IOB2 tags pass
    unchanged, so converting twice is the same as converting once."""
    return ["B-" + tag[2:] if _starts_entity_as_iob1(tags, i) else tag for i, tag in enumerate(tags)]


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")  # -sig: a byte-order mark some editors write is not part of the first token
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise ConllFormatError(f"{path}:{line}: the file is not UTF-8 text (byte 0x{data[error.start]:02x} at "
                               f"offset {error.start}); save it as UTF-8") from None


def read_conll(path: str | os.PathLike, *, scheme: str = "auto", types: Iterable[str] | None = None) -> list[Sentence]:
    """The sentences of a CoNLL file, tagged in IOB2.

    scheme: "auto" converts the file from IOB1 when an I- tag begins an entity anywhere in it, "iob1" always
    converts, "iob2" makes such a tag an error. types: when given, a tag of any other entity type is an error.
    Malformed input raises ConllFormatError naming the file and line; a missing file FileNotFoundError.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, not {scheme!r}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no CoNLL file at {path}" + (" (it is a folder)" if path.is_dir() else ""))
    allowed = None if types is None else set(types)
    text = _decode(path)

    sentences: list[tuple[list[str], list[str], list[int], str]] = []
    tokens, tags, lines = [], [], []
    document, documents_seen = "", 0
    # A "# doc:" header and a "-DOCSTART-" line next to each other (either order) open one document:
    # after_header / after_docstart say that the current document was just opened by one and is still empty.
    after_header = after_docstart = False
    width = first_line = None

    def end_sentence():
        nonlocal tokens, tags, lines
        if tokens:
            sentences.append((tokens, tags, lines, document))
        tokens, tags, lines = [], [], []

    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()  # trailing spaces and the \r of Windows line endings
        if not line:
            end_sentence()
            continue
        header = _DOC_HEADER.fullmatch(line)
        columns = line.split()
        if header or columns[0] == DOCSTART:
            end_sentence()
            if header and after_docstart:
                document = header.group(1)
            elif header or not after_header:
                documents_seen += 1
                document = header.group(1) if header else f"{path.stem}-{documents_seen}"
            after_header, after_docstart = bool(header) and not after_docstart, not header and not after_header
            continue
        after_header = after_docstart = False
        where = f"{path}:{number}"
        if line[0].isspace():
            raise ConllFormatError(f"{where}: empty token (the line starts with a space or tab): {raw!r}")
        if width is None:
            if len(columns) < 2:
                raise ConllFormatError(f"{where}: a token line needs at least 2 columns (token ... tag), found "
                                       f"{len(columns)}: {line!r}")
            width, first_line = len(columns), number
        elif len(columns) != width:
            raise ConllFormatError(f"{where}: {len(columns)} columns, but the file's first token line "
                                   f"({first_line}) has {width}: {line!r}")
        tag = columns[-1]
        kind = _TAG.fullmatch(tag)
        if not kind:
            raise ConllFormatError(f"{where}: tag {tag!r} is not O, B-<type> or I-<type>")
        if allowed is not None and kind.group(1) is not None and kind.group(1) not in allowed:
            raise ConllFormatError(f"{where}: unknown entity type {kind.group(1)!r} in tag {tag!r}; "
                                   f"allowed: {', '.join(sorted(allowed))}")
        tokens.append(columns[0])
        tags.append(tag)
        lines.append(number)
    end_sentence()
    if not sentences:
        raise ConllFormatError(f"{path}: the file has no sentences (no token lines)")

    is_iob1 = any(_starts_entity_as_iob1(s_tags, i) for _, s_tags, _, _ in sentences for i in range(len(s_tags)))
    if scheme == "iob2" and is_iob1:
        for _, s_tags, s_lines, _ in sentences:
            for i in range(len(s_tags)):
                if _starts_entity_as_iob1(s_tags, i):
                    raise ConllFormatError(f"{path}:{s_lines[i]}: {s_tags[i]!r} begins an entity, which IOB2 "
                                           f"writes B-{s_tags[i][2:]} (is the file IOB1? read it with "
                                           f"scheme='iob1' or 'auto')")
    convert = scheme == "iob1" or is_iob1
    return [Sentence(s_tokens, iob1_to_iob2(s_tags) if convert else s_tags, doc)
            for s_tokens, s_tags, _, doc in sentences]


def write_conll(path: str | os.PathLike, sentences: Iterable[Sentence], *, docstart: bool = True,
                doc_ids: bool = False) -> Path:
    """Write `token tag` lines, a blank line after each sentence; with `docstart`, a `-DOCSTART- O` line and a
    blank line before each new document. With `doc_ids`, a `# doc: <id>` line before it too (not CoNLL:
    only for files the course reads itself).

    read_conll(write_conll(path, x, doc_ids=True)) == x. Without doc ids, the reader names the documents
    `<file stem>-<n>`, so the round trip is exact when they are named that way (the corpus keeps its
    document ids in splits.json instead).
    """
    path = Path(path)
    out, document = [], ""
    for sentence in sentences:
        if not sentence.tokens:
            raise ValueError(f"an empty sentence (document {sentence.document!r}) cannot be written")
        if docstart and sentence.document != document:
            if not sentence.document:
                raise ValueError(f"a sentence without a document follows document {document!r}: the file would "
                                 "put it in that document")
            document = sentence.document
            if doc_ids:
                if not re.fullmatch(r"\S+", document):
                    raise ValueError(f"document id {document!r} has whitespace")
                out.append(f"# doc: {document}\n")
            out.append(f"{DOCSTART} O\n\n")
        for token, tag in zip(sentence.tokens, sentence.tags, strict=True):
            if not token or any(char.isspace() for char in token) or token == DOCSTART:
                raise ValueError(f"token {token!r} cannot be written to a CoNLL file (document "
                                 f"{sentence.document!r}: {' '.join(sentence.tokens)})")
            if not _TAG.fullmatch(tag):
                raise ValueError(f"tag {tag!r} of token {token!r} is not O, B-<type> or I-<type>")
            out.append(f"{token} {tag}\n")
        out.append("\n")
    path.write_text("".join(out), encoding="utf-8", newline="\n")
    return path


def split_by_document(sentences: Sequence[Sentence], *, test_share: float = 1 / 3,
                      seed: int = 0) -> tuple[list[Sentence], list[Sentence]]:
    """(train, test): a seeded `test_share` of the documents to test, whole, the rest to train; sentences keep
    their order. A file without `-DOCSTART-` lines (every sentence its own document, or all one) is split by
    sentence instead. Refuses a split that leaves either side empty."""
    import random

    documents = list(dict.fromkeys(sentence.document for sentence in sentences))
    units = documents if len(documents) >= 3 else list(range(len(sentences)))
    chosen = set(random.Random(seed).sample(units, round(test_share * len(units))))
    by_document = units is documents
    test = [s for n, s in enumerate(sentences) if (s.document if by_document else n) in chosen]
    train = [s for n, s in enumerate(sentences) if (s.document if by_document else n) not in chosen]
    if not train or not test:
        raise ValueError(f"{len(sentences)} sentences in {len(documents)} document(s) are too few to split into "
                         "training and test parts")
    return train, test


def load_hf(name: str, split: str = "train") -> list[Sentence]:
    """The sentences of a Hugging Face dataset (e.g. "conll2003"), in IOB2, label names from its features.

    Needs the `datasets` package and, unless the dataset is cached, the network: the course runs offline by
    default, so this is never called unless you ask. Any failure raises DatasetUnavailableError saying why.
    """
    offline = [v for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE") if os.environ.get(v, "").lower() in
               ("1", "true", "yes", "on")]
    hint = (f" ({' and '.join(offline)} set: offline mode; unset it to download)" if offline else
            " (it needs the network the first time; the course runs offline by default)")
    data = load_dataset(name, split, hint=hint)
    features = data.features
    column = "ner_tags" if "ner_tags" in features else next(
        (key for key, feature in features.items() if hasattr(getattr(feature, "feature", None), "names")), None)
    if column is None or "tokens" not in features:
        raise DatasetUnavailableError(f"{name!r} has no 'tokens' column and tag column with label names "
                                      f"(columns: {list(features)})")
    names = features[column].feature.names
    return [Sentence(row["tokens"], iob1_to_iob2([names[i] for i in row[column]]))
            for row in data if row["tokens"]]


def read_any(source: str | os.PathLike, split: str = "train") -> list[Sentence]:
    """A CoNLL file (a Path, an existing file, or a name with a folder separator or a CoNLL-like suffix) or
    else a Hugging Face dataset name (its `split`)."""
    if isinstance(source, os.PathLike):
        return read_conll(source)
    text = str(source)
    is_file = (os.path.exists(text) or os.sep in text or "/" in text or text.lower().endswith(_FILE_SUFFIXES))
    return read_conll(text) if is_file else load_hf(text, split)
