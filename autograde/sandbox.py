"""A student's kernel in a sandbox: bubblewrap (bwrap) namespaces, a memory cap, no network.

What the kernel sees and with which rights is autograde/confinement.py's: an allow list of read-only folders
(the system, Python, the course's released material) and its working folder, as an unprivileged user without
capabilities. The kernel is PID 1's only child in a PID namespace of its own, so when grading ends every process it
started (detached or not) ends with it. The grader talks to it over Unix sockets in the working folder (the sandbox
has no network, not even loopback).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import KernelManager

from autograde.confinement import SandboxUnavailable, hand_over, sandbox_command, visible_roots

DEFAULT_MEMORY = 6 * 2**30  # bytes of address space; TensorFlow alone maps about 1.5 GiB
KERNEL_START_TIMEOUT = 120


def kernel_env(work: Path, *, threads: int, declared: Mapping[str, str] | None = None) -> dict[str, str]:
    """The kernel's whole environment: nothing of the grader's leaks in. `declared` adds what the released
    notebook asks for (`declared_env`), never replacing one of these."""
    base = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        # Configuration folders in the sandbox's own empty /tmp, not under HOME (the submission's folder): a submitted
        # .ipython/profile_default/startup/ script or .keras/keras.json would otherwise run or apply before the agent.
        "HOME": str(work), "IPYTHONDIR": "/tmp/.ipython", "KERAS_HOME": "/tmp/.keras",
        "MPLCONFIGDIR": "/tmp/.matplotlib", "MPLBACKEND": "Agg",
        "COURSE_FAST": "1", "COURSE_GRADING": "1", "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONHASHSEED": "0",
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "OMP_NUM_THREADS": str(threads), "TF_NUM_INTRAOP_THREADS": str(threads),
        "TF_NUM_INTEROP_THREADS": "1", "LANG": "C.UTF-8",
    }
    clash = sorted(set(declared or {}) & set(base))
    if clash:
        raise ValueError(f"a notebook may not set the sandbox's own variables: {', '.join(clash)}")
    return {**base, **dict(declared or {})}


ENV_METADATA = ("course", "kernel_env")  # notebook metadata: {"course": {"kernel_env": {"NAME": "value"}}}
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


def declared_env(notebook) -> dict[str, str]:
    """The environment variables a released notebook declares for its kernel, such as KERAS_BACKEND=torch for a
    notebook that runs Keras on PyTorch: set before the kernel starts, so they hold whatever the submission's
    own cells do. Read from the release, never from the submission."""
    section = notebook.get("metadata", {})
    for key in ENV_METADATA:
        section = section.get(key, {}) if isinstance(section, Mapping) else {}
    if not isinstance(section, Mapping):
        raise ValueError(f"notebook metadata {'.'.join(ENV_METADATA)} should map names to strings")
    for name, value in section.items():
        if not (isinstance(name, str) and _ENV_NAME.fullmatch(name) and isinstance(value, str)):
            raise ValueError(f"notebook metadata {'.'.join(ENV_METADATA)}: {name!r}={value!r} is not NAME=string")
    return dict(section)


# Run at the kernel's start: the submission's folder becomes the last place a module is looked for, after sys.path
# and every finder (the course's own packages are found by an editable install's finder, which comes after sys.path),
# and it answers only imports written in the student's own code: a notebook cell or a module from the folder. A library
# that tries an optional module (pandas looks for `pytz`, Keras for `jax`) never gets a student's file of that name.
# `submission_folder` names it for the grading agent, which sets it aside while it imports (kernel_agent.py).
_FOLDER_LAST = """
class _SubmissionFolder:
    submission_folder = {folder!r}
    @staticmethod
    def find_spec(name, path=None, target=None, _finder=__import__("importlib.machinery").machinery.PathFinder,
                  _sys=__import__("sys"), _cells=__import__("ipykernel.compiler").compiler.get_tmp_directory()):
        if path is not None:
            return None
        frame = _sys._getframe(1)
        while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                     or str(frame.f_globals.get("__name__")).split(".")[0] == "importlib"):
            frame = frame.f_back
        where = frame.f_code.co_filename if frame is not None else ""
        if not where.startswith(({folder!r} + "/", _cells + "/")):
            return None
        return _finder.find_spec(name, [{folder!r}])
__import__("sys").meta_path.append(_SubmissionFolder)
del _SubmissionFolder
"""


def student_folder_last(work: Path) -> list[str]:
    """The kernel's interpreter options and module: the submission's folder searched after the course and every
    library, never before, so a file named like one of them (a `course_lib.py`, a `numpy.py`) cannot replace it,
    while the student's own helper modules still import. -P keeps the folder off sys.path (IPython honours it and
    adds nothing); the kernel's start-up code then puts it behind everything else. -s leaves out the user's
    site-packages, which would be in the folder (HOME is the folder), before the installed ones."""
    code = _FOLDER_LAST.format(folder=str(work))
    return ["-P", "-s", "-m", "ipykernel_launcher", f"--IPKernelApp.exec_lines=[{json.dumps(code)}]"]


# Where a fresh interpreter, started as the kernel is, finds each module named on its command line.
_FIND = """
import importlib.util, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        continue
    if spec is not None:
        found[name] = [spec.origin or "", *(spec.submodule_search_locations or [])]
print(json.dumps(found))
"""


def shadowing_names(folder: Path) -> list[str]:
    """The files or packages at the top of a submission named like a module the kernel imports instead of them (from
    the course, a library or Python). Asked of an interpreter started as the kernel's is, so the grader's own sys.path
    (its working folder, PYTHONPATH) does not count, nor does a module the kernel cannot see (the grader's package),
    since there the submission's file is the one imported."""
    names = {}
    for path in folder.iterdir():
        name = path.stem if path.suffix == ".py" else path.name if (path / "__init__.py").is_file() else ""
        if name.isidentifier():
            names.setdefault(name, []).append(path.name)
    if not names:
        return []
    found = json.loads(subprocess.run([sys.executable, "-P", "-s", "-c", _FIND, *names], capture_output=True,
                                      text=True, check=True, timeout=120, env=kernel_env(folder, threads=1)).stdout)
    visible = visible_roots()

    def in_kernel(locations: list[str]) -> bool:
        """Somewhere the kernel sees (a built-in module has no file at all)."""
        files = [Path(os.path.realpath(place)) for place in locations if os.path.isabs(place)]
        return not files or any(file.is_relative_to(root) for file in files for root in visible)

    return sorted(file for name, locations in found.items() if in_kernel(locations) for file in names[name])


MEMORY_ERRORS = frozenset({"MemoryError", "_ArrayMemoryError", "ResourceExhaustedError"})


@dataclass
class Outcome:
    """What became of one piece of code run in the kernel."""

    status: str  # ok | error | timeout | died
    ename: str = ""
    evalue: str = ""
    output_lines: int = 0
    stdout: list[str] = field(default_factory=list)

    def out_of_memory(self) -> bool:
        """The code raised what running out of the kernel's memory raises: Python's MemoryError, NumPy's subclass of
        it (a huge array asked for at once) or TensorFlow's out-of-memory error."""
        return self.status == "error" and self.ename in MEMORY_ERRORS


class _SandboxKernelManager(KernelManager):
    sandbox_argv: list[str] = []

    def format_kernel_cmd(self, extra_arguments=None):
        connection = os.path.realpath(self.connection_file)
        return [arg.replace("{connection_file}", connection) for arg in self.sandbox_argv]


class SandboxKernel:
    """One kernel for one submission; `run(code)` executes and waits, within a time limit."""

    def __init__(self, work: Path, *, course_lib: Path | None = None, memory: int = DEFAULT_MEMORY, threads: int = 1,
                 env: Mapping[str, str] | None = None):
        self.work = Path(work).resolve()
        self.course_lib = course_lib  # shown as course_lib (autograde/kernel_view.py); None: the installed one
        self.memory, self.threads = memory, threads
        self.env = dict(env or {})  # declared by the notebook (declared_env)
        self.manager: _SandboxKernelManager | None = None
        self.client = None
        self.restarts = 0

    # -- life cycle ----------------------------------------------------------------------------
    @property
    def channels(self) -> Path:
        """The folders the grader and the kernel talk through (`zmq`: its sockets, `grading`: the agent's files),
        beside the working folder, at the same path inside the sandbox. Only these two are writable there, and the
        kernel can neither rename nor replace them, so nothing the grader writes or deletes in them can be turned
        into a link to a file of the machine's."""
        return self.work.parent / f".{self.work.name}-channels"

    @property
    def grading_folder(self) -> Path:
        return self.channels / "grading"

    @property
    def sockets_folder(self) -> Path:
        return self.channels / "zmq"  # the kernel's sockets and connection file

    def start(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.channels, ignore_errors=True)  # fresh: what a killed kernel left there is not read
        for folder in (self.sockets_folder, self.grading_folder):
            folder.mkdir(parents=True)
            hand_over(folder)
        self.channels.chmod(0o755)
        channels = self.sockets_folder
        # Short names: a Unix socket's path may hold at most 107 bytes, and pytest's and instructors' folders are deep.
        manager = _SandboxKernelManager(transport="ipc", ip=str(channels / "s"),
                                        connection_file=str(channels / "connection.json"))
        manager._kernel_spec = KernelSpec(argv=[], display_name="sandbox", language="python",
                                          interrupt_mode="message")
        python = [sys.executable, *student_folder_last(self.work), "-f", "{connection_file}",
                  "--HistoryManager.enabled=False"]
        manager.sandbox_argv = sandbox_command(self.work, python,
                                               kernel_env(self.work, threads=self.threads, declared=self.env),
                                               memory=self.memory, course_lib=self.course_lib,
                                               channels=[self.sockets_folder, self.grading_folder])
        manager.write_connection_file()
        hand_over(channels)  # the kernel's user reads its connection file and makes its sockets there
        hand_over(self.work)  # and writes here, beside the student's files
        # The kernel's own stdout and stderr (ipykernel's start-up notes, C++ logs) are not the grader's.
        manager.start_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=KERNEL_START_TIMEOUT)
        except RuntimeError as error:
            manager.shutdown_kernel(now=True)
            raise SandboxUnavailable(f"the sandboxed kernel did not start: {error}") from None
        self.manager, self.client = manager, client

    def stop(self) -> None:
        """Kill the sandbox: every process the kernel started goes with its PID namespace."""
        if self.client is not None:
            self.client.stop_channels()
        if self.manager is not None:
            try:
                self.manager.shutdown_kernel(now=True)
            except Exception:  # already dead is fine
                pass
            self.manager.cleanup_resources()
        self.manager = self.client = None

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()

    def alive(self) -> bool:
        return self.manager is not None and self.manager.is_alive()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- running code --------------------------------------------------------------------------
    def run(self, code: str, timeout: float, *, keep_stdout: bool = False) -> Outcome:
        """Execute `code`; on timeout interrupt it, and if that fails too, report the kernel as stuck."""
        if not self.alive():
            return Outcome("died")
        msg_id = self.client.execute(code, store_history=False, allow_stdin=False)
        deadline = time.monotonic() + timeout
        outcome = Outcome("ok")
        interrupted = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if interrupted:
                    return Outcome("timeout", "CellTimeoutError", "ignored the interrupt",
                                   outcome.output_lines)
                self.manager.interrupt_kernel()
                interrupted = True
                outcome = Outcome("timeout", "CellTimeoutError", "interrupted", outcome.output_lines)
                deadline = time.monotonic() + 10
                continue
            try:
                message = self.client.get_iopub_msg(timeout=min(remaining, 1.0))
            except queue.Empty:
                if not self.alive():
                    return Outcome("died", output_lines=outcome.output_lines)
                continue
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                text = content.get("text", "")
                outcome.output_lines += text.count("\n")
                if keep_stdout and content.get("name") == "stdout" and len(outcome.stdout) < 200:
                    outcome.stdout.append(text[:5000])
            elif kind == "error" and outcome.status == "ok":
                outcome = Outcome("error", content.get("ename", ""), content.get("evalue", "")[:2000],
                                  outcome.output_lines, outcome.stdout)
            elif kind == "status" and content.get("execution_state") == "idle":
                return outcome
