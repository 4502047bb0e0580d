"""The course itself: its name, folders and assignments, what its instructors may set, and where nbgrader finds it.

Every module of autograde may import this one, and it imports none of them; nbgrader's full settings, which name the
grader's parts, are autograde/nbgrader_settings.py."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIRECTORY = "solutions"
RELEASE_DIRECTORY = "notebooks"
COURSE_ID = "transformers-from-attention-to-bert"

# Lines on stderr that must not cost a learner points: TensorFlow's C++ and absl log lines
# (printed at import even with TF_CPP_MIN_LOG_LEVEL=3) and Python warnings. nbgrader drops a
# stderr output when this pattern is found anywhere in it.
IGNORED_STDERR_PATTERN = (
    r"(?m)^("
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] "  # TensorFlow C++ logging
    r"|[IWEF]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ "  # absl logging ("I0000 00:00:1795362538.443345  3448 ...")
    r"|WARNING: All log messages before absl::InitializeLog"
    r"|(DEBUG|INFO|WARNING|ERROR):(absl|tensorflow|keras)\b"  # Python loggers of those libraries
    r"|.*\b\w*Warning: "  # Python's warnings module
    r")"
)


# Whether a student's feedback page shows the grader's `flagged:` notes. They point instructors at submissions worth
# reading, and a false alarm in front of a student is costly: by default only the instructor's views (grades.csv, the
# formgrader, the class report) show them. True shows them to students too.
SHOW_FLAGS_TO_STUDENTS = False

# Files in a source folder that are not part of the assignment. qa_model: the reader that running notebook 07 saves
# beside it for 08; a release never ships it, and a throw-away course root does not copy it.
NOT_COURSE_FILES = (".ipynb_checkpoints", "*.pyc", "__pycache__", ".nbgrader", "qa_model")


def course_root() -> Path:
    """The nbgrader course folder that holds the grading state: the repository, or COURSE_ROOT (`make ... COURSE=`)."""
    return Path(os.environ.get("COURSE_ROOT") or REPO_ROOT).resolve()


def exchange_root(root: Path) -> Path:
    """nbgrader's exchange for releasing and collecting on this machine: COURSE_EXCHANGE (`make formgrader EXCHANGE=`),
    else inside the course root, so that a course kept elsewhere (`COURSE=dir`) keeps its exchange with it."""
    return Path(os.environ.get("COURSE_EXCHANGE") or Path(root) / ".nbgrader" / "exchange").resolve()


def make_exchange(path: Path) -> Path:
    """The exchange folder, made writable for everyone as nbgrader's exchange requires (it checks on every release);
    left to nbgrader's own message when it cannot be made here (a shared folder of a server)."""
    if not path.is_dir():
        try:
            path.mkdir(parents=True)
            path.chmod(0o777)
        except OSError:
            pass
    return path


def list_assignments(source: Path = REPO_ROOT / SOURCE_DIRECTORY) -> list[str]:
    """Assignment stems (`NN_topic`) that have a source notebook of the same name."""
    return sorted(p.name for p in source.iterdir() if (p / f"{p.name}.ipynb").is_file())


def db_url(root: Path | None = None) -> str:
    """The gradebook of the course rooted at `root` (default: course_root()): COURSE_DB_URL (another database, a
    PostgreSQL server's for a course several instructors grade, INSTRUCTORS.md), else `.nbgrader/gradebook.db` there,
    out of the tracked tree."""
    folder = Path(root).resolve() if root else course_root()
    return os.environ.get("COURSE_DB_URL") or f"sqlite:///{folder / '.nbgrader' / 'gradebook.db'}"


def apply_layout(c, root: Path) -> None:
    """Where the course is and what nbgrader's release writes, on the traitlets config `c`: all that recording an
    assignment in the gradebook needs (autograde/gradebook.py). autograde/nbgrader_settings.py adds the rest."""
    root = Path(root).resolve()
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.course_id = COURSE_ID
    c.CourseDirectory.source_directory = SOURCE_DIRECTORY
    c.CourseDirectory.release_directory = RELEASE_DIRECTORY
    (root / ".nbgrader").mkdir(exist_ok=True)
    c.CourseDirectory.db_url = db_url(root)
    c.CourseDirectory.ignore = list(NOT_COURSE_FILES)
    c.Exchange.root = str(make_exchange(exchange_root(root)))
    c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
    c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
