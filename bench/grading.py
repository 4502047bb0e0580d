"""Grading throughput: seconds per submission for each assignment, sequential, 2 workers and Dask.

    .venv/bin/python bench/grading.py [--submissions 40] [--assignments 01_positional_encoding ...]
        [--modes sequential,workers,dask] [--record]
    .venv/bin/python bench/grading.py --instructors    # only rewrite INSTRUCTORS.md's table, running nothing

For each assignment it generates N submissions from the released notebook (the answered solution, and each
variant of autograde/variants/<topic>.py in turn, so that wrong answers and mistakes' messages are part of
the load), grades them with `autograde.grade.grade_batch` without feedback pages, and prints a table of
wall seconds per submission. Each time includes recording the batch in a (throw-away) nbgrader gradebook and
the class report, as `make grade` does. Dask runs on a two-worker LocalCluster on loopback. Results also go to
bench/results/grading.json; with --record, each assignment's figures (and the day and number of submissions) are
kept in bench/grading_figures.json and INSTRUCTORS.md's table ("How long it takes") is rewritten from them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
# The figures INSTRUCTORS.md quotes (committed; tests/test_bench_figures.py checks the table is made from them).
FIGURES = REPO / "bench" / "grading_figures.json"
INSTRUCTORS = REPO / "INSTRUCTORS.md"
COLUMNS = {"sequential": "one worker", "workers": "2 workers", "dask": "Dask, 2 workers on loopback"}
sys.path.insert(0, str(REPO / "tests"))

from submissions import answered  # noqa: E402

from autograde.course import list_assignments  # noqa: E402
from autograde.grade import grade_batch  # noqa: E402
from autograde.judge import Limits  # noqa: E402
from autograde.normalise import nbgrader_meta  # noqa: E402
from autograde.variants import variants  # noqa: E402


def generate(stem: str, count: int, folder: Path) -> None:
    """`count` submissions: the answered notebook, then one variant each, round robin."""
    options = [None, *variants(stem)]
    for index in range(count):
        notebook = answered(stem)
        variant = options[index % len(options)]
        if variant is not None:
            cell = next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == variant.name)
            cell.source = variant.cell(cell.source)
        (folder / f"student{index:03d}").mkdir(parents=True)
        nbformat.write(notebook, folder / f"student{index:03d}" / f"{stem}.ipynb")


def run(stem: str, folder: Path, mode: str) -> float:
    limits = Limits(threads=0)
    with tempfile.TemporaryDirectory() as out:
        started = time.monotonic()
        if mode == "dask":
            from distributed import LocalCluster

            with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster:
                started = time.monotonic()  # the cluster's start is not grading
                grade_batch(stem, folder, Path(out), scheduler=cluster.scheduler_address, seed=1, limits=limits,
                            feedback=False, log=lambda line: None)
        else:
            grade_batch(stem, folder, Path(out), workers=1 if mode == "sequential" else 2, seed=1, limits=limits,
                        feedback=False, log=lambda line: None)
        return time.monotonic() - started


def timing_table(figures: dict) -> str:
    """INSTRUCTORS.md's table of seconds per submission, one row per assignment of `figures`."""
    from course_lib.machine import short_label

    lines = [f"| assignment | {' | '.join(COLUMNS.values())} | submissions | measured | machine |",
             f"| --- |{' --- |' * (len(COLUMNS) + 3)}"]
    for stem, entry in sorted(figures.items()):
        seconds = " | ".join(f"{entry[mode]:.1f}" if mode in entry else "-" for mode in COLUMNS)
        lines.append(f"| {stem} | {seconds} | {entry['submissions']} | {entry['measured']} | "
                     f"{short_label(entry['machine'])} |")
    return "\n".join(lines)


def instructors_with_figures(text: str, figures: dict) -> str:
    """INSTRUCTORS.md with the table under "## How long it takes" replaced by `figures`'s."""
    start = text.index("| assignment | one worker |", text.index("## How long it takes"))
    end = text.find("\n\n", start)
    return text[:start] + timing_table(figures) + text[end if end >= 0 else len(text):]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--assignments", nargs="*", default=list_assignments())
    parser.add_argument("--modes", default="sequential,workers,dask")
    parser.add_argument("--record", action="store_true",
                        help=f"keep the figures in {FIGURES.relative_to(REPO)} and rewrite INSTRUCTORS.md's table")
    parser.add_argument("--instructors", action="store_true",
                        help=f"only rewrite INSTRUCTORS.md's table from {FIGURES.relative_to(REPO)}")
    args = parser.parse_args(argv)
    if args.instructors:
        INSTRUCTORS.write_text(instructors_with_figures(INSTRUCTORS.read_text(), json.loads(FIGURES.read_text())))
        return 0
    modes = args.modes.split(",")
    rows = []
    print(f"| assignment | submissions | {' | '.join(f'{m} (s per submission)' for m in modes)} |")
    print(f"| --- | --- |{' --- |' * len(modes)}")
    for stem in args.assignments:
        with tempfile.TemporaryDirectory() as tmp:
            generate(stem, args.submissions, Path(tmp))
            seconds = {mode: run(stem, Path(tmp), mode) / args.submissions for mode in modes}
        rows.append({"assignment": stem, "submissions": args.submissions, **seconds})
        print(f"| {stem} | {args.submissions} | {' | '.join(f'{seconds[m]:.1f}' for m in modes)} |", flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "grading.json").write_text(json.dumps(rows, indent=2) + "\n")
    if args.record:
        from course_lib.machine import describe, kept_beside

        figures = json.loads(FIGURES.read_text()) if FIGURES.is_file() else {}
        for row in rows:
            measured = {"submissions": row["submissions"], "measured": time.strftime("%Y-%m-%d"),
                        **{mode: round(row[mode], 1) for mode in modes}, "machine": describe()}
            figures[row["assignment"]] = kept_beside(figures.get(row["assignment"]), measured)
        FIGURES.write_text(json.dumps(dict(sorted(figures.items())), indent=2) + "\n")
        INSTRUCTORS.write_text(instructors_with_figures(INSTRUCTORS.read_text(), figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
