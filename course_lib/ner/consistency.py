"""Assignment 06's real-text corpus: the consistency check, the course corpus's `check` applied to stand-off text.

    python -m course_lib.ner.annotating consistency [--annotations FILE] [--guide FILE]

Every word sequence (its tokens, case kept) that the corpus labels with two or more entity types is listed with
its count per type and a few places (`title | paragraph`). Each must be an exception in the guide's table
(`## Strings with two labels`: string, its types, why), with exactly the types it has; a string labelled two ways
that the table does not list, a row whose types differ from the corpus's, and a row whose string is no longer
labelled two ways (a stale exception) all fail the check.

It also lists, for reading and not as a failure, the capitalised entity strings that stand untagged somewhere
else, away from a sentence's first word (where a capital says nothing): a short form of a name tagged in full
elsewhere ("the Bureau"), or a name missed once, shows up there among common words that merely look alike.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from course_lib.ner import ENTITY_TYPES
from course_lib.ner.annotations import justified_strings, label_occurrences
from course_lib.ner.conll import Sentence
from course_lib.ner.realtext import ANNOTATIONS, DATA_DIR, articles, paragraph_sentences, read_annotations

GUIDE = DATA_DIR / "GUIDE.md"
EXAMPLES = 3  # places shown per label


@dataclass(frozen=True)
class Report:
    """What the check found: {string: {type: places}} for the strings with two or more types, the guide's
    exceptions {string: types}, the problems (each a sentence naming its string) and, for reading only,
    {string: {label: places}} of capitalised entity strings also left untagged ("O")."""

    typed: dict[str, dict[str, list[str]]]
    exceptions: dict[str, set[str]]
    problems: list[str]
    untagged: dict[str, dict[str, list[str]]]


def corpus_sentences(annotations: str | os.PathLike | None = None) -> list[Sentence]:
    """Every sentence of the real-text corpus, all splits, its document named `title | paragraph` so that the
    check can say where a label is."""
    _, records = read_annotations(annotations)
    texts, sentences = articles(), []
    for record in records:
        title, index = record["title"], record["paragraph"]
        where = f"{title} | {index}"
        for words, tags in paragraph_sentences(texts[title][index], record["entities"], where):
            sentences.append(Sentence(words, tags, where))
    return sentences


def untagged_matches(sentences: Iterable[Sentence], strings: Iterable[str]) -> dict[str, list[str]]:
    """{string: documents} of every place one of `strings` stands untagged (all its words O), not counting a
    match at a sentence's first word."""
    wanted = set(strings)
    lengths = sorted({string.count(" ") + 1 for string in wanted})
    found: dict[str, list[str]] = {}
    for sentence in sentences:
        for n in lengths:
            for start in range(1, len(sentence) - n + 1):
                key = " ".join(sentence.tokens[start:start + n])
                if key in wanted and all(tag == "O" for tag in sentence.tags[start:start + n]):
                    found.setdefault(key, []).append(sentence.document)
    return found


def check(sentences: Sequence[Sentence], exceptions: Mapping[str, Iterable[str]]) -> Report:
    """The consistency report of `sentences` against `exceptions` ({string: the entity types it may have})."""
    occurrences = label_occurrences(sentences)
    typed = {key: {label: places for label, places in sorted(labels.items()) if label != "O"}
             for key, labels in sorted(occurrences.items()) if len(set(labels) - {"O"}) > 1}
    allowed = {key: set(kinds) & set(ENTITY_TYPES) for key, kinds in exceptions.items()}
    problems = []
    for key, labels in typed.items():
        if key not in allowed:
            problems.append(f"{key!r} is labelled {', '.join(labels)} and is not an exception in the guide")
        elif set(labels) != allowed[key]:
            problems.append(f"{key!r} is labelled {', '.join(labels)}; the guide's exception lists "
                            f"{', '.join(sorted(allowed[key]))}")
    problems += [f"{key!r} is an exception in the guide but is no longer labelled two ways (a stale row)"
                 for key in sorted(set(allowed) - set(typed))]
    capitalised = [key for key in occurrences if key[:1].isupper()]
    untagged = {key: {**{label: places for label, places in sorted(occurrences[key].items()) if label != "O"},
                      "O": places}
                for key, places in sorted(untagged_matches(sentences, capitalised).items())}
    return Report(typed, {key: allowed[key] for key in sorted(allowed)}, problems, untagged)


def _places(labels: Mapping[str, Sequence[str]]) -> str:
    return "; ".join(f"{label} x{len(places)} ({', '.join(list(dict.fromkeys(places))[:EXAMPLES])})"
                     for label, places in labels.items())


def format_report(report: Report) -> str:
    """The report as text: the strings with two types (each marked as an exception or not), the problems, then
    the untagged list for reading."""
    lines = [f"{len(report.typed)} string(s) labelled with two or more types:"]
    for key, labels in report.typed.items():
        mark = "exception" if report.exceptions.get(key) == set(labels) else "NOT JUSTIFIED"
        lines.append(f"  [{mark}] {key!r}: {_places(labels)}")
    lines += ["", f"{len(report.untagged)} capitalised entity string(s) also left untagged after a sentence's "
              "first word (for reading: a short form or a missed name, or a common word that looks alike):"]
    lines += [f"  {key!r}: {_places(labels)}" for key, labels in report.untagged.items()]
    lines += ["", f"{len(report.problems)} problem(s)" + (":" if report.problems else "")]
    lines += [f"  {problem}" for problem in report.problems]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check on the corpus (or `--annotations`) against the guide (or `--guide`); 1 on any problem."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m course_lib.ner.annotating consistency",
                                     description="list strings the real-text corpus labels two ways")
    parser.add_argument("--annotations", type=Path, default=ANNOTATIONS)
    parser.add_argument("--guide", type=Path, default=GUIDE)
    args = parser.parse_args(argv)
    try:
        exceptions = justified_strings(args.guide)
    except ValueError as error:  # no table at all: say so, not with a traceback
        print(f"{error}: the exceptions live there (string, types, why)", file=sys.stderr)
        return 1
    report = check(corpus_sentences(args.annotations), exceptions)
    print(format_report(report))
    return 1 if report.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
