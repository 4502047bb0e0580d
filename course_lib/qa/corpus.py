"""Assignments 07 and 08: the course's reading-comprehension set, from its plain-text sources to SQuAD files.

    python -m course_lib.qa.corpus build    # write data/train.json, test.json, splits.json and the card's counts
    python -m course_lib.qa.corpus check    # fail, naming the first difference, if they differ from a fresh build

The sources (`data/source/*.txt`, read by `course_lib.qa.source.read_source`) hold paragraphs with a title, a
topic and questions. Each question gets the id `<topic>-<NN>-q<k>`: NN numbers the topic's paragraphs in
source order (files by name, then file order), k the paragraph's questions from 1. The split is by paragraph,
so a model is never tested on a context it was trained on: see `split_paragraphs`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import statistics as stats
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from course_lib.data_cards import card_block, update_card  # noqa: F401  (squad_v1 and the tests import them here)
from course_lib.qa.source import Paragraph, read_source
from course_lib.qa.squad import Answer, QAExample, read_squad, squad_json

DATA_DIR = Path(__file__).resolve().parent / "data"
SOURCE_DIR = DATA_DIR / "source"
SPLITS = ("train", "validation", "test")
FILES = ("train.json", "validation.json", "test.json", "splits.json")
TEST_FRACTION = 0.2
# Paragraphs written after the test split was fixed live in source/added/: they go to train and validation only
# (this share of each topic to validation), so that scores on the test split compare across versions of the set.
ADDED_DIR, VALIDATION_FRACTION = "added", 0.2
LONG_FACTOR = 1.5  # a "long" paragraph has at least 1.5 times the words of its source file's median
CARD = "DATA_CARD.md"
KINDS = ("who", "what", "when", "where", "which", "why", "how many", "how much", "how long", "how", "other")
_QUESTION_ID = re.compile(r"(?P<topic>.+)-\d{2,}-q\d+")
_WH = {"who": "who", "whom": "who", "whose": "who", "what": "what", "when": "when", "where": "where",
       "which": "which", "why": "why", "how": "how"}
_WORD_BUCKETS = ((0, 100), (100, 200), (200, 300), (300, 400), (400, None))


class CorpusError(ValueError):
    """Source paragraphs that cannot make one set: a title or a context used twice (names both places)."""


# ---------------------------------------------------------------------------------------------------------
# Sources, ids and the split

def topic_slug(topic: str) -> str:
    """The topic as it appears in question ids: lower case, runs of other characters as one '-'."""
    slug = re.sub(r"[^a-z0-9]+", "-", topic.lower()).strip("-")
    if not slug:
        raise CorpusError(f"topic {topic!r} has no letter or digit to name question ids with")
    return slug


def is_added(paragraph: Paragraph) -> bool:
    """Whether the paragraph comes from source/added/ (train or validation, never test)."""
    return Path(paragraph.path).parent.name == ADDED_DIR


def added_titles(source_dir: str | os.PathLike | None = None) -> set[str]:
    """The titles of the paragraphs in source/added/ (written after the test split was fixed)."""
    return {paragraph.title for paragraph in read_sources(source_dir) if is_added(paragraph)}


def read_sources(source_dir: str | os.PathLike | None = None) -> list[Paragraph]:
    """The paragraphs of every `*.txt` in `source_dir` (default: the package's sources), files by name, then of
    every `added/*.txt`.

    A title or a context used twice is an error naming both places: the split is by title, and one context
    in both splits would let a model be tested on what it was trained on."""
    source_dir = Path(source_dir) if source_dir is not None else SOURCE_DIR
    paragraphs, titles, contexts = [], {}, {}
    for path in [*sorted(source_dir.glob("*.txt")), *sorted((source_dir / ADDED_DIR).glob("*.txt"))]:
        for paragraph in read_source(path):
            where = f"{paragraph.path}, line {paragraph.line}"
            if paragraph.title in titles:
                raise CorpusError(f"{where}: the title {paragraph.title!r} is also used at {titles[paragraph.title]}")
            if paragraph.context in contexts:
                raise CorpusError(f"{where}: the paragraph of {paragraph.title!r} is the same text as the one at "
                                  f"{contexts[paragraph.context]}")
            titles[paragraph.title] = contexts[paragraph.context] = where
            paragraphs.append(paragraph)
    return paragraphs


def examples_of(paragraphs: Sequence[Paragraph]) -> list[list[QAExample]]:
    """For each paragraph, its questions as QAExamples with ids `<topic>-<NN>-q<k>` and the title as title."""
    numbers, result = Counter(), []
    for paragraph in paragraphs:
        slug = topic_slug(paragraph.topic)
        numbers[slug] += 1
        result.append([QAExample(f"{slug}-{numbers[slug]:02d}-q{k}", paragraph.title, paragraph.context, q.text,
                                 (Answer(q.answer, q.answer_start),))
                       for k, q in enumerate(paragraph.questions, start=1)])
    return result


def _rank(title: str) -> int:
    """A stable pseudo-random number for a title (SHA-256; Python's hash() changes from run to run)."""
    return int.from_bytes(hashlib.sha256(f"course_lib.qa:{title}".encode()).digest()[:8], "big")


def words(text: str) -> int:
    return len(text.split())


def split_paragraphs(paragraphs: Sequence[Paragraph]) -> dict[str, str]:
    """title -> "train", "validation" or "test", for every paragraph, in source order.

    Within each topic the paragraphs are ordered by a hash of their title and the first max(1, round(20%))
    go to test (none when a topic has fewer than three). A new paragraph therefore moves at most one old
    paragraph, at the boundary, instead of reshuffling all of them. Then every source file that has long
    paragraphs (LONG_FACTOR times its median length or more) gets at least one of them into test, the one
    with the smallest hash, so the test set holds long contexts (several windows of a model) from every
    writer.

    Added paragraphs (source/added/) are split apart and never go to test: within each topic, ordered by the
    hash, the first max(1, round(VALIDATION_FRACTION)) go to validation (none when a topic has fewer than
    three), the rest to train."""
    validation = set()
    added: dict[str, list[Paragraph]] = {}
    for paragraph in paragraphs:
        if is_added(paragraph):
            added.setdefault(topic_slug(paragraph.topic), []).append(paragraph)
    for members in added.values():
        quota = max(1, round(VALIDATION_FRACTION * len(members))) if len(members) >= 3 else 0
        validation.update(p.title for p in sorted(members, key=lambda p: _rank(p.title))[:quota])
    test = set()
    by_topic: dict[str, list[Paragraph]] = {}
    original = [paragraph for paragraph in paragraphs if not is_added(paragraph)]
    for paragraph in original:
        by_topic.setdefault(topic_slug(paragraph.topic), []).append(paragraph)
    for members in by_topic.values():
        quota = max(1, round(TEST_FRACTION * len(members))) if len(members) >= 3 else 0
        test.update(p.title for p in sorted(members, key=lambda p: _rank(p.title))[:quota])
    by_file: dict[str, list[Paragraph]] = {}
    for paragraph in original:
        by_file.setdefault(paragraph.path, []).append(paragraph)
    for members in by_file.values():
        median = stats.median(words(p.context) for p in members)
        long = [p for p in members if words(p.context) >= LONG_FACTOR * median]
        if long and not any(p.title in test for p in long):
            test.add(min(long, key=lambda p: _rank(p.title)).title)
    return {p.title: "test" if p.title in test else "validation" if p.title in validation else "train"
            for p in paragraphs}


# ---------------------------------------------------------------------------------------------------------
# Counts and the data card

def question_kind(question: str) -> str:
    """The question's kind from its wording: its first wh-word ("In which year ...?" is "which", "Whose
    ...?" is "who"), "how many" / "how much" / "how long" told apart from other "how"; "other" without one."""
    tokens = re.findall(r"[a-z]+", question.lower())
    for i, token in enumerate(tokens):
        if token in _WH:
            following = tokens[i + 1] if i + 1 < len(tokens) else ""
            if token == "how" and following in ("many", "much", "long"):
                return f"how {following}"
            return _WH[token]
    return "other"


def topic_of(example: QAExample) -> str:
    """The topic slug of a corpus question, from its id `<topic>-<NN>-q<k>`."""
    match = _QUESTION_ID.fullmatch(example.id)
    if not match:
        raise ValueError(f"question id {example.id!r} is not <topic>-<NN>-q<k>: not a question of the course's set")
    return match["topic"]


def _bucket(n: int) -> str:
    for low, high in _WORD_BUCKETS:
        if high is None or n < high:
            return f"{low}+" if high is None else f"{low}-{high - 1}"
    raise AssertionError(n)


def statistics(data: dict[str, Sequence[QAExample]] | None = None) -> dict:
    """Counts for the data card and the notebooks, from {"train": [...], "test": [...]} (default: the
    committed files):

    splits {split: {paragraphs, questions}}, topics {topic: {split: {paragraphs, questions}}}, kinds {kind:
    {split: questions}} (see question_kind), paragraph_words {split: {min, median, max, total}} and
    word_buckets {bucket: {split: paragraphs}}. A paragraph is a distinct (title, context)."""
    data = load_splits() if data is None else data
    splits = [split for split in SPLITS if split in data]
    zero = {"paragraphs": 0, "questions": 0}
    result = {"splits": {}, "topics": {}, "kinds": {kind: dict.fromkeys(splits, 0) for kind in KINDS},
              "paragraph_words": {}, "word_buckets": {_bucket(low): dict.fromkeys(splits, 0)
                                                      for low, _ in _WORD_BUCKETS}}
    for split in splits:
        examples = data[split]
        paragraphs = {(e.title, e.context): topic_of(e) for e in examples}
        result["splits"][split] = {"paragraphs": len(paragraphs), "questions": len(examples)}
        for example in examples:
            result["kinds"][question_kind(example.question)][split] += 1
            topic = result["topics"].setdefault(topic_of(example), {s: dict(zero) for s in splits})
            topic[split]["questions"] += 1
        for topic in paragraphs.values():
            result["topics"][topic][split]["paragraphs"] += 1
        lengths = sorted(words(context) for _, context in paragraphs)
        result["paragraph_words"][split] = {"min": lengths[0] if lengths else 0,
                                            "median": int(stats.median_low(lengths)) if lengths else 0,
                                            "max": lengths[-1] if lengths else 0, "total": sum(lengths)}
        for n in lengths:
            result["word_buckets"][_bucket(n)][split] += 1
    result["topics"] = dict(sorted(result["topics"].items()))
    return result


def _table(header: Sequence[str], rows: Iterable[Sequence]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(" --- " if i == 0 else " ---: " for i in range(len(header))) + "|"]
    return lines + ["| " + " | ".join(f"{cell:,}" if isinstance(cell, int) else str(cell) for cell in row) + " |"
                    for row in rows]


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def counts_markdown(numbers: dict) -> str:
    """The card's counts section, rendered from `statistics()`."""
    splits = numbers["splits"]
    total = {key: sum(splits[s][key] for s in SPLITS) for key in ("paragraphs", "questions")}
    lines = ["Per split:", ""] + _table(
        ["split", "paragraphs", "questions", "words in paragraphs", "shortest", "median", "longest"],
        [[s, splits[s]["paragraphs"], splits[s]["questions"],
          *(numbers["paragraph_words"][s][key] for key in ("total", "min", "median", "max"))] for s in SPLITS]
        + [["all", total["paragraphs"], total["questions"],
            sum(numbers["paragraph_words"][s]["total"] for s in SPLITS), "", "", ""]])
    lines += ["", "Per topic (paragraphs, then questions, per split):", ""]
    lines += _table(["topic", *(f"{s} {k}" for k in ("paragraphs", "questions") for s in SPLITS)],
                    [[topic, *(t[s][k] for k in ("paragraphs", "questions") for s in SPLITS)]
                     for topic, t in numbers["topics"].items()])
    lines += ["", "Per question kind (the question's first wh-word, see `corpus.question_kind`):", ""]
    lines += _table(["kind", *SPLITS, "all", "share"],
                    [[kind, *(c[s] for s in SPLITS), sum(c.values()), _share(sum(c.values()), total["questions"])]
                     for kind, c in numbers["kinds"].items()])
    lines += ["", "Paragraph lengths in words (paragraphs per bucket):", ""]
    lines += _table(["words", *SPLITS], [[bucket, *(c[s] for s in SPLITS)]
                                          for bucket, c in numbers["word_buckets"].items()])
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# Build and check

def render(source_dir: str | os.PathLike | None = None) -> dict:
    """The built set in memory: {"files": {name: text}, "blocks": {"counts"}, "data": {split:
    examples}, "warnings": [...]}. `build` writes it, `check` compares it with the committed files."""
    source_dir = Path(source_dir) if source_dir is not None else SOURCE_DIR
    paragraphs = read_sources(source_dir)
    if not paragraphs:
        raise FileNotFoundError(f"no paragraphs in {source_dir}/*.txt: the reading-comprehension sources are missing")
    assignment = split_paragraphs(paragraphs)
    data = {split: [] for split in SPLITS}
    for paragraph, examples in zip(paragraphs, examples_of(paragraphs), strict=True):
        data[assignment[paragraph.title]].extend(examples)
    topics = Counter(topic_slug(p.topic) for p in paragraphs)
    warnings = [f"topic {topic!r} has {n} paragraph(s): it has none in test" for topic, n in sorted(topics.items())
                if n < 3]
    files = {f"{split}.json": squad_json(data[split], version="1.1") for split in SPLITS}
    files["splits.json"] = json.dumps(assignment, ensure_ascii=False, indent=1) + "\n"
    blocks = {"counts": counts_markdown(statistics(data))}
    return {"files": files, "blocks": blocks, "data": data, "warnings": warnings}


def build(source_dir: str | os.PathLike | None = None, out_dir: str | os.PathLike | None = None) -> dict:
    """Write train.json, validation.json and test.json (SQuAD v1.1), splits.json (title -> split) and the generated
    blocks of DATA_CARD.md into `out_dir` (default: the package's data folder). Returns what `render` returns."""
    out_dir = Path(out_dir) if out_dir is not None else DATA_DIR
    built = render(source_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in built["files"].items():
        (out_dir / name).write_text(text, encoding="utf-8", newline="\n")
    card = out_dir / CARD
    text = card.read_text(encoding="utf-8") if card.exists() else "# Data card\n"
    card.write_text(update_card(text, built["blocks"]), encoding="utf-8", newline="\n")
    return built


def _first_difference(name: str, committed: str, built: str) -> str | None:
    if committed == built:
        return None
    old, new = committed.split("\n"), built.split("\n")
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"{name}, line {number}: the committed file has {a.strip()!r:.120}, a fresh build {b.strip()!r:.120}"
    longer, by = ("the committed file", old) if len(old) > len(new) else ("a fresh build", new)
    return f"{name}, line {min(len(old), len(new)) + 1}: {longer} goes on with {by[min(len(old), len(new))]!r:.120}"


def check(source_dir: str | os.PathLike | None = None, data_dir: str | os.PathLike | None = None) -> list[str]:
    """The first difference of each committed file (and each generated block of the card) from a fresh build;
    empty when they are equal."""
    data_dir = Path(data_dir) if data_dir is not None else DATA_DIR
    built, problems = render(source_dir), []
    for name, text in built["files"].items():
        path = data_dir / name
        if not path.is_file():
            problems.append(f"{path} is missing")
            continue
        difference = _first_difference(name, path.read_text(encoding="utf-8"), text)
        if difference:
            problems.append(difference)
    card = data_dir / CARD
    card_text = card.read_text(encoding="utf-8") if card.is_file() else ""
    for name, block in built["blocks"].items():
        committed = card_block(card_text, name)
        if committed is None:
            problems.append(f"{CARD} has no '{name}' block (<!-- {name}: begin --> ... <!-- {name}: end -->)")
            continue
        difference = _first_difference(f"{CARD} ({name})", committed, block)
        if difference:
            problems.append(difference)
    return problems


def load_splits(data_dir: str | os.PathLike | None = None) -> dict[str, list[QAExample]]:
    """{"train", "validation", "test"} -> the questions of the built set (default: the package's data folder)."""
    data_dir = Path(data_dir) if data_dir is not None else DATA_DIR
    missing = [f"{split}.json" for split in SPLITS if not (data_dir / f"{split}.json").is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} missing in {data_dir}: run python -m course_lib.qa.corpus build")
    return {split: read_squad(data_dir / f"{split}.json") for split in SPLITS}


def _main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m course_lib.qa.corpus", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("build", "check"),
                        help="build: write the splits and the card's counts; check: compare them with a fresh build")
    parser.add_argument("--source", type=Path, default=SOURCE_DIR)
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)
    if args.command == "check":
        problems = check(args.source, args.out)
        for problem in problems:
            print(problem)
        if problems:
            print(f"{args.out} differs from a fresh build of {args.source}: run python -m course_lib.qa.corpus build")
            return 1
        print(f"{args.out}: the committed files equal a fresh build")
        return 0
    built = build(args.source, args.out)
    numbers = statistics(built["data"])
    for split in SPLITS:
        print(f"{split:10s} {numbers['splits'][split]['paragraphs']:4d} paragraphs "
              f"{numbers['splits'][split]['questions']:5,d} questions")
    for warning in built["warnings"]:
        print(f"warning: {warning}")
    print(f"wrote {args.out}/{{{','.join(FILES)}}} and the counts of {CARD}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
