"""The students' kit: the course without its answers, as a folder and a .zip of it.

    python -m autograde.student_kit --out DIR [--give 01,02]
    make student-kit [OUT=dist/student-kit] [GIVE=01,02]

A clone of the repository holds every answer: the solution notebooks, the references, the hidden checks
and their wrong and right variants, and `course_lib/layers.py`, which gives the later notebooks the answers
of assignments 01, 02 and 04. The kit holds only what a student needs:

- `notebooks/`, the released notebooks (no solutions), and `course_lib/`, the package they import;
- `course_lib/layers.py` generated: each answer in it is marked with its assignment (`@answer_to`), and only
  the assignments named by `--give` (those past their deadline) keep their bodies; every other marked body
  becomes `raise not_handed_out(...)`, so the module still imports and says what to do when used;
- `jupyter/student/`, the Lab's student settings that `make lab` uses (when the course has them);
- `requirements.txt` (the course's pins less what only instructors and CI use), a `pyproject.toml` that
  installs `course_lib` alone, `student.mk` as the `Makefile`, and a README for students.

Before it is zipped, the kit is searched for the answers and the hidden tests (`find_leaks`, whose rules
are in leaks.py); a kit that holds one is deleted and the command fails.

The package's modules, one job each: `assignments` (which assignments `--give` names), `layers` (the
stubbed course_lib/layers.py), `requirements` (requirements.txt and pyproject.toml), `readme` (the README),
`leaks` (the search), `assemble` (`build`: copying, generating, searching, zipping), `cli` (`main`), and
`errors` (`KitError`). Their public names are re-exported here; a constant re-exported here is a copy, so
patch one where it is used (`autograde.student_kit.assemble.KIT_TREES`).
"""

from autograde.student_kit.assemble import KIT_TREES, OPTIONAL_TREES, SKIPPED_NAMES, SKIPPED_SUFFIXES, build
from autograde.student_kit.assignments import assignment_stems, parse_give
from autograde.student_kit.errors import KitError
from autograde.student_kit.layers import LAYERS, AnswerBlock, answer_blocks, given_block_lines, student_layers
from autograde.student_kit.leaks import (
    HIDDEN_RUN,
    HIDDEN_SOURCES,
    SOLUTION,
    SOLUTION_RUN,
    Evidence,
    code_line,
    code_lines,
    evidence,
    find_leaks,
    hidden_definitions,
    hidden_test_evidence,
    solution_evidence,
)
from autograde.student_kit.readme import KIT_TITLE, README, student_readme
from autograde.student_kit.requirements import (
    INSTRUCTORS_ONLY,
    PIN,
    requirement_name,
    student_pyproject,
    student_requirements,
)

__all__ = [
    "HIDDEN_RUN", "HIDDEN_SOURCES", "INSTRUCTORS_ONLY", "KIT_TITLE", "KIT_TREES", "LAYERS",
    "OPTIONAL_TREES", "PIN", "README", "SKIPPED_NAMES", "SKIPPED_SUFFIXES", "SOLUTION", "SOLUTION_RUN",
    "AnswerBlock", "Evidence", "KitError", "answer_blocks", "assignment_stems", "build", "code_line",
    "code_lines", "evidence", "find_leaks", "given_block_lines", "hidden_definitions", "hidden_test_evidence",
    "parse_give", "requirement_name", "solution_evidence", "student_layers", "student_pyproject",
    "student_readme", "student_requirements",
]
