"""Run solutions notebooks top to bottom in full mode, offline, and report their time and peak memory.

    .venv/bin/python bench/notebook_time.py [05_bert ...] [--timeout SECONDS]

With no stem, every notebook in solutions/ runs, one after the other. COURSE_FAST is unset (full mode) and
the kernel runs with the network refused (the tests' guard, tests/offline/sitecustomize.py), so the figures
are those of a learner's offline run. Peak memory is the kernel's (its resident set size), and while it runs
processes of its own, theirs and its together (the sum of proportional set sizes, so that shared libraries count
once), sampled every 0.2 s.
Prints the wall time, the slowest cells and any error per notebook, then a Markdown table for the README;
writes the figures and the executed notebooks to bench/results/.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
OFFLINE_GUARD = REPO / "tests" / "offline"
# The figures README.md quotes (committed; `--record` updates a notebook's entry, `--readme` rewrites the table).
FIGURES = REPO / "bench" / "notebook_figures.json"
README = REPO / "README.md"


class PeakMemory:
    """Highest memory of this process's children (the kernel and what it starts), sampled in a thread; `cell_peak`
    is the highest since the last `start_cell()`, so that each cell's own peak can be read.

    While the kernel runs processes of its own, each process counts its proportional set size (PSS, on Linux): a
    page shared by n processes counts 1/n in each, so the sum is the memory they occupy together. Summing resident
    set sizes would count twice the libraries that a kernel and its child both map (TensorFlow's alone are about
    0.4 GiB: notebook 08 runs TensorFlow in a child beside a kernel that imported it too). A kernel alone counts its
    resident set size, which its PSS equals within a few MiB. `peak_rss_bytes` keeps the sum of resident set sizes,
    for comparison."""

    def __init__(self, interval: float = 0.2):
        self.interval, self.peak_bytes, self.cell_peak, self.peak_rss_bytes = interval, 0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @staticmethod
    def children_memory() -> tuple[int, int]:
        """(memory as the peak counts it, sum of RSS) over this process's children, in bytes. The first is the sum
        of PSS while the kernel has children of its own, else the kernel's RSS: reading PSS walks every mapping of a
        process (about 40 ms for a kernel holding TensorFlow, its memory map locked meanwhile): too costly five times a
        second while the kernel trains."""
        import psutil

        children = []
        for child in psutil.Process().children(recursive=True):
            try:
                children.append((child, child.memory_info().rss))
            except psutil.Error:  # a child that ended between listing and reading
                pass
        rss = sum(resident for _, resident in children)
        if len(children) <= 1:
            return rss, rss
        pss = 0
        for child, resident in children:
            try:
                pss += child.memory_full_info().pss
            except (AttributeError, psutil.AccessDenied):  # no PSS outside Linux
                pss += resident
            except psutil.Error:
                pass
        return pss, rss

    def sample(self) -> int:
        """The children's memory as the peak counts it (see children_memory); also raises the RSS peak."""
        pss, rss = self.children_memory()
        self.peak_rss_bytes = max(self.peak_rss_bytes, rss)
        return pss

    def _sample(self) -> None:
        while not self._stop.is_set():
            total = self.sample()
            self.peak_bytes = max(self.peak_bytes, total)
            self.cell_peak = max(self.cell_peak, total)
            self._stop.wait(self.interval)

    def start_cell(self, **_) -> None:
        self.cell_peak = self.sample()  # a cell shorter than the sampling interval still gets a reading

    def hooks(self, peaks: dict[int, int]) -> dict:
        """nbclient hooks that record each code cell's peak (bytes) in `peaks`, by cell index."""
        def executed(cell_index, **_):
            peaks[cell_index] = max(self.cell_peak, self.sample())
        return {"on_cell_execute": self.start_cell, "on_cell_executed": executed}

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def full_mode_offline(results_json: Path | None = None) -> None:
    """Make the notebooks this process runs take full mode (COURSE_FAST unset), refuse the network (the tests'
    guard), use this venv's kernel and plot without a screen; with `results_json`, the notebook records its
    figures there (course_lib.env.record_results)."""
    os.environ.pop("COURSE_FAST", None)
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(OFFLINE_GUARD), os.environ.get("PYTHONPATH")]))
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    if results_json is not None:
        os.environ["COURSE_RESULTS_JSON"] = str(results_json)


def run_recording(path: Path, name: str, timeout: int) -> tuple[dict | None, Path]:
    """Execute the notebook at `path` in full mode, offline, sampling its kernel's peak memory. The notebook
    records its figures (course_lib.env.record_results) in bench/results/<name>_<stamp>.json; this adds the wall
    time, peak memory, errors and load average and keeps the executed notebook beside it. Returns (figures, their
    path); figures is None when the notebook recorded nothing (the errors are printed)."""
    import nbformat
    from nbclient import NotebookClient

    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    figures_path = RESULTS / f"{name}_{stamp}.json"
    full_mode_offline(figures_path)
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    load_before = os.getloadavg()
    started = time.perf_counter()
    with PeakMemory() as memory:
        client.execute()
    wall = time.perf_counter() - started
    errors = [(index + 1, output.get("ename"), output.get("evalue", "")[:200])
              for index, cell in enumerate(notebook.cells) for output in cell.get("outputs", [])
              if output.get("output_type") == "error"]
    if not figures_path.exists():
        print(f"the notebook recorded no figures in {figures_path}; errors: {errors}", file=sys.stderr)
        return None, figures_path
    figures = json.loads(figures_path.read_text())
    figures.update(wall_seconds=round(wall, 1), peak_memory_gib=round(memory.peak_bytes / 2**30, 2), errors=errors,
                   cpu_count=os.cpu_count(), load_average_before=list(load_before), finished_utc=stamp)
    figures_path.write_text(json.dumps(figures, indent=2))
    nbformat.write(notebook, figures_path.with_suffix(".ipynb"))
    return figures, figures_path


def cell_seconds(cell) -> float:
    timing = cell.metadata.get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    return (dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds()


def run_notebook(stem: str, timeout: int) -> dict:
    """Execute solutions/<stem>/<stem>.ipynb; return its figures and write them to bench/results/."""
    import nbformat
    from nbclient import NotebookClient

    path = REPO / "solutions" / stem / f"{stem}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out = RESULTS / f"notebook_time_{stem}_{stamp}"
    recorded = out.with_name(out.name + "_recorded.json")  # what the notebook records (scores, training time)
    os.environ["COURSE_RESULTS_JSON"] = str(recorded)
    memory, peaks = PeakMemory(), {}
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3", allow_errors=True,
                            record_timing=True, resources={"metadata": {"path": str(path.parent)}},
                            **memory.hooks(peaks))
    load_before = os.getloadavg()
    started = time.perf_counter()
    with memory:
        client.execute()
    wall = time.perf_counter() - started

    cells = [(index + 1, cell_seconds(cell), round(peaks.get(index, 0) / 2**20),
              cell.source.splitlines()[0][:70] if cell.source else "")
             for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    errors = [(index + 1, output.get("ename"), output.get("evalue", "")[:200])
              for index, cell in enumerate(notebook.cells) for output in cell.get("outputs", [])
              if output.get("output_type") == "error"]
    figures = {"notebook": str(path), "mode": "full, offline", "wall_seconds": round(wall, 1),
               "peak_memory_mib": round(memory.peak_bytes / 2**20),
               "peak_rss_sum_mib": round(memory.peak_rss_bytes / 2**20),
               "memory_measure": "sum of PSS with children, else RSS",
               "cells": cells, "errors": errors,
               "load_average_before": list(load_before), "load_average_after": list(os.getloadavg()),
               "cpu_count": os.cpu_count(), "finished_utc": stamp,
               "recorded": json.loads(recorded.read_text()) if recorded.is_file() else {}}
    out.with_suffix(".json").write_text(json.dumps(figures, indent=2))
    nbformat.write(notebook, out.with_suffix(".ipynb"))

    print(f"{stem}: {wall:.1f} s wall in full mode, offline; peak kernel memory {figures['peak_memory_mib']} MiB; "
          f"load average before {load_before[0]:.2f}")
    for number, spent, peak, first_line in sorted(cells, key=lambda c: -c[1])[:5]:
        print(f"  cell {number:>3}: {spent:6.1f} s  {peak:6,d} MiB  {first_line}")
    print("  errors:", errors or "none")
    print("  results:", out.with_suffix(".json"))
    return figures


def record(stem: str, figures: dict) -> None:
    """Keep a notebook's wall time, peak memory and recorded figures in FIGURES, for the README's table."""
    from course_lib.machine import describe, kept_beside

    kept = json.loads(FIGURES.read_text()) if FIGURES.is_file() else {}
    measured = {"wall_seconds": figures["wall_seconds"], "peak_memory_mib": figures["peak_memory_mib"],
                "finished_utc": figures["finished_utc"], "load_average_before": figures["load_average_before"][0],
                "recorded": figures.get("recorded", {}), "machine": describe()}
    if "memory_measure" in figures:  # runs before it summed resident set sizes
        measured.update(memory_measure=figures["memory_measure"], peak_rss_sum_mib=figures["peak_rss_sum_mib"])
    kept[stem] = kept_beside(kept.get(stem), measured)
    FIGURES.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n")


def duration(seconds: float) -> str:
    """A wall time as the README writes it: "8 s", "1 min 46 s", "6 min"."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} min {rest} s" if minutes < 5 else f"{minutes + (rest >= 30)} min"


def readme_with_figures(text: str, figures: dict) -> str:
    """README.md's notebook table with each row's time and memory taken from `figures` (FIGURES's content);
    rows of notebooks without figures are left as they are."""
    from course_lib.machine import short_label

    lines = text.split("\n")
    for number, line in enumerate(lines):
        cells = line.split(" | ")
        if len(cells) < 5 or not line.startswith("| "):
            continue
        stem = cells[1].strip("`")
        if stem in figures:
            entry = figures[stem]
            cells[-2] = f"{duration(entry['wall_seconds'])} ({short_label(entry['machine'])})"
            cells[-1] = f"{entry['peak_memory_mib'] / 1024:.1f} GiB |"
            lines[number] = " | ".join(cells)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stems", nargs="*", help="assignment stems, e.g. 05_bert (default: every notebook)")
    parser.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")
    parser.add_argument("--profile", action="store_true",
                        help="print every code cell's time and peak kernel memory (Markdown), not only the slowest")
    parser.add_argument("--record", action="store_true",
                        help=f"keep the figures in {FIGURES.relative_to(REPO)} and rewrite README.md's table from them")
    parser.add_argument("--readme", action="store_true",
                        help=f"only rewrite README.md's table from {FIGURES.relative_to(REPO)}, running nothing")
    args = parser.parse_args(argv)
    if args.readme:
        README.write_text(readme_with_figures(README.read_text(), json.loads(FIGURES.read_text())))
        return 0
    stems = args.stems or sorted(p.name for p in (REPO / "solutions").iterdir()
                                 if (p / f"{p.name}.ipynb").is_file())
    missing = [stem for stem in stems if not (REPO / "solutions" / stem / f"{stem}.ipynb").is_file()]
    if missing:
        print(f"no notebook solutions/<stem>/<stem>.ipynb for: {', '.join(missing)}", file=sys.stderr)
        return 2

    full_mode_offline()
    results = {stem: run_notebook(stem, args.timeout) for stem in stems}
    if args.record:
        for stem, figures in results.items():
            if figures["errors"]:
                print(f"{stem} had errors: its figures are not recorded", file=sys.stderr)
            else:
                record(stem, figures)
        README.write_text(readme_with_figures(README.read_text(), json.loads(FIGURES.read_text())))
    if args.profile:
        for stem, figures in results.items():
            print(f"\n{stem}, per code cell (full mode, offline):\n\n| cell | seconds | peak MiB | first line |\n"
                  "| ---: | ---: | ---: | --- |")
            for number, spent, peak, first_line in figures["cells"]:
                print(f"| {number} | {spent:.1f} | {peak:,} | `{first_line.replace('|', '/')}` |")
    print(f"\n| notebook | wall time, full mode | peak memory | ({os.cpu_count()} cores, CPU only)")
    print("| --- | --- | --- |")
    for stem, figures in results.items():
        minutes, seconds = divmod(round(figures["wall_seconds"]), 60)
        print(f"| {stem} | {minutes} min {seconds:02d} s | {figures['peak_memory_mib'] / 1024:.1f} GiB |")
    return 1 if any(figures["errors"] for figures in results.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
