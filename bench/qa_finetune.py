"""Benchmark of notebook 07: fine-tune BERT as an extractive reader for real and check the issue's targets.

    .venv/bin/python bench/qa_finetune.py [--timeout SECONDS]

Runs solutions/07_qa/07_qa.ipynb top to bottom in full mode (COURSE_FAST unset), offline, sampling the kernel's
peak memory. The notebook records its figures (fine-tuning time, windows, exact match and F1 on held-out
stories and on the course set's test split) in the JSON file named by COURSE_RESULTS_JSON; this script adds the
wall time and peak memory, prints them, and keeps them and the executed notebook in bench/results/
(git-ignored). Targets: EM >= 95 on held-out stories, fine-tuning <= 8 minutes, peak memory < 3 GiB; the
course set's F1 is reported (aim: >= 70).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from notebook_time import run_recording  # noqa: E402

NOTEBOOK = REPO / "solutions" / "07_qa" / "07_qa.ipynb"
TARGETS = {"stories_exact_match": 95.0, "fine_tuning_seconds": 480.0, "peak_memory_gib": 3.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")
    args = parser.parse_args(argv)

    figures, figures_path = run_recording(NOTEBOOK, "qa_finetune", args.timeout)
    if figures is None:
        return 1
    wall, errors, load_before = figures["wall_seconds"], figures["errors"], figures["load_average_before"]

    print(f"fine-tuning       {figures['fine_tuning_seconds']:.0f} s on {figures['train_windows']} windows")
    for name, scores in figures["scores"].items():
        print(f"{name:18s}{scores['questions']:4d} questions  EM {scores['exact_match']:5.1f}  F1 {scores['f1']:5.1f}")
    print(f"notebook          {wall:.0f} s wall, peak kernel memory {figures['peak_memory_gib']} GiB, "
          f"load average before {load_before[0]:.2f}; errors: {errors or 'none'}")
    print(f"results           {figures_path}")
    met = (figures["scores"]["held-out stories"]["exact_match"] >= TARGETS["stories_exact_match"]
           and figures["fine_tuning_seconds"] <= TARGETS["fine_tuning_seconds"]
           and figures["peak_memory_gib"] < TARGETS["peak_memory_gib"] and not errors)
    print("targets (stories EM >= 95, fine-tuning <= 480 s, peak memory < 3 GiB, no errors):",
          "met" if met else "NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
