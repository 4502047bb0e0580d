"""A submission whose notebook cannot be read, as the formgrader and the feedback page show it.

`make grade` gives such a submission 0 points with a status naming the problem (course_lib.notebooks.notebook_problem).
nbgrader's converters read the submitted file themselves, and a file that is not a notebook would stop them with a
traceback and remove the earlier result. So both paths put the same notebook in its place:
- `make grade` stages it (autograde/record.py, `graded_notebook`);
- nbgrader's autograde (the command, the formgrader's button) reads submissions through `CourseExporter`, which
  substitutes it for an unreadable file; the course's grader then grades the submitted folder as `make grade` does.
That notebook is the released one whose answer cells say that the file could not be read and why (never a blank
template that looks like the student's answer), and the bytes as handed in are kept beside it under `kept_name`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter

from course_lib.notebooks import nbgrader_meta
from course_lib.notebooks import notebook_problem as file_problem


def kept_name(stem: str) -> str:
    """The name the submitted bytes keep beside the stand-in (not `.ipynb`: nbgrader copies it, Jupyter leaves it)."""
    return f"{stem}.ipynb.as-submitted"


def stand_in(release: nbformat.NotebookNode, stem: str, problem: str, kept: bool) -> nbformat.NotebookNode:
    """The released notebook with every answer cell saying why there is no answer to show."""
    notebook = nbformat.from_dict(release)
    where = (f"The file as handed in is kept beside this notebook as {kept_name(stem)}." if kept
             else "No file was handed in under this name.")
    for cell in notebook.cells:
        if not nbgrader_meta(cell).get("solution"):
            continue
        if cell.cell_type == "code":
            cell.source = f"# No answer shown: the submitted {stem}.ipynb could not be read ({problem}).\n# {where}"
            cell.execution_count, cell.outputs = None, []
        else:
            cell.source = f"*No answer shown: the submitted {stem}.ipynb could not be read ({problem}). {where}*"
    return notebook


def problem_of(status: str) -> str:
    """The status item that says why the notebook could not be read (the whole status if none does)."""
    items = [item.strip() for item in status.split(";")]
    return next((item for item in items if item.startswith(("invalid notebook", "missing:"))), status)


def keep_bytes(source: Path, folder: Path, stem: str) -> None:
    """Copy the submitted file beside the stand-in, under `kept_name`."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, folder / kept_name(stem))


class CourseExporter(NotebookExporter):
    """nbgrader's notebook exporter, except that a submitted file which is not a readable notebook becomes the stand-in
    (with a one-line warning in nbgrader's log) instead of an exception and a traceback."""

    def from_filename(self, filename, resources=None, **kw):
        path = Path(filename)
        problem = file_problem(path.read_bytes())
        if problem is None:
            return super().from_filename(filename, resources=resources, **kw)
        from autograde.judge import release_notebook  # the grader loads into nbgrader only for a stand-in

        stem = path.stem
        info, coursedir = (resources or {}).get("nbgrader", {}), getattr(self.parent, "coursedir", None)
        if coursedir is not None and {"assignment", "student"} <= set(info):  # the graded folder nbgrader writes
            keep_bytes(path, Path(coursedir.format_path(coursedir.autograded_directory, info["student"],
                                                        info["assignment"])), stem)
        self.log.warning("%s could not be read (%s): it is graded as make grade grades it, and its bytes are kept "
                         "beside the graded notebook as %s", path, problem, kept_name(stem))
        resources = self._init_resources(resources)
        resources.setdefault("metadata", {})["name"] = stem
        return self.from_notebook_node(stand_in(release_notebook(stem), stem, problem, kept=True), resources, **kw)
