"""Benchmark of notebook 04: train the date Transformer for real and report its figures.

    .venv/bin/python bench/transformer_dates.py [--notebook PATH] [--timeout SECONDS]

Runs the solutions notebook top to bottom in full mode (COURSE_FAST unset) with nbclient. The
notebook's evaluation cell writes its figures to the JSON file named by COURSE_RESULTS_JSON; this
script adds the wall time, prints everything and keeps the figures and the executed notebook in
bench/results/ (git-ignored).
The issue's targets: training at most 180 s, greedy exact match at least 99% on 1,000 held-out dates.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from notebook_time import full_mode_offline  # noqa: E402

NOTEBOOK = REPO / "solutions" / "04_transformer" / "04_transformer.ipynb"
RESULTS = REPO / "bench" / "results"
TARGETS = {"training_seconds": 180.0, "greedy_exact_match": 0.99}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notebook", type=Path, default=NOTEBOOK, help="notebook to run (default: %(default)s)")
    parser.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")
    args = parser.parse_args(argv)

    import nbformat
    from nbclient import NotebookClient

    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    figures_path = RESULTS / f"transformer_dates_{stamp}.json"
    full_mode_offline(figures_path)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

    notebook = nbformat.read(args.notebook, as_version=4)
    client = NotebookClient(notebook, timeout=args.timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(args.notebook.parent)}})
    started = time.perf_counter()
    client.execute()
    wall = time.perf_counter() - started

    errors = [(index + 1, output.get("ename"), output.get("evalue", "")[:200])
              for index, cell in enumerate(notebook.cells) for output in cell.get("outputs", [])
              if output.get("output_type") == "error"]
    if not figures_path.exists():
        print(f"the notebook wrote no figures to {figures_path}; errors: {errors}", file=sys.stderr)
        return 1
    figures = json.loads(figures_path.read_text())
    figures.update(notebook=str(args.notebook), wall_seconds=round(wall, 1), errors=errors,
                   cpu_count=os.cpu_count(), load_average=list(os.getloadavg()), python=platform.python_version(),
                   finished_utc=stamp)
    figures_path.write_text(json.dumps(figures, indent=2))
    nbformat.write(notebook, figures_path.with_suffix(".ipynb"))  # executed copy, to look at the figures

    print(f"notebook          {args.notebook}")
    print(f"training time     {figures['training_seconds']:.1f} s ({figures['training_steps']} steps, "
          f"{figures['training_examples']} examples)")
    print(f"greedy exact match {figures['greedy_exact_match']:.2%} on {figures['heldout_examples']} held-out dates")
    print(f"beam exact match   {figures['beam_exact_match']:.2%} (beam width 3, alpha 1)")
    print(f"wall time         {wall:.1f} s for the whole notebook; load average {figures['load_average']}")
    print(f"results           {figures_path}")
    met = (figures["training_seconds"] <= TARGETS["training_seconds"]
           and figures["greedy_exact_match"] >= TARGETS["greedy_exact_match"] and not errors)
    print("targets (training <= 180 s, greedy exact match >= 99%, no errors):", "met" if met else "NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
