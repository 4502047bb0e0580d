"""The Validate button of the students' JupyterLab, with the summary of `make submit` at the top.

nbgrader's own handler answers with every failing cell and its traceback, and no overview. This server extension
(enabled by jupyter/student/ in place of nbgrader's `validate_assignment`) answers the same two requests: it runs
the notebook the way `make submit` does (course_lib/selfcheck.py: a copy in a fresh kernel, `demo` cells skipped)
and sends, in the form nbgrader's Validate dialog shows, one line per exercise first and then each failing check
with its message.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import nbformat
from jupyter_server.base.handlers import JupyterHandler
from tornado import web

from course_lib.notebooks import exercises
from course_lib.selfcheck import FAILS, PASSES, check_notebook
from course_lib.submit import RELEASE_FOLDERS, summary


def validation(path: Path, released: Path | None) -> dict:
    """The answer to Validate for the notebook at `path`, as nbgrader's dialog reads it."""
    report = check_notebook(path, path.read_bytes(), released=released)
    if report.problem:
        return {"success": False, "value": f"{path.name} is not a readable notebook: {report.problem}"}
    if report.exercises and all(e.status == PASSES for e in report.exercises) and not report.notes:
        return {"success": True, "value": {}}  # the dialog says: "Success! Your notebook passes all the tests."
    # The dialog titles every entry "The following cell failed:"; the first entry is the overview instead.
    lines = summary(report)
    overview = {"source": "\n".join(lines),
                "error": "That is the summary, one line per exercise; each failing check follows with its message."}
    notebook = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    # check_notebook reports the exercises in the notebook's order: pair each with its test cell
    test_cells = [notebook.cells[exercise.test] for exercise in exercises(notebook)]
    failing = [{"source": cell.source, "error": html.escape(status.status.removeprefix(FAILS).lstrip(": "))}
               for cell, status in zip(test_cells, report.exercises, strict=True) if status.status.startswith(FAILS)]
    return {"success": True, "value": {"failed": [overview, *failing]}}


class ValidateHandler(JupyterHandler):
    """POST /assignments/validate?path=<notebook relative to the Lab's root>."""

    def initialize(self, root_dir: str) -> None:
        self.root_dir = root_dir

    @web.authenticated
    def post(self):
        relative = self.get_argument("path", None) or (self.get_json_body() or {}).get("path", "")
        root = Path(self.root_dir).expanduser().resolve()
        target = (root / relative).resolve()
        if not target.is_relative_to(root) or target.suffix != ".ipynb":
            raise web.HTTPError(403, "only notebooks inside the Lab's folder can be validated")
        if not target.is_file():
            raise web.HTTPError(404, f"no notebook {relative}")
        released = next((folder for folder in RELEASE_FOLDERS if folder.is_dir()), None)
        try:
            answer = validation(target, released)
        except Exception as error:  # shown in the dialog: the student can report it
            self.log.exception("validation of %s failed", relative)
            answer = {"success": False, "value": f"{type(error).__name__}: {error}"}
        self.finish(json.dumps(answer))


def _jupyter_server_extension_points():
    return [{"module": "course_lib.lab_validate"}]


def _load_jupyter_server_extension(server_app):
    from jupyter_server.utils import url_path_join
    from nbgrader.server_extensions.validate_assignment.handlers import NbGraderVersionHandler

    base = server_app.web_app.settings["base_url"]
    server_app.web_app.add_handlers(".*$", [
        (url_path_join(base, "assignments/validate"), ValidateHandler, {"root_dir": server_app.root_dir}),
        # the Validate button first asks for nbgrader's version; nbgrader's handler answers it
        (url_path_join(base, "nbgrader_version"), NbGraderVersionHandler),
    ])
