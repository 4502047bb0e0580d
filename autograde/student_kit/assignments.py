"""Which assignments there are, and which of them `--give` names (those whose building blocks in
course_lib/layers.py the kit hands out, once they are due)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from autograde.course import RELEASE_DIRECTORY, REPO_ROOT
from autograde.student_kit.errors import KitError


def assignment_stems(repo: Path = REPO_ROOT) -> list[str]:
    """The released assignments, `NN_topic`."""
    released = repo / RELEASE_DIRECTORY
    return sorted(p.name for p in released.iterdir() if (p / f"{p.name}.ipynb").is_file())


def parse_give(text: str | Iterable[str] | None, stems: list[str]) -> list[str]:
    """`"01,02"` (numbers or full stems, commas or spaces) -> the stems it names; unknown ones are an error."""
    if text is None:
        return []
    items = re.split(r"[,\s]+", text) if isinstance(text, str) else list(text)
    given = []
    for item in filter(None, (i.strip() for i in items)):
        found = [s for s in stems if item == s or (item.isdigit() and int(item) == int(s.split("_", 1)[0]))]
        if not found:
            raise KitError(f"--give {item}: no such assignment; the assignments are {', '.join(stems)} "
                           "(give their numbers, e.g. --give 01,02)")
        given += [s for s in found if s not in given]
    return sorted(given)
