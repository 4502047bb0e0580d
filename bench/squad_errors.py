"""What a reader gets wrong on SQuAD v1.1's test split, from the answers bench/squad_recipe.py --test saved.

    .venv/bin/python bench/squad_errors.py [default] [--examples 3]

Every wrong answer (exact match 0) falls in one kind: `too long` (it holds a gold answer and more), `too short`
(it lies inside a gold answer), `overlapping` (shares words with one, neither inside the other) or `elsewhere`
(no word in common with any gold answer). Prints each kind's share of the questions, its share per kind of question
(who, when, why, ...), and a few examples of each.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from recipe_log import RESULTS  # noqa: E402

from course_lib.layers import normalize_answer as normalize  # noqa: E402
from course_lib.qa.corpus import question_kind  # noqa: E402


def error_kind(row: dict) -> str | None:
    """None for an exact match, else the kind of mistake."""
    if row["em"] == 1.0:
        return None
    if row["f1"] == 0.0:
        return "elsewhere"
    predicted = normalize(row["predicted"])
    golds = [normalize(gold) for gold in row["golds"]]
    if any(gold in predicted for gold in golds):
        return "too long"
    if any(predicted in gold for gold in golds):
        return "too short"
    return "overlapping"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", default="default", help="the budget (or 'recipe') the answers are of")
    parser.add_argument("--examples", type=int, default=3)
    args = parser.parse_args(argv)
    path = RESULTS / f"squad_test_answers_{args.name}.json"
    if not path.is_file():
        print(f"no saved answers at {path}: run bench/squad_recipe.py --budget {args.name} --test all first")
        return 2
    rows = json.loads(path.read_text())
    kinds = Counter()
    by_question = defaultdict(Counter)
    examples = defaultdict(list)
    for row in rows:
        kind = error_kind(row) or "right"
        kinds[kind] += 1
        by_question[question_kind(row["question"])][kind] += 1
        examples[kind].append(row)
    print(f"{len(rows):,} questions")
    for kind, count in kinds.most_common():
        print(f"  {kind:12s} {count:6,d}  {100 * count / len(rows):5.1f}%")
    print("\nright, by kind of question:")
    for question, counts in sorted(by_question.items(), key=lambda item: -sum(item[1].values())):
        total = sum(counts.values())
        print(f"  {question:10s} {total:6,d} questions, {100 * counts['right'] / total:5.1f}% right, "
              + ", ".join(f"{kind} {100 * n / total:.0f}%" for kind, n in counts.most_common() if kind != "right"))
    rng = random.Random(0)
    for kind in kinds:
        if kind == "right":
            continue
        print(f"\n{kind}:")
        for row in rng.sample(examples[kind], min(args.examples, len(examples[kind]))):
            print(f"  Q: {row['question']}\n     predicted {row['predicted']!r}; gold {row['golds'][0]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
