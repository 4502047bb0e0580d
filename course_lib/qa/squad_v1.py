"""Assignments 07 and 08: the official SQuAD v1.1 files, the course's reading data (Rajpurkar et al., 2016;
CC BY-SA 4.0), as splits. course_lib/squad_files.py finds the installed files and checks them first.

Splits, fixed once for every run and every version of the course:

- `train` and `validation` come from `train-v1.1.json`, split **by article** (a Wikipedia page): no paragraph, and
  no page, is in both. An article goes to validation when a hash of its title falls in the lowest
  `VALIDATION_SHARE` of the range, so the split does not depend on the order of the file.
- `test` is `dev-v1.1.json`, the set every published SQuAD v1.1 reader reports. Recipes are chosen on validation;
  test is read to report, never to tune.

`sample(split, n)` draws a fixed, seeded part of a split: the notebooks and benches name how many questions they
use, and the same n gives the same questions everywhere.

    python -m course_lib.qa.squad_v1 card     # write the splits' counts into data/SQUAD.md (the card's marked block)
    python -m course_lib.qa.squad_v1 check    # fail if the card's counts differ from the files
"""

from __future__ import annotations

import functools
import hashlib
import operator
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from course_lib.qa.corpus import card_block, update_card
from course_lib.qa.squad import QAExample, read_squad
from course_lib.squad_files import SquadFilesMissing, official_file

SPLITS = ("train", "validation", "test")
VALIDATION_SHARE = 0.1  # of train-v1.1.json's articles
CARD = Path(__file__).resolve().parent / "data" / "SQUAD.md"
CARD_BLOCK = "squad-v1-counts"  # the card's generated block, between <!-- squad-v1-counts: begin/end --> markers


def in_validation(title: str) -> bool:
    """Whether an article of train-v1.1.json belongs to the validation split (a hash of its title, not its place)."""
    value = int.from_bytes(hashlib.sha256(title.encode("utf-8")).digest()[:8], "big")
    return value < VALIDATION_SHARE * 2**64


@functools.lru_cache(maxsize=2)
def _parsed(name: str) -> tuple[QAExample, ...]:
    return tuple(read_squad(official_file(name)))


def _read(name: str) -> tuple[QAExample, ...]:
    # Checked on every call, not only the first: a file removed, damaged or redirected (COURSE_SQUAD_DIR) since
    # must say so. The parse may stay cached by name: any file that passes the MD5 check has the same bytes.
    official_file(name)
    return _parsed(name)


def load_split(split: str) -> list[QAExample]:
    """Every question of a split, in file order: `train`, `validation` (train-v1.1.json, by article) or `test`
    (dev-v1.1.json, where a question has one to a few answers, from different annotators)."""
    if split == "test":
        return list(_read("dev-v1.1.json"))
    if split in ("train", "validation"):
        examples, wanted = _read("train-v1.1.json"), split == "validation"
        side = {title: in_validation(title) for title in {example.title for example in examples}}  # 442, not 87,599
        return [example for example in examples if side[example.title] == wanted]
    raise ValueError(f"unknown split {split!r}: choose one of {SPLITS}")


def sample(split: str, n: int | None = None, *, seed: int = 0) -> list[QAExample]:
    """`n` questions of a split drawn with a seeded generator (all of them, shuffled, when n is None); the first
    n of a larger sample are the same questions, so budgets of different sizes nest."""
    # n is checked before the split is read: a wrong n should not wait for 30 MB to be parsed.
    if n is not None and (not hasattr(n, "__index__") or operator.index(n) < 0):
        raise ValueError(f"n is a number of questions (a whole number, at least 0) or None; got {n!r}")
    examples = load_split(split)
    order = list(range(len(examples)))
    random.Random(f"{split}-{seed}").shuffle(order)
    return [examples[i] for i in order[:None if n is None else operator.index(n)]]


# ---------------------------------------------------------------------------------------------------------
# The card's counts (data/SQUAD.md), generated from the files so that they cannot drift from them

def _row(label: str, source: str, examples: Sequence[QAExample]) -> str:
    answers = sorted({len(example.answers) for example in examples})
    per_question = str(answers[0]) if answers[0] == answers[-1] else f"{answers[0]} to {answers[-1]}"
    # A paragraph is a distinct context of an article: train-v1.1.json repeats a few paragraphs within their
    # article (same text, other questions), which a reader sees as one context.
    return (f"| {label} | `{source}` | {len({e.title for e in examples}):,} | "
            f"{len({(e.title, e.context) for e in examples}):,} | {len(examples):,} | {per_question} |")


def card_counts(splits: dict[str, Sequence[QAExample]] | None = None) -> str:
    """The card's table: articles, paragraphs, questions and answers per question of each split (of the
    official files unless `splits` gives the examples)."""
    splits = splits if splits is not None else {split: load_split(split) for split in SPLITS}
    both = [*splits["train"], *splits["validation"]]
    share = len({e.title for e in splits["validation"]}) / len({e.title for e in both})
    return "\n".join([
        "| split | from | articles | paragraphs | questions | answers per question |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
        _row("train", "train-v1.1.json", splits["train"]),
        _row("validation", "train-v1.1.json", splits["validation"]),
        _row("train + validation", "train-v1.1.json", both),
        _row("test", "dev-v1.1.json", splits["test"]),
        "",
        f"Validation holds {share:.1%} of the articles of `train-v1.1.json` (`VALIDATION_SHARE` = {VALIDATION_SHARE}).",
    ])


def card_difference(card_text: str, counts: str) -> str | None:
    """What is wrong with the card's generated block, or None when it equals `counts`."""
    committed = card_block(card_text, CARD_BLOCK)
    if committed is None:
        return f"{CARD.name} has no <!-- {CARD_BLOCK}: begin --> ... <!-- {CARD_BLOCK}: end --> block"
    if committed != counts:
        return f"the counts in {CARD.name} differ from the files': run python -m course_lib.qa.squad_v1 card"
    return None


def _main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m course_lib.qa.squad_v1",
                                     description=f"The counts of {CARD.name}, generated from the SQuAD v1.1 files.")
    parser.add_argument("command", choices=("card", "check"),
                        help=f"card: write the splits' counts into {CARD.name}; check: fail if they differ")
    args = parser.parse_args(argv)
    try:
        counts = card_counts()
    except SquadFilesMissing as error:
        print(error, file=sys.stderr)
        return 1
    text = CARD.read_text(encoding="utf-8")
    if args.command == "card":
        CARD.write_text(update_card(text, {CARD_BLOCK: counts}), encoding="utf-8", newline="\n")
        print(f"wrote the counts of {CARD}")
        return 0
    problem = card_difference(text, counts)
    print(problem or f"{CARD}: the counts equal the files'", file=sys.stderr if problem else sys.stdout)
    return 1 if problem else 0


if __name__ == "__main__":
    raise SystemExit(_main())
