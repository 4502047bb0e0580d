"""The class roster (`ROSTER=roster.csv`): read and checked once for `make export`, `make grade` and `make formgrader`.

Its columns are INSTRUCTORS.md's ("Grades for a learning platform"). `make export` takes the platform's ids from it;
`make grade` and `make formgrader` give the gradebook its students' names and emails (`name_students`), so that
nbgrader's formgrader lists people, not "None, None".

A roster has one `name` column; nbgrader keeps a first and a last name. `split_name` divides it: "Last, First" at
the comma (Canvas's own form), otherwise the last word is the last name and the words before it the first name
("Carol Ann Smith" -> "Carol Ann" / "Smith"), and a name of one part is a last name. A last name of several words
("van der Berg") needs the comma form: "van der Berg, Anna".

A student with no name (the course's students are created by nbgrader's autograde, which gives none) gets the
roster's, or else the id as the last name and an empty first name: the formgrader's pages, which show
"last, first", then show the id (`alice,`). A name typed in the formgrader, or given by a roster before, is never
replaced; only a missing (NULL) half of it becomes "", which the formgrader would show as "None".
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path

from autograde.course import COURSE_ID

ROSTER_COLUMNS = ("student", "name", "canvas_id", "sis_user_id", "sis_login_id", "section", "email", "username",
                  "idnumber")

Roster = dict[str, dict[str, str]]  # student id -> that student's row: column -> value, stripped


class RosterError(Exception):
    """A roster that cannot be used: the message names the file and the problem, on one line."""


def read_roster(path: Path) -> Roster:
    """student id -> that student's row (column -> value, stripped), checked."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # -sig: Excel starts its UTF-8 CSV files with a BOM
    except FileNotFoundError:
        raise RosterError(f"roster {path} not found") from None
    except UnicodeDecodeError:
        raise RosterError(f"roster {path} is not UTF-8 text (save it as CSV UTF-8)") from None
    except OSError as error:
        raise RosterError(f"cannot read roster {path}: {error.strerror}") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # strict: a stray quote is an error, not data
    lines = []
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                lines.append((reader.line_num, [cell.strip() for cell in row]))
    except csv.Error as error:
        raise RosterError(f"roster {path} is not valid CSV (line {reader.line_num}: {error})") from None
    if not lines:
        raise RosterError(f"roster {path} is empty: its first line names the columns, one of them student")
    header = lines[0][1]
    if "student" not in header:
        raise RosterError(f"roster {path} has no student column (its columns: {', '.join(header)})")
    unknown = [column for column in header if column not in ROSTER_COLUMNS]
    if unknown or len(set(header)) < len(header):
        problem = f"unknown columns {', '.join(unknown)}" if unknown else "a column named twice"
        raise RosterError(f"roster {path} has {problem} (known: {', '.join(ROSTER_COLUMNS)})")
    roster, twice = {}, []
    for number, row in lines[1:]:
        if len(row) != len(header):
            raise RosterError(f"roster {path} line {number} has {len(row)} fields, its header {len(header)}")
        entry = dict(zip(header, row, strict=True))
        if not entry["student"]:
            raise RosterError(f"roster {path} line {number} has no student")
        if entry["student"] in roster:
            twice.append(entry["student"])
        roster[entry["student"]] = entry
    if twice:
        raise RosterError(f"roster {path} lists students twice: {', '.join(sorted(set(twice)))}")
    return roster


def split_name(name: str) -> tuple[str, str] | None:
    """(first, last) of a roster's `name`; None when it is empty. See the module's docstring for the rule."""
    if "," in name:
        last, _, first = name.partition(",")
    else:
        *firsts, last = name.split() or [""]
        first = " ".join(firsts)
    first, last = " ".join(first.split()), " ".join(last.split())
    if not last:  # "Anna" or ", Anna": one part, which is a last name
        first, last = "", first
    return (first, last) if last else None


def missing_fields(student_id: str, current: tuple[str | None, str | None, str | None] | None,
                   row: dict[str, str]) -> dict[str, str]:
    """What to write for a student whose (first, last, email) is `current` (None: not in the gradebook)."""
    first, last, email = current or (None, None, None)
    if not first and last in (None, "", student_id):  # no name, or the stand-in this module gave
        first_new, last_new = split_name(row.get("name", "")) or ("", student_id)
    else:  # a name someone gave: kept, its empty half "" rather than NULL, which the formgrader shows as "None"
        first_new, last_new = first or "", last or ""
    fields = {}
    if (first_new, last_new) != (first, last):
        fields.update(first_name=first_new, last_name=last_new)
    if not email and row.get("email"):
        fields["email"] = row["email"]
    return fields


def name_students(db_url: str, roster: str | Path | Roster | None = None,
                  students: Iterable[str] | None = None) -> list[str]:
    """Fill in the empty names (and emails) of `students` (None: every student of the gradebook and, with a
    roster, every student of the roster, added if missing) from `roster` (a path or `read_roster`'s result),
    else with the id. Returns the ids whose row changed: none on a second call. Raises RosterError for a bad
    roster file. Takes no lock: the commands hold the gradebook's (autograde.gradebook.gradebook_lock) around it,
    and a grading preprocessor may run inside `make grade`'s recording, which holds it already (a second flock
    in the same process would wait for ever)."""
    from nbgrader.api import Gradebook, Student

    rows = read_roster(Path(roster)) if isinstance(roster, (str, Path)) else roster or {}
    path = db_url.removeprefix("sqlite:///")
    if path != db_url and not Path(path).is_file():
        return []  # no gradebook yet, so no student to name; Gradebook() would create an empty one
    with Gradebook(db_url, course_id=COURSE_ID) as gradebook:
        query = gradebook.db.query(Student.id, Student.first_name, Student.last_name, Student.email)
        if students is not None:
            students = [students] if isinstance(students, str) else list(students)  # one id is one student
            query = query.filter(Student.id.in_(students))
        found = {row.id: (row.first_name, row.last_name, row.email) for row in query}
        wanted = sorted(found) if students is not None else sorted(set(found) | set(rows))
        changed = []
        for student_id in wanted:
            fields = missing_fields(student_id, found.get(student_id), rows.get(student_id, {}))
            if fields:
                gradebook.update_or_create_student(student_id, **fields)
                changed.append(student_id)
    return changed
