"""Assignments 07 and 08: SQuAD files, read and written.

A SQuAD file is JSON: {"version": "1.1", "data": [article, ...]}, an article {"title", "paragraphs": [...]},
a paragraph {"context", "qas": [...]}, a question {"id", "question", "answers": [{"text", "answer_start"}]}.
Version 2.0 adds "is_impossible" to each question (true: no answer in the context, "answers" empty) and
"plausible_answers", which the course ignores. `answer_start` counts characters (not bytes, not words) from
the start of the context, so `context[answer_start:answer_start + len(text)] == text`; the reader checks it.

`read_squad` also takes a Hugging Face dataset name ("squad", "squad_v2", "rajpurkar/squad"), but only
when asked by name and when huggingface.co answers: the course runs offline, and nothing here downloads
anything by default.
"""

from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from course_lib.datasets_hub import DatasetUnavailableError, load_dataset

VERSIONS = ("1.1", "2.0")
HUB = ("huggingface.co", 443)
# A dataset name on the Hub: "squad", "squad_v2" or "owner/name". A string like this that is not an
# existing file is taken for a name; anything with a file suffix or a deeper path stays a (missing) file.
_DATASET_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")
_FILE_SUFFIXES = (".json", ".jsonl", ".gz", ".zip", ".txt")


class SquadFormatError(ValueError):
    """Malformed SQuAD data; the message names the file, the question id (or where the record is) and what
    is wrong."""


@dataclass(frozen=True)
class Answer:
    """An answer: its text and the character offset where it starts in the context."""

    text: str
    start: int

    @property
    def end(self) -> int:
        """The character offset just after the answer (exclusive)."""
        return self.start + len(self.text)


@dataclass(frozen=True)
class QAExample:
    """One question about one context. `answers` is empty when the question is impossible (SQuAD v2.0);
    SQuAD's evaluation sets give several answers to one question (different annotators)."""

    id: str
    title: str
    context: str
    question: str
    answers: tuple[Answer, ...]
    is_impossible: bool = False

    def __post_init__(self):
        # Accept a list for convenience but store a tuple, so examples are hashable and compare by value.
        object.__setattr__(self, "answers", tuple(self.answers))

    @property
    def answer_end(self) -> int | None:
        """The character end (exclusive) of the first answer, or None when there is no answer."""
        return self.answers[0].end if self.answers else None


# ---------------------------------------------------------------------------------------------------------
# Checks shared by the reader and the writer

def _kind(value) -> str:
    names = {str: "a string", int: "an integer", bool: "true or false", list: "a list", dict: "an object",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _field(record, key: str, kind: type, where: str):
    """record[key], which must be of type `kind` (an integer is not true/false, nor the other way round)."""
    if not isinstance(record, dict):
        raise SquadFormatError(f"{where}: expected an object with a {key!r} field, got {_kind(record)}")
    if key not in record:
        raise SquadFormatError(f"{where}: missing field {key!r}")
    value = record[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise SquadFormatError(f"{where}: field {key!r} is {_kind(value)}, not {_kind(kind())}: {value!r:.80}")
    return value


def _check_answer(context: str, answer: Answer, number: int, where: str) -> None:
    """The answer's text must stand at its start in the context; the message says what stands there."""
    label = f"answer {number} {answer.text!r}"
    if not answer.text:
        raise SquadFormatError(f"{where}: answer {number} has an empty text")
    if not 0 <= answer.start <= len(context) - len(answer.text):
        raise SquadFormatError(f"{where}: {label} at answer_start {answer.start} does not fit in the context "
                               f"({len(context)} characters)")
    found = context[answer.start:answer.end]
    if found != answer.text:
        elsewhere = [m.start() for m in re.finditer(re.escape(answer.text), context)]
        hint = (f"; the text occurs at {', '.join(map(str, elsewhere[:5]))}" if elsewhere
                else "; the text does not occur in the context at all")
        raise SquadFormatError(f"{where}: {label} is not at its answer_start {answer.start}: the context has "
                               f"{found!r} there{hint}")


def _check_example(example: QAExample, where: str) -> None:
    if example.is_impossible and example.answers:
        raise SquadFormatError(f"{where}: the question is impossible but has {len(example.answers)} answer(s); "
                               "an impossible question has none")
    if not example.is_impossible and not example.answers:
        raise SquadFormatError(f"{where}: the question has no answers; an answerable question needs at least one "
                               "(or mark it \"is_impossible\": true, SQuAD v2.0)")
    if not example.question.strip():
        raise SquadFormatError(f"{where}: the question is empty")
    for number, answer in enumerate(example.answers, start=1):
        _check_answer(example.context, answer, number, where)


def _check_ids(placed: Iterable[tuple[str, str]], source: str) -> None:
    """`placed` holds (question id, where the question is); an id used twice is an error naming both places."""
    seen = {}
    for qid, where in placed:
        if qid in seen:
            raise SquadFormatError(f"{source}: question id {qid!r} is used twice ({seen[qid]} and {where})")
        seen[qid] = where


# ---------------------------------------------------------------------------------------------------------
# Reading

def _decode(path: Path) -> object:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")  # -sig: a byte-order mark some editors write is not JSON
    except UnicodeDecodeError as error:
        raise SquadFormatError(f"{path}: the file is not UTF-8 text (byte 0x{data[error.start]:02x} at offset "
                               f"{error.start}); save it as UTF-8") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SquadFormatError(f"{path}: not JSON, line {error.lineno} column {error.colno}: {error.msg} "
                               "(a SQuAD file is one JSON object {\"version\", \"data\"})") from None


def _parse(document, path: str) -> list[QAExample]:
    if not isinstance(document, dict):
        raise SquadFormatError(f"{path}: the file holds {_kind(document)}, not a SQuAD object {{\"version\", "
                               "\"data\"}")
    if "version" in document:
        _field(document, "version", str, path)
    examples, placed = [], []
    for a, article in enumerate(_field(document, "data", list, path)):
        title = _field(article, "title", str, f"{path}: article {a}")
        for p, paragraph in enumerate(_field(article, "paragraphs", list, f"{path}: article {a} ({title!r})")):
            at = f"article {a} ({title!r}), paragraph {p}"
            context = _field(paragraph, "context", str, f"{path}: {at}")
            for q, qa in enumerate(_field(paragraph, "qas", list, f"{path}: {at}")):
                qid = _field(qa, "id", str, f"{path}: {at}, question {q}")
                where = f"{path}: question {qid!r} ({at})"
                impossible = _field(qa, "is_impossible", bool, where) if "is_impossible" in qa else False
                # An impossible question may leave out "answers"; an answerable one must have them.
                records = _field(qa, "answers", list, where) if "answers" in qa or not impossible else []
                answers = []
                for n, record in enumerate(records, start=1):
                    text = _field(record, "text", str, f"{where}, answer {n}")
                    answers.append(Answer(text, _field(record, "answer_start", int, f"{where}, answer {n}")))
                example = QAExample(qid, title, context, _field(qa, "question", str, where), tuple(answers),
                                    impossible)
                _check_example(example, where)
                examples.append(example)
                placed.append((qid, at))
    _check_ids(placed, path)
    return examples


def read_squad(source: str | os.PathLike, *, split: str = "validation") -> list[QAExample]:
    """The questions of a SQuAD v1.1 or v2.0 JSON file, in file order, or of a Hugging Face dataset given by
    name (its `split`; only when huggingface.co can be reached, see `load_hf`).

    Malformed data raises SquadFormatError naming the file, the question id and what is wrong; a missing file
    FileNotFoundError.
    """
    path = Path(source)
    if path.is_file():
        return _parse(_decode(path), str(path))
    if path.is_dir():
        raise FileNotFoundError(f"{path} is a folder, not a SQuAD file")
    if not isinstance(source, os.PathLike) and _looks_like_dataset(str(source)):
        return load_hf(str(source), split)
    raise FileNotFoundError(f"no SQuAD file at {path}")


def _looks_like_dataset(text: str) -> bool:
    """True for "squad" or "owner/name" (unless "owner" is a local folder); a file suffix means a file."""
    if not _DATASET_NAME.fullmatch(text) or text.lower().endswith(_FILE_SUFFIXES):
        return False
    return "/" not in text or not Path(text.split("/")[0]).is_dir()


def _hub_reachable(timeout: float = 3.0) -> bool:
    """True when a connection to huggingface.co:443 opens within `timeout` seconds and no offline mode is set."""
    if any(os.environ.get(name, "").lower() in ("1", "true", "yes", "on")
           for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")):
        return False
    try:
        with socket.create_connection(HUB, timeout=timeout):
            return True
    except OSError:
        return False


def from_hf_row(row: Mapping, where: str) -> QAExample:
    """A Hugging Face SQuAD row {"id", "title", "context", "question", "answers": {"text": [...],
    "answer_start": [...]}} as a QAExample, checked like a file's record. No answers means impossible (v2.0)."""
    row = dict(row)
    qid = _field(row, "id", str, where)
    where = f"{where}: question {qid!r}"
    answers = _field(row, "answers", dict, where)
    texts, starts = _field(answers, "text", list, where), _field(answers, "answer_start", list, where)
    if len(texts) != len(starts):
        raise SquadFormatError(f"{where}: {len(texts)} answer texts but {len(starts)} answer starts")
    parsed = []
    for n, (text, start) in enumerate(zip(texts, starts, strict=True), start=1):
        record = {"text": text, "answer_start": start}
        parsed.append(Answer(_field(record, "text", str, f"{where}, answer {n}"),
                             _field(record, "answer_start", int, f"{where}, answer {n}")))
    example = QAExample(qid, row.get("title") or "", _field(row, "context", str, where),
                        _field(row, "question", str, where), tuple(parsed), is_impossible=not parsed)
    _check_example(example, where)
    return example


def load_hf(name: str, split: str = "validation") -> list[QAExample]:
    """The questions of a Hugging Face SQuAD-like dataset ("squad", "squad_v2", ...), checked like a file.

    Only tried when huggingface.co can be reached (a 3-second connection test); otherwise, or when the
    `datasets` package is missing or the load fails, DatasetUnavailableError says why."""
    if not _hub_reachable():
        raise DatasetUnavailableError(f"{name!r} is not a file, and looks like a Hugging Face dataset name, but "
                                      "huggingface.co cannot be reached (or HF_HUB_OFFLINE / HF_DATASETS_OFFLINE is "
                                      "set): the course runs offline, so pass the path of a local SQuAD JSON file")
    rows = load_dataset(name, split)
    source = f"{name} ({split})"
    examples = [from_hf_row(row, f"{source}, row {i}") for i, row in enumerate(rows)]
    _check_ids(((example.id, f"row {i}") for i, example in enumerate(examples)), source)
    return examples


# ---------------------------------------------------------------------------------------------------------
# Writing

def squad_json(examples: Iterable[QAExample], *, version: str = "1.1") -> str:
    """The text of a SQuAD file holding `examples` (see `write_squad`)."""
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS}, not {version!r}")
    articles: dict[str, dict[str, list[dict]]] = {}
    placed = []
    for number, example in enumerate(examples):
        where = f"question {example.id!r} ({example.title!r})"
        _check_example(example, where)
        if example.is_impossible and version == "1.1":
            raise SquadFormatError(f"{where}: the question is impossible (no answer), which SQuAD v1.1 cannot "
                                   "hold: write version=\"2.0\"")
        placed.append((example.id, f"example {number}"))
        qa = {"id": example.id, "question": example.question,
              "answers": [{"text": a.text, "answer_start": a.start} for a in example.answers]}
        if version == "2.0":
            qa["is_impossible"] = example.is_impossible
        # Dicts keep insertion order: articles in the order their title is first seen, paragraphs likewise.
        articles.setdefault(example.title, {}).setdefault(example.context, []).append(qa)
    _check_ids(placed, "the examples")
    document = {"version": version, "data": [
        {"title": title, "paragraphs": [{"context": context, "qas": qas} for context, qas in paragraphs.items()]}
        for title, paragraphs in articles.items()]}
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def write_squad(examples: Iterable[QAExample], path: str | os.PathLike, *, version: str = "1.1") -> Path:
    """Write a SQuAD file: one article per title, one paragraph per context, both in first-seen order;
    version "1.1" refuses impossible questions, "2.0" writes "is_impossible" on every question. UTF-8 with
    the characters themselves (not \\u escapes), indented by one space so that diffs are readable.

    read_squad(write_squad(x, path)) == x when questions with the same title and context are adjacent in x
    (the file groups them, so the reader returns them grouped)."""
    path = Path(path)
    text = squad_json(examples, version=version)
    path.write_text(text, encoding="utf-8", newline="\n")
    return path
