"""Assembling the kit: the students' trees copied, the generated files written, the whole searched for
answers and hidden tests, then published as a folder and a .zip beside it. It is built in a staging folder
beside `--out` and moved into place only once searched, so a kit that fails leaves nothing behind; `--out`
is refused where building could damage the course or a folder that is not a kit."""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

from autograde.course import RELEASE_DIRECTORY, REPO_ROOT, SOURCE_DIRECTORY
from autograde.student_kit.assignments import assignment_stems, parse_give
from autograde.student_kit.errors import KitError
from autograde.student_kit.layers import LAYERS, student_layers
from autograde.student_kit.leaks import find_leaks
from autograde.student_kit.readme import KIT_TITLE, student_readme
from autograde.student_kit.requirements import student_pyproject, student_requirements

# Copied as they are (caches and hidden files left out); a missing optional tree is skipped.
KIT_TREES = (RELEASE_DIRECTORY, "course_lib")
OPTIONAL_TREES = ("jupyter/student",)
SKIPPED_NAMES = {"__pycache__", ".ipynb_checkpoints"}
SKIPPED_SUFFIXES = {".pyc", ".pyo"}


def _copy_tree(source: Path, target: Path) -> None:
    def ignored(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIPPED_NAMES or n.startswith(".") or Path(n).suffix in SKIPPED_SUFFIXES}

    shutil.copytree(source, target, ignore=ignored)


def _check_out(out: Path, repo: Path) -> Path:
    """`out`, resolved, if building there cannot damage the course or anything else."""
    out = out.resolve()
    repo = repo.resolve()
    if out == repo or out in repo.parents:
        raise KitError(f"--out {out}: that is the course's folder or above it")
    for tree in (*KIT_TREES, *OPTIONAL_TREES, SOURCE_DIRECTORY, "autograde", "tests"):
        if out == repo / tree or (repo / tree) in out.parents:
            raise KitError(f"--out {out}: that is inside the course's {tree}/")
    if out.exists() and any(out.iterdir()):
        readme = out / "README.md"
        first = readme.read_text(errors="replace").splitlines()[:1] if readme.is_file() else []
        if first != [KIT_TITLE]:
            raise KitError(f"--out {out}: the folder exists and is not a student kit; give an empty or new folder")
    return out


def build(out: Path, given: Iterable[str] = (), *, repo: Path = REPO_ROOT, check: bool = True) -> Path:
    """Build the kit in `out` (a previous kit there is replaced) and `out`.zip beside it; return the zip.

    With `check`, a kit that holds an answer or a hidden test (`find_leaks`) is deleted and KitError raised."""
    repo = Path(repo)
    stems = assignment_stems(repo)
    given = parse_give(list(given), stems)
    out = _check_out(Path(out), repo)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage_root = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        stage = stage_root / out.name
        stage.mkdir()
        for tree in KIT_TREES:
            _copy_tree(repo / tree, stage / tree)
        for tree in OPTIONAL_TREES:
            if (repo / tree).is_dir():
                _copy_tree(repo / tree, stage / tree)
        layers_source = (repo / LAYERS).read_text(encoding="utf-8")
        (stage / LAYERS).write_text(student_layers(layers_source, given, stems), encoding="utf-8")
        (stage / "requirements.txt").write_text(
            student_requirements((repo / "requirements.txt").read_text(encoding="utf-8")), encoding="utf-8")
        (stage / "pyproject.toml").write_text(
            student_pyproject((repo / "pyproject.toml").read_text(encoding="utf-8")), encoding="utf-8")
        shutil.copyfile(repo / "student.mk", stage / "Makefile")
        (stage / "README.md").write_text(student_readme(layers_source, given), encoding="utf-8")
        if check:
            leaks = find_leaks(stage, given, repo=repo)
            if leaks:
                raise KitError("the kit holds answers or hidden tests, so it was not written:\n"
                               + "\n".join(f"- {leak}" for leak in leaks[:20])
                               + (f"\n(and {len(leaks) - 20} more)" if len(leaks) > 20 else ""))
        if out.exists():
            shutil.rmtree(out)
        os.replace(stage, out)
        archive = out.parent / f"{out.name}.zip"
        _zip(out, archive)
        return archive
    finally:
        shutil.rmtree(stage_root, ignore_errors=True)


def _zip(folder: Path, archive: Path) -> None:
    """`folder` as `archive`, its files under one top folder of the same name; written aside, then renamed."""
    partial = archive.with_name(f".{archive.name}.partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                bundle.write(path, (Path(folder.name) / path.relative_to(folder)).as_posix())
    os.replace(partial, archive)
