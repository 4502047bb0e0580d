"""What the grader takes in from a submission: files, links, notebook formats and names (autograde/collect.py,
autograde/grade.py read_submission and grade_files, autograde/record.py keep_submission).

- Nothing is read through a symbolic link, only regular files within size limits; a link out of the folder is
  flagged. A pipe, a dangling link or a link to a folder in a student's folder never ends the batch.
- A notebook in nbformat 3 is graded as Jupyter opens it.
- A renamed or misspelt notebook, when it is the only candidate, is graded under the assignment's name and the
  status says so; an archive holding only other assignments is not handed in.
- A faulty archive refuses its student alone, who is not recorded in the gradebook.

The bad submissions these cases add to INSTRUCTORS.md's table are written by tests/submissions.py (WRITERS) and
graded with the others in tests/test_grading.py's bad batch.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import nbformat
import pytest
from submissions import REFERENCE, answered, big, make_zip, version_3, without_metadata, write

from autograde import collect, grade, record
from autograde.grade import Submission, grade_batch, grade_files, read_submission
from autograde.judge import CellResult, StudentResult, empty_result
from autograde.judge import notebook_problem as graders_problem
from autograde.nbgrader_runner import make_course_root
from course_lib import notebooks, submit
from course_lib.notebooks import nbgrader_meta

from conftest import REPO, release_path

PE, SDPA = "01_positional_encoding", "02_scaled_dot_product_attention"
LIMITS = dict(cell_timeout=60, call_timeout=20, student_timeout=240)


# ----------------------------------------------------------------------------------------------
# Reading a folder: regular files only, never through a link, within limits


def test_nothing_is_read_through_a_link_and_a_link_out_of_the_folder_is_flagged(tmp_path):
    folder, outside = tmp_path / "bob", tmp_path / "elsewhere"
    write(answered(), folder / f"{PE}.ipynb")
    (folder / "data").mkdir()
    (folder / "data" / "table.csv").write_text("a,b\n")
    outside.mkdir()
    (outside / "secret.txt").write_text("the other student's answers")
    (folder / "answer.py").symlink_to(REFERENCE)
    (folder / "theirs").symlink_to(outside)  # a folder: not entered
    (folder / "table.csv").symlink_to("data/table.csv")  # inside the folder: left out, not flagged
    read = read_submission(folder, stem=PE)
    assert sorted(read.files) == [f"{PE}.ipynb", "data/table.csv"]
    assert not any(b"answers" in data or b"angle_rates" in data for data in read.files.values())
    assert f"flagged: symbolic links to files outside the submission: theirs -> {outside}, answer.py -> " \
           f"{REFERENCE}" in read.notes
    assert "symbolic links not read (only regular files are): theirs, answer.py, table.csv" in read.notes
    linked = tmp_path / "linked"
    linked.symlink_to(folder)
    assert read_submission(linked) == Submission({}, ["the submission's folder is a symbolic link: not read"])


def test_pipes_and_dangling_links_are_left_out_and_sizes_capped(monkeypatch, tmp_path):
    folder = tmp_path / "bob"
    write(answered(), folder / f"{PE}.ipynb")
    os.mkfifo(folder / "pipe")  # read, it would hang the grader
    (folder / "python").symlink_to("/nonexistent/bin/python3")
    (folder / "big.bin").write_bytes(b"0" * 3000)
    for name in ("a.txt", "b.txt"):
        (folder / name).write_bytes(b"1" * 1500)
    monkeypatch.setattr(grade, "MAX_EXTRA_BYTES", 2000)
    monkeypatch.setattr(grade, "MAX_SUBMISSION_BYTES", (folder / f"{PE}.ipynb").stat().st_size + 2000)
    read = read_submission(folder, stem=PE)
    assert sorted(read.files) == [f"{PE}.ipynb", "a.txt"], "the notebook is read first, then within the total"
    assert "not regular files (pipes, devices, sockets) not read: pipe" in read.notes
    assert "symbolic links not read (only regular files are): python" in read.notes
    assert not any(note.startswith("flagged:") for note in read.notes), "a dangling link reads nothing: no flag"
    assert any(note.startswith("files over the size limit not read") and "big.bin (0.0 MiB)" in note
               for note in read.notes), read.notes
    assert any(note.startswith("files past the") and note.endswith(": b.txt") for note in read.notes), read.notes


def test_what_was_left_out_is_in_the_status(tmp_path):
    """grade_files puts read_submission's notes in the status (no kernel: the notebook is missing)."""
    result = grade_files(PE, "bob", Submission({"notes.txt": b""}, ["flagged: x", "symbolic links not read: y"]), 1,
                         LIMITS)
    assert result["status"] == f"missing: no {PE}.ipynb in the submission; flagged: x; symbolic links not read: y"


def test_a_link_to_a_folder_is_not_a_students_folder(tmp_path):
    submissions, elsewhere = tmp_path / "submissions", tmp_path / "elsewhere"
    write(answered(), elsewhere / f"{PE}.ipynb")
    (submissions / "carol").mkdir(parents=True)
    (submissions / "mallory").symlink_to(elsewhere)
    (submissions / "carol" / PE).symlink_to(elsewhere)  # nbgrader's layout, its assignment folder a link
    (submissions / "dave").mkdir()
    logged = []
    found, absent = collect.folders_in(submissions, PE, log=logged.append)
    assert found == {"dave": submissions / "dave"} and absent == []
    assert logged == [f"not graded (a symbolic link to a folder, not a student's folder): carol/{PE}/, mallory/"]


# ----------------------------------------------------------------------------------------------
# Keeping a folder in submitted/: regular files and real folders only; one student's trouble is logged


def odd_folder(folder: Path) -> Path:
    """A student's folder with what a copied .venv brings: a pipe, links that dangle, to a folder, to a device."""
    write(answered(), folder / f"{PE}.ipynb")
    (folder / "sub").mkdir()
    (folder / "sub" / "notes.txt").write_text("notes")
    os.mkfifo(folder / "pipe")
    (folder / "python").symlink_to("/nonexistent/bin/python3")
    (folder / "solutions").symlink_to(REPO / "solutions")
    (folder / "null").symlink_to("/dev/null")
    return folder


def test_keep_submission_copies_regular_files_only(monkeypatch, tmp_path):
    folder, root, logged = odd_folder(tmp_path / "bob"), tmp_path / "course", []
    record.keep_submission(root, PE, "bob", folder, logged.append)
    target = root / "submitted" / "bob" / PE
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == [f"{PE}.ipynb", "sub", "sub/notes.txt"]
    assert not any(p.is_symlink() for p in target.rglob("*"))
    assert record.same_tree(folder, target) and logged == []
    record.keep_submission(root, PE, "bob", folder, logged.append)  # the same again: nothing moved aside
    assert logged == [] and sorted(p.name for p in target.parent.iterdir()) == [PE]
    (folder / "sub" / "notes.txt").write_text("changed")

    def failing(source, target, **kwargs):
        raise OSError(f"disk full copying {source}")

    monkeypatch.setattr(record.shutil, "copy2", failing)
    record.keep_submission(root, PE, "bob", folder, logged.append)
    assert logged[0].startswith("bob: the earlier submitted/bob/01_positional_encoding/ differs")
    assert logged[1].startswith(f"bob: the submission was not kept in submitted/bob/{PE}/: disk full")
    assert not (target.parent / f".{PE}.copying").exists(), "a half copy was left"


@pytest.mark.thorough
def test_record_batch_records_everyone_despite_pipes_and_links(tmp_path):
    """nbgrader's own layout (submitted/ graded where it is) with a pipe and links in it, and a folder to copy."""
    root = make_course_root(tmp_path / "course", [PE])
    kept = odd_folder(root / "submitted" / "bob" / PE)
    results = [empty_result(PE, student, f"missing: no {PE}.ipynb in the submission") for student in ("alice", "bob")]
    folders = {"alice": odd_folder(tmp_path / "alice"), "bob": kept}
    problems = record.record_batch(PE, results, folders, tmp_path / "out", course_root=root, feedback=False,
                                   log=lambda line: None)
    assert problems == []
    for student in ("alice", "bob"):
        graded = root / "autograded" / student / PE
        assert (graded / f"{PE}.ipynb").is_file() and (graded / "sub" / "notes.txt").is_file(), student
        assert not (graded / "solutions").exists() and not (graded / "pipe").exists()


# ----------------------------------------------------------------------------------------------
# Notebooks: nbformat 3, and which notebook to grade when none has the assignment's name


def test_a_version_3_notebook_is_readable(tmp_path):
    data = version_3(answered()).encode()
    assert notebooks.notebook_problem(data) is None
    path = tmp_path / f"{PE}.ipynb"
    path.write_bytes(data)
    assert graders_problem(path, PE) is None
    broken = json.loads(data)
    del broken["worksheets"][0]["cells"][0]["cell_type"]
    assert notebooks.notebook_problem(json.dumps(broken).encode()).startswith("invalid notebook:")
    assert notebooks.notebook_problem(b'{"nbformat": 3, "worksheets": {}}').startswith(
        "invalid notebook: no list of cells")


def choose(files: dict[str, object]) -> tuple[str | None, str]:
    data = {name: nb if isinstance(nb, bytes) else nbformat.writes(nb).encode() for name, nb in files.items()}
    return collect.choose_notebook(PE, data, data.get)


def test_the_only_notebook_holding_the_assignment_is_graded():
    assert choose({"homework.ipynb": answered()}) == ("homework.ipynb", f'graded "homework.ipynb" as {PE}.ipynb')
    # Holding the exercises beats a close name; another assignment's exact name is never taken.
    assert choose({f"{PE} (1).ipynb": without_metadata(answered()), "mine.ipynb": answered(),
                   f"{SDPA}.ipynb": answered()})[0] == "mine.ipynb"


@pytest.mark.parametrize("name", [f"{PE} (1).ipynb", "01_positional_encodng.ipynb", "01_Positional_Encoding.ipynb",
                                  f"Copy of {PE}.ipynb"])
def test_a_notebook_named_close_to_the_assignment_is_graded(name):
    assert choose({name: without_metadata(answered()), "scratch.ipynb": b"{}"}) == (
        name, f'graded "{name}" as {PE}.ipynb')


def test_several_or_no_candidates_grade_nothing():
    twice = choose({f"{PE} (1).ipynb": answered(), f"{PE} (2).ipynb": answered()})
    assert twice == (None, f'several notebooks could be {PE}.ipynb ("{PE} (1).ipynb", "{PE} (2).ipynb"): none was '
                           f"graded; hand in one by that name")
    assert choose({"homework.ipynb": b"{}"}) == (
        None, f"no notebook holds this assignment's exercises or has a name close to {PE}.ipynb")
    assert choose({f"{SDPA}.ipynb": answered()}) == (None, "")
    assert choose({}) == (None, "")


def test_grade_files_says_what_it_found_when_it_grades_nothing():
    notebook = nbformat.writes(answered()).encode()
    result = grade_files(PE, "bob", {"a.ipynb": notebook, "b.ipynb": notebook}, 1, LIMITS)
    assert result["score"] == 0 and result["status"].startswith(
        f"missing: no {PE}.ipynb in the submission (found: a.ipynb, b.ipynb); several notebooks could be ")


# ----------------------------------------------------------------------------------------------
# Archives: any <student>/<name>.ipynb; other assignments only is not handed in; a fault refuses one student


def test_an_archive_notebook_is_chosen_by_its_contents_or_its_name(tmp_path):
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    submissions.mkdir()
    renamed = nbformat.writes(answered()).encode()
    make_zip(submissions / "bob.zip", {"bob/": b"", "bob/homework.ipynb": renamed, f"bob/{SDPA}.ipynb": b"{}"})
    make_zip(submissions / "carol.zip", {"carol/notes.ipynb": b"{}", "carol/scratch.ipynb": b"{}"})
    make_zip(submissions / "dave.zip", {f"dave/{SDPA}.ipynb": b"{}", "dave/03_multi_head_attention.ipynb": b"{}"})
    (submissions / "erin").mkdir()  # a folder of other assignments' folders only: left out as before
    (submissions / "erin" / SDPA).mkdir()
    logged = []
    batch = collect.collect(submissions, PE, out, log=logged.append)
    staging = out / collect.STAGING
    assert batch.folders == {"bob": staging / "bob", "carol": staging / "carol"} and batch.refused == {}
    assert (staging / "bob" / f"{PE}.ipynb").read_bytes() == renamed
    assert batch.notes == {"bob": [f'graded "homework.ipynb" as {PE}.ipynb'],
                           "carol": ["carol.zip holds 'carol/notes.ipynb', 'carol/scratch.ipynb'",
                                     f"no notebook holds this assignment's exercises or has a name close to "
                                     f"{PE}.ipynb"]}
    assert list((staging / "carol").iterdir()) == []
    assert f'bob.zip: graded "homework.ipynb" as {PE}.ipynb' in logged
    assert "not handed in (other assignments only): dave, erin" in logged


def test_make_submit_refuses_a_notebook_over_the_graders_limit(tmp_path):
    work = tmp_path / "work"
    write(big(answered()), work / PE / f"{PE}.ipynb")
    write(nbformat.read(release_path(SDPA), as_version=4), work / SDPA / f"{SDPA}.ipynb")
    code = submit.main(["--student", "bob", "--work", str(work), "--out", str(tmp_path / "out"), "--no-check"])
    assert code == 2 and not (tmp_path / "out").exists()
    with pytest.raises(submit.SubmitError, match=r"01_positional_encoding.ipynb \(51.0 MiB\) is over the grader's "
                                                 r"limit of 50 MiB .* Edit > Clear Outputs of All Cells"):
        submit.find_notebooks(work)


@pytest.mark.thorough
def test_a_refused_student_keeps_their_earlier_grade_in_the_gradebook(tmp_path):
    from nbgrader.api import Gradebook

    root = make_course_root(tmp_path / "course", [PE])
    cells = [CellResult(c.grade_id, c.max_score, c.max_score, "✓") for c in empty_result(PE, "bob", "").cells]
    earlier = StudentResult("bob", PE, 5.0, 5.0, "graded", cells, nbformat.writes(answered()))
    write(answered(), tmp_path / "earlier" / f"{PE}.ipynb")
    assert record.record_batch(PE, [earlier], {"bob": tmp_path / "earlier"}, tmp_path / "out0", course_root=root,
                               feedback=False, log=lambda line: None) == []
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    make_zip(submissions / "bob.zip", {f"bob/{PE}.ipynb": b"{}", "bob/run_me.sh": b""})
    results = grade_batch(PE, submissions, tmp_path / "out", course_root=root, feedback=False, log=lambda line: None)
    assert [(r.student, r.score, r.status) for r in results] == [
        ("bob", 0.0, "not graded: bob.zip: member 'bob/run_me.sh' is not <student>/<name>.ipynb (an archive from "
                     "`make submit` holds only notebooks)")]
    with open(tmp_path / "out" / "grades.csv", newline="") as handle:
        assert [row["status"][:11] for row in csv.DictReader(handle)] == ["not graded:"]
    with Gradebook(record.course_config(root).CourseDirectory.db_url) as gradebook:
        assert gradebook.find_submission(PE, "bob").score == 5.0
    assert (root / "submitted" / "bob" / PE / f"{PE}.ipynb").read_bytes() == \
           (tmp_path / "earlier" / f"{PE}.ipynb").read_bytes()


def test_grade_ids_are_read_from_the_release():
    wanted = {nbgrader_meta(c).get("grade_id") for c in nbformat.read(release_path(PE), as_version=4).cells} - {None}
    assert collect._grade_ids(nbformat.writes(answered()).encode()) == wanted
    assert collect._grade_ids(b"{}") == set() and collect._grade_ids(None) == set()
