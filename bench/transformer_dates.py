"""Benchmark of notebook 04: train the date Transformer for real and report its figures.

    .venv/bin/python bench/transformer_dates.py [--notebook PATH] [--timeout SECONDS]

Runs the solutions notebook top to bottom in full mode (COURSE_FAST unset) with nbclient. The
notebook's evaluation cell writes its figures to the JSON file named by COURSE_RESULTS_JSON; this
script (through notebook_time.run_recording) adds the wall time and peak memory, prints everything
and keeps the figures and the executed notebook in bench/results/ (git-ignored).
The issue's targets: training at most 180 s, greedy exact match at least 99% on 1,000 held-out dates.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from notebook_time import run_recording  # noqa: E402

NOTEBOOK = REPO / "solutions" / "04_transformer" / "04_transformer.ipynb"
TARGETS = {"training_seconds": 180.0, "greedy_exact_match": 0.99}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notebook", type=Path, default=NOTEBOOK, help="notebook to run (default: %(default)s)")
    parser.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")
    args = parser.parse_args(argv)

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    figures, figures_path = run_recording(args.notebook, "transformer_dates", args.timeout)
    if figures is None:
        return 1
    figures.update(notebook=str(args.notebook), python=platform.python_version())
    figures_path.write_text(json.dumps(figures, indent=2))
    wall, errors = figures["wall_seconds"], figures["errors"]

    print(f"notebook          {args.notebook}")
    print(f"training time     {figures['training_seconds']:.1f} s ({figures['training_steps']} steps, "
          f"{figures['training_examples']} examples)")
    print(f"greedy exact match {figures['greedy_exact_match']:.2%} on {figures['heldout_examples']} held-out dates")
    print(f"beam exact match   {figures['beam_exact_match']:.2%} (beam width 3, alpha 1)")
    print(f"wall time         {wall:.1f} s for the whole notebook, peak kernel memory {figures['peak_memory_gib']} "
          f"GiB; load average before {figures['load_average_before']}")
    print(f"results           {figures_path}")
    met = (figures["training_seconds"] <= TARGETS["training_seconds"]
           and figures["greedy_exact_match"] >= TARGETS["greedy_exact_match"] and not errors)
    print("targets (training <= 180 s, greedy exact match >= 99%, no errors):", "met" if met else "NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
