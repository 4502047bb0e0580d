"""Run one solutions notebook top to bottom in full mode, offline, and report how long it takes.

    .venv/bin/python bench/notebook_time.py 05_bert [--timeout SECONDS]

COURSE_FAST is unset (full mode) and the kernel runs with the network refused (the tests' guard,
tests/offline/sitecustomize.py), so the figure is that of a learner's offline run. Prints the wall time,
the slowest cells and any error; writes the figures and the executed notebook to bench/results/.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
OFFLINE_GUARD = REPO / "tests" / "offline"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stem", help="assignment stem, e.g. 05_bert")
    parser.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")
    args = parser.parse_args(argv)
    path = REPO / "solutions" / args.stem / f"{args.stem}.ipynb"
    if not path.is_file():
        print(f"no notebook {path}", file=sys.stderr)
        return 2

    import nbformat
    from nbclient import NotebookClient

    os.environ.pop("COURSE_FAST", None)
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(OFFLINE_GUARD), os.environ.get("PYTHONPATH")]))
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=args.timeout, kernel_name="python3", allow_errors=True,
                            record_timing=True, resources={"metadata": {"path": str(path.parent)}})
    started = time.perf_counter()
    client.execute()
    wall = time.perf_counter() - started

    def seconds(cell) -> float:
        timing = cell.metadata.get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if not (start and end):
            return 0.0
        return (dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds()

    cells = [(index + 1, seconds(cell), cell.source.splitlines()[0][:70] if cell.source else "")
             for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    errors = [(index + 1, output.get("ename"), output.get("evalue", "")[:200])
              for index, cell in enumerate(notebook.cells) for output in cell.get("outputs", [])
              if output.get("output_type") == "error"]
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out = RESULTS / f"notebook_time_{args.stem}_{stamp}"
    figures = {"notebook": str(path), "mode": "full, offline", "wall_seconds": round(wall, 1),
               "cells": cells, "errors": errors, "load_average": list(os.getloadavg()), "finished_utc": stamp}
    out.with_suffix(".json").write_text(json.dumps(figures, indent=2))
    nbformat.write(notebook, out.with_suffix(".ipynb"))

    print(f"{args.stem}: {wall:.1f} s wall in full mode, offline; load average {figures['load_average']}")
    for number, spent, first_line in sorted(cells, key=lambda c: -c[1])[:5]:
        print(f"  cell {number:>3}: {spent:6.1f} s  {first_line}")
    print("errors:", errors or "none")
    print("results:", out.with_suffix(".json"))
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
