"""`make lab` copies the notebooks into the student's working folder and serves JupyterLab on it, with every
assignment and nbgrader's extension (the test uses a working folder of its own: WORK=...)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import ASSIGNMENTS, REPO

pytestmark = pytest.mark.notebooks  # starts a Jupyter server: not part of `make test-quick`


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_make_lab_serves_the_notebooks(tmp_path):
    port, token = free_port(), "course-test-token"
    args = f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={token}"
    server = subprocess.Popen(["make", "--no-print-directory", "lab", f"WORK={tmp_path / 'work'}", f"LAB_ARGS={args}"],
                              cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        listing, deadline = None, time.monotonic() + 90
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents?token={token}", timeout=5) as r:
                    listing = json.load(r)
                break
            except OSError:
                time.sleep(1)
        assert listing is not None, f"JupyterLab did not answer on port {port}"
        assert sorted(item["name"] for item in listing["content"]) == sorted(ASSIGNMENTS)
        for stem in ASSIGNMENTS:
            url = f"http://127.0.0.1:{port}/api/contents/{stem}/{stem}.ipynb?token={token}"
            with urllib.request.urlopen(url, timeout=10) as response:
                notebook = json.load(response)
            assert notebook["type"] == "notebook" and notebook["content"]["cells"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=10) as response:
            page = response.read().decode()
        assert "nbgrader" in page, "nbgrader's JupyterLab extension is not enabled"
        settings_url = (f"http://127.0.0.1:{port}/lab/api/settings/"
                        f"@jupyterlab/apputils-extension:notification?token={token}")
        with urllib.request.urlopen(settings_url, timeout=10) as response:
            defaults = {name: spec.get("default")
                        for name, spec in json.load(response)["schema"]["properties"].items()}
        # overrides.json changes the defaults that JupyterLab serves
        assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False, (
            f"JupyterLab may go online for news or updates: {defaults}")
    finally:
        import os
        import signal

        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
