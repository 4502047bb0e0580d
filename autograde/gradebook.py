"""Record every assignment, its notebooks, graded cells and points in the course's nbgrader gradebook.

    python -m autograde.gradebook              # all assignments in solutions/ (make formgrader runs this)
    python -m autograde.gradebook 01_positional_encoding [--roster roster.csv]

nbgrader's formgrader lists the assignments it finds in `solutions/`, but takes their points from the
gradebook (`.nbgrader/gradebook.db`), which only `nbgrader generate_assignment` fills. Running that in the
repository would rewrite `notebooks/`, which `make release` owns. So it runs here on a throw-away course
root (a copy of the sources) whose gradebook is the real one: the gradebook gets exactly what nbgrader
records on a release, and `notebooks/` is not touched. Running it again updates the same rows.

It then gives the gradebook's students without a name one (autograde/roster.py): the roster's (`--roster`, the file
`make export` reads; its students are added), else their id, so that the formgrader does not list "None, None".
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from autograde import course
from autograde.course import apply_layout, list_assignments
from autograde.nbgrader_runner import make_course_root
from autograde.roster import RosterError, name_students, read_roster


def record(assignments: list[str], db_url: str) -> dict[str, str]:
    """Run nbgrader's generate_assignment for each assignment into `db_url`; return {stem: error} for the
    ones nbgrader refused (for example a notebook removed from an assignment that has submissions)."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log
    from traitlets.config import Config

    # nbgrader creates a new gradebook by running `alembic` from PATH: this environment's.
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    failed = {}
    with tempfile.TemporaryDirectory(prefix="course-gradebook-") as tmp:
        root = make_course_root(Path(tmp), assignments)
        config = Config()
        apply_layout(config, root)  # generate_assignment's settings: the grader's are not needed to record
        config.CourseDirectory.db_url = db_url
        config.GenerateAssignment.create_assignment = True
        for stem in assignments:
            coursedir = CourseDirectory(config=config)
            coursedir.assignment_id = stem
            result = capture_log(GenerateAssignment(coursedir=coursedir, config=config))
            if not result["success"]:
                # nbgrader logs the cause (its own traceback) and raises a generic NbGraderException
                failed[stem] = (result.get("log") or result.get("error") or "").strip()
    return failed


@contextlib.contextmanager
def gradebook_lock(db_url: str) -> Iterator[None]:
    """One writer at a time on a file gradebook: two formgraders starting at once (or two tests) would otherwise
    write the same SQLite file together, and one would fail with "database is locked". A database server
    serialises its writers itself. autograde/record.py holds it while recording a batch."""
    import fcntl

    path = db_url.removeprefix("sqlite:///")
    if path == db_url:
        yield
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def locked_record(assignments: list[str], db_url: str) -> dict[str, str]:
    """`record` while holding the gradebook's lock."""
    with gradebook_lock(db_url):
        return record(assignments, db_url)


def record_assignment(stem: str, db_url: str) -> None:
    """Record `stem` in the gradebook unless it is there: nbgrader's autograde refuses an assignment that
    `generate_assignment` never recorded."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gradebook:
        try:
            gradebook.find_assignment(stem)
            return
        except MissingEntry:
            pass
    refused = locked_record([stem], db_url)
    if refused:
        raise RuntimeError(f"the gradebook refused {stem}: {refused[stem].strip().splitlines()[-1:]}")


class AssignmentRecorder:
    """nbgrader's pre-convert hook for autograde (autograde/nbgrader_settings.py): records the assignment in the
    gradebook the configuration names, read when called (a caller may point the configuration at another database
    after `apply`)."""

    def __init__(self, config):
        self.config = config

    def __call__(self, assignment: str, student: str, notebooks: list[str]) -> None:
        record_assignment(assignment, self.config.CourseDirectory.db_url)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assignments", nargs="*", help="assignment stems (default: all in solutions/)")
    parser.add_argument("--roster", type=Path, help="CSV of the students' names and emails (columns student, "
                                                    "name, email, ...: the file make export reads)")
    args = parser.parse_args(argv)
    known = list_assignments()
    unknown = sorted(set(args.assignments) - set(known))
    if unknown:
        parser.error(f"no such assignment in solutions/: {', '.join(unknown)}")
    try:  # checked before anything is written: the formgrader does not start on a roster it cannot use
        roster = read_roster(args.roster) if args.roster else None
    except RosterError as error:
        print(f"gradebook: {error}", file=sys.stderr)
        return 2
    assignments = args.assignments or known
    db_url = course.db_url()
    with gradebook_lock(db_url):
        failed = record(assignments, db_url)
        named = name_students(db_url, roster)
    for stem, error in failed.items():
        # The formgrader still starts: it lists the assignment, without up-to-date points.
        print(f"gradebook: {stem} not updated:\n{error}", file=sys.stderr)
    done = [stem for stem in assignments if stem not in failed]
    if done:
        where = db_url.removeprefix("sqlite:///")
        print(f"gradebook {where}: recorded {', '.join(done)} (notebooks, graded cells, points)")
    if named:
        print(f"gradebook: named {len(named)} students ({f'from {args.roster}, ' if roster else ''}"
              f"else by their id)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
