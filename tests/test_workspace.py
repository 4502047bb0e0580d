"""`make lab` opens the student's own copy (`course_lib.workspace`): saved work survives restarts,
course updates and `make release`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import autograde.release
from autograde.course import RELEASE_DIRECTORY, REPO_ROOT
from course_lib import workspace
from course_lib.workspace import MANIFEST, WorkspaceError, prepare

STEM = "01_positional_encoding"


def notebook(source: str) -> str:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture
def released(tmp_path: Path) -> Path:
    """A small release: two assignments, one with a data file beside its notebook."""
    root = tmp_path / "notebooks"
    (root / STEM).mkdir(parents=True)
    (root / STEM / f"{STEM}.ipynb").write_text(notebook("raise NotImplementedError()"))
    (root / STEM / "angles.csv").write_text("0,1\n")
    (root / "02_attention").mkdir()
    (root / "02_attention" / "02_attention.ipynb").write_text(notebook("raise NotImplementedError()"))
    (root / STEM / ".ipynb_checkpoints").mkdir()
    (root / STEM / ".ipynb_checkpoints" / f"{STEM}-checkpoint.ipynb").write_text("{}")
    return root


def save_answer(path: Path, answer: str) -> None:
    """What JupyterLab does when the student saves: the notebook's JSON changes."""
    content = json.loads(path.read_text())
    content["cells"][0]["source"] = answer
    path.write_text(json.dumps(content))


def test_first_copy(released: Path, tmp_path: Path):
    work = tmp_path / "my-work"
    messages = prepare(released, work)
    for relative in [f"{STEM}/{STEM}.ipynb", f"{STEM}/angles.csv", "02_attention/02_attention.ipynb"]:
        assert (work / relative).read_bytes() == (released / relative).read_bytes(), relative
    assert not (work / STEM / ".ipynb_checkpoints").exists()
    assert messages == [f"{STEM}: copied into {work / STEM}/", f"02_attention: copied into {work / '02_attention'}/"]
    recorded = json.loads((work / MANIFEST).read_text())["files"]
    assert sorted(recorded) == [f"{STEM}/{STEM}.ipynb", f"{STEM}/angles.csv", "02_attention/02_attention.ipynb"]
    assert recorded[f"{STEM}/angles.csv"] == hashlib.sha256(b"0,1\n").hexdigest()


def test_saved_answer_survives_a_restart(released: Path, tmp_path: Path):
    work = tmp_path / "my-work"
    prepare(released, work)
    mine = work / STEM / f"{STEM}.ipynb"
    save_answer(mine, "def get_angles(): return 42")
    saved = mine.read_bytes()
    assert prepare(released, work) == []
    assert mine.read_bytes() == saved
    assert not (work / STEM / f"{STEM}.new.ipynb").exists()


def test_saved_answer_survives_a_course_update(released: Path, tmp_path: Path):
    work = tmp_path / "my-work"
    prepare(released, work)
    mine = work / STEM / f"{STEM}.ipynb"
    save_answer(mine, "def get_angles(): return 42")
    saved = mine.read_bytes()
    update = notebook("# a clearer hint\nraise NotImplementedError()")
    (released / STEM / f"{STEM}.ipynb").write_text(update)
    (released / STEM / "angles.csv").write_text("0,2\n")

    messages = prepare(released, work)
    assert mine.read_bytes() == saved
    assert (work / STEM / f"{STEM}.new.ipynb").read_text() == update
    assert (work / STEM / "angles.new.csv").read_text() == "0,2\n"
    assert (work / STEM / "angles.csv").read_text() == "0,1\n"
    assert (f"{STEM}: the course updated this notebook; your work is untouched, "
            f"the new version is {STEM}.new.ipynb") in messages
    assert len(messages) == 2
    # The update is recorded: the next start says nothing, and a later update replaces the old .new copy.
    assert prepare(released, work) == []
    (released / STEM / f"{STEM}.ipynb").write_text(notebook("# third version"))
    assert len(prepare(released, work)) == 1
    assert (work / STEM / f"{STEM}.new.ipynb").read_text() == notebook("# third version")
    assert mine.read_bytes() == saved


def test_a_deleted_copy_is_restored(released: Path, tmp_path: Path):
    work = tmp_path / "my-work"
    prepare(released, work)
    mine = work / STEM / f"{STEM}.ipynb"
    mine.unlink()
    messages = prepare(released, work)
    assert mine.read_bytes() == (released / STEM / f"{STEM}.ipynb").read_bytes()
    assert messages == [f"{STEM}: your copy of {STEM}.ipynb was missing; a fresh copy was made"]


def test_without_a_record_a_different_copy_is_kept_and_the_release_put_beside_it(released: Path, tmp_path: Path):
    work = tmp_path / "my-work"
    prepare(released, work)
    mine = work / STEM / f"{STEM}.ipynb"
    save_answer(mine, "def get_angles(): return 42")
    saved = mine.read_bytes()
    (work / MANIFEST).unlink()
    messages = prepare(released, work)
    assert mine.read_bytes() == saved
    assert (work / STEM / f"{STEM}.new.ipynb").read_bytes() == (released / STEM / f"{STEM}.ipynb").read_bytes()
    assert len(messages) == 1 and "your work is untouched" in messages[0]


@pytest.mark.parametrize("broken", ["{not json", '["a list"]', '{"files": {"a": 1}}'])
def test_a_malformed_manifest_stops_with_advice_and_changes_nothing(released: Path, tmp_path: Path, broken: str):
    work = tmp_path / "my-work"
    prepare(released, work)
    mine = work / STEM / f"{STEM}.ipynb"
    mine.unlink()  # would be restored by a run that went ahead
    (work / MANIFEST).write_text(broken)
    with pytest.raises(WorkspaceError) as raised:
        prepare(released, work)
    assert str(work / MANIFEST) in str(raised.value) and "Delete that file" in str(raised.value)
    assert (work / MANIFEST).read_text() == broken
    assert not mine.exists()


def test_main_prints_the_messages_and_a_summary(released: Path, tmp_path: Path, capsys):
    work = tmp_path / "my-work"
    assert workspace.main(["--released", str(released), "--work", str(work)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[-1].startswith(f"your work is in {work}/ (2 assignment folders)")
    assert workspace.main(["--released", str(released), "--work", str(work)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"your work is in {work}/ (2 assignment folders); nothing new from the course"]
    (work / MANIFEST).write_text("{")
    assert workspace.main(["--released", str(released), "--work", str(work)]) == 1
    assert "Delete that file" in capsys.readouterr().err


def test_workspace_does_not_import_autograde():
    # Students' side: the working copy must not depend on the grader's package.
    source = Path(workspace.__file__).read_text()
    assert "autograde" not in source.split('"""', 2)[2]


def test_make_release_writes_into_notebooks_never_into_the_working_folder(tmp_path: Path, monkeypatch):
    # `make release` runs `python -m autograde.release` without --out: its default target is notebooks/.
    release, targets = autograde.release.release, []
    monkeypatch.setattr(autograde.release, "release", lambda out, assignments=None: targets.append(out) or [])
    assert autograde.release.main([]) == 0
    assert targets == [REPO_ROOT / RELEASE_DIRECTORY] and RELEASE_DIRECTORY == "notebooks"

    # And release() replaces only the assignment folders of its `out`: a working folder beside it is
    # left alone. nbgrader is replaced by a stand-in that "generates" one notebook.
    def fake_nbgrader(root, command, stem, *options):
        generated = Path(root) / RELEASE_DIRECTORY / stem
        generated.mkdir(parents=True)
        (generated / f"{stem}.ipynb").write_text(notebook("released"))

    monkeypatch.setattr(autograde.release, "run_nbgrader", fake_nbgrader)
    out, work = tmp_path / "notebooks", tmp_path / "my-work"
    (out / STEM).mkdir(parents=True)
    (out / STEM / f"{STEM}.ipynb").write_text(notebook("old release"))
    (work / STEM).mkdir(parents=True)
    (work / STEM / f"{STEM}.ipynb").write_text(notebook("my answer"))
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and out not in p.parents}
    release(out, [STEM])
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and out not in p.parents}
    assert after == before
    assert (out / STEM / f"{STEM}.ipynb").read_text() == notebook("released")
    assert (work / STEM / f"{STEM}.ipynb").read_text() == notebook("my answer")
