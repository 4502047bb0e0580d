"""Put a graded batch where instructors look: the course's nbgrader layout and gradebook, and the feedback pages.

After `make grade` has graded a batch (in worker processes or on Dask), this process alone writes, in the course
root (the repository unless `--course-root` says otherwise):
- `submitted/<student>/<assignment>/`: the student's files as handed in (kept where nbgrader's `collect` put them;
  copied there from an archive or another folder, an earlier different copy moved aside, never deleted). Only
  regular files and real folders are copied: symbolic links, pipes, devices and sockets are left out, and a copy
  that fails is logged, never the end of the batch;
- the gradebook (`CourseDirectory.db_url`): the submission, its timestamp, each test cell's automatic score and the
  flag, through nbgrader's own `autograde` converter, whose execution step is the course's (autograde/course_grading.py)
  fed with the batch's results. Re-grading replaces automatic scores; an instructor's manual scores, extra credit
  and comments stay, as they do with nbgrader;
- `autograded/<student>/<assignment>/`: the graded notebook the formgrader shows, each verdict under its test;
- `feedback/<student>/<assignment>/` and OUT/feedback/<student>/<assignment>.html: the feedback pages.
With no course root (tests, benchmarks), a throw-away one is used, so the pages still come out.
"""

from __future__ import annotations

import contextlib
import filecmp
import json
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import nbformat

from autograde.collect import walk
from autograde.feedback import copy_mathjax, page_settings
from autograde.gradebook import gradebook_lock, record
from autograde.judge import StudentResult, release_notebook, with_results
from autograde.nbgrader_runner import make_course_root
from autograde.nbgrader_settings import apply
from autograde.unreadable import keep_bytes, kept_name, problem_of, stand_in

STAGING = ".nbgrader/graded-batch"  # inside the course root: what nbgrader's converter reads this time
TIMESTAMP = "timestamp.txt"  # nbgrader's name for a submission's time, in its submitted/ folders


def course_config(root: Path, db_url: str | None = None):
    """The course's nbgrader configuration rooted at `root` (`db_url` overrides the gradebook's address)."""
    from traitlets.config import Config

    config = Config()
    apply(config, root)
    if db_url:
        config.CourseDirectory.db_url = db_url
    return config


def record_batch(stem: str, results: list[StudentResult], folders: dict[str, Path], out: Path, *,
                 course_root: Path | None = None, db_url: str | None = None, feedback: bool = True,
                 log: Callable[[str], None] = print) -> list[str]:
    """Record `results` (graded from `folders`) in the course; return the problems met (none stops the batch)."""
    if not results:
        return []
    with contextlib.ExitStack() as stack:
        if course_root is None:
            course_root = make_course_root(Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="course-"))),
                                           [stem])
        root = Path(course_root).resolve()
        config = course_config(root, db_url)
        stack.enter_context(gradebook_lock(config.CourseDirectory.db_url))

        refused = record([stem], config.CourseDirectory.db_url)
        if refused:
            return [f"the gradebook refused {stem}: {refused[stem].splitlines()[-1] if refused[stem] else '?'}"]
        for result in results:
            keep_submission(root, stem, result.student, folders.get(result.student), log)
        problems = autograde(root, config, stem, results)
        if feedback:
            problems += feedback_pages(root, config, stem, [r.student for r in results], out)
    return problems


def keep_submission(root: Path, stem: str, student: str, folder: Path | None, log: Callable[[str], None]) -> None:
    """The student's files in `submitted/<student>/<stem>/`, as nbgrader's `collect` leaves them (regular files and
    folders only). A copy is made aside and renamed, so no half copy is left; one that fails is logged."""
    target = root / "submitted" / student / stem
    if folder is None or folder.is_symlink() or not folder.is_dir() \
            or (target.exists() and target.resolve() == folder.resolve()):
        return
    partial = target.with_name(f".{stem}.copying")
    try:
        if os.path.lexists(target):
            if same_tree(folder, target):
                return
            aside = target.with_name(f"{stem}.replaced-{time.strftime('%Y%m%d-%H%M%S')}")
            target.rename(aside)
            log(f"{student}: the earlier submitted/{student}/{stem}/ differs from this batch's: moved to {aside.name}")
        shutil.rmtree(partial, ignore_errors=True)
        copy_regular(folder, partial)
        partial.rename(target)
    except OSError as error:  # one student's copy never ends the batch
        shutil.rmtree(partial, ignore_errors=True)
        log(f"{student}: the submission was not kept in submitted/{student}/{stem}/: {error}")


def copy_regular(source: Path, target: Path, *, skip: Callable[[str], bool] = lambda name: False) -> None:
    """Copy `source`'s real folders and regular files into `target` (made here), but the names `skip` says;
    symbolic links, pipes, devices and sockets are left out (walk): a link would bring in what it points at."""
    target.mkdir(parents=True, exist_ok=True)
    for name, kind in walk(source):
        if skip(Path(name).name):
            continue
        if kind == "folder":
            (target / name).mkdir(exist_ok=True)
        elif kind == "file" and (target / name).parent.is_dir():  # not under a folder left out
            shutil.copy2(source / name, target / name)


def same_tree(a: Path, b: Path) -> bool:
    """Whether the two folders hold the same folders and regular files, with the same contents (links and other
    kinds of file aside, as keep_submission leaves them)."""
    left, right = list(walk(a)), list(walk(b))
    kept = {"folder", "file"}
    if [entry for entry in left if entry[1] in kept] != [entry for entry in right if entry[1] in kept]:
        return False
    return all(filecmp.cmp(a / name, b / name, shallow=False) for name, kind in left if kind == "file")


def autograde(root: Path, config, stem: str, results: list[StudentResult]) -> list[str]:
    """nbgrader's autograde converter on each graded notebook, its execution step the batch's verdicts."""
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log

    staging = root / STAGING
    shutil.rmtree(staging, ignore_errors=True)
    problems = []
    for result in results:
        folder = staging / result.student / stem
        submitted = root / "submitted" / result.student / stem
        try:  # the student's other files go with the notebook, as nbgrader would take them
            copy_regular(submitted, folder, skip=lambda name: name.endswith(".ipynb"))
        except OSError as error:
            problems.append(f"{result.student}: the files beside the notebook not staged: {error}")
        folder.mkdir(parents=True, exist_ok=True)
        kept = submitted / f"{stem}.ipynb"
        if not result.notebook and kept.is_file() and not kept.is_symlink():  # unreadable: the bytes go beside it
            keep_bytes(kept, folder, stem)
        nbformat.write(graded_notebook(stem, result, kept=(folder / kept_name(stem)).is_file()),
                       folder / f"{stem}.ipynb")
    # Verdicts and status only: the graded notebooks are the staged files themselves.
    batch = {result.student: {**result.to_dict(), "notebook": ""} for result in results}
    (staging / "results.json").write_text(json.dumps({**batch, "_how": "make grade"}))
    config.CourseDirectory.submitted_directory = STAGING
    config.CourseGrading.results = str(staging / "results.json")
    config.BaseConverter.force = True
    try:
        for result in results:
            coursedir = CourseDirectory(config=config)
            coursedir.assignment_id, coursedir.student_id = stem, result.student
            with warnings.catch_warnings():
                # nbgrader's add_submission trips SQLAlchemy's autoflush warnings; the rows are written all the same
                warnings.simplefilter("ignore", category=Warning)
                outcome = capture_log(Autograde(coursedir=coursedir, config=config))
            if not outcome["success"]:
                problems.append(f"gradebook: {result.student} not recorded: {last_error(outcome)}")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return problems


def graded_notebook(stem: str, result: StudentResult, *, kept: bool = False) -> nbformat.NotebookNode:
    """The notebook as graded; for a submission that could not be read, the stand-in saying so (autograde/unreadable.py)
    with the verdicts; `kept`: the submitted bytes lie beside it."""
    if result.notebook:
        return nbformat.reads(result.notebook, as_version=4)
    notebook = stand_in(release_notebook(stem), stem, problem_of(result.status), kept)
    return with_results(notebook, {cell.grade_id: cell for cell in result.cells})


def feedback_pages(root: Path, config, stem: str, students: list[str], out: Path) -> list[str]:
    """nbgrader's generate_feedback with the course's page template; each page copied to OUT/feedback/."""
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import capture_log

    page_settings(config)
    copy_mathjax(out / "feedback")
    problems = []
    for student in students:
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id, coursedir.student_id = stem, student
        outcome = capture_log(GenerateFeedback(coursedir=coursedir, config=config))
        page = root / "feedback" / student / stem / f"{stem}.html"
        if outcome["success"] and page.is_file():
            (out / "feedback" / student).mkdir(parents=True, exist_ok=True)
            shutil.copy2(page, out / "feedback" / student / page.name)
        else:
            problems.append(f"no feedback page for {student}: {last_error(outcome)}")
    return problems


def last_error(outcome: dict) -> str:
    lines = [line for line in (outcome.get("log") or outcome.get("error") or "").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("[ERROR]", "[CRITICAL]"))]
    return (errors or lines or ["no log"])[-1][:300]


def lateness(course_root: Path, db_url: str | None, stem: str) -> dict[str, float]:
    """{student: seconds late} of the assignment's submissions, by the due date set in the gradebook (none: 0)."""
    from nbgrader.api import Gradebook, MissingEntry

    config = course_config(Path(course_root).resolve(), db_url)
    try:
        with Gradebook(config.CourseDirectory.db_url) as gradebook:
            return {s.student.id: float(s.total_seconds_late or 0)
                    for s in gradebook.find_assignment(stem).submissions}
    except MissingEntry:
        return {}
