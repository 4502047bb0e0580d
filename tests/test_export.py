"""`make export` (autograde/export.py): the gradebook's scores as Canvas's and Moodle's import files and a tidy CSV;
and the same roster giving the gradebook's students their names (autograde/roster.py, for grade and formgrader).

A gradebook is recorded once (nbgrader's generate_assignment for 01 and 02, several seconds: hence the grading mark),
then each test fills a copy with students, submissions and scores through nbgrader's Gradebook API. Nothing is graded.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook

from autograde.course import COURSE_ID
from autograde.export import ExportError, export, main
from autograde.gradebook import record
from autograde.roster import name_students

pytestmark = [pytest.mark.grading, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

A1, A2 = "01_positional_encoding", "02_scaled_dot_product_attention"
A2_CELLS = ("test_dot_score", "test_scaled_dot_score", "test_general_score", "test_additive_score",
            "test_create_padding_mask", "test_create_look_ahead_mask")  # 1 point each; test_cosine_score left unscored


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("recorded") / "gradebook.db"
    assert record([A1, A2], f"sqlite:///{path}") == {}
    return path


def score(gb: Gradebook, assignment: str, student: str, **cells: tuple[float | None, float | None]) -> None:
    """Give each named grade cell (auto_score, manual_score), as the autograder and the formgrader would."""
    for cell, (auto, manual) in cells.items():
        grade = gb.find_grade(cell, assignment, assignment, student)
        grade.auto_score, grade.manual_score, grade.needs_manual_grade = auto, manual, False
    gb.db.commit()


@pytest.fixture
def db_url(recorded, tmp_path):
    """alice: 01 late with a manual override (2 + 1.5 over an automatic 0 = 3.5 of 5), 02 with an unscored cell
    (8 of 11, needs a manual grade); bob: 01 full (5), no 02."""
    path = tmp_path / "gradebook.db"
    shutil.copy(recorded, path)
    url = f"sqlite:///{path}"
    with Gradebook(url, course_id=COURSE_ID) as gb:
        gb.update_or_create_assignment(A1, duedate="2026-01-01 00:00:00 UTC")
        gb.add_student("alice", first_name="Alice", last_name="Liddell")
        gb.add_student("bob")
        gb.add_submission(A1, "alice", timestamp="2026-01-02 10:00:00 UTC")
        gb.add_submission(A2, "alice", timestamp="2025-12-30 09:30:00 UTC")
        gb.add_submission(A1, "bob", timestamp="2025-12-31 23:00:00 UTC")
        score(gb, A1, "alice", test_get_angles=(2, None), test_positional_encoding=(0, 1.5))
        score(gb, A2, "alice", test_scaled_dot_product_attention=(2, None), **{c: (1, None) for c in A2_CELLS})
        score(gb, A1, "bob", test_get_angles=(2, None), test_positional_encoding=(3, None))
    return url


def rows(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as stream:
        return list(csv.reader(stream))


def write_roster(tmp_path, text: str):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_canvas_columns_points_row_and_scores(db_url, tmp_path):
    out = tmp_path / "canvas.csv"
    export("canvas", out, [], db_url=db_url)
    assert rows(out) == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", A1, A2],
        ["Points Possible", "", "", "", "", "5", "11"],
        ["Liddell, Alice", "", "", "alice", "", "3.5", "8"],  # the manual 1.5 replaces the automatic 0
        ["bob", "", "", "bob", "", "5", ""],  # no submission: empty, not 0
    ]


def test_canvas_assignment_ids_and_chosen_assignments(db_url, tmp_path):
    out = tmp_path / "canvas.csv"
    export("canvas", out, [A2, A1], db_url=db_url, canvas_ids=f"{A1}=4321")
    header, possible, *_ = rows(out)
    assert header[5:] == [A2, f"{A1} (4321)"] and possible[5:] == ["11", "5"]
    with pytest.raises(ExportError, match="not NAME=NUMBER"):
        export("canvas", out, [], db_url=db_url, canvas_ids=f"{A1}=abc")
    with pytest.raises(ExportError, match="not exported: 03_multi_head_attention"):
        export("canvas", out, [], db_url=db_url, canvas_ids="03_multi_head_attention=1")


def test_moodle_identifier_and_no_grade_mark(db_url, tmp_path):
    out = tmp_path / "moodle.csv"
    export("moodle", out, [A1, A2], db_url=db_url)
    # "-" is Moodle's "no grade" for both an existing and a new grade item
    assert rows(out) == [["Username", A1, A2], ["alice", "3.5", "8"], ["bob", "5", "-"]]


def test_tidy_csv_one_row_per_student_and_assignment(db_url, tmp_path):
    out = tmp_path / "tidy.csv"
    export("csv", out, [], db_url=db_url)
    assert rows(out) == [
        ["student", "assignment", "score", "max_score", "submitted", "late_seconds", "needs_manual_grade"],
        ["alice", A1, "3.5", "5", "2026-01-02T10:00:00Z", "122400", "false"],
        ["alice", A2, "8", "11", "2025-12-30T09:30:00Z", "0", "true"],
        ["bob", A1, "5", "5", "2025-12-31T23:00:00Z", "0", "false"],
        ["bob", A2, "", "11", "", "", ""],
    ]


def test_roster_gives_canvas_ids_and_adds_students_without_grades(db_url, tmp_path):
    roster = write_roster(tmp_path, "student,name,canvas_id,sis_user_id,sis_login_id,section\n"
                                    "bob,\"Builder, Bob\",102,S-2,bob@uni,Tue\n"
                                    "dave,Dave,104,S-4,dave@uni,Tue\n"
                                    "alice,,101,S-1,alice@uni,Mon\n")
    out = tmp_path / "canvas.csv"
    export("canvas", out, [], roster, db_url=db_url)
    assert rows(out)[2:] == [
        ["Liddell, Alice", "101", "S-1", "alice@uni", "Mon", "3.5", "8"],  # no name in the roster: the gradebook's
        ["Builder, Bob", "102", "S-2", "bob@uni", "Tue", "5", ""],
        ["Dave", "104", "S-4", "dave@uni", "Tue", "", ""],  # in the roster only
    ]


def test_roster_gives_moodle_email_before_username(db_url, tmp_path):
    roster = write_roster(tmp_path, "\ufeffstudent,username,email\nalice,al,alice@uni\nbob,bo,bob@uni\n")  # Excel's BOM
    out = tmp_path / "moodle.csv"
    export("moodle", out, [A1], roster, db_url=db_url)
    assert rows(out) == [["Email address", A1], ["alice@uni", "3.5"], ["bob@uni", "5"]]
    roster.write_text("student,idnumber\nalice,1001\nbob,1002\n", encoding="utf-8")
    export("moodle", out, [A1], roster, db_url=db_url)
    assert rows(out)[0] == ["ID number", A1]


ROSTER = "student,sis_login_id,email\nalice,a1,alice@uni\nbob,b1,bob@uni\n"
BAD_ROSTERS = {
    "missing from the roster": ("student,sis_login_id\nalice,a1\n", "canvas", "lacks students of the gradebook: bob"),
    "unknown column": ("student,emial\nalice,a\nbob,b\n", "moodle", "unknown columns emial"),
    "no student column": ("name,email\nAlice,alice@uni\n", "csv", "has no student column"),
    "student twice": (ROSTER + "bob,b2,bob2@uni\n", "csv", "lists students twice: bob"),
    "unterminated quote": ('student,email\n"alice,alice@uni\n', "csv", "is not valid CSV"),
    "stray quote": ('student,email\n"al"ice,alice@uni\n', "csv", "is not valid CSV"),
    "extra field": ("student,email\nalice,alice@uni,x\n", "csv", "line 2 has 3 fields, its header 2"),
    "empty": ("\n", "csv", "is empty"),
    "no student id": ("student,email\n,alice@uni\n", "csv", "line 2 has no student"),
    "no Canvas id": ("student,name,section\nalice,A,1\nbob,B,1\n", "canvas",
                     "gives no canvas_id or sis_user_id or sis_login_id for: alice, bob"),
    "no Moodle id column": ("student,name\nalice,A\nbob,B\n", "moodle", "has none of email, username, idnumber"),
    "blank Moodle id": ("student,email\nalice,alice@uni\nbob,\n", "moodle", "gives no email for: bob"),
    "shared Moodle id": ("student,email\nalice,x@uni\nbob,x@uni\n", "moodle", "the same email: x@uni"),
}


@pytest.mark.parametrize("case", BAD_ROSTERS)
def test_bad_roster_is_refused_and_nothing_is_written(case, db_url, tmp_path):
    text, fmt, message = BAD_ROSTERS[case]
    out = tmp_path / "grades.csv"
    out.write_text("the previous export\n")
    with pytest.raises(ExportError, match=message):
        export(fmt, out, [], write_roster(tmp_path, text), db_url=db_url)
    assert out.read_text() == "the previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gradebook.db", "grades.csv", "roster.csv"]


def test_bad_input_is_refused_and_nothing_is_written(db_url, recorded, tmp_path):
    out = tmp_path / "out" / "grades.csv"
    cases = {
        "missing roster": (lambda: export("csv", out, [], tmp_path / "nobody.csv", db_url=db_url), "not found"),
        "unknown format": (lambda: export("blackboard", out, [], db_url=db_url), "unknown format 'blackboard'"),
        "unknown assignment": (lambda: export("csv", out, ["09_nothing"], db_url=db_url),
                               "not in the gradebook .*: 09_nothing"),
        "missing database": (lambda: export("csv", out, [], db_url=f"sqlite:///{tmp_path / 'none.db'}"),
                             "no gradebook at"),
        "no students": (lambda: export("csv", out, [], db_url=f"sqlite:///{recorded}"), "has no students"),
        "out is a folder": (lambda: export("csv", tmp_path, [], db_url=db_url), "is a folder"),
        "out is the roster": (lambda: export("csv", tmp_path / "r.csv", [], tmp_path / "r.csv", db_url=db_url),
                              "is the roster"),
    }
    for case, (call, message) in cases.items():
        with pytest.raises(ExportError, match=message):
            call()
        assert not out.parent.exists() and not (tmp_path / "none.db").exists(), case
    not_a_database = tmp_path / "notes.db"
    not_a_database.write_text("not SQLite")
    with pytest.raises(ExportError, match="cannot read the gradebook"):
        export("csv", out, [], db_url=f"sqlite:///{not_a_database}")
    Gradebook(f"sqlite:///{tmp_path / 'empty.db'}").close()  # nbgrader's tables, nothing in them
    with pytest.raises(ExportError, match="has no assignments"):
        export("csv", out, [], db_url=f"sqlite:///{tmp_path / 'empty.db'}")
    assert not out.parent.exists()


def test_cli_exit_codes_and_one_line_errors(db_url, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["--format", "moodle", "--db-url", db_url]) == 0
    assert "grades-moodle.csv: moodle, 2 students x 2 assignments (1 without a submission)" in capsys.readouterr().out
    assert rows(tmp_path / "grades-moodle.csv")[0] == ["Username", A1, A2]
    assert main(["--format", "csv", "--db-url", db_url, "--roster", "absent.csv", "--out", "x.csv"]) == 2
    error = capsys.readouterr().err
    assert error == "export: roster absent.csv not found\n" and not (tmp_path / "x.csv").exists()
    assert main(["--format", "canvas", "--db-url", db_url, "--assignments", f" {A2} ,,{A2}", "--out", "c.csv"]) == 0
    assert rows(tmp_path / "c.csv")[0][5:] == [A2]
    # the module runs as a program, with the same exit code
    result = subprocess.run([sys.executable, "-m", "autograde.export", "--format", "pdf", "--db-url", db_url],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        "export: unknown format 'pdf': choose canvas, moodle, csv"]


def names(db_url: str) -> dict[str, tuple]:
    with Gradebook(db_url, course_id=COURSE_ID) as gb:
        return {s.id: (s.first_name, s.last_name, s.email) for s in gb.students}


def test_roster_names_the_gradebooks_students_and_keeps_given_names(db_url, tmp_path):
    roster = write_roster(tmp_path, "student,name,email,sis_login_id\n"
                                    "alice,Someone Else,alice@uni,a1\n"  # named in the gradebook: only the email
                                    "bob,Bob  Builder,bob@uni,b1\n"
                                    'carol,"van der Berg, Carol Ann",,c1\n'  # "Last, First"
                                    "dave,Dave,dave@uni,d1\n"  # one word: a last name
                                    "erin,,,e1\n")  # no name: the id
    with Gradebook(db_url, course_id=COURSE_ID) as gb:
        gb.add_student("frank")  # as nbgrader's autograde creates a student: no name, and not in the roster
    # the grading preprocessor's call: only the student it graded
    assert name_students(db_url, roster, students=["frank", "nobody"]) == ["frank"]
    assert names(db_url)["bob"] == (None, None, None)
    assert name_students(db_url, roster) == ["alice", "bob", "carol", "dave", "erin"]
    assert names(db_url) == {
        "alice": ("Alice", "Liddell", "alice@uni"),
        "bob": ("Bob", "Builder", "bob@uni"),
        "carol": ("Carol Ann", "van der Berg", None),
        "dave": ("", "Dave", "dave@uni"),  # in the roster only: added, so the formgrader lists the whole class
        "erin": ("", "erin", None),
        "frank": ("", "frank", None),
    }
    assert name_students(db_url, roster) == [] and name_students(db_url) == []  # nothing left to fill in
    # A roster given later replaces the id that stood in for a name, never a name: the formgrader's edits stay.
    with Gradebook(db_url, course_id=COURSE_ID) as gb:
        gb.update_or_create_student("bob", first_name=None, last_name="Baumeister")  # the edit dialog's empty -> null
    roster.write_text("student,name\nbob,Robert Builder\nfrank,Frank Fischer\n", encoding="utf-8")
    assert name_students(db_url, roster) == ["bob", "frank"]
    assert names(db_url)["bob"] == ("", "Baumeister", "bob@uni") and names(db_url)["frank"][:2] == ("Frank", "Fischer")
