"""Start a JupyterLab through a make target (`make lab`, `make formgrader`) for a test, and stop it afterwards.

    from lab_server import lab_server

    with lab_server("lab", work=tmp_path / "work") as server:
        listing = server.get_json("/api/contents")
        status, body = server.get("/formgrader")        # any status, never raises on 4xx/5xx
        page = urllib.request.urlopen(server.url + "/lab?token=" + server.token)

The server listens on 127.0.0.1 on a free port with a token of its own (`make ... LAB_ARGS=...`), and the
context manager returns once `/api/contents` answers. Its output (make's and Jupyter's) goes to a log file;
`server.output()` reads it, and a server that exits or does not answer in time fails with that output.
On exit the whole process group (make, Jupyter, its kernels) is stopped.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


class LabServerError(AssertionError):
    """The server did not start; the message holds its output."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class LabServer:
    url: str  # http://127.0.0.1:<port>, without a trailing slash
    token: str
    port: int
    log: Path  # the server's output so far

    def output(self, last: int = 6000) -> str:
        """The last `last` characters the server (make and Jupyter) printed."""
        return self.log.read_text(errors="replace")[-last:]

    def request(self, path: str, *, method: str = "GET", data: bytes | None = None,
                headers: dict[str, str] | None = None, timeout: float = 30) -> tuple[int, bytes]:
        """(status, body) of a request to `path` (e.g. "/api/contents"), authenticated with the token;
        an HTTP error status is returned, not raised."""
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Authorization": f"token {self.token}", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def get(self, path: str, timeout: float = 30) -> tuple[int, str]:
        status, body = self.request(path, timeout=timeout)
        return status, body.decode(errors="replace")

    def get_json(self, path: str, timeout: float = 30):
        """The JSON body of a GET that must succeed (200)."""
        status, body = self.get(path, timeout=timeout)
        assert status == 200, f"GET {path} answered {status}: {body[:500]}"
        return json.loads(body)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop(process: subprocess.Popen, grace: float = 20) -> None:
    """SIGTERM to the process group (Jupyter shuts its kernels down), SIGKILL if it lingers."""
    pgid = process.pid  # start_new_session: make is the group leader
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        process.poll()
        if not _group_alive(pgid):
            break
        time.sleep(0.2)
    else:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=10)


@contextmanager
def lab_server(target: str = "lab", work: Path | str | None = None, *, timeout: float = 180,
               variables: dict[str, str] | None = None, lab_args: str = "") -> Iterator[LabServer]:
    """Run `make <target> [WORK=<work>] LAB_ARGS=...` from the repository and yield the running server.

    `variables` are further make variables (NAME=value); `lab_args` are appended to the ones this helper
    passes (host, port, token, no browser). `timeout` covers installing nothing, preparing and starting.
    """
    port, token = free_port(), secrets.token_hex(16)
    # port_retries=0: if another process took the port meanwhile, fail instead of moving to another one.
    args = (f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 "
            f"--IdentityProvider.token={token} {lab_args}").strip()
    command = ["make", "--no-print-directory", target, f"LAB_ARGS={args}"]
    if work is not None:
        command.append(f"WORK={work}")
    command += [f"{name}={value}" for name, value in (variables or {}).items()]

    log_fd, log_name = tempfile.mkstemp(prefix=f"make-{target}-", suffix=".log")
    log = Path(log_name)
    with os.fdopen(log_fd, "w") as log_file:
        process = subprocess.Popen(command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=log_file,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    server = LabServer(url=f"http://127.0.0.1:{port}", token=token, port=port, log=log)
    try:
        deadline, last_error = time.monotonic() + timeout, "no answer yet"
        while True:
            if process.poll() is not None:
                raise LabServerError(f"`{' '.join(command)}` exited with code {process.returncode} before "
                                     f"serving /api/contents. Its output:\n{server.output()}")
            if time.monotonic() > deadline:
                raise LabServerError(f"`{' '.join(command)}` did not serve /api/contents on port {port} within "
                                     f"{timeout:.0f} s ({last_error}). Its output:\n{server.output()}")
            try:
                status, _ = server.request("/api/contents", timeout=5)
            except OSError as error:  # not listening yet
                last_error = str(error)
            else:
                if status == 200:
                    break
                last_error = f"status {status}"
            time.sleep(0.5)
        try:
            yield server
        except BaseException:
            # pytest shows a failed test's captured stdout: the server's side of the story
            print(f"--- output of `{' '.join(command)}` ---\n{server.output()}")
            raise
    finally:
        _stop(process)
        log.unlink(missing_ok=True)
