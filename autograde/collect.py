"""Gather a folder of submissions for grading: students' folders, and the archives `make submit` makes.

    SUBMISSIONS/alice/01_positional_encoding.ipynb    a folder: graded where it is
    SUBMISSIONS/bob.zip                               members bob/<NN_topic>.ipynb (course_lib/submit.py)
    SUBMISSIONS/carol/01_positional_encoding/         nbgrader's submitted/ layout (`nbgrader collect`), with its
                  01_positional_encoding.ipynb        timestamp.txt

A student's folder (or nbgrader's `<student>/<stem>/`) that is a symbolic link is left out, with a log line: it
would grade another folder under this student's name. Inside a folder nothing is read through a link, and only
regular files are read (`walk`; autograde/grade.py, read_submission).

Each archive is checked whole before anything of it is written. It may hold only `<student>/<name>.ipynb` files
(and the `<student>/` folder entry), for one student. An archive at fault refuses that student alone, with the
problem named, and the others are graded: absolute paths, `..`, symbolic links, other files or folders, members
over MAX_NOTEBOOK_BYTES, encrypted or corrupt members, a student id the grader does not accept, and a student
found in two places (a folder and an archive, or two archives: neither is graded). An archive that names no
acceptable student is refused under its file name when that is a student id, else only the log says so. A refused
student gets a `not graded: ` row in grades.csv and is not recorded in the gradebook (autograde/grade.py).

Then the notebook of the assignment being graded is unpacked into OUT/unpacked/<student>/<NN_topic>.ipynb; the
grader reads every student from there or from their folder. Without a `<NN_topic>.ipynb`, `choose_notebook` may
take a renamed or misspelt one, and the status says so; an archive of other assignments' notebooks only has not
handed this one in and is left out, as a folder of other assignments' folders is.

Unpacked paths are built from the validated student id and assignment stem, never from a member's name.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import stat
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograde.course import list_assignments
from course_lib.notebooks import (
    ASSIGNMENT_STEM,
    MAX_NOTEBOOK_BYTES,
    nbgrader_meta,
    notebook_problem,
    student_id_problem,
)

STAGING = "unpacked"  # inside OUT
MARKER = ".unpacked-by-autograde"  # only a staging folder holding this file is ever emptied
MAX_MEMBER_BYTES = MAX_NOTEBOOK_BYTES  # the limit `make submit` keeps to
MAX_MEMBERS = 100
MEMBER = re.compile(r"(?P<student>[^/]+)/(?P<name>[^/]+)")
SKIPPED = {".ipynb_checkpoints"}  # folders never read nor kept
# difflib's ratio of a notebook's name to the stem. The course's stems score at most 0.62 against each other;
# a typo or a browser's " (1)" scores 0.85 and more on all but the shortest stems, whose suffixed copies
# ("07_qa (1)") contain the stem whole, which counts as close too.
NEAR_NAME = 0.8


class CollectError(Exception):
    """The batch cannot be gathered (OUT/unpacked/ is not the grader's); nothing was graded."""


@dataclass
class Collected:
    """What `collect` found: the students to grade, notes for some statuses, and the students refused."""

    folders: dict[str, Path]  # student: the folder to grade
    notes: dict[str, list[str]] = field(default_factory=dict)  # student: what their status should say (collect's)
    refused: dict[str, str] = field(default_factory=dict)  # student: why they are not graded


def walk(folder: Path) -> Iterator[tuple[str, str]]:
    """(relative path, kind) of everything under `folder`, in a stable order, never through a symbolic link: kind is
    "folder", "file" (a regular one), "link" or "other" (a pipe, device or socket). A link to a folder is listed,
    not entered, and checkpoints are left out; a `folder` that is itself a link has nothing under it."""
    folder = Path(folder)
    if os.path.islink(folder) or not os.path.isdir(folder):
        return
    for top, dirs, files in os.walk(folder):  # followlinks=False: a link to a folder stays in `dirs`, not entered
        here = Path(top)
        entered = []
        for name in sorted(dirs):
            if name in SKIPPED:
                continue
            kind = _kind(here / name)
            yield str((here / name).relative_to(folder)), kind
            if kind == "folder":
                entered.append(name)
        dirs[:] = entered
        for name in sorted(files):
            yield str((here / name).relative_to(folder)), _kind(here / name)


def _kind(path: Path) -> str:
    try:
        mode = os.lstat(path).st_mode
    except OSError:  # gone meanwhile
        return "other"
    return ("link" if stat.S_ISLNK(mode) else "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode)
            else "other")


def archives_in(submissions: Path) -> list[Path]:
    return sorted(p for p in submissions.iterdir()
                  if p.is_file() and p.suffix.lower() == ".zip" and not p.name.startswith("."))


def folders_in(submissions: Path, stem: str, *, exclude: Path | None = None,
               log: Callable[[str], None] = print) -> tuple[dict[str, Path], list[str]]:
    """Student folders: every visible folder (but `exclude`, the output folder when it is inside), and the students
    who have not handed this one in. In nbgrader's `submitted/` layout, `<student>/<stem>/` is the folder; a
    student with other assignments' folders only has not handed it in. A link to a folder is left out."""
    excluded = exclude.resolve() if exclude is not None else None
    found, absent, links = {}, [], []
    for path in sorted(submissions.iterdir()):
        if path.name.startswith(".") or not path.is_dir() or path.resolve() == excluded:
            continue
        if path.is_symlink() or ((path / stem).is_symlink() and (path / stem).is_dir()):
            links.append(f"{path.name}/" if path.is_symlink() else f"{path.name}/{stem}/")
        elif (path / stem).is_dir():
            found[path.name] = path / stem
        elif not (path / f"{stem}.ipynb").exists() and any(
                p.is_dir() and not p.is_symlink() and ASSIGNMENT_STEM.fullmatch(p.name) for p in path.iterdir()):
            absent.append(path.name)
        else:
            found[path.name] = path
    if links:
        log(f"not graded (a symbolic link to a folder, not a student's folder): {', '.join(links)}")
    return found, absent


def choose_notebook(stem: str, names: Iterable[str], read: Callable[[str], bytes | None]) -> tuple[str | None, str]:
    """Which of a student's notebooks (`names`, none of them `<stem>.ipynb`; `read` gives one's bytes, or None) to
    grade as `<stem>.ipynb`, and the note saying so. Another assignment's exact name is never taken. First the
    notebooks that hold this assignment's exercises (half the release's grade ids or more: a renamed copy holds them
    all), else those named close to the stem (NEAR_NAME). Exactly one: (its name, note); several or none: (None,
    why); no candidate at all: (None, "")."""
    from autograde.judge import release_notebook  # not at the top: judge is heavy, and only this needs it

    others = set(list_assignments()) - {stem}
    candidates = [n for n in sorted(names) if n.lower().endswith(".ipynb") and n[:-6] not in others]
    if not candidates:
        return None, ""
    wanted = {nbgrader_meta(c).get("grade_id") for c in release_notebook(stem).cells} - {None}
    holding = [n for n in candidates if wanted and 2 * len(_grade_ids(read(n)) & wanted) >= len(wanted)]
    chosen = holding or [n for n in candidates if _near(stem, n[:-6])]
    if len(chosen) == 1:
        return chosen[0], f'graded "{chosen[0]}" as {stem}.ipynb'
    if chosen:
        quoted = ", ".join(f'"{n}"' for n in chosen)
        return None, f"several notebooks could be {stem}.ipynb ({quoted}): none was graded; hand in one by that name"
    return None, f"no notebook holds this assignment's exercises or has a name close to {stem}.ipynb"


def _grade_ids(data: bytes | None) -> set[str]:
    if not data or notebook_problem(data):
        return set()
    try:
        notebook = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception:  # valid by the schema, yet nbformat cannot convert it: it holds no usable grade ids
        return set()
    return {nbgrader_meta(c).get("grade_id") for c in notebook.cells} - {None}


def _near(stem: str, name: str) -> bool:
    stem, name = stem.lower(), name.lower()
    return stem in name or difflib.SequenceMatcher(None, stem, name).ratio() >= NEAR_NAME


def inspect_archive(archive: Path) -> tuple[str | None, dict[str, zipfile.ZipInfo], list[str]]:
    """(student, {notebook's name: member}, problems) of one archive, from its directory alone."""
    problems: list[str] = []

    def bad(member: str, why: str) -> None:
        problems.append(f"{archive.name}: member {member!r} {why}")

    try:
        with zipfile.ZipFile(archive) as opened:
            infos = opened.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        return None, {}, [f"{archive.name}: not a readable zip archive ({error})"]
    if not infos:
        return None, {}, [f"{archive.name}: the archive is empty"]
    if len(infos) > MAX_MEMBERS:
        return None, {}, [f"{archive.name}: {len(infos)} members, more than {MAX_MEMBERS}: not a course submission"]
    students, notebooks = set(), {}
    for info in infos:
        name = info.filename
        parts = name.rstrip("/").split("/")
        if "\\" in name:
            bad(name, "has a '\\' in its path")
            continue
        if name.startswith("/") or re.match(r"[A-Za-z]:", name):
            bad(name, "has an absolute path")
            continue
        if ".." in parts:
            bad(name, "climbs out of the folder with '..'")
            continue
        if len(parts) > 1 or info.is_dir():
            students.add(parts[0])
        match = MEMBER.fullmatch(name)
        if stat.S_ISLNK(info.external_attr >> 16):
            bad(name, "is a symbolic link")
        elif info.is_dir():
            if len(parts) != 1:
                bad(name, "is a folder inside the student's folder (expected only <student>/<name>.ipynb)")
        elif not match or not match["name"].lower().endswith(".ipynb"):
            bad(name, "is not <student>/<name>.ipynb (an archive from `make submit` holds only notebooks)")
        elif info.flag_bits & 0x1:
            bad(name, "is encrypted")
        elif info.file_size > MAX_MEMBER_BYTES:
            bad(name, f"is {_size(info.file_size)}, over the limit of {_size(MAX_MEMBER_BYTES)} (its outputs make "
                      f"it that large: clear them and hand it in again)")
        else:
            if match["name"] in notebooks:
                bad(name, "appears twice")
            notebooks[match["name"]] = info
    if len(students) > 1:
        problems.append(f"{archive.name}: holds several students' folders ({', '.join(sorted(students))}); "
                        f"an archive holds one student's work")
    student = next(iter(students)) if len(students) == 1 else None
    if student is not None and (why := student_id_problem(student)):
        problems.append(f"{archive.name}: its folder {student!r} cannot be graded: {why}")
    if student is None and not problems:
        problems.append(f"{archive.name}: no <student>/ folder in it")
    return student, notebooks, problems


def collect(submissions: Path, stem: str, out: Path, *, log: Callable[[str], None] = print) -> Collected:
    """Every student of `submissions` with the folder to grade (archives unpacked into OUT/unpacked/), the notes
    their statuses get, and the students refused, each with why. Raises CollectError, before writing anything, only
    when OUT/unpacked/ exists and was not made by the grader."""
    submissions, out = Path(submissions), Path(out)
    folders, absent = folders_in(submissions, stem, exclude=out, log=log)
    batch = Collected(folders)
    places = {student: [f"folder {student}/"] for student in folders}
    plans = []
    for archive in archives_in(submissions):
        student, notebooks, problems = inspect_archive(archive)
        if student is None or student_id_problem(student):
            student = None if student_id_problem(archive.stem) else archive.stem
        if student is None:
            log(f"not graded: {'; '.join(problems)} (and its file name is no student id to record that under)")
            continue
        places.setdefault(student, []).append(f"archive {archive.name}")
        if problems:
            batch.refused[student] = "; ".join(problems)
        else:
            plans.append((archive, student, notebooks))
    for student, where in places.items():
        if len(where) > 1:
            twice = f"student {student} is in {len(where)} places ({', '.join(where)}): keep one"
            batch.refused[student] = "; ".join([twice, *filter(None, [batch.refused.get(student)])])
            folders.pop(student, None)
    plans = [plan for plan in plans if plan[1] not in batch.refused]
    if plans:
        staging = _fresh_staging(out / STAGING)
        for archive, student, notebooks in plans:
            try:
                notes = _take(archive, notebooks, stem, staging / student, log)
            except CollectError as error:
                shutil.rmtree(staging / student, ignore_errors=True)
                batch.refused[student] = str(error)
                continue
            if notes is None:
                absent.append(student)
                continue
            if archive.stem != student:
                log(f"{archive.name} holds {student}/: graded as {student}")
            folders[student] = staging / student
            if notes:
                batch.notes[student] = notes
        log(f"unpacked {sum(s in folders for _, s, _ in plans)} archive(s) into {staging}/")
    if absent:
        log(f"not handed in (other assignments only): {', '.join(sorted(absent))}")
    for student, why in sorted(batch.refused.items()):
        log(f"{student}: not graded: {why}")
    batch.folders = dict(sorted(folders.items()))
    return batch


def _take(archive: Path, notebooks: dict[str, zipfile.ZipInfo], stem: str, folder: Path,
          log: Callable[[str], None]) -> list[str] | None:
    """Unpack the archive's notebook for `stem` into `folder` (made here) as `<stem>.ipynb`; the notes for the
    student's status, or None when the archive holds other assignments' notebooks only."""
    name, note = f"{stem}.ipynb", ""
    if name not in notebooks:
        name, note = choose_notebook(stem, notebooks, lambda n: _read(archive, notebooks[n]))
        if name is None and notebooks and not note:
            return None
    folder.mkdir()
    if name is None:  # graded as missing: say what the archive held
        held = ", ".join(repr(info.filename) for info in notebooks.values()) or "no notebook"
        return [f"{archive.name} holds {held}", *filter(None, [note])]
    _unpack(archive, notebooks[name], folder / f"{stem}.ipynb")
    if note:
        log(f"{archive.name}: {note}")
    return [note] if note else []


def _read(archive: Path, info: zipfile.ZipInfo) -> bytes | None:
    """A member's bytes, or None when it cannot be read within the size limit."""
    try:
        with zipfile.ZipFile(archive) as opened, opened.open(info) as source:
            data = source.read(MAX_MEMBER_BYTES + 1)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return None
    return data if len(data) <= MAX_MEMBER_BYTES else None


def _unpack(archive: Path, info: zipfile.ZipInfo, target: Path) -> None:
    """Copy one member to `target`, reading at most the size limit (the directory's sizes may lie)."""
    try:
        with zipfile.ZipFile(archive) as opened, opened.open(info) as source, open(target, "xb") as sink:
            written = 0
            while chunk := source.read(2**20):
                written += len(chunk)
                if written > MAX_MEMBER_BYTES:
                    raise CollectError(f"{archive.name}: member {info.filename!r} unpacks to more than "
                                       f"{_size(MAX_MEMBER_BYTES)}")
                sink.write(chunk)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        raise CollectError(f"{archive.name}: member {info.filename!r} cannot be read ({error})") from None


def _size(count: int) -> str:
    return f"{count / 2**20:.1f} MiB" if count >= 2**20 else f"{count / 2**10:.1f} KiB"


def _fresh_staging(staging: Path) -> Path:
    """OUT/unpacked/, emptied if an earlier run made it; never a folder someone else made."""
    if staging.exists():
        if not (staging / MARKER).is_file():
            raise CollectError(f"{staging} exists and was not made by the grader: move it, or choose another OUT")
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    (staging / MARKER).write_text("Unpacked from the archives in a submissions folder by autograde/collect.py; "
                                  "regenerated by every grading run.\n")
    return staging
