"""Assignment 06's real-text corpus, how it is annotated: sheets for annotators, their checks, adjudication of two
annotations, and the stand-off file and data card written from them (the loader is `course_lib.ner.realtext`).

    python -m course_lib.ner.annotating verify SHEET ...     # a marked sheet's problems, all at once
    python -m course_lib.ner.annotating card                 # the counts and agreement into the data card
    python -m course_lib.ner.annotating check                # fail if the card's generated block is stale
    python -m course_lib.ner.annotating consistency          # strings labelled two ways (course_lib.ner.consistency)

A sheet holds one paragraph per block, a line `# para: <title> | <index>` and then one sentence per line, which
the annotator marks in place `[TYPE words]`, as the course corpus's sources are marked (`course_lib.ner.corpus`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from course_lib.ner.realtext import SOURCE_FILE, AnnotationError, articles, sentence_spans
from course_lib.ner.words import token_spans

SHEET_HEADER = "# para: "


def write_sheet(path: str | Path, paragraphs: Iterable[tuple[str, int]]) -> int:
    """An annotation sheet of these paragraphs (`# para: <title> | <index>`, then one sentence per line);
    the annotator marks entities `[TYPE words]` in place. Returns the number of sentences."""
    texts, lines, count = articles(), [], 0
    for title, index in paragraphs:
        text = texts[title][index]
        lines.append(f"{SHEET_HEADER}{title} | {index}")
        for start, end in sentence_spans(text):
            lines.append(" ".join(text[start:end].split()))
            count += 1
        lines.append("")
    Path(path).write_text("\n".join(lines), encoding="utf-8")
    return count


def read_sheet(path: str | Path) -> dict[tuple[str, int], list[tuple[int, int, str]]]:
    """(title, index) -> entity spans (start, end, type) in the paragraph, from a marked sheet. Every problem
    (markup, a sentence whose words differ from the text, a missing or extra sentence) is reported at once."""
    from course_lib.ner.corpus import MarkupError, parse_markup

    texts, problems, result = articles(), [], {}
    blocks: list[tuple[str, int, list[tuple[int, str]]]] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), start=1):
        if line.startswith(SHEET_HEADER):
            title, _, index = line[len(SHEET_HEADER):].rpartition(" | ")
            blocks.append((title, int(index), []))
        elif line.strip():
            if not blocks:
                problems.append(f"{path}:{number}: a sentence before the first '{SHEET_HEADER}' line")
                continue
            blocks[-1][2].append((number, line))
    for title, index, lines in blocks:
        if title not in texts or index >= len(texts[title]):
            problems.append(f"{path}: no paragraph {index} of {title!r} in {SOURCE_FILE}")
            continue
        text = texts[title][index]
        sentences = sentence_spans(text)
        if len(lines) != len(sentences):
            problems.append(f"{path}:{lines[0][0] if lines else '?'}: {title} | {index} has {len(lines)} sentence "
                            f"lines, the paragraph {len(sentences)} sentences")
            continue
        spans = []
        for (number, line), (start, end) in zip(lines, sentences, strict=True):
            try:
                tokens, tags = parse_markup(line, where=f"{path}:{number}")
            except MarkupError as error:
                problems.append(str(error))
                continue
            words = [(word, start + a, start + b) for word, a, b in token_spans(text[start:end])]
            if tokens != [word for word, _, _ in words]:
                problems.append(f"{path}:{number}: the words differ from the text's; the text reads "
                                f"{' '.join(text[start:end].split())!r}")
                continue
            spans += _tag_spans(tags, words)
        result[(title, index)] = spans
    if problems:
        raise AnnotationError(f"{len(problems)} problem(s) in {path}:\n" + "\n".join(problems))
    return result


def _tag_spans(tags: Sequence[str], words: Sequence[tuple[str, int, int]]) -> list[tuple[int, int, str]]:
    spans = []
    for i, tag in enumerate(tags):
        if tag.startswith("B-"):
            last = i
            while last + 1 < len(tags) and tags[last + 1] == f"I-{tag[2:]}":
                last += 1
            spans.append((words[i][1], words[last][2], tag[2:]))
    return spans





# ---------------------------------------------------------------------------------------------------------
# Adjudication: the sentences two annotators marked differently, decided by a third reader

Key = tuple[str, int]
ADJUDICATION_HEADER = "# sentence: "


def mark(text: str, start: int, end: int, spans: Iterable[Sequence]) -> str:
    """text[start:end] with the spans inside it marked `[TYPE words]`, spaces collapsed as on a sheet."""
    pieces, cursor = [], start
    for a, b, kind in sorted(span for span in spans if start <= span[0] and span[1] <= end):
        pieces += [text[cursor:a], f"[{kind} ", text[a:b], "]"]
        cursor = b
    pieces.append(text[cursor:end])
    return " ".join("".join(pieces).split())


def _inside(spans: Iterable[Sequence], start: int, end: int) -> set[tuple]:
    return {tuple(span) for span in spans if start <= span[0] and span[1] <= end}


def disagreements(first: dict[Key, list], second: dict[Key, list]) -> list[tuple[Key, int]]:
    """(paragraph, sentence index) of every sentence of the paragraphs in both whose spans differ."""
    texts, found = articles(), []
    for key in sorted(set(first) & set(second)):
        for n, (start, end) in enumerate(sentence_spans(texts[key[0]][key[1]])):
            if _inside(first[key], start, end) != _inside(second[key], start, end):
                found.append((key, n))
    return found


def write_adjudication_sheet(path: str | Path, first: dict[Key, list], second: dict[Key, list]) -> int:
    """A sheet of the sentences marked differently: `A:` and `B:` lines as each annotator marked them, and an
    `F:` line for the adjudicator's decision (a copy of A or B, or a third marking). Returns how many."""
    texts, lines = articles(), []
    for (title, index), n in disagreements(first, second):
        text = texts[title][index]
        start, end = sentence_spans(text)[n]
        lines += [f"{ADJUDICATION_HEADER}{title} | {index} | {n}",
                  f"A: {mark(text, start, end, first[(title, index)])}",
                  f"B: {mark(text, start, end, second[(title, index)])}", "F: ", ""]
    Path(path).write_text("\n".join(lines), encoding="utf-8")
    return len(lines) // 5


def read_adjudication_sheet(path: str | Path) -> dict[tuple[Key, int], list[tuple[int, int, str]]]:
    """(paragraph, sentence index) -> the adjudicated spans of that sentence, from the `F:` lines."""
    from course_lib.ner.corpus import MarkupError, parse_markup

    texts, decided, problems, current = articles(), {}, [], None
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), start=1):
        if line.startswith(ADJUDICATION_HEADER):
            title, index, n = line[len(ADJUDICATION_HEADER):].rsplit(" | ", 2)
            current = ((title, int(index)), int(n))
        elif line.startswith("F:") and current is not None:
            (title, index), n = current
            if not line[2:].strip():
                problems.append(f"{path}:{number}: no decision yet (an empty F: line)")
                current = None
                continue
            text = texts[title][index]
            start, end = sentence_spans(text)[n]
            try:
                tokens, tags = parse_markup(line[2:].strip(), where=f"{path}:{number}")
            except MarkupError as error:
                problems.append(str(error))
                continue
            words = [(word, start + a, start + b) for word, a, b in token_spans(text[start:end])]
            if tokens != [word for word, _, _ in words]:
                problems.append(f"{path}:{number}: the F: line's words differ from the sentence's")
                continue
            decided[current] = _tag_spans(tags, words)
            current = None
    if problems:
        raise AnnotationError(f"{len(problems)} problem(s) in {path}:\n" + "\n".join(problems))
    return decided


def adjudicated(first: dict[Key, list], second: dict[Key, list],
                decisions: dict[tuple[Key, int], list]) -> dict[Key, list]:
    """The final spans of the paragraphs annotated twice: where both agree, theirs; elsewhere the decision.
    Refuses a disagreement left undecided."""
    texts, final = articles(), {}
    undecided = [where for where in disagreements(first, second) if where not in decisions]
    if undecided:
        raise AnnotationError(f"{len(undecided)} sentence(s) marked differently have no decision, the first "
                              f"{undecided[0]}")
    for key in sorted(set(first) & set(second)):
        spans = []
        for n, (start, end) in enumerate(sentence_spans(texts[key[0]][key[1]])):
            spans += sorted(decisions[(key, n)]) if (key, n) in decisions else sorted(_inside(first[key], start, end))
        final[key] = [list(span) for span in spans]
    return final


def write_annotations(path: str | Path, source_sha256: str, first: dict[Key, list], second: dict[Key, list],
                      final: dict[Key, list]) -> int:
    """The stand-off file: a header line, then one JSON line per paragraph of `first`, in title and index order:
    its split, its adjudicated entities (`final` where annotated twice, else `first`'s) and, when annotated
    twice, both annotations."""
    import json

    from course_lib.ner.realtext import split_of

    lines = [json.dumps({"source": SOURCE_FILE, "sha256": source_sha256, "text": "CC BY-SA 4.0 (SQuAD v1.1, "
                         "Wikipedia)", "annotations": "the course's own"})]
    for key in sorted(first):
        record = {"title": key[0], "paragraph": key[1], "split": split_of(key[0]),
                  "entities": [list(span) for span in (final[key] if key in final else first[key])]}
        if key in second:
            record["first"] = [list(span) for span in first[key]]
            record["second"] = [list(span) for span in second[key]]
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines) - 1



# ---------------------------------------------------------------------------------------------------------
# The data card's generated block

CARD = Path(__file__).resolve().parent / "data" / "realtext" / "DATA_CARD.md"
CARD_BLOCK = "realtext-counts"


def _row(cells: Sequence) -> str:
    return "| " + " | ".join(f"{cell:,}" if isinstance(cell, int) else str(cell) for cell in cells) + " |"


def card_counts() -> str:
    """The card's generated block: counts per split and type, and the agreement of the paragraphs annotated
    twice (test, and the sample of train and validation), each annotation against the other and against the
    adjudicated one."""
    from course_lib.ner import ENTITY_TYPES
    from course_lib.ner.annotations import statistics
    from course_lib.ner.realtext import SPLITS, agreement, load_realtext, read_annotations, split_of

    corpus = load_realtext()
    _, records = read_annotations()
    lines = ["| split | articles | paragraphs | sentences | tokens | " + " | ".join(ENTITY_TYPES) + " | entities |",
             "| --- |" + " ---: |" * (5 + len(ENTITY_TYPES))]
    for split in (*SPLITS, "all"):
        sentences = [s for name in SPLITS for s in corpus[name]] if split == "all" else corpus[split]
        mine = [r for r in records if split in ("all", split_of(r["title"]))]
        numbers = statistics(sentences)
        kinds = [numbers["entities"][kind] for kind in ENTITY_TYPES]
        lines.append(_row([split, len({r["title"] for r in mine}), len(mine), numbers["sentences"],
                           numbers["tokens"], *kinds, sum(kinds)]))
    lines += ["", "Agreement, entity F1 (exact span and type) between the two independent annotations, and of each "
              "with the adjudicated one:", "",
              "| paragraphs annotated twice | paragraphs | sentences marked differently (adjudicated) | "
              "first vs second | " + " | ".join(ENTITY_TYPES) + " | first vs final | second vs final |",
              "| --- |" + " ---: |" * (5 + len(ENTITY_TYPES))]
    texts = articles()
    for label, chosen in (("test split (all of it)", lambda split: split == "test"),
                          ("train and validation sample", lambda split: split != "test")):
        twice = [r for r in records if "second" in r and chosen(split_of(r["title"]))]
        if not twice:
            continue
        both = agreement((r["first"], r["second"]) for r in twice)
        changed = sum(_inside(r["first"], a, b) != _inside(r["second"], a, b)
                      for r in twice for a, b in sentence_spans(texts[r["title"]][r["paragraph"]]))
        against_final = [agreement((r[who], r["entities"]) for r in twice)["micro"]["f1"]
                         for who in ("first", "second")]
        lines.append(_row([label, len(twice), changed, f"{both['micro']['f1']:.3f}",
                           *(f"{both[kind]['f1']:.3f}" for kind in ENTITY_TYPES),
                           *(f"{value:.3f}" for value in against_final)]))
    return "\n".join(lines)


def _check_each(sheets: Sequence[str], check) -> int:
    """Run `check(sheet)` on every sheet: its summary, or its AnnotationError on stderr; 1 if any failed."""
    import sys

    failed = 0
    for sheet in sheets:
        try:
            print(f"{sheet}: {check(sheet)}, no problem")
        except AnnotationError as error:
            print(error, file=sys.stderr)
            failed += 1
    return 1 if failed else 0


def _main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import sys

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["consistency"]:  # its own options, parsed where the check lives
        from course_lib.ner.consistency import main

        return main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m course_lib.ner.annotating", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    verify = commands.add_parser("verify", help="check marked sheets against the installed text")
    verify.add_argument("sheets", nargs="+")
    adjudicate = commands.add_parser("adjudicate-check", help="check an adjudication sheet's F: lines")
    adjudicate.add_argument("sheets", nargs="+")
    commands.add_parser("card", help="write the counts and agreement into the data card")
    commands.add_parser("check", help="fail if the data card's generated block differs from the annotations")
    commands.add_parser("consistency", help="list strings labelled two ways; fail on any the guide does not list")
    args = parser.parse_args(argv)
    if args.command in ("card", "check"):
        from course_lib.data_cards import card_block, update_card

        counts, text = card_counts(), CARD.read_text(encoding="utf-8")
        if args.command == "card":
            CARD.write_text(update_card(text, {CARD_BLOCK: counts}), encoding="utf-8")
            print(f"{CARD}: counts written")
            return 0
        if card_block(text, CARD_BLOCK) != counts:
            print(f"{CARD}: the counts differ from the annotations: run python -m course_lib.ner.annotating card",
                  file=sys.stderr)
            return 1
        print(f"{CARD}: counts up to date")
        return 0
    if args.command == "adjudicate-check":
        def decisions(sheet):
            decided = read_adjudication_sheet(sheet)
            blocks = Path(sheet).read_text(encoding="utf-8").count(ADJUDICATION_HEADER)
            if len(decided) != blocks:
                raise AnnotationError(f"{sheet}: {blocks - len(decided)} of {blocks} blocks have no decision (an "
                                      "empty F: line)")
            return f"{len(decided)} decisions"

        return _check_each(args.sheets, decisions)
    if args.command == "verify":
        def marks(sheet):
            spans = read_sheet(sheet)
            return f"{len(spans)} paragraphs, {sum(map(len, spans.values()))} entities"

        return _check_each(args.sheets, marks)
    return 2


if __name__ == "__main__":
    raise SystemExit(_main())
