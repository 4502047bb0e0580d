"""Benchmark of notebook 06: fine-tune BERT for NER for real and check the issue's targets.

    .venv/bin/python bench/ner_finetune.py [--timeout SECONDS]

Runs solutions/06_ner/06_ner.ipynb top to bottom in full mode (COURSE_FAST unset), offline, sampling the
kernel's peak memory. The notebook records its figures (fine-tuning time, entity-level scores per type on
both corpora's validation and test splits, the layer probe's F1) in the JSON file named by COURSE_RESULTS_JSON;
this script adds the wall time and peak memory, prints them, and keeps them and the executed notebook in
bench/results/ (git-ignored). Targets (issue 32): real-text test micro F1 >= 0.85, course test micro F1 >= 0.83,
the notebook in at most 6 minutes, peak memory under 2.5 GiB.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from notebook_time import run_recording  # noqa: E402

NOTEBOOK = REPO / "solutions" / "06_ner" / "06_ner.ipynb"
TARGETS = {"real_test_micro_f1": 0.85, "test_micro_f1": 0.83, "wall_seconds": 360.0, "peak_memory_gib": 2.5}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")
    args = parser.parse_args(argv)

    figures, figures_path = run_recording(NOTEBOOK, "ner_finetune", args.timeout)
    if figures is None:
        return 1
    wall, errors, load_before = figures["wall_seconds"], figures["errors"], figures["load_average_before"]

    print(f"fine-tuning       {figures['fine_tune_seconds']:.0f} s ({figures['epochs']} epochs, "
          f"{figures['train_sentences']} training sentences)")
    for label, key in (("course test", "test_scores"), ("real-text test", "real_test_scores")):
        print(f"{label:17s} " + "  ".join(f"{kind} F1 {scores['f1']:.3f} (n={scores['support']})"
                                           for kind, scores in figures[key].items()))
    for name, f1 in figures.get("probe_validation_f1", {}).items():
        print(f"probe             {name:38s} validation F1 {f1:.3f}")
    print(f"notebook          {wall:.0f} s wall, peak kernel memory {figures['peak_memory_gib']} GiB, "
          f"load average before {load_before[0]:.2f}; errors: {errors or 'none'}")
    print(f"results           {figures_path}")
    met = (figures["real_test_scores"]["micro"]["f1"] >= TARGETS["real_test_micro_f1"]
           and figures["test_scores"]["micro"]["f1"] >= TARGETS["test_micro_f1"]
           and wall <= TARGETS["wall_seconds"] and figures["peak_memory_gib"] < TARGETS["peak_memory_gib"]
           and not errors)
    print("targets (real-text test micro F1 >= 0.85, course test >= 0.83, notebook <= 6 min, peak memory < 2.5 GiB, "
          "no errors):", "met" if met else "NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
