"""Write the gradebook's scores as a file that a learning platform imports as it is.

    python -m autograde.export --format canvas --out grades-canvas.csv [--assignments a,b] [--roster roster.csv]
    make export FORMAT=moodle ROSTER=roster.csv

Formats: `canvas` (Canvas's Gradebook import CSV), `moodle` (Moodle's "Import grades from CSV file") and `csv`
(one row per student and assignment, for anything else). INSTRUCTORS.md ("Grades for a learning platform") lists
each format's columns and how to import it. Bad input stops with a one-line message and exit code 2, before any
file is written.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from autograde import course
from autograde.roster import ROSTER_COLUMNS, RosterError, read_roster

FORMATS = ("canvas", "moodle", "csv")
CANVAS_IDS = ("canvas_id", "sis_user_id", "sis_login_id")
# The roster columns Moodle can find a user by, in the order they are preferred, with the field each one is.
MOODLE_IDS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}
# Without a roster, the course's student id stands for the platform's: Canvas matches it as a login,
# Moodle as a username (INSTRUCTORS.md says so, and how to choose otherwise).
DEFAULT_ID = {"canvas": "sis_login_id", "moodle": "username", "csv": "student"}
TIDY_COLUMNS = ("student", "assignment", "score", "max_score", "submitted", "late_seconds", "needs_manual_grade")


class ExportError(Exception):
    """Bad input: main() prints it on one line and exits with 2."""


@dataclass(frozen=True)
class Submission:
    score: float
    max_score: float
    timestamp: datetime | None
    seconds_late: float
    needs_manual_grade: bool


@dataclass(frozen=True)
class Grades:
    max_scores: dict[str, float]  # assignment -> points, in the order of the file's columns
    names: dict[str, str]  # student id -> "Last, First" from the gradebook ("" when unset)
    submissions: dict[tuple[str, str], Submission]  # (student, assignment) -> what nbgrader recorded


def read_gradebook(db_url: str, wanted: list[str]) -> Grades:
    """The scores of every student in the gradebook for the `wanted` assignments (all when empty)."""
    from nbgrader.api import Assignment, Student, SubmittedAssignment
    from sqlalchemy import create_engine, inspect, make_url
    from sqlalchemy.exc import SQLAlchemyError
    from sqlalchemy.orm import Session

    where = db_url.removeprefix("sqlite:///")
    if where == db_url:  # a database server's URL: messages name it without its password
        try:
            where = make_url(db_url).render_as_string(hide_password=True)
        except SQLAlchemyError:
            raise ExportError("--db-url is not a database URL (sqlite:///path/to/gradebook.db)") from None
    # Opening a missing SQLite file would create an empty one; nbgrader's Gradebook() would also add its tables and
    # a course row to whatever it opens. An export only reads: a plain session on nbgrader's own models.
    if db_url.startswith("sqlite:///") and not Path(where).is_file():
        raise ExportError(f"no gradebook at {where}: grade a batch first (make grade) or pass --db-url")
    try:
        engine = create_engine(db_url)
        try:
            if "submitted_assignment" not in inspect(engine).get_table_names():
                raise ExportError(f"{where} is not an nbgrader gradebook (it has no submitted_assignment table)")
            with Session(engine) as session:
                max_scores = {a.name: float(a.max_score or 0) for a in session.query(Assignment)}
                names = {s.id: ", ".join(filter(None, [s.last_name, s.first_name])) for s in session.query(Student)}
                submissions = {
                    (s.student_id, s.assignment.name): Submission(
                        float(s.score or 0), float(s.max_score or 0), s.timestamp, float(s.total_seconds_late),
                        bool(s.needs_manual_grade))
                    for s in session.query(SubmittedAssignment)}
        finally:
            engine.dispose()
    except (SQLAlchemyError, ImportError) as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ExportError(f"cannot read the gradebook {where}: {detail}") from None
    if not max_scores:
        raise ExportError(f"the gradebook {where} has no assignments: run make formgrader or make grade first")
    if not names:
        raise ExportError(f"the gradebook {where} has no students: grade a batch first (make grade)")
    unknown = [name for name in wanted if name not in max_scores]
    if unknown:
        known = ", ".join(sorted(max_scores))
        raise ExportError(f"not in the gradebook {where}: {', '.join(unknown)} (it has {known})")
    return Grades({name: max_scores[name] for name in wanted or sorted(max_scores)}, names, submissions)


def people(fmt: str, grades: Grades, roster: dict[str, dict[str, str]] | None, where: str) -> dict[str, dict]:
    """student id -> the platform's ids for that student, sorted; every gradebook student is in it."""
    if roster is None:
        return {s: {"student": s, DEFAULT_ID[fmt]: s} for s in sorted(grades.names)}
    missing = sorted(set(grades.names) - set(roster))
    if missing:
        raise ExportError(f"roster {where} lacks students of the gradebook: {', '.join(missing)}")
    found = dict(sorted(roster.items()))
    checked = CANVAS_IDS if fmt == "canvas" else [moodle_id(found, where)] if fmt == "moodle" else []
    unknown = [s for s, row in found.items() if checked and not any(row.get(c) for c in checked)]
    if unknown:
        # Canvas would fall back on names, Moodle would give the row to the student of the row before
        raise ExportError(f"roster {where} gives no {' or '.join(checked)} for: {', '.join(unknown)}")
    for column in checked:
        values = [row[column] for row in found.values() if row.get(column)]
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise ExportError(f"roster {where} gives several students the same {column}: {', '.join(twice)}")
    return found


def moodle_id(found: dict[str, dict[str, str]], where: str) -> str:
    """The roster column that identifies users in Moodle: the first of MOODLE_IDS that the roster has."""
    columns = set().union(*found.values())
    for column in MOODLE_IDS:
        if column in columns:
            return column
    raise ExportError(f"roster {where} has none of {', '.join(MOODLE_IDS)}: Moodle finds a user by one of them")


def points(value: float) -> str:
    """A score as Canvas's own export writes it: at most two decimals, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def scores(grades: Grades, student: str, missing: str) -> list[str]:
    found = (grades.submissions.get((student, name)) for name in grades.max_scores)
    return [points(sub.score) if sub else missing for sub in found]


def canvas_rows(grades: Grades, who: dict[str, dict], canvas_ids: dict[str, str]) -> list[list[str]]:
    # A header "Name (123)" updates Canvas assignment 123; a bare name updates the assignment of that title or,
    # if none, creates one whose points come from the Points Possible row.
    titles = [f"{name} ({canvas_ids[name]})" if name in canvas_ids else name for name in grades.max_scores]
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *titles],
            ["Points Possible", "", "", "", "", *map(points, grades.max_scores.values())]]
    for student, row in who.items():
        name = row.get("name") or grades.names.get(student) or student
        # An empty cell is no score: an assignment not handed in stays ungraded in Canvas, which a 0 would hide
        rows.append([name, *(row.get(c, "") for c in CANVAS_IDS), row.get("section", ""),
                     *scores(grades, student, missing="")])
    return rows


def moodle_rows(grades: Grades, who: dict[str, dict], where: str) -> list[list[str]]:
    column = moodle_id(who, where)
    # "-" is Moodle's own "no grade": an empty cell is one too for an existing grade item, but a "New grade item"
    # takes it as a grade (load_data.php), which would turn a missing submission into 0.
    return [[MOODLE_IDS[column], *grades.max_scores],
            *([row[column], *scores(grades, student, missing="-")] for student, row in who.items())]


def tidy_rows(grades: Grades, who: dict[str, dict]) -> list[list[str]]:
    rows = [list(TIDY_COLUMNS)]
    for student in who:
        for name, max_score in grades.max_scores.items():
            sub = grades.submissions.get((student, name))
            if sub is None:
                rows.append([student, name, "", points(max_score), "", "", ""])
                continue
            # nbgrader stores UTC without a zone: say so
            when = f"{sub.timestamp.isoformat(timespec='seconds')}Z" if sub.timestamp else ""
            rows.append([student, name, points(sub.score), points(sub.max_score), when,
                         points(sub.seconds_late), str(sub.needs_manual_grade).lower()])
    return rows


def parse_canvas_ids(text: str | None, assignments: list[str]) -> dict[str, str]:
    """`NAME=ID,...` -> {name: Canvas assignment id}."""
    ids = {}
    for pair in filter(None, (part.strip() for part in (text or "").split(","))):
        name, equals, number = (part.strip() for part in pair.partition("="))
        if not equals or not number.isdigit():
            raise ExportError(f"--canvas-ids: {pair!r} is not NAME=NUMBER (the number ends the assignment's address)")
        ids[name] = number
    unknown = sorted(set(ids) - set(assignments))
    if unknown:
        raise ExportError(f"--canvas-ids names assignments that are not exported: {', '.join(unknown)}")
    return ids


def write(rows: list[list[str]], out: Path) -> None:
    """Write `rows` to `out` all at once: a failure leaves the previous file as it was."""
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with partial.open("w", encoding="utf-8", newline="") as stream:
            csv.writer(stream).writerows(rows)
        partial.replace(out)
    except OSError as error:
        raise ExportError(f"cannot write {out}: {error.strerror}") from None
    finally:
        partial.unlink(missing_ok=True)


def export(fmt: str, out: Path, assignments: list[str], roster_path: Path | None = None,
           db_url: str | None = None, canvas_ids: str | None = None) -> str:
    """Check everything, then write the file; return what was written, in a line."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: choose {', '.join(FORMATS)}")
    if canvas_ids and fmt != "canvas":
        raise ExportError("--canvas-ids is for --format canvas only")
    if out.is_dir():
        raise ExportError(f"{out} is a folder: --out names the file to write")
    if roster_path is not None and out.resolve() == roster_path.resolve():
        raise ExportError(f"--out {out} is the roster: it would be overwritten")
    try:  # the roster's checks are autograde/roster.py's, shared with make grade and make formgrader
        roster = read_roster(roster_path) if roster_path is not None else None
    except RosterError as error:
        raise ExportError(str(error)) from None
    grades = read_gradebook(db_url or course.db_url(), assignments)
    who = people(fmt, grades, roster, str(roster_path))
    if fmt == "canvas":
        rows = canvas_rows(grades, who, parse_canvas_ids(canvas_ids, list(grades.max_scores)))
    elif fmt == "moodle":
        rows = moodle_rows(grades, who, str(roster_path))
    else:
        rows = tidy_rows(grades, who)
    write(rows, out)
    missing = sum((s, a) not in grades.submissions for s in who for a in grades.max_scores)
    return (f"{out}: {fmt}, {len(who)} students x {len(grades.max_scores)} assignments "
            f"({missing} without a submission)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--format", required=True, help=" | ".join(FORMATS))
    parser.add_argument("--out", type=Path, help="the file to write (default: grades-<format>.csv)")
    parser.add_argument("--assignments", default="", help="a,b: these assignments, in this order (default: all)")
    parser.add_argument("--roster", type=Path, help=f"CSV mapping the course's student ids to the platform's: "
                                                    f"columns {', '.join(ROSTER_COLUMNS)}")
    parser.add_argument("--canvas-ids", help="NAME=ID,...: the Canvas assignment each column updates")
    parser.add_argument("--db-url", help="the gradebook (default: the course's .nbgrader/gradebook.db)")
    args = parser.parse_args(argv)
    wanted = list(dict.fromkeys(filter(None, (name.strip() for name in args.assignments.split(",")))))
    try:
        done = export(args.format, args.out or Path(f"grades-{args.format}.csv"), wanted, args.roster,
                      args.db_url, args.canvas_ids)
    except ExportError as error:
        print(f"export: {error}", file=sys.stderr)
        return 2
    print(f"wrote {done}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
