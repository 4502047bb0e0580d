"""The course's reading-comprehension set as it is written: plain-text source files, one per topic group
(`course_lib/qa/data/source/*.txt`), turned into SQuAD records by `course_lib.qa.corpus`.

    python -m course_lib.qa.source check course_lib/qa/data/source/science.txt ...

A file is a sequence of blocks separated by a line holding only `===`. A block is

    title: The Moon's locked face
    topic: science
    The Moon turns once on its axis in the time it takes to orbit the Earth, ...
    (more lines of the paragraph; lines are joined with one space, an empty line starts a new paragraph
    inside the same context, kept as a newline)
    Q: Why do we always see the same side of the Moon?
    A: it turns once on its axis in the time it takes to orbit the Earth
    Q: ...
    A: the 27.3 days #2

An answer is copied exactly from the context; when its text occurs more than once, `#n` after it picks the
n-th occurrence (counted from 1, non-overlapping, left to right). Lines starting with `%` are comments.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SEPARATOR = "==="
OCCURRENCE = re.compile(r"^(?P<text>.*?)\s+#(?P<n>\d+)$")


class SourceError(ValueError):
    """A malformed block of a source file: names the file, the line and what is wrong."""


@dataclass
class Question:
    text: str
    answer: str
    answer_start: int
    line: int


@dataclass
class Paragraph:
    title: str
    topic: str
    context: str
    questions: list[Question] = field(default_factory=list)
    path: str = ""
    line: int = 0


def occurrences(context: str, text: str) -> list[int]:
    """Start offsets of the non-overlapping occurrences of `text` in `context`, left to right."""
    found, start = [], context.find(text)
    while start >= 0:
        found.append(start)
        start = context.find(text, start + len(text))
    return found


def _locate(context: str, answer: str, where: str) -> tuple[str, int]:
    match = OCCURRENCE.match(answer)
    text, nth = (match["text"], int(match["n"])) if match else (answer, 1)
    if not text or text != text.strip():
        raise SourceError(f"{where}: the answer is empty or starts or ends with a space: {answer!r}")
    found = occurrences(context, text)
    if not found:
        raise SourceError(f"{where}: the answer {text!r} does not occur in the paragraph (copy it exactly)")
    if nth > len(found):
        raise SourceError(f"{where}: #{nth} asks for occurrence {nth} of {text!r}, which occurs {len(found)} times")
    if len(found) > 1 and not match:
        raise SourceError(f"{where}: the answer {text!r} occurs {len(found)} times; say which with #1 ... "
                          f"#{len(found)}")
    return text, found[nth - 1]


def _block(lines: list[tuple[int, str]], path: str) -> Paragraph:
    header, body, qa = {}, [], []
    for number, line in lines:
        where = f"{path}, line {number}"
        key, _, value = line.partition(":")
        if not qa and not body and key in ("title", "topic") and value.strip():
            header[key] = value.strip()
        elif line.startswith(("Q:", "A:")):
            qa.append((number, line[:1], line[2:].strip()))
        elif qa:
            raise SourceError(f"{where}: after the first question only Q: and A: lines may follow, got {line!r}")
        else:
            body.append(line)
    first = lines[0][0] if lines else 0
    for key in ("title", "topic"):
        if key not in header:
            raise SourceError(f"{path}, line {first}: the block has no '{key}:' line before its paragraph")
    paragraphs = " ".join(line.strip() if line.strip() else "\n" for line in body)
    context = re.sub(r" ?\n ?", "\n", re.sub(r" {2,}", " ", paragraphs)).strip()
    if not context:
        raise SourceError(f"{path}, line {first}: the block {header['title']!r} has no paragraph")
    paragraph = Paragraph(header["title"], header["topic"], context, path=path, line=first)
    if len(qa) % 2 or any(kind != expected for (_, kind, _), expected in zip(qa, "QA" * len(qa), strict=False)):
        raise SourceError(f"{path}, line {first}: the block {header['title']!r} must alternate Q: and A: lines, "
                          "starting with Q:")
    for (number, _, question), (answer_line, _, answer) in zip(qa[::2], qa[1::2], strict=True):
        if not question.endswith("?"):
            raise SourceError(f"{path}, line {number}: a question ends with '?': {question!r}")
        text, start = _locate(context, answer, f"{path}, line {answer_line}")
        paragraph.questions.append(Question(question, text, start, number))
    if not paragraph.questions:
        raise SourceError(f"{path}, line {first}: the block {header['title']!r} has no questions")
    return paragraph


def read_source(path: str | Path) -> list[Paragraph]:
    """The paragraphs of one source file, each with its questions and answers located in it."""
    path = Path(path)
    blocks, current = [], []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.rstrip()
        if line.startswith("%"):
            continue
        if line.strip() == SEPARATOR:
            blocks.append(current)
            current = []
        elif line or current:
            current.append((number, line))
    blocks.append(current)
    paragraphs = []
    for block in blocks:
        while block and not block[-1][1]:
            block.pop()
        if block:
            paragraphs.append(_block(block, str(path)))
    return paragraphs


def main(argv: list[str]) -> int:
    failed = False
    for name in argv:
        try:
            paragraphs = read_source(name)
        except (SourceError, OSError) as error:
            print(error, file=sys.stderr)
            failed = True
            continue
        words = [len(p.context.split()) for p in paragraphs]
        questions = sum(len(p.questions) for p in paragraphs)
        print(f"{name}: {len(paragraphs)} paragraphs, {questions} questions, {sum(words)} words "
              f"(longest paragraph {max(words, default=0)} words)")
    return 1 if failed or not argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[2:] if sys.argv[1:2] == ["check"] else sys.argv[1:]))
