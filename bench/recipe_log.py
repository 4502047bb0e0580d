"""One line per recipe run, for bench/squad_recipe.py and bench/ner_recipe.py: printed and appended to a JSONL file."""

from __future__ import annotations

import json
import resource
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def peak_rss_gib() -> float:
    """This process's peak resident memory so far, in GiB (Linux reports ru_maxrss in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)


def log_run(name: str, row: dict) -> None:
    """Print `row` as JSON and append it to bench/results/<name>.jsonl."""
    print(json.dumps(row))
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / f"{name}.jsonl", "a") as handle:
        handle.write(json.dumps(row) + "\n")
