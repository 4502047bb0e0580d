"""Grade a batch of submissions: every student in a sandboxed kernel, judged by the grader, in parallel.

    python -m autograde.grade --assignment 01_positional_encoding --submissions DIR --out OUT
        [--workers N] [--dask-scheduler tcp://host:8786] [--seed S] [--course-root ROOT | --no-gradebook]
        [--roster roster.csv]

DIR holds `<student>/<assignment>.ipynb` (and any files the student added), nbgrader's `submitted/` layout
`<student>/<assignment>/<assignment>.ipynb` (with its timestamp.txt), and/or the archives `make submit` makes,
`<student>.zip` with members `<student>/<assignment>.ipynb`: they are checked and unpacked into OUT/unpacked/ first
(autograde/collect.py). A faulty archive refuses its student alone: a `not graded: ` row in grades.csv, and nothing
recorded in the course, so an earlier graded submission stays in the gradebook. Only regular files are read from
a student's folder, never through a symbolic link, within size limits (read_submission). This process alone then
records the results in the course (autograde/record.py: the nbgrader gradebook, submitted/, autograded/,
feedback/), gives the gradebook's students without a name one (autograde/roster.py: the roster's, else their id)
and writes
- OUT/grades.csv: student, assignment, score, max_score, status (one row per student, sorted);
- OUT/grades_by_cell.csv: each exercise's score and the message the student reads;
- OUT/feedback/<student>/<assignment>.html: the feedback page (nbgrader's, from the graded notebook);
- OUT/report.html and OUT/mistakes.csv: what the class got wrong (autograde/report.py);
- OUT/timing.csv: seconds per submission; OUT/grading.json: the seed the inputs were drawn from (to re-grade
  identically, `--seed`), the limits and the batch's wall time.
The grade CSVs are the same whatever the number of workers or the order in which students finish.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import secrets
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from autograde import confinement, course
from autograde.collect import CollectError, choose_notebook, collect, walk
from autograde.course import course_root, list_assignments
from autograde.gradebook import gradebook_lock
from autograde.judge import MAX_EXTRA_BYTES, Limits, StudentResult, empty_result, grade_submission, max_points
from autograde.record import TIMESTAMP, lateness, record_batch
from autograde.report import write_report
from autograde.roster import Roster, RosterError, name_students, read_roster
from course_lib.notebooks import MAX_NOTEBOOK_BYTES

GRADES_COLUMNS = ["student", "assignment", "score", "max_score", "status"]
MAX_SUBMISSION_BYTES = MAX_NOTEBOOK_BYTES + MAX_EXTRA_BYTES  # the notebook and the extra files the grader copies
CELL_COLUMNS = ["student", "assignment", "grade_id", "score", "max_score", "message"]


# ----------------------------------------------------------------------------------------------
# One student, anywhere: the task gets the files themselves, so a Dask worker on another machine needs
# nothing but this package.


@dataclass
class Submission:
    files: dict[str, bytes]  # by relative path
    notes: list[str] = field(default_factory=list)  # for the status: what was left out, and why


def read_submission(folder: Path, *, stem: str | None = None) -> Submission:
    """The student's regular files, never read through a symbolic link (checkpoints and nbgrader's timestamp left
    out), within limits: a notebook MAX_NOTEBOOK_BYTES, another file MAX_EXTRA_BYTES, MAX_SUBMISSION_BYTES in all,
    `<stem>.ipynb` and the other notebooks beside it read first. The notes say what was not read; a link out of the
    folder to something that exists is flagged: read, it would hand the kernel any file the grader can read."""
    folder = Path(folder)
    if folder.is_symlink():
        return Submission({}, ["the submission's folder is a symbolic link: not read"])
    left: dict[str, list[str]] = {"link": [], "other": [], "large": [], "beyond": [], "unreadable": []}
    outside, regular = [], []
    for name, kind in walk(folder):
        if kind == "link":
            left["link"].append(name)
            target = os.path.realpath(folder / name)
            if os.path.exists(target) and os.path.commonpath([target, os.path.realpath(folder)]) \
                    != os.path.realpath(folder):
                outside.append(f"{name} -> {os.readlink(folder / name)}")
        elif kind == "other":
            left["other"].append(name)
        elif kind == "file" and name != TIMESTAMP:
            regular.append(name)
    regular.sort(key=lambda n: (n != f"{stem}.ipynb", "/" in n or not n.lower().endswith(".ipynb"), n))
    files, total = {}, 0
    for name in regular:
        limit = MAX_NOTEBOOK_BYTES if name.lower().endswith(".ipynb") else MAX_EXTRA_BYTES
        try:
            size = os.lstat(folder / name).st_size
            if size > limit:
                left["large"].append(f"{name} ({size / 2**20:.1f} MiB)")
            elif total + size > MAX_SUBMISSION_BYTES:
                left["beyond"].append(name)
            else:
                files[name] = _read_regular(folder / name, limit)
                total += len(files[name])
        except OSError:
            left["unreadable"].append(name)
    notes = [f"flagged: symbolic links to files outside the submission: {_some(outside)}"] if outside else []
    for key, what in (("link", "symbolic links not read (only regular files are)"),
                      ("other", "not regular files (pipes, devices, sockets) not read"),
                      ("large", f"files over the size limit not read (a notebook may have "
                                f"{MAX_NOTEBOOK_BYTES // 2**20} MiB, another file {MAX_EXTRA_BYTES // 2**20} MiB)"),
                      ("beyond", f"files past the {MAX_SUBMISSION_BYTES // 2**20} MiB a submission may hold not read"),
                      ("unreadable", "files that could not be read")):
        if left[key]:
            notes.append(f"{what}: {_some(left[key])}")
    return Submission(files, notes)


def _read_regular(path: Path, limit: int) -> bytes:
    """The bytes of a regular file, opened without following a link (it may have changed since it was listed)."""
    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # O_NONBLOCK: a pipe does not hang open()
    with os.fdopen(handle, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        data = file.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{path} grew past {limit} bytes")
    return data


def _some(names: list[str], shown: int = 5) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def grade_files(stem: str, student: str, submission: Submission | dict[str, bytes], seed: int, limits: dict) -> dict:
    """Grade one submission (read_submission's, or {relative path: bytes}); the result as a plain dict. Without a
    `<stem>.ipynb`, the notebook collect.choose_notebook takes is graded under that name."""
    if not isinstance(submission, Submission):
        submission = Submission(dict(submission))
    files, notes = dict(submission.files), []
    if f"{stem}.ipynb" not in files:
        try:
            name, note = choose_notebook(stem, [n for n in files if "/" not in n], files.get)
        except Exception as error:  # the release cannot be read: grading says so below, never a lost batch
            name, note = None, f"no notebook chosen ({type(error).__name__}: {error})"
        if name is not None:
            files[f"{stem}.ipynb"] = files.pop(name)
        notes += [note] if note else []
    notes += submission.notes
    with tempfile.TemporaryDirectory(prefix=f"grade-{stem}-") as tmp:
        folder, work = Path(tmp) / "submission", Path(tmp) / "work"
        folder.mkdir()
        for name, data in files.items():
            target = (folder / name).resolve()
            if folder.resolve() not in target.parents:
                continue  # a path that climbs out of the folder is not a submission file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        try:
            result = grade_submission(stem, student, folder, work, seed=seed, limits=Limits(**limits))
        except Exception as error:  # one student's trouble never ends the batch
            result = StudentResult(student, stem, 0.0, max_points(stem),
                                   f"grader error: {type(error).__name__}: {error}")
    result.status = "; ".join([result.status, *notes])
    return result.to_dict()


# ----------------------------------------------------------------------------------------------
# Many students: in this process, in local worker processes, or on a Dask cluster


def _run_local(tasks: list[tuple], workers: int) -> Iterable[dict]:
    if workers <= 1:
        for task in tasks:
            yield grade_files(*task)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # Fresh interpreters (not forks of this one, which may hold TensorFlow's threads).
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(grade_files, *task) for task in tasks]
        for future in as_completed(futures):
            yield future.result()


def _run_dask(tasks: list[tuple], scheduler: str) -> Iterable[dict]:
    from distributed import Client, as_completed

    with Client(scheduler, timeout="60s") as client:
        # Each student is one task; `pure=False`: the same submission graded twice is graded twice.
        futures = [client.submit(grade_files, *task, pure=False,
                                 key=f"grade-{task[0]}-{task[1]}-{secrets.token_hex(4)}") for task in tasks]
        for future in as_completed(futures):
            yield future.result()


def grade_batch(stem: str, submissions: Path, out: Path, *, workers: int = 1, scheduler: str | None = None,
                seed: int | None = None, limits: Limits | None = None, feedback: bool = True,
                course_root: Path | None = None, db_url: str | None = None, roster: Roster | None = None,
                progress: bool = False, log: Callable[[str], None] = print) -> list[StudentResult]:
    """Grade every `<student>/` folder and `<student>.zip` archive in `submissions`; record the results in the
    course at `course_root` (its gradebook and autograded/; a throw-away course when None), its students named
    from `roster` (read_roster's) or by their id, and write the CSVs, feedback pages and report to `out`. A student
    whose archive is at fault gets a `not graded: ` row and is not recorded. Raises CollectError, before grading
    anyone, when OUT/unpacked/ is not the grader's."""
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    collected = collect(submissions, stem, out, log=log)
    folders = collected.folders
    limits = limits or Limits()
    if limits.threads == 0:
        limits.threads = max(1, (os.cpu_count() or 1) // max(1, workers))
    seed = secrets.randbits(32) if seed is None else int(seed)
    students = sorted(folders)
    tasks = []
    for student in students:
        submission = read_submission(folders[student], stem=stem)
        submission.notes[:0] = collected.notes.get(student, [])
        tasks.append((stem, student, submission, seed, vars(limits)))
    (out / "grading.json").write_text(json.dumps({"assignment": stem, "seed": seed, "students": len(students),
                                                  "workers": workers, "dask_scheduler": scheduler,
                                                  "limits": vars(limits)}, indent=2) + "\n")
    runner = _run_dask(tasks, scheduler) if scheduler else _run_local(tasks, workers)
    results = []
    bar = _progress(len(tasks), enabled=progress)
    for data in runner:
        result = StudentResult.from_dict(data)
        results.append(result)
        bar.update(1)
        bar.set_postfix_str(f"{result.student}: {result.score:g}/{result.max_score:g}", refresh=False)
        log(f"{result.student}: {result.score:g}/{result.max_score:g} ({result.status}) in {result.seconds:.0f} s")
    bar.close()
    results.sort(key=lambda r: r.student)
    # Written here, by the one coordinating process: workers and Dask never touch the gradebook.
    for problem in record_batch(stem, results, folders, out, course_root=course_root, db_url=db_url,
                                feedback=feedback, log=log):
        log(problem)
    if results and (course_root is not None or db_url):
        _name_students(db_url or course.db_url(Path(course_root)), roster, log)
    _note_submission_times(results, folders, lateness(course_root, db_url, stem) if course_root else {})
    # A refused student is in the CSVs, never in the gradebook: a 0 there would replace an earlier graded submission.
    results = sorted(results + [empty_result(stem, student, f"not graded: {why}")
                                for student, why in collected.refused.items()], key=lambda r: r.student)
    write_csvs(stem, results, out)
    _write_timing(results, out, time.monotonic() - started)
    try:  # the grades are written: a report that cannot be made is said, never a lost batch
        log(f"report: {write_report(out)}")
    except Exception as error:
        log(f"no report: {type(error).__name__}: {error}")
    return results


def _name_students(db_url: str, roster: Roster | None, log: Callable[[str], None]) -> None:
    """nbgrader's autograde creates students without a name, which the formgrader lists as "None, None"."""
    try:  # the grades are recorded: a name that cannot be written is said, never a lost batch
        with gradebook_lock(db_url):
            named = name_students(db_url, roster)
    except Exception as error:
        log(f"gradebook: students not named: {type(error).__name__}: {error}")
        return
    if named:
        log(f"gradebook: named {len(named)} students ({'from the roster, ' if roster else ''}else by their id)")


def _note_submission_times(results: list[StudentResult], folders: dict[str, Path], late: dict[str, float]) -> None:
    """nbgrader's timestamp of a submission (its submitted/ layout), and how late it was, in the status."""
    for result in results:
        stamp = folders[result.student] / TIMESTAMP if result.student in folders else None
        if stamp is not None and stamp.is_file() and not stamp.is_symlink() and stamp.read_text().strip():
            result.status += f"; submitted {stamp.read_text().strip()}"
        if late.get(result.student, 0) > 0:
            result.status += f"; late by {_duration(late[result.student])}"


def _duration(seconds: float) -> str:
    minutes, hours, days = seconds / 60, seconds / 3600, seconds / 86400
    return f"{days:.1f} days" if days >= 1 else f"{hours:.1f} h" if hours >= 1 else f"{minutes:.0f} min"


def _write_timing(results: list[StudentResult], out: Path, wall: float) -> None:
    """Seconds per submission (timing.csv) and the batch's wall time (grading.json): apart from the CSVs of
    grades, which must not depend on the machine's speed."""
    with open(out / "timing.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "seconds"])
        for r in results:
            writer.writerow([r.student, f"{r.seconds:.1f}"])
    info = json.loads((out / "grading.json").read_text())
    (out / "grading.json").write_text(json.dumps({**info, "wall_seconds": round(wall, 1)}, indent=2) + "\n")


def _progress(total: int, *, enabled: bool):
    from tqdm import tqdm

    # tqdm shows the count, the rate and the time left; it writes to stderr, off in tests and logs.
    return tqdm(total=total, unit="student", disable=not enabled, dynamic_ncols=True,
                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}] {postfix}")


def write_csvs(stem: str, results: list[StudentResult], out: Path) -> None:
    with open(out / "grades.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(GRADES_COLUMNS)
        for r in results:
            writer.writerow([r.student, stem, f"{r.score:g}", f"{r.max_score:g}", r.status])
    with open(out / "grades_by_cell.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(CELL_COLUMNS)
        for r in results:
            for cell in r.cells:
                writer.writerow([r.student, stem, cell.grade_id, f"{cell.score:g}", f"{cell.max_score:g}",
                                 cell.message])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignment", required=True, help="assignment stem, e.g. 01_positional_encoding")
    parser.add_argument("--submissions", required=True, type=Path,
                        help="folder of <student>/<notebook>.ipynb and/or <student>.zip archives (make submit)")
    parser.add_argument("--out", required=True, type=Path, help="folder for grades.csv and feedback/")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="students graded at once on this machine (default: the number of cores)")
    parser.add_argument("--dask-scheduler", metavar="ADDRESS",
                        help="send each student to this Dask scheduler (tcp://host:8786) instead")
    parser.add_argument("--seed", type=int, help="draw the checks' inputs from this seed (default: a new one, "
                                                 "recorded in OUT/grading.json)")
    limits = Limits()  # the production limits, each the default of its option
    parser.add_argument("--cell-timeout", type=float, default=limits.cell_timeout,
                        help=f"seconds one notebook cell may run (default {limits.cell_timeout:g})")
    parser.add_argument("--call-timeout", type=float, default=limits.call_timeout,
                        help=f"seconds one call of a student's code may run (default {limits.call_timeout:g})")
    parser.add_argument("--student-timeout", type=float, default=limits.student_timeout,
                        help=f"seconds one submission may take (default {limits.student_timeout:g})")
    parser.add_argument("--memory", type=float, default=limits.memory / 2**30,
                        help=f"GiB of memory a student's kernel may map (default {limits.memory / 2**30:g})")
    parser.add_argument("--no-feedback", action="store_true", help="skip the feedback pages")
    parser.add_argument("--course-root", type=Path, default=course_root(),
                        help="the nbgrader course whose gradebook, submitted/ and autograded/ get the results "
                             "(default: this repository, or COURSE_ROOT)")
    parser.add_argument("--no-gradebook", action="store_true",
                        help="leave the course's gradebook alone (the feedback pages come from a throw-away course)")
    parser.add_argument("--roster", type=Path, help="CSV of the students' names and emails for the gradebook "
                                                    "(columns student, name, email, ...: the file make export reads)")
    args = parser.parse_args(argv)
    if args.assignment not in list_assignments():
        parser.error(f"unknown assignment {args.assignment!r}; known: {', '.join(list_assignments())}")
    if not args.submissions.is_dir():
        parser.error(f"submissions folder {args.submissions} does not exist")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.roster and args.no_gradebook:
        parser.error("--roster names the gradebook's students: it has no use with --no-gradebook")
    try:  # before anyone is graded: a roster the gradebook cannot use stops the batch
        roster = read_roster(args.roster) if args.roster else None
    except RosterError as error:
        print(f"cannot grade: {error}", file=sys.stderr)
        return 2
    problem = confinement.sandbox_check()  # looked up when called: tests stand in for it
    if problem:
        print(f"cannot grade: {problem}", file=sys.stderr)
        return 2
    limits = Limits(cell_timeout=args.cell_timeout, call_timeout=args.call_timeout,
                    student_timeout=args.student_timeout, memory=int(args.memory * 2**30), threads=0)
    started = time.monotonic()
    try:
        results = grade_batch(args.assignment, args.submissions, args.out, workers=args.workers,
                              scheduler=args.dask_scheduler, seed=args.seed, limits=limits,
                              feedback=not args.no_feedback, progress=sys.stderr.isatty(),
                              course_root=None if args.no_gradebook else args.course_root, roster=roster,
                              log=(lambda line: None) if sys.stderr.isatty() else print)
    except CollectError as error:
        print(f"cannot grade: {error}", file=sys.stderr)
        return 2
    elapsed = time.monotonic() - started
    print(f"graded {len(results)} submissions in {elapsed:.0f} s: {args.out / 'grades.csv'}")
    flagged = [r.student for r in results if "flagged:" in r.status]
    if flagged:
        print(f"flagged for a look: {', '.join(flagged)} (search the status column for 'flagged:')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
