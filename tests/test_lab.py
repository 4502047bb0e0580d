"""The two JupyterLabs, started through their make targets (tests/lab_server.py).

- `make lab` (students) copies the notebooks into the student's working folder (the test uses one of its own:
  WORK=...) and serves JupyterLab on it with nbgrader's Validate only: the formgrader, create-assignment,
  assignment-list and course-list parts (and the Nbgrader menu that opens them) are off and locked for that
  launch (jupyter/student/).
- `make formgrader` (instructors) serves JupyterLab on the repository with the course's nbgrader configuration
  (jupyter/instructor/): the formgrader lists every assignment with its points, and the exchange exists.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import urllib.parse

import nbformat
import pytest
from lab_server import lab_server
from nbformat.v4 import new_code_cell, new_notebook
from traitlets.config.loader import PyFileConfigLoader

from autograde.course import COURSE_ID
from course_lib.notebooks import exercises

from conftest import ASSIGNMENTS, REPO, solution_path

pytestmark = pytest.mark.notebooks  # starts a Jupyter server: not part of `make test-quick`

# nbgrader's lab plugins (@jupyter/nbgrader's package) and server extensions that only an instructor uses.
# The menu plugin is listed too: every entry it adds opens one of the others.
INSTRUCTOR_PLUGINS = ["@jupyter/nbgrader:menu", "@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:course-list"]
VALIDATE_PLUGIN = "@jupyter/nbgrader:validate-assignment"
INSTRUCTOR_ENDPOINTS = {  # path: the nbgrader server extension that serves it
    "/formgrader": "formgrader",
    "/formgrader/api/assignments": "formgrader",
    f"/assignments?course_id={COURSE_ID}": "assignment_list",
    "/courses": "assignment_list",
    "/formgraders": "course_list",
}
EXCHANGE = REPO / ".nbgrader" / "exchange"


def page_config(server) -> dict:
    """The page config JupyterLab's /lab page hands to the browser (disabled plugins among it)."""
    status, page = server.get("/lab")
    assert status == 200, f"/lab answered {status}"
    match = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
    assert match, "no jupyter-config-data in the /lab page"
    return json.loads(match.group(1))


def max_points(stem: str) -> float:
    """The assignment's points, read from its source notebook's graded cells."""
    notebook = nbformat.read(solution_path(stem), as_version=4)
    return float(sum(cell.metadata.get("nbgrader", {}).get("points", 0) for cell in notebook.cells
                     if cell.metadata.get("nbgrader", {}).get("grade")))


def tree_digest(folder) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def graded_notebook() -> nbformat.NotebookNode:
    """A one-exercise notebook whose test cell fails: what Validate is for."""
    def nbgrader(**fields):
        return {"nbgrader": {"schema_version": 3, **fields}}

    notebook = new_notebook(cells=[
        new_code_cell("def double(x):\n    return 3 * x",
                      metadata=nbgrader(solution=True, grade=False, locked=False, grade_id="double")),
        new_code_cell("assert double(2) == 4, 'double(2) should be 4'",
                      metadata=nbgrader(solution=False, grade=True, locked=True, points=1, grade_id="test_double")),
    ])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


def validate(server, path: str) -> list[dict]:
    """What the Validate button receives for the notebook at `path`: its list of entries."""
    status, body = server.request("/assignments/validate", method="POST",
                                  data=urllib.parse.urlencode({"path": path}).encode(), timeout=300)
    assert status == 200, f"Validate answered {status}: {body[:500]!r}\n{server.output()}"
    result = json.loads(body)
    assert result["success"], result
    return result["value"]["failed"]


def test_make_lab_serves_the_notebooks_with_validate_only(tmp_path):
    work = tmp_path / "work"
    with lab_server("lab", work=work) as server:
        listing = server.get_json("/api/contents")
        assert sorted(item["name"] for item in listing["content"]) == sorted(ASSIGNMENTS)
        for stem in ASSIGNMENTS:
            notebook = server.get_json(f"/api/contents/{stem}/{stem}.ipynb")
            assert notebook["type"] == "notebook" and notebook["content"]["cells"]

        config = page_config(server)
        assert "@jupyter/nbgrader" in [ext["name"] for ext in config["federated_extensions"]], (
            "nbgrader's JupyterLab extension is not installed")
        disabled = config["disabledExtensions"]
        assert [plugin for plugin in INSTRUCTOR_PLUGINS if plugin not in disabled] == [], (
            f"instructor plugins shown to students; disabled: {disabled}")
        assert VALIDATE_PLUGIN not in disabled
        # locked: the Plugin Manager cannot switch them back on
        locks = server.get_json("/lab/api/plugins")["lockRules"]
        assert sorted(locks) == sorted(INSTRUCTOR_PLUGINS), locks

        served = {f"{path} ({extension})": status for path, extension in INSTRUCTOR_ENDPOINTS.items()
                  if (status := server.get(path)[0]) != 404}
        assert served == {}, f"instructor endpoints served to students: {served}\n{server.output()}"

        # Validate runs the notebook: first a one-line-per-exercise summary, then each failing check and why
        (work / "practice").mkdir()
        nbformat.write(graded_notebook(), work / "practice" / "validate-me.ipynb")
        summary, *failed = validate(server, "practice/validate-me.ipynb")
        assert summary["source"].splitlines()[1:] == ["  double (1 point): done, check fails: AssertionError: "
                                                      "double(2) should be 4"], summary
        assert [(cell["source"], cell["error"]) for cell in failed] == [
            ("assert double(2) == 4, 'double(2) should be 4'", "AssertionError: double(2) should be 4")]
        # on the course's own unfinished notebook: every exercise named, not started
        stem = ASSIGNMENTS[0]
        summary, *failed = validate(server, f"{stem}/{stem}.ipynb")
        lines = summary["source"].splitlines()
        assert lines[0].startswith(f"{stem}: ") and len(lines) == 1 + len(exercises(nbformat.read(
            REPO / "notebooks" / stem / f"{stem}.ipynb", as_version=4))), summary
        assert all(line.endswith("not started") for line in lines[1:]) and failed == [], summary

        schema = server.get_json("/lab/api/settings/@jupyterlab/apputils-extension:notification")["schema"]
        defaults = {name: spec.get("default") for name, spec in schema["properties"].items()}
        # overrides.json changes the defaults that JupyterLab serves
        assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False, (
            f"JupyterLab may go online for news or updates: {defaults}")


def test_make_formgrader_lists_every_assignment_with_its_points(tmp_path):
    released_before = tree_digest(REPO / "notebooks")
    exchange = tmp_path / "exchange"  # EXCHANGE=dir: the test leaves the repository's .nbgrader/exchange alone
    with lab_server("formgrader", variables={"EXCHANGE": str(exchange)}) as server:
        # rooted at the repository, the course root: sources and releases open from the formgrader
        names = {item["name"] for item in server.get_json("/api/contents")["content"]}
        assert {"solutions", "notebooks", "autograde"} <= names, names

        status, page = server.get("/formgrader")  # redirects to manage_assignments
        assert status == 200 and "nbgrader" in page.lower(), f"/formgrader answered {status}\n{server.output()}"

        assignments = {a["name"]: a for a in server.get_json("/formgrader/api/assignments")}
        assert sorted(assignments) == sorted(ASSIGNMENTS), f"formgrader lists {sorted(assignments)}\n{server.output()}"
        points = {stem: assignments[stem]["max_score"] for stem in ASSIGNMENTS}
        assert points == {stem: max_points(stem) for stem in ASSIGNMENTS}, points
        for stem, assignment in assignments.items():
            assert assignment["source_path"] == f"solutions/{stem}"
            assert assignment["release_path"] == f"notebooks/{stem}"
            # releaseable: nbgrader found the course id and a writable exchange
            assert assignment["releaseable"], assignment

        assert exchange.is_dir(), f"the exchange {exchange} was not created on start"
        assert server.get_json("/courses")["success"], "the instructor's assignment list fails"
        stem = ASSIGNMENTS[0]
        status, body = server.request(f"/formgrader/api/assignment/{stem}/release", method="POST", data=b"")
        assert status == 200 and json.loads(body)["success"], body[:2000]
        listed = server.get_json(f"/assignments?course_id={COURSE_ID}")
        assert [(a["assignment_id"], a["status"]) for a in listed["value"]] == [(stem, "released")], listed
        assert server.get_json(f"/formgrader/api/assignment/{stem}")["status"] == "released"

        disabled = page_config(server)["disabledExtensions"]
        assert [plugin for plugin in [*INSTRUCTOR_PLUGINS, VALIDATE_PLUGIN] if plugin in disabled] == []
    assert tree_digest(REPO / "notebooks") == released_before, "make formgrader changed notebooks/"


def test_the_instructors_exchange_defaults_to_a_git_ignored_folder(monkeypatch):
    monkeypatch.delenv("COURSE_EXCHANGE", raising=False)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO / "jupyter" / "instructor")).load_config()
    assert config.Exchange.root == str(EXCHANGE)
    assert config.CourseDirectory.root == str(REPO)
    ignored = subprocess.run(["git", "check-ignore", "-q", str(EXCHANGE)], cwd=REPO)
    assert ignored.returncode == 0, f"{EXCHANGE} is not git-ignored"
