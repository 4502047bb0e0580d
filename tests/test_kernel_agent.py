"""The grading agent beside files named like modules, without a kernel: the code `Remote.install` runs in a kernel is
run here, in this process made to resolve modules as the sandboxed kernel does (the grader's package not importable,
the submission's folder searched last and, as a notebook may arrange, first too). Every file in the folder raises
SystemExit when imported, so an import the agent makes from there fails the test. Also: the status names as shadowed
only the files the kernel really imports something else for."""

from __future__ import annotations

import ast
import sys
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from submissions import SHADOWS

from autograde import kernel_agent, sandbox, wire
from autograde.kernel_agent import grader_imports, library
from autograde.reference.positional_encoding import get_angles as reference_angles
from autograde.remote import AGENT, Remote, install_code, part_source
from autograde.sandbox import Outcome, shadowing_names

from conftest import REPO

EXITS = "raise SystemExit('shadowed')\n"


@contextmanager
def like_the_kernel(folder: Path):
    """Modules resolve here as in a kernel whose notebook put its folder first on sys.path: the grader's package is
    not importable (hidden in the sandbox), and the kernel's start-up finder searches `folder` after everything."""
    grader = {name: module for name, module in sys.modules.items() if name.split(".")[0] == "autograde"}
    meta_path, path = list(sys.meta_path), list(sys.path)
    exec(sandbox._FOLDER_LAST.format(folder=str(folder)), {})
    sys.path.insert(0, str(folder))
    for name in grader:
        del sys.modules[name]
    try:
        yield
    finally:
        sys.meta_path[:], sys.path[:] = meta_path, path
        for name, module in list(sys.modules.items()):  # whatever came from the folder goes
            if str(getattr(module, "__file__", None) or "").startswith(str(folder)):
                del sys.modules[name]
        sys.modules.update(grader)


class KernelHere:
    """Runs the code a Remote sends in one namespace of this process, as a kernel would."""

    def __init__(self, work: Path, namespace: dict):
        self.work, self.grading_folder = work, work / ".grading"
        self.globals = {"get_ipython": lambda: SimpleNamespace(user_ns=namespace)}

    def run(self, code: str, timeout: float) -> Outcome:
        try:
            exec(code, self.globals)
        except BaseException as error:  # noqa: BLE001 - what a kernel reports as an error
            return Outcome("error", type(error).__name__, str(error))
        return Outcome("ok")


NOTEBOOK = '''
def double(x):
    return 2 * x

def leaves():
    raise SystemExit("bye")

def lazy():
    import my_exits  # a helper of the student's that raises SystemExit when imported
'''


def hostile_folder(folder: Path) -> Path:
    for name in [*SHADOWS, "my_exits.py", "course_probe_nowhere.py"]:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(EXITS)
    return folder


def test_the_agent_starts_and_answers_beside_files_named_like_modules(tmp_path):
    work = hostile_folder(tmp_path / "work")
    namespace: dict = {}
    exec(NOTEBOOK, namespace)
    kernel = KernelHere(work, namespace)
    source = part_source(reference_angles)  # read by the grader, before its package is out of reach here
    with like_the_kernel(work):
        remote = Remote(kernel)
        remote.folder.mkdir()
        outcome = kernel.run(install_code(str(work), str(remote.folder)), 10)
        assert outcome.status == "ok", f"the agent could not start: {outcome.ename}: {outcome.evalue}"
        assert remote.lookup("double")(21) == 42
        for name in ("leaves", "lazy"):  # the student's SystemExit is their function's answer, not the agent's end
            with pytest.raises(Exception, match="bye|shadowed") as raised:
                remote.lookup(name)()
            assert raised.value.remote_type == "SystemExit"
        remote.request("load_part", key="angles", source=source)  # a reference part's imports are the grader's
        assert remote.request("part", key="angles", attribute="get_angles")(3.0, 2.0, 4) == reference_angles(3.0, 2, 4)
        agent = kernel.globals[AGENT]
        with pytest.raises(ModuleNotFoundError):  # installed nowhere: the folder is not asked either
            type(agent).tensor.__globals__["library"]("course_probe_nowhere", agent.submission)
        assert remote.lookup("double")(1) == 2
        assert sys.path[0] == str(work) and sys.meta_path[-1].submission_folder == str(work), "not put back"


def test_an_import_that_raises_anything_becomes_an_import_error(tmp_path):
    work = hostile_folder(tmp_path / "work")
    elsewhere = tmp_path / "installed"
    elsewhere.mkdir()
    (elsewhere / "course_probe_exits.py").write_text("raise SystemExit('at import')\n")
    (elsewhere / "course_probe_fine.py").write_text("VALUE = 1\n")
    with like_the_kernel(work):
        sys.path.append(str(elsewhere))
        with pytest.raises(ImportError, match="SystemExit: at import"):
            library("course_probe_exits", str(work))
        assert library("course_probe_fine", str(work)).VALUE == 1
        with pytest.raises(ImportError, match="KeyboardInterrupt"), grader_imports():
            raise KeyboardInterrupt
        assert sys.path[0] == str(work) and sys.meta_path[-1].submission_folder == str(work), "not put back"
    sys.modules.pop("course_probe_fine", None)


def test_the_status_calls_shadowed_only_what_the_kernel_imports_instead(monkeypatch, tmp_path):
    # autograde: the grader's package is hidden from the kernel, so `import autograde` there is the student's file.
    # winreg: a standard module only on Windows. sitecustomize, wire, kernel_agent: installed nowhere as such.
    for name in ("autograde.py", "autograde/__init__.py", "course_lib.py", "numpy.py", "json.py", "winreg.py",
                 "sitecustomize.py", "wire.py", "kernel_agent.py", "my_helpers.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(EXITS)
    assert shadowing_names(tmp_path) == ["course_lib.py", "json.py", "numpy.py"]
    # Were the repository visible to the kernel, the grader's package would be imported instead of the student's.
    visible = sandbox.visible_roots()
    monkeypatch.setattr(sandbox, "visible_roots", lambda: [*visible, REPO])
    assert shadowing_names(tmp_path) == ["autograde", "autograde.py", "course_lib.py", "json.py", "numpy.py"]


def top_level(path: Path) -> tuple[set[str], set[str]]:
    """(names a module's source defines, modules it imports unconditionally) at its top level."""
    tree = ast.parse(path.read_text())
    defined, imported = set(), set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imported.add(node.module)
    return defined, imported


def test_the_agent_and_wire_share_a_namespace_without_clashing():
    """In the kernel both sources run into one namespace, the agent's first and unguarded: wire.py redefines none of
    its names, and the agent imports only standard modules (an IPython kernel has loaded them all before any cell)."""
    agent, agent_imports = top_level(Path(kernel_agent.__file__))
    wire_names, _ = top_level(Path(wire.__file__))
    assert not agent & wire_names, f"wire.py would replace the agent's {sorted(agent & wire_names)}"
    assert all(name in sys.stdlib_module_names for name in agent_imports), sorted(agent_imports)
