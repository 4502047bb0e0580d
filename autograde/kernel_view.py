"""The course_lib a grading kernel imports: the one the student had while doing the assignment.

The repository's `course_lib/layers.py` holds the answers of every assignment, for the later notebooks that build on
them; the student kit (autograde/student_kit) hands out only those of assignments past their deadline. While an
assignment is graded its kernel gets course_lib as a kit for that assignment has it: the answers of every earlier
assignment, and stubs for this one's and the later ones', so that importing the course's own answer is no way to
full marks. The repository's compiled `__pycache__` does not go along (it holds the answers the stubs replace): the
copy is compiled from its own sources.
"""

from __future__ import annotations

import atexit
import compileall
import shutil
import tempfile
from pathlib import Path

from autograde.confinement import installed_course_lib
from autograde.student_kit.assignments import assignment_stems
from autograde.student_kit.layers import answer_blocks, student_layers

_VIEWS: dict[str, Path] = {}


def course_lib_for(stem: str) -> Path:
    """A folder to show the kernel as course_lib while `stem` is graded; built once per process."""
    if stem not in _VIEWS:
        stems = assignment_stems()
        if stem not in stems:
            raise ValueError(f"unknown assignment {stem!r}; known: {', '.join(stems)}")
        root = Path(tempfile.mkdtemp(prefix=f"course-lib-{stem}-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        root.chmod(0o755)  # the kernel's user reads it
        installed = installed_course_lib()
        view = root / "course_lib"
        shutil.copytree(installed, view, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints"))
        layers = view / "layers.py"
        given = [s for s in stems if s < stem]
        layers.write_text(student_layers((installed / "layers.py").read_text(encoding="utf-8"), given, stems),
                          encoding="utf-8")
        # Compiled here from the view's own sources (the kernel cannot write them): a kernel imports it as fast as
        # the installed course_lib, and no bytecode of the withheld answers comes along.
        compileall.compile_dir(view, quiet=2, workers=1)
        for path in [view, *view.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        _VIEWS[stem] = view
    return _VIEWS[stem]


def withheld_answers(stem: str) -> set[str]:
    """The names course_lib.layers answers with for `stem` and later assignments: stubs in the kernel's course_lib."""
    return {block.name for block in answer_blocks((installed_course_lib() / "layers.py").read_text(encoding="utf-8"))
            if block.stem >= stem}
