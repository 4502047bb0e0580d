"""The student's own working copy of the released notebooks.

    python -m course_lib.workspace [--released notebooks] [--work my-work]

`notebooks/` belongs to the course: `make release` regenerates it and `git pull` updates it, so answers
saved there would be lost or collide. `make lab` therefore runs this first and opens `my-work/` (git-ignored)
instead. A file that exists in the working folder is never overwritten: a course update arrives beside
the student's copy as `<stem>.new<suffix>`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

MANIFEST = ".course-copies.json"
# Editors and Python leave these in a folder; they are not part of a release.
SKIPPED = {".ipynb_checkpoints", "__pycache__"}


class WorkspaceError(Exception):
    """The working folder cannot be prepared; the message says what to do."""


def released_files(released: Path) -> list[Path]:
    """Every file of every assignment folder of `released`, relative to it, in a stable order."""
    found = []
    for folder in sorted(p for p in released.iterdir() if p.is_dir() and not _skipped(p.name)):
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(released)
            if path.is_file() and not any(_skipped(part) for part in relative.parts):
                found.append(relative)
    return found


def new_copy_name(path: Path) -> Path:
    """Where a course update of `path` goes: `name.ipynb` -> `name.new.ipynb`, `data.csv` -> `data.new.csv`."""
    return path.with_name(f"{path.stem}.new{path.suffix}")


def prepare(released: Path, work: Path) -> list[str]:
    """Copy into `work` what the student does not have yet; return one message per notable change."""
    released, work = Path(released), Path(work)
    if not released.is_dir():
        raise WorkspaceError(f"no released notebooks in {released}/: run this from the course's root folder")
    manifest = work / MANIFEST
    # Read before writing anything, so that a broken manifest stops us with nothing changed.
    recorded = read_manifest(manifest)
    work.mkdir(parents=True, exist_ok=True)
    messages, first_copies = [], {}
    for relative in released_files(released):
        key = relative.as_posix()
        folder = relative.parts[0]
        data = (released / relative).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        target = work / relative
        if not target.exists():
            _create(target, data)
            if key in recorded:
                messages.append(f"{folder}: your copy of {_inside(relative)} was missing; a fresh copy was made")
            else:
                first_copies.setdefault(folder, []).append(relative)
        elif recorded.get(key) != digest:
            if target.read_bytes() != data:
                # Without a record (a deleted manifest) we cannot tell the student's edits from an older
                # release, so the release goes beside it just like an update: nothing is lost either way.
                beside = new_copy_name(target)
                _replace(beside, data)
                what = "this notebook" if relative.name == f"{folder}.ipynb" else _inside(relative)
                change = "the course updated" if key in recorded else "your copy differs from the release of"
                messages.append(f"{folder}: {change} {what}; your work is untouched, "
                                f"the new version is {_inside(beside.relative_to(work))}")
        else:
            continue
        recorded[key] = digest
    for folder in first_copies:
        messages.append(f"{folder}: copied into {work / folder}/")
    _replace(manifest, (json.dumps({"files": recorded}, indent=1, sort_keys=True) + "\n").encode())
    return messages


def read_manifest(path: Path) -> dict[str, str]:
    """The recorded hashes, `{released path: sha256}`; empty when there is no manifest yet."""
    if not path.exists():
        return {}
    advice = (f"{path} is not a valid record of the course's copies ({{}}). Delete that file and run again: "
              f"your notebooks are not touched, and a release that differs from your copy is put beside it "
              f"as a .new copy.")
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise WorkspaceError(advice.format(error)) from None
    files = content.get("files") if isinstance(content, dict) else None
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise WorkspaceError(advice.format('expected {"files": {"path": "sha256", ...}}'))
    return dict(files)


def _skipped(name: str) -> bool:
    return name in SKIPPED or name.startswith(".")


def _inside(relative: Path) -> str:
    # Messages name a file within its assignment folder, which the message already names.
    return Path(*relative.parts[1:]).as_posix()


def _create(target: Path, data: bytes) -> None:
    # Mode "xb" fails rather than overwrite, even if the file appeared since we looked.
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "xb") as file:
        file.write(data)


def _replace(target: Path, data: bytes) -> None:
    # Write aside then rename, so an interrupted run never leaves half a file (the manifest above all).
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--released", type=Path, default=Path("notebooks"),
                        help="the course's release, one folder per assignment (default: notebooks)")
    parser.add_argument("--work", type=Path, default=Path("my-work"),
                        help="the student's working folder (default: my-work)")
    args = parser.parse_args(argv)
    try:
        messages = prepare(args.released, args.work)
    except WorkspaceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for message in messages:
        print(message)
    folders = sum(1 for p in args.work.iterdir() if p.is_dir() and not _skipped(p.name))
    changes = f"{len(messages)} change(s) listed above" if messages else "nothing new from the course"
    print(f"your work is in {args.work}/ ({folders} assignment folders); {changes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
