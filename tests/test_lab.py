"""`make lab` copies the notebooks into the student's working folder and serves JupyterLab on it, with every
assignment and nbgrader's extension (the test uses a working folder of its own: WORK=...)."""

from __future__ import annotations

import pytest
from lab_server import lab_server

from conftest import ASSIGNMENTS

pytestmark = pytest.mark.notebooks  # starts a Jupyter server: not part of `make test-quick`


def test_make_lab_serves_the_notebooks(tmp_path):
    with lab_server("lab", work=tmp_path / "work") as server:
        listing = server.get_json("/api/contents")
        assert sorted(item["name"] for item in listing["content"]) == sorted(ASSIGNMENTS)
        for stem in ASSIGNMENTS:
            notebook = server.get_json(f"/api/contents/{stem}/{stem}.ipynb")
            assert notebook["type"] == "notebook" and notebook["content"]["cells"]
        status, page = server.get("/lab")
        assert status == 200 and "nbgrader" in page, "nbgrader's JupyterLab extension is not enabled"
        schema = server.get_json("/lab/api/settings/@jupyterlab/apputils-extension:notification")["schema"]
        defaults = {name: spec.get("default") for name, spec in schema["properties"].items()}
        # overrides.json changes the defaults that JupyterLab serves
        assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False, (
            f"JupyterLab may go online for news or updates: {defaults}")
