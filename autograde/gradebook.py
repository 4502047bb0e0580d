"""Record every assignment, its notebooks, graded cells and points in the course's nbgrader gradebook.

    python -m autograde.gradebook              # all assignments in solutions/ (make formgrader runs this)
    python -m autograde.gradebook 01_positional_encoding

nbgrader's formgrader lists the assignments it finds in `solutions/`, but takes their points from the
gradebook (`.nbgrader/gradebook.db`), which only `nbgrader generate_assignment` fills. Running that in the
repository would rewrite `notebooks/`, which `make release` owns. So it runs here on a throw-away course
root (a copy of the sources) whose gradebook is the real one: the gradebook gets exactly what nbgrader
records on a release, and `notebooks/` is not touched. Running it again updates the same rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from autograde.course import apply, course_root, list_assignments
from autograde.nbgrader_runner import make_course_root


def course_db_url(root: Path | None = None) -> str:
    """The gradebook the course's nbgrader configuration (autograde/nbgrader_config.py) uses."""
    from traitlets.config import Config

    config = Config()
    apply(config, root or course_root())
    return config.CourseDirectory.db_url


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
        apply(config, root)
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


def locked_record(assignments: list[str], db_url: str) -> dict[str, str]:
    """`record` while holding a lock beside a file gradebook: two formgraders starting at once (or two tests)
    would otherwise write the same SQLite file together, and one would fail with "database is locked"."""
    import fcntl

    path = db_url.removeprefix("sqlite:///")
    if path == db_url:  # not a file database: its server serialises writers
        return record(assignments, db_url)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return record(assignments, db_url)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assignments", nargs="*", help="assignment stems (default: all in solutions/)")
    args = parser.parse_args(argv)
    known = list_assignments()
    unknown = sorted(set(args.assignments) - set(known))
    if unknown:
        parser.error(f"no such assignment in solutions/: {', '.join(unknown)}")
    assignments = args.assignments or known
    db_url = course_db_url()
    failed = locked_record(assignments, db_url)
    for stem, error in failed.items():
        # The formgrader still starts: it lists the assignment, without up-to-date points.
        print(f"gradebook: {stem} not updated:\n{error}", file=sys.stderr)
    done = [stem for stem in assignments if stem not in failed]
    if done:
        where = db_url.removeprefix("sqlite:///")
        print(f"gradebook {where}: recorded {', '.join(done)} (notebooks, graded cells, points)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
