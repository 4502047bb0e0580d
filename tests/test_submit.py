"""Handing in (`make submit`, course_lib/submit.py) and reading a folder of archives (autograde/collect.py).

- A half-done working folder (01 answered, 02 partly answered with mistakes, 03 untouched) is checked and packed
  once: the summary says where each exercise stands, the archive has the layout `make grade` reads, and the
  student's files are byte for byte what they were.
- Bad input (student ids, folders, notebooks) stops with a message, or, for a broken notebook, is packed with a
  warning.
- The grader unpacks only `<student>/<name>.ipynb`, and refuses the student of an archive that could escape or
  collide; the others are graded.
- One archive made by `make submit` for 01 is graded by `python -m autograde.grade` from a folder of archives.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from submissions import answered, make_zip

from autograde import collect, registry
from autograde.feedback import exercise_name as feedback_exercise_name
from autograde.grade import main as grade_main
from course_lib import notebooks, submit
from course_lib.notebooks import nbgrader_meta
from course_lib.selfcheck import NOT_STARTED, PASSES, check_notebook, run_cells

from conftest import ASSIGNMENTS, REPO, release_path

STUDENT = "alice"
PE, SDPA, MHA = "01_positional_encoding", "02_scaled_dot_product_attention", "03_multi_head_attention"
RELEASED = REPO / "notebooks"


def run_submit(*args: str) -> tuple[int, str, str]:
    """`python -m course_lib.submit ARGS` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = submit.main([*args, "--released", str(RELEASED)])
    return code, out.getvalue(), err.getvalue()


def tree_digest(folder: Path) -> dict[str, str]:
    """Every file and folder under `folder` (checkpoints and caches included) with its content's hash."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder"
            for p in sorted(folder.rglob("*"))}


def put(work: Path, stem: str, notebook) -> Path:
    path = work / stem / f"{stem}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(notebook, bytes):
        path.write_bytes(notebook)
    else:
        nbformat.write(notebook, path)
    return path


def cell(notebook, grade_id: str):
    return next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == grade_id)


def half_done_attention():
    """02 as a student leaves it halfway: one wrong answer, one that does not parse, one begun (still raising),
    two untouched, and a cell of their own that fails."""
    notebook = answered(SDPA)
    stubs = nbformat.read(release_path(SDPA), as_version=4)
    wrong = cell(notebook, "dot_score")
    wrong.source = wrong.source.replace("tf.matmul(queries, keys, transpose_b=True)",
                                        "tf.matmul(keys, queries, transpose_b=True)")
    cell(notebook, "cosine_score").source = "def cosine_score(queries, keys):\n    return (queries @ keys.T"
    cell(notebook, "create_padding_mask").source = cell(stubs, "create_padding_mask").source.replace(
        "# YOUR CODE HERE", "# YOUR CODE HERE\n# idea: tf.math.equal(token_ids, 0)")
    for grade_id in ("create_look_ahead_mask", "scaled_dot_product_attention"):
        cell(notebook, grade_id).source = cell(stubs, grade_id).source
    at = notebook.cells.index(cell(notebook, "test_scaled_dot_score"))
    notebook.cells.insert(at + 1, nbformat.v4.new_code_cell("print(my_scores)"))
    return notebook


@pytest.fixture(scope="module")
def handed_in(tmp_path_factory):
    """A half-done my-work/ checked and packed once: (work, out, exit status, stdout, digests before, after)."""
    root = tmp_path_factory.mktemp("submit")
    work, out = root / "my-work", root / "submissions"
    put(work, PE, answered(PE))
    put(work, SDPA, half_done_attention())
    put(work, MHA, release_path(MHA).read_bytes())
    # What a student's folder also holds: a course update beside their copy, a checkpoint, the lab's record.
    (work / PE / f"{PE}.new.ipynb").write_bytes(release_path(PE).read_bytes())
    (work / PE / ".ipynb_checkpoints").mkdir()
    (work / PE / ".ipynb_checkpoints" / f"{PE}-checkpoint.ipynb").write_text("{}")
    (work / ".course-copies.json").write_text('{"files": {}}\n')
    (work / SDPA / "helpers.py").write_text("SCALE = 2\n")  # the student's own: not handed in
    before = tree_digest(work)
    code, stdout, stderr = run_submit("--student", STUDENT, "--work", str(work), "--out", str(out))
    assert stderr == "", stderr
    return work, out, code, stdout, before, tree_digest(work)


def summary_lines(stdout: str, stem: str) -> dict[str, str]:
    """exercise -> status, from one notebook's block of the printed summary."""
    block = stdout.split(f"\n{stem}: ", 1)[1].split("\n\n", 1)[0]
    found = {}
    for line in block.splitlines()[1:]:
        if line.startswith("  ") and not line.startswith("  note:"):
            name, status = line.strip().split(": ", 1)
            found[name.split(" (")[0]] = status
    return found


@pytest.mark.notebooks
def test_answered_notebook_passes_every_check(handed_in):
    _, _, code, stdout, _, _ = handed_in
    assert code == 0, stdout
    assert summary_lines(stdout, PE) == {row.name: PASSES for row in registry.exercises(PE)}, stdout
    assert f"note: the course updated this notebook ({PE}.new.ipynb is beside yours)" in stdout


@pytest.mark.notebooks
def test_half_done_notebook_says_where_each_exercise_stands(handed_in):
    _, _, _, stdout, _, _ = handed_in
    lines = summary_lines(stdout, SDPA)
    assert list(lines) == [row.name for row in registry.exercises(SDPA)], stdout
    # The wrong answer: the visible check's own message, first line only.
    assert lines["dot_score"].startswith("done, check fails: dot_score(queries, keys) has shape"), lines
    assert lines["cosine_score"].startswith("done, check fails: your solution cell raised SyntaxError"), lines
    assert lines["cosine_score"].endswith("(line 2)"), "the kernel's name for the cell's file is noise"
    assert lines["create_padding_mask"] == f"{NOT_STARTED} (your cell still raises NotImplementedError)"
    assert lines["create_look_ahead_mask"] == lines["scaled_dot_product_attention"] == NOT_STARTED
    for name in ("scaled_dot_score", "general_score", "additive_score"):
        assert lines[name] == PASSES, (name, lines[name])
    assert f"{SDPA}: 8 exercises: 3 checks pass, 2 checks fail, 3 not started" in stdout
    assert "note: cell" in stdout and "raised NameError: name 'my_scores' is not defined" in stdout
    assert "note: only the notebook is handed in, not the files beside it (helpers.py)" in stdout
    assert stdout.count("only the notebook is handed in") == 1, "the .new copy or the checkpoint was named"


@pytest.mark.notebooks
def test_released_notebook_is_all_not_started(handed_in):
    _, _, _, stdout, _, _ = handed_in
    assert summary_lines(stdout, MHA) == {row.name: NOT_STARTED for row in registry.exercises(MHA)}
    assert "nothing answered yet, so it was not run" in stdout


@pytest.mark.notebooks
def test_archive_has_the_layout_make_grade_reads(handed_in):
    work, out, _, stdout, _, _ = handed_in
    archive = out / f"{STUDENT}.zip"
    assert f"Archive: {archive}" in stdout and "Hand in this one file" in stdout
    with zipfile.ZipFile(archive) as opened:
        assert opened.namelist() == [f"{STUDENT}/{stem}.ipynb" for stem in (PE, SDPA, MHA)]
        for stem in (PE, SDPA, MHA):  # the saved files as they are, not executed copies
            assert opened.read(f"{STUDENT}/{stem}.ipynb") == (work / stem / f"{stem}.ipynb").read_bytes()
    assert [p.name for p in out.iterdir()] == [f"{STUDENT}.zip"], "a temporary file was left behind"


@pytest.mark.notebooks
def test_student_files_are_not_modified(handed_in):
    _, _, _, _, before, after = handed_in
    assert after == before, "make submit changed, added or removed files in the working folder"


@pytest.mark.notebooks
def test_without_a_release_an_untouched_notebook_is_run_and_still_not_started(tmp_path):
    path = put(tmp_path, PE, release_path(PE).read_bytes())
    report = check_notebook(path, path.read_bytes(), released=None)
    assert report.ran and not report.notes, report
    assert {e.name: e.status for e in report.exercises} == {
        row.name: f"{NOT_STARTED} (your cell still raises NotImplementedError)" for row in registry.exercises(PE)}


@pytest.mark.notebooks
def test_a_hanging_or_crashing_cell_does_not_stop_the_others(tmp_path):
    code = ["x = 1", "import time\ntime.sleep(60)", "print(x)", "import os\nos._exit(1)", "print(x + 1)", "1 / 0"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in code])
    outcomes = run_cells(notebook, tmp_path, cell_timeout=3)
    assert [outcomes[i].status for i in range(len(code))] == ["ok", "timeout", "ok", "died", "ok", "error"]
    assert outcomes[5].ename == "ZeroDivisionError"
    assert notebook.cells[4].outputs[0]["text"] == "2\n", "the cells before a restart were not replayed"


# ----------------------------------------------------------------------------------------------
# Bad input: a clear message, exit status 2, nothing written; a broken notebook is packed with a warning


@pytest.mark.parametrize("student", ["", "  ", "jane doe", "../alice", "a/b", "a\\b", "..", ".alice", "-rf", "x" * 65])
def test_a_bad_student_id_is_refused(student, tmp_path):
    put(tmp_path / "work", PE, release_path(PE).read_bytes())
    code, stdout, stderr = run_submit(f"--student={student}", "--work", str(tmp_path / "work"),
                                      "--out", str(tmp_path / "out"))
    assert code == 2 and "error: the student id" in stderr, (stdout, stderr)
    assert not (tmp_path / "out").exists()


def test_student_ids_are_the_graders():
    from autograde import judge

    assert judge.STUDENT_ID is notebooks.STUDENT_ID


@pytest.mark.parametrize("layout, expected", [
    ("missing", "does not exist: run `make lab` first"),
    ("a file", "is not a folder"),
    ("empty", "no assignment notebooks in"),
    ("only a new copy", f"only the course's new copies: {PE}/{PE}.new.ipynb"),
])
def test_a_working_folder_without_notebooks_is_refused(layout, expected, tmp_path):
    work = tmp_path / "work"
    if layout == "a file":
        work.write_text("not a folder")
    elif layout != "missing":
        (work / "notes").mkdir(parents=True)
        (work / f"{PE}.ipynb").write_bytes(release_path(PE).read_bytes())  # not in its assignment folder
    if layout == "only a new copy":
        (work / PE).mkdir()
        (work / PE / f"{PE}.new.ipynb").write_bytes(release_path(PE).read_bytes())
    code, _, stderr = run_submit("--student", STUDENT, "--work", str(work), "--out", str(tmp_path / "out"))
    assert code == 2 and expected in stderr, stderr
    assert not (tmp_path / "out").exists()


def test_a_malformed_notebook_is_packed_with_a_warning(tmp_path):
    work = tmp_path / "work"
    broken = b'{"cells": ['
    put(work, PE, broken)
    put(work, SDPA, release_path(SDPA).read_bytes())
    code, stdout, _ = run_submit("--student", STUDENT, "--work", str(work), "--out", str(tmp_path / "out"))
    assert code == 0, stdout
    assert f"{PE}: WARNING: invalid notebook: not valid JSON" in stdout
    assert f"WARNING: {work / PE / f'{PE}.ipynb'} is not a readable notebook" in stdout
    with zipfile.ZipFile(tmp_path / "out" / f"{STUDENT}.zip") as opened:
        assert opened.read(f"{STUDENT}/{PE}.ipynb") == broken
        assert opened.namelist() == [f"{STUDENT}/{PE}.ipynb", f"{STUDENT}/{SDPA}.ipynb"]


def test_an_earlier_archive_is_replaced(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    put(work, PE, release_path(PE).read_bytes())
    out.mkdir()
    (out / f"{STUDENT}.zip").write_bytes(b"an older hand-in")
    code, _, _ = run_submit("--student", STUDENT, "--work", str(work), "--out", str(out), "--no-check")
    assert code == 0
    with zipfile.ZipFile(out / f"{STUDENT}.zip") as opened:
        assert opened.namelist() == [f"{STUDENT}/{PE}.ipynb"]


def test_submit_runs_without_autograde(tmp_path):
    """The student kit ships course_lib without autograde/: handing in must not need it."""
    put(tmp_path / "work", PE, release_path(PE).read_bytes())
    script = ("import sys; sys.modules['autograde'] = None\n"  # any import of autograde now fails
              "from course_lib.submit import main\n"
              f"sys.exit(main(['--student', 'kit', '--work', {str(tmp_path / 'work')!r}, "
              f"'--out', {str(tmp_path / 'out')!r}, '--released', {str(RELEASED)!r}]))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "kit.zip").is_file()


def test_exercises_are_named_as_the_registry_and_the_feedback_pages_name_them():
    for stem in ASSIGNMENTS:
        found = notebooks.exercises(nbformat.read(release_path(stem), as_version=4))
        rows = registry.exercises(stem)
        assert [(e.name, e.test_id, e.points) for e in found] == [(r.name, r.test_id, r.points) for r in rows]
        for row in rows:
            assert feedback_exercise_name(row.test_id) == row.name
    assert feedback_exercise_name("test_something_new") == notebooks.exercise_name("test_something_new")


# ----------------------------------------------------------------------------------------------
# The grader's side: a folder of archives


NOTEBOOK = release_path(PE).read_bytes()


@pytest.mark.parametrize("members, symlinks, fault", [
    ({"../evil.ipynb": NOTEBOOK}, (), "'../evil.ipynb' climbs out of the folder"),
    ({"bob/../../evil.ipynb": NOTEBOOK}, (), "'bob/../../evil.ipynb' climbs out of the folder"),
    ({"/etc/bob/01_positional_encoding.ipynb": NOTEBOOK}, (), "has an absolute path"),
    ({f"bob/{PE}.ipynb": b"/etc/passwd"}, (f"bob/{PE}.ipynb",), "is a symbolic link"),
    ({f"bob/{PE}/{PE}.ipynb": NOTEBOOK}, (), "is not <student>/<name>.ipynb"),
    ({f"bob/{PE}.ipynb": NOTEBOOK, "bob/run_me.sh": b"rm -rf /"}, (), "'bob/run_me.sh' is not <student>"),
    ({f"bob/{PE}.ipynb": NOTEBOOK, f"carol/{PE}.ipynb": NOTEBOOK}, (), "holds several students' folders"),
    ({f"bo b/{PE}.ipynb": NOTEBOOK}, (), "its folder 'bo b' cannot be graded"),
    ({}, (), "the archive is empty"),
])
def test_collect_refuses_the_student_of_a_faulty_archive_alone(members, symlinks, fault, tmp_path):
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    submissions.mkdir()
    make_zip(submissions / "bob.zip", members, symlinks=symlinks)
    make_zip(submissions / "alice.zip", {f"alice/{PE}.ipynb": NOTEBOOK})
    logged = []
    batch = collect.collect(submissions, PE, out, log=logged.append)
    assert batch.folders == {"alice": out / collect.STAGING / "alice"}, "the others are graded"
    assert list(batch.refused) == ["bob"], "refused under the archive's name when it names no student"
    assert batch.refused["bob"].startswith("bob.zip: ") and fault in batch.refused["bob"], batch.refused
    assert f"bob: not graded: {batch.refused['bob']}" in logged
    assert not (out / collect.STAGING / "bob").exists() and not (tmp_path / "evil.ipynb").exists()


def test_collect_refuses_each_student_at_fault_and_keeps_the_others(monkeypatch, tmp_path):
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    (submissions / "bob").mkdir(parents=True)
    make_zip(submissions / "bob.zip", {f"bob/{PE}.ipynb": b"{}"})
    make_zip(submissions / "carol-1.zip", {f"carol/{PE}.ipynb": b"{}"})
    make_zip(submissions / "carol-2.zip", {f"carol/{PE}.ipynb": b"{}"})
    (submissions / "dave.zip").write_bytes(b"not a zip")
    (submissions / "up load.zip").write_bytes(b"not a zip either, nor its name a student id")
    monkeypatch.setattr(collect, "MAX_MEMBER_BYTES", 2048)
    make_zip(submissions / "erin.zip", {f"erin/{PE}.ipynb": b" " * 4096})
    make_zip(submissions / "frank.zip", {f"frank/{PE}.ipynb": b"{}"})
    logged = []
    batch = collect.collect(submissions, PE, out, log=logged.append)
    assert batch.folders == {"frank": out / collect.STAGING / "frank"}
    assert batch.refused == {
        "bob": "student bob is in 2 places (folder bob/, archive bob.zip): keep one",
        "carol": "student carol is in 2 places (archive carol-1.zip, archive carol-2.zip): keep one",
        "dave": "dave.zip: not a readable zip archive (File is not a zip file)",
        "erin": f"erin.zip: member 'erin/{PE}.ipynb' is 4.0 KiB, over the limit of 2.0 KiB (its outputs make it "
                f"that large: clear them and hand it in again)"}
    assert "not graded: up load.zip: not a readable zip archive (File is not a zip file) (and its file name is no " \
           "student id to record that under)" in logged


def test_collect_unpacks_only_the_assignment_being_graded(tmp_path):
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    (submissions / "bob").mkdir(parents=True)
    make_zip(submissions / "alice.zip", {"alice/": b"", f"alice/{PE}.ipynb": NOTEBOOK, f"alice/{SDPA}.ipynb": b"{}"})
    make_zip(submissions / "upload-7.zip", {f"dave/{PE}.ipynb": NOTEBOOK})
    make_zip(submissions / "carol.zip", {f"carol/{SDPA}.ipynb": b"{}"})
    logged = []
    batch = collect.collect(submissions, PE, out, log=logged.append)
    staging = out / collect.STAGING
    assert batch.folders == {"alice": staging / "alice", "bob": submissions / "bob", "dave": staging / "dave"}
    assert sorted(p.name for p in (staging / "alice").iterdir()) == [f"{PE}.ipynb"]
    assert (staging / "alice" / f"{PE}.ipynb").read_bytes() == NOTEBOOK
    assert "upload-7.zip holds dave/: graded as dave" in logged
    # Like a folder of other assignments' folders, an archive of other assignments' notebooks has not handed 01 in.
    assert "not handed in (other assignments only): carol" in logged and not (staging / "carol").exists()
    # A second run replaces what the first unpacked; a folder it did not make is never emptied.
    assert collect.collect(submissions, PE, out, log=logged.append) == batch
    (staging / collect.MARKER).unlink()
    with pytest.raises(collect.CollectError, match="was not made by the grader"):
        collect.collect(submissions, PE, out, log=logged.append)


@pytest.mark.thorough
def test_make_grade_refuses_the_student_of_a_faulty_archive_and_grades_the_others(monkeypatch, tmp_path, capsys):
    import autograde.confinement

    monkeypatch.setattr(autograde.confinement, "sandbox_check", lambda: None)
    (tmp_path / "submissions" / "bob").mkdir(parents=True)
    (tmp_path / "submissions" / "bob" / f"{PE}.ipynb").write_text("{}")  # graded without a kernel: not a notebook
    make_zip(tmp_path / "submissions" / "mallory.zip", {"../evil.ipynb": NOTEBOOK})
    code = grade_main(["--assignment", PE, "--submissions", str(tmp_path / "submissions"),
                       "--out", str(tmp_path / "out"), "--no-gradebook", "--no-feedback", "--workers", "1"])
    assert code == 0, capsys.readouterr().err
    with open(tmp_path / "out" / "grades.csv", newline="") as handle:
        rows = {row["student"]: (row["score"], row["status"]) for row in csv.DictReader(handle)}
    assert rows == {"bob": ("0", "invalid notebook: no list of cells (is it a notebook?)"),
                    "mallory": ("0", "not graded: mallory.zip: member '../evil.ipynb' climbs out of the folder with "
                                     "'..'")}
    assert not (tmp_path / "evil.ipynb").exists()


@pytest.mark.grading
def test_an_archive_from_make_submit_is_graded_from_a_folder_of_archives(tmp_path):
    work, submissions, out = tmp_path / "my-work", tmp_path / "submissions", tmp_path / "grades"
    put(work, PE, answered(PE))
    code, _, _ = run_submit("--student", STUDENT, "--work", str(work), "--out", str(submissions), "--no-check")
    assert code == 0
    (submissions / "bob").mkdir()
    (submissions / "bob" / f"{PE}.ipynb").write_bytes(release_path(PE).read_bytes())
    code = grade_main(["--assignment", PE, "--submissions", str(submissions), "--out", str(out), "--workers", "1",
                       "--seed", "1", "--cell-timeout", "60", "--no-feedback", "--no-gradebook"])
    assert code == 0
    with open(out / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert sorted(rows) == ["alice", "bob"]
    assert rows["alice"]["score"] == rows["alice"]["max_score"] == "5" and rows["alice"]["status"] == "graded"
    assert rows["bob"]["score"] == "0"
