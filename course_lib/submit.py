"""Hand in: check your notebooks in a fresh kernel, then pack them into one archive.

    python -m course_lib.submit --student ID [--work my-work] [--out submissions]
    make submit STUDENT=ID [WORK=my-work]

Every assignment notebook in the working folder (`<NN_topic>/<NN_topic>.ipynb`; `.new.ipynb` copies and
checkpoints are left out) is run as a copy in a fresh kernel, the way grading runs it, and a summary says for
each graded exercise whether it is not started, done with its check passing, or done with its check failing
(and why). The saved notebooks, exactly as they are on disk, then go into `OUT/<student>.zip` as
`<student>/<NN_topic>.ipynb`, the layout the course's grader reads. Your files are only read, never changed.

A failing check is not an error: the archive is still made, and the summary shows what to fix if you want to.
A file that is not a readable notebook is packed too, with a warning (grading reports it the same way).
Usage problems (a bad student id, no notebooks, a folder that cannot be read) and a notebook over the grader's
size limit (50 MiB, made by its outputs: the grader would refuse the whole archive) stop with exit status 2 and
nothing written.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from course_lib.notebooks import ASSIGNMENT_STEM, MAX_NOTEBOOK_BYTES, student_id_problem
from course_lib.selfcheck import DEFAULT_CELL_TIMEOUT, FAILS, NOT_STARTED, PASSES, NotebookReport, check_notebook

SKIPPED = {".ipynb_checkpoints", "__pycache__"}
# Where the released notebooks are: the course folder `make submit` runs in, else the one this package is in.
RELEASE_FOLDERS = (Path("notebooks"), Path(__file__).resolve().parent.parent / "notebooks")


class SubmitError(Exception):
    """The submission cannot be made; the message names the problem and what to do."""


@dataclass
class Found:
    stem: str
    path: Path
    data: bytes  # the saved file, read once: what is checked is what is packed


def find_notebooks(work: Path) -> list[Found]:
    """Every `<NN_topic>/<NN_topic>.ipynb` in `work`, read, in assignment order."""
    work = Path(work)
    if not work.exists():
        raise SubmitError(f"the working folder {work}/ does not exist: run `make lab` first, or give your folder "
                          f"with WORK=... (make) or --work ... (python)")
    if not work.is_dir():
        raise SubmitError(f"{work} is not a folder: give the folder that holds your assignment folders")
    try:
        folders = sorted(p for p in work.iterdir() if p.is_dir() and p.name not in SKIPPED
                         and not p.name.startswith("."))
    except OSError as error:
        raise SubmitError(f"cannot read the working folder {work}/: {error.strerror or error}") from None
    found, large = [], []
    for folder in folders:
        path = folder / f"{folder.name}.ipynb"
        if not ASSIGNMENT_STEM.fullmatch(folder.name) or not path.is_file():
            continue
        try:
            if path.stat().st_size > MAX_NOTEBOOK_BYTES:  # not read: it may be far larger
                large.append(f"{path} ({path.stat().st_size / 2**20:.1f} MiB)")
                continue
            found.append(Found(folder.name, path, path.read_bytes()))
        except OSError as error:
            raise SubmitError(f"cannot read {path}: {error.strerror or error}; nothing was packed") from None
    if large:
        raise SubmitError(f"{', '.join(large)} {'is' if len(large) == 1 else 'are'} over the grader's limit of "
                          f"{MAX_NOTEBOOK_BYTES // 2**20} MiB for a notebook (it would refuse your whole archive). "
                          f"Outputs make a notebook that large: open it in JupyterLab, choose Edit > Clear Outputs "
                          f"of All Cells, save, and run this again. Nothing was packed")
    if not found:
        copies = sorted(str(p.relative_to(work)) for p in work.glob("*/*.new.ipynb"))
        hint = f" (only the course's new copies: {', '.join(copies)})" if copies else ""
        raise SubmitError(f"no assignment notebooks in {work}/{hint}: expected <NN_topic>/<NN_topic>.ipynb, as "
                          f"`make lab` copies them")
    return found


def pack(found: list[Found], student: str, out: Path) -> Path:
    """Write OUT/<student>.zip with members `<student>/<NN_topic>.ipynb` (the saved bytes); return its path.
    The archive is written aside and renamed, so an earlier archive is replaced whole or not at all."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{student}.zip"
    handle, temporary = tempfile.mkstemp(dir=out, prefix=f".{student}.", suffix=".zip.tmp")
    try:
        with os.fdopen(handle, "wb") as file, zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED) as archive:
            for item in found:
                stamp = time.localtime(item.path.stat().st_mtime)[:6]
                member = zipfile.ZipInfo(f"{student}/{item.stem}.ipynb", date_time=max(stamp, (1980, 1, 1, 0, 0, 0)))
                member.compress_type = zipfile.ZIP_DEFLATED
                member.external_attr = 0o644 << 16
                archive.writestr(member, item.data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes it private; an archive is an ordinary file
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def summary(report: NotebookReport) -> list[str]:
    """The lines printed for one notebook: a heading, one line per graded exercise, then notes."""
    if report.problem:
        return [f"{report.stem}: WARNING: {report.problem}",
                "  packed as it is, but it cannot be checked and grading will give it 0 points: open it in "
                "JupyterLab (or restore it from .ipynb_checkpoints/) and save it again"]
    statuses = [e.status for e in report.exercises]
    counts = [(sum(s == PASSES for s in statuses), "check passes", "checks pass"),
              (sum(s.startswith(FAILS) for s in statuses), "check fails", "checks fail"),
              (sum(s.startswith("done, not checked") for s in statuses), "not checked", "not checked"),
              (sum(s.startswith(NOT_STARTED) for s in statuses), "not started", "not started")]
    parts = [f"{n} {one if n == 1 else many}" for n, one, many in counts if n]
    heading = f"{report.stem}: {len(statuses)} exercises: {', '.join(parts) or 'none found'}"
    if not report.ran and statuses and all(s == NOT_STARTED for s in statuses):
        heading += " (nothing answered yet, so it was not run)"
    lines = [heading, *(f"  {e.line}" for e in report.exercises)]
    lines += [f"  note: {note}" for note in report.notes]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--student", required=True, help="your student id, as your course gave it to you")
    parser.add_argument("--work", type=Path, default=Path("my-work"), help="your working folder (default: my-work)")
    parser.add_argument("--out", type=Path, default=Path("submissions"),
                        help="where the archive goes (default: submissions)")
    parser.add_argument("--released", type=Path, default=None,
                        help="the course's released notebooks, to tell an untouched exercise (default: notebooks/ "
                             "here, else the course's own)")
    parser.add_argument("--cell-timeout", type=float, default=DEFAULT_CELL_TIMEOUT,
                        help=f"seconds one cell may run, as when grading (default: {DEFAULT_CELL_TIMEOUT:g})")
    parser.add_argument("--no-check", action="store_true", help="pack without running the notebooks")
    args = parser.parse_args(argv)
    problem = student_id_problem(args.student)
    if problem:
        print(f"error: {problem}. Give the id your course uses, e.g. make submit STUDENT=jdoe42", file=sys.stderr)
        return 2
    try:
        found = find_notebooks(args.work)
    except SubmitError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    released = args.released or next((p for p in RELEASE_FOLDERS if p.is_dir()), None)
    print(f"Found {len(found)} notebook(s) in {args.work}/: {', '.join(item.stem for item in found)}")
    if not args.no_check:
        print("Each notebook you started is run as a copy in a fresh kernel, as grading runs it (cells tagged demo "
              "are skipped); this can take a minute per notebook.", flush=True)
    warnings = []
    for item in found:
        report = check_notebook(item.path, item.data, released=released, cell_timeout=args.cell_timeout,
                                run=not args.no_check)
        if item.path.with_name(f"{item.stem}.new.ipynb").is_file():
            report.notes.append(f"the course updated this notebook ({item.stem}.new.ipynb is beside yours); your own "
                                f"copy is what is handed in, and grading repairs it against the new release")
        print("\n" + "\n".join(summary(report)), flush=True)
        if report.problem:
            why = report.problem.removeprefix("invalid notebook: ")
            warnings.append(f"{item.path} is not a readable notebook ({why})")
    try:
        archive = pack(found, args.student, args.out)
    except OSError as error:
        print(f"error: cannot write the archive in {args.out}/: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"\nArchive: {archive} ({len(found)} notebook(s), as {args.student}/<NN_topic>.ipynb)")
    for warning in warnings:
        print(f"WARNING: {warning}; it was packed as it is")
    print(f"Hand in this one file as your course tells you to (for example, upload it to the course's "
          f"submission page). Your notebooks in {args.work}/ were not changed; after a change, run this again: "
          f"it replaces the archive.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
