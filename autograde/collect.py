"""Gather a folder of submissions for grading: students' folders, and the archives `make submit` makes.

    SUBMISSIONS/alice/01_positional_encoding.ipynb    a folder: graded where it is
    SUBMISSIONS/bob.zip                               members bob/<NN_topic>.ipynb (course_lib/submit.py)
    SUBMISSIONS/carol/01_positional_encoding/         nbgrader's submitted/ layout (`nbgrader collect`), with its
                  01_positional_encoding.ipynb        timestamp.txt

Archives are checked whole before anything is written, then the notebook of the assignment being graded is
unpacked into OUT/unpacked/<student>/<NN_topic>.ipynb; the grader reads every student from there or from
their folder. An archive may hold only `<student>/<NN_topic>.ipynb` files (and the `<student>/` folder entry),
for one student. Anything else stops the batch before any grading, with one message naming every archive and
member at fault: absolute paths, `..`, symbolic links, other files or folders, members over the size limit,
encrypted or corrupt members, a student id the grader does not accept, and a student found in two places (a
folder and an archive, or two archives). Nothing is lost that way: move or fix what the message names and run
again.

Unpacked paths are built from the validated student id and assignment stem, never from a member's name.
"""

from __future__ import annotations

import re
import shutil
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

from course_lib.notebooks import ASSIGNMENT_STEM, student_id_problem

STAGING = "unpacked"  # inside OUT
MARKER = ".unpacked-by-autograde"  # only a staging folder holding this file is ever emptied
MAX_MEMBER_BYTES = 50 * 2**20  # a notebook with many figures is a few MiB
MAX_MEMBERS = 100
MEMBER = re.compile(r"(?P<student>[^/]+)/(?P<name>[^/]+)")


class CollectError(Exception):
    """Some archives cannot be graded; the message names each archive and member at fault."""


def archives_in(submissions: Path) -> list[Path]:
    return sorted(p for p in submissions.iterdir()
                  if p.is_file() and p.suffix.lower() == ".zip" and not p.name.startswith("."))


def folders_in(submissions: Path, stem: str, *, exclude: Path | None = None,
               log: Callable[[str], None] = print) -> dict[str, Path]:
    """Student folders: every visible folder (but `exclude`, the output folder when it is inside). In nbgrader's
    `submitted/` layout, `<student>/<stem>/` is the folder; a student with other assignments' folders only has not
    handed this one in, and is left out."""
    excluded = exclude.resolve() if exclude is not None else None
    found, absent = {}, []
    for path in sorted(submissions.iterdir()):
        if not path.is_dir() or path.name.startswith(".") or path.resolve() == excluded:
            continue
        if (path / stem).is_dir():
            found[path.name] = path / stem
        elif not (path / f"{stem}.ipynb").exists() and any(
                p.is_dir() and ASSIGNMENT_STEM.fullmatch(p.name) for p in path.iterdir()):
            absent.append(path.name)
        else:
            found[path.name] = path
    if absent:
        log(f"not handed in (other assignments only): {', '.join(absent)}")
    return found


def inspect_archive(archive: Path) -> tuple[str | None, dict[str, zipfile.ZipInfo], list[str]]:
    """(student, {assignment stem: member}, problems) of one archive, from its directory alone."""
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
        students.add(parts[0])
        match = MEMBER.fullmatch(name)
        if stat.S_ISLNK(info.external_attr >> 16):
            bad(name, "is a symbolic link")
        elif info.is_dir():
            if len(parts) != 1:
                bad(name, "is a folder inside the student's folder (expected only <student>/<NN_topic>.ipynb)")
        elif not match or not name.endswith(".ipynb") \
                or not ASSIGNMENT_STEM.fullmatch(match["name"].removesuffix(".ipynb")):
            bad(name, "is not <student>/<NN_topic>.ipynb (an archive from `make submit` holds only those)")
        elif info.flag_bits & 0x1:
            bad(name, "is encrypted")
        elif info.file_size > MAX_MEMBER_BYTES:
            bad(name, f"is {_size(info.file_size)}, over the limit of {_size(MAX_MEMBER_BYTES)}")
        else:
            stem = match["name"].removesuffix(".ipynb")
            if stem in notebooks:
                bad(name, "appears twice")
            notebooks[stem] = info
    if len(students) > 1:
        problems.append(f"{archive.name}: holds several students' folders ({', '.join(sorted(students))}); "
                        f"an archive holds one student's work")
    student = next(iter(students)) if len(students) == 1 else None
    if student is not None and (why := student_id_problem(student)):
        problems.append(f"{archive.name}: its folder {student!r} cannot be graded: {why}")
    if student is None and not problems:
        problems.append(f"{archive.name}: no <student>/ folder in it")
    return student, notebooks, problems


def collect(submissions: Path, stem: str, out: Path, *,
            log: Callable[[str], None] = print) -> dict[str, Path]:
    """{student: the folder to grade} for every student folder and archive in `submissions`; archives are
    unpacked into OUT/unpacked/. Raises CollectError, before writing anything, if any archive is at fault."""
    submissions, out = Path(submissions), Path(out)
    folders = folders_in(submissions, stem, exclude=out, log=log)
    archives = archives_in(submissions)
    if not archives:
        return folders
    places = {student: [f"folder {student}/"] for student in folders}
    problems, plans = [], []
    for archive in archives:
        student, notebooks, found = inspect_archive(archive)
        problems += found
        if student is not None:
            places.setdefault(student, []).append(f"archive {archive.name}")
            plans.append((archive, student, notebooks.get(stem)))
    for student, where in sorted(places.items()):
        if len(where) > 1:
            problems.append(f"student {student} is in {len(where)} places ({', '.join(where)}): keep one")
    if problems:
        raise CollectError(_report(problems, submissions))
    staging = _fresh_staging(out / STAGING)
    collected = dict(folders)
    try:
        for archive, student, info in plans:
            folder = staging / student
            folder.mkdir()
            if info is not None:
                _unpack(archive, info, folder / f"{stem}.ipynb")
            if archive.stem != student:
                log(f"{archive.name} holds {student}/: graded as {student}")
            collected[student] = folder
    except CollectError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    log(f"unpacked {len(plans)} archive(s) into {staging}/")
    return dict(sorted(collected.items()))


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


def _report(problems: list[str], submissions: Path) -> str:
    return (f"{len(problems)} problem(s) with the archives in {submissions}/ (nothing was graded):\n"
            + "\n".join(f"  {p}" for p in problems)
            + "\nMove or fix what is named above, then run again.")
