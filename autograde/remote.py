"""The grader's side of a sandboxed kernel: the student's functions and layers as local-looking objects.

`Remote(kernel).lookup("get_angles")` returns a `Handle`; calling it, reading its attributes or calling its
methods runs in the kernel through the agent (autograde/kernel_agent.py). Plain data comes back by value
(tensors as `tf.constant`s), anything else as another handle. The hidden checks therefore run unchanged in
the grader's process, with the reference and the comparison out of the kernel's reach.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import inspect
import itertools
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from autograde import kernel_agent, wire
from autograde.course import REPO_ROOT
from autograde.sandbox import SandboxKernel
from course_lib.checking import CheckFailed
from course_lib.checking import parts_replaced as local_parts_replaced
from course_lib.env import quiet_tensorflow

AGENT = "__course_grading_agent__"
ANSWERS = Path(importlib.util.find_spec("course_lib.layers").origin)  # the grader's, with every answer


class LearnerError:
    """Mixed into the exception raised here when the student's code raised in the kernel."""

    remote_type = "Exception"


_ERROR_TYPES: dict[str, type] = {}


def learner_error(type_name: str, message: str) -> BaseException:
    """An exception named like the one raised in the kernel, of that type when it is a builtin, so that
    `hasattr`, `except AttributeError` and the checks' messages behave as if the call were local."""
    if type_name not in _ERROR_TYPES:
        base = getattr(builtins, type_name, None)
        if not (isinstance(base, type) and issubclass(base, Exception)) or base is NotImplementedError:
            base = Exception
        _ERROR_TYPES[type_name] = type(type_name, (base, LearnerError), {"remote_type": type_name})
    return _ERROR_TYPES[type_name](message)


class KernelTrouble(BaseException):  # noqa: N818 - not an Exception, so that checks never swallow it
    """The kernel stopped answering: the call timed out, the kernel died, or the agent was broken."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class Handle:
    """An object that lives in the kernel."""

    __slots__ = ("_remote", "_id")

    def __init__(self, remote: Remote, key: int):
        object.__setattr__(self, "_remote", remote)
        object.__setattr__(self, "_id", key)

    def __call__(self, *args, **kwargs):
        return self._remote.request("call", target=self, args=list(args), kwargs=kwargs)

    def __getattr__(self, name: str):
        if name.startswith("__") and name not in ("__name__", "__init__", "__call__"):
            raise AttributeError(name)
        value = self._remote.request("getattr", target=self, name=name)
        if name == "__name__":
            return wire.type_name(type("x", (), {})) if not isinstance(value, str) else value[:60]
        return value

    def __setattr__(self, name, value):
        raise AttributeError("objects in the student's kernel are read-only from the grader")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} in the student's kernel>"


_HANDLE_TYPES: dict[str, type] = {}


def handle_type(name: str) -> type:
    """A Handle subclass named like the remote object's type, so messages read naturally."""
    if name not in _HANDLE_TYPES:
        _HANDLE_TYPES[name] = type(name or "object", (Handle,), {"__slots__": ()})
    return _HANDLE_TYPES[name]


def _tensor(array: np.ndarray):
    return quiet_tensorflow().constant(array)


class Remote:
    """Requests to the agent in `kernel`, one file pair per request in the kernel's `.grading` folder."""

    def __init__(self, kernel: SandboxKernel, *, timeout: float = 60.0):
        self.kernel, self.timeout = kernel, timeout
        self.folder = kernel.grading_folder
        self.numbers = itertools.count(1)
        self.parts: dict[str, str] = {}

    def install(self) -> None:
        """Put the agent in the kernel (after the notebook has run, so notebook code never sees it first)."""
        self.parts.clear()
        code = install_code(str(self.kernel.work), str(self.folder))
        outcome = self.kernel.run(code, timeout=self.timeout)
        if outcome.status != "ok":
            raise KernelTrouble(outcome.status, f"the grading agent could not start ({outcome.ename}: "
                                                f"{outcome.evalue[:200]})")

    def request(self, op: str, **args):
        number = next(self.numbers)
        encoder = wire.Encoder(handle_of=self._handle_id)
        tree = encoder.encode({"op": op, "args": args})
        wire.save(self.folder / f"{number}.in", tree, encoder.arrays)
        outcome = self.kernel.run(f"{AGENT}.serve({number})", timeout=self.timeout)
        if outcome.status == "timeout":
            raise KernelTrouble("timeout", f"did not finish within {self.timeout:g} s")
        if outcome.status == "died":
            raise KernelTrouble("died", "the kernel died (a crash, os._exit or running out of memory)")
        if outcome.status == "error":
            kind = "memory" if outcome.out_of_memory() else "agent"
            raise KernelTrouble(kind, f"{outcome.ename}: {outcome.evalue[:300]}")
        result_path = self.folder / f"{number}.out"
        try:
            tree, arrays = wire.read(result_path, limit=wire.MAX_RESULT_BYTES)
            result = wire.Decoder(arrays, tensor=_tensor, handle=self._handle).decode(tree)
        except (OSError, wire.WireError) as error:
            raise KernelTrouble("agent", f"no readable answer from the kernel ({error})") from None
        finally:
            for path in (self.folder / f"{number}.in", result_path):
                path.unlink(missing_ok=True)
        if not isinstance(result, dict):
            raise KernelTrouble("agent", "a malformed answer from the kernel")
        if "raised" in result:
            raised = result["raised"] if isinstance(result["raised"], dict) else {}
            message = str(raised.get("message", ""))[:2000]
            if raised.get("unfinished"):
                raise NotImplementedError(message)
            raise learner_error(str(raised.get("type", "Exception"))[:60], message)
        return result.get("ok")

    def _handle(self, key: int, type_name: str) -> Handle:
        return handle_type(type_name)(self, key)

    @staticmethod
    def _handle_id(value) -> int:
        if isinstance(value, Handle):
            return object.__getattribute__(value, "_id")
        raise wire.WireError(f"a {type(value).__name__} cannot be sent to the kernel")

    # -- conveniences --------------------------------------------------------------------------
    def lookup(self, name: str):
        return self.request("lookup", name=name)

    def part(self, reference):
        """The reference function or class `reference`, made in the kernel (a toy model, say)."""
        return self.request("part", **dict(zip(("key", "attribute"), self.load_part(reference), strict=True)))

    def library(self, obj):
        """The kernel's own copy of a library object (keras, keras_hub, tensorflow, numpy, course_lib)."""
        module, attribute = address_of(obj)
        return self.request("library", module=module, attribute=attribute)

    def release(self) -> None:
        self.request("release")

    def getattr_each(self, targets: list, name: str) -> list:
        """`getattr(target, name)` for each target, in one request (the shapes of a layer's variables)."""
        return self.request("getattr_each", targets=list(targets), name=name)

    def assign_each(self, targets: list, values: list[np.ndarray]) -> None:
        """`target.assign(value)` for each pair, in one request (seeding a layer's variables)."""
        self.request("assign_each", targets=list(targets), values=list(values))

    def load_part(self, reference) -> tuple[str, str]:
        """Send the reference function or class (with only what it needs) to the kernel: (part key, name)."""
        module, attribute = address_of(reference)
        dotted = f"{module}:{attribute}"
        key = "".join(c if c.isalnum() else "_" for c in dotted)  # the same address always gets the same key
        if key not in self.parts:
            source = part_source(reference)
            # A part built on the course's own answers gets the grader's copy of them: the kernel's are stubs.
            answers = {"answers": ANSWERS.read_text(encoding="utf-8")} if "course_lib.layers" in source else {}
            self.request("load_part", key=key, source=source, **answers)
            self.parts[key] = dotted
        return key, attribute


def install_code(work: str, folder: str) -> str:
    """The code that makes the agent in a kernel whose notebook ran in `work`, answering in `folder`: the agent's
    source (importing only what the kernel has loaded), then wire.py's with the submission's files out of reach."""
    agent, wire_source = Path(kernel_agent.__file__).read_text(), Path(wire.__file__).read_text()
    return (
        "import types as _types\n"
        f"_module = _types.ModuleType({AGENT!r})\n"
        f"exec(compile({agent!r}, {AGENT!r}, 'exec'), _module.__dict__)\n"
        f"with _module.grader_imports({work!r}):\n"
        f"    exec(compile({wire_source!r}, {AGENT!r}, 'exec'), _module.__dict__)\n"
        f"{AGENT} = _module.Agent(get_ipython().user_ns, {folder!r}, {work!r})\n"
        "del _types, _module\n"
    )


def address_of(obj) -> tuple[str, str]:
    """`(module, name)` of a top-level function or class, checked to lead back to `obj` itself.

    The kernel finds the object again (or the grader reads its source) by this address, so anything the
    address would not find is refused here, naming the object."""
    if isinstance(obj, str):
        raise TypeError(f"{obj!r} is a string: pass the function or class itself (imported at the top of the "
                        "check module), so that a rename fails when the check is imported, not when it runs")
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    label = f"{name or type(obj).__name__} ({obj!r:.80})"
    if inspect.ismethod(obj):
        raise TypeError(f"{label} is a bound method; pass a function or class defined at a module's top level")
    if not isinstance(module, str) or not isinstance(name, str):
        raise TypeError(f"{label} has no module and name to be found by; pass a function or class defined "
                        "at a module's top level")
    if name.endswith("<lambda>"):
        raise ValueError(f"{label} is a lambda, which has no name to be found by; define it with def at a "
                         "module's top level")
    if module == "__main__":
        raise ValueError(f"{label} is defined in __main__, which the kernel cannot import; move it to a module")
    if "<locals>" in name and _found(module, getattr(obj, "__name__", "")) is obj:
        # A class its module builds on first use and binds under its own name (course_lib.layers.EncoderLayer,
        # made late so that importing the module does not import Keras) is found by that name.
        name = obj.__name__
    if "<locals>" in name:
        raise ValueError(f"{label} is defined inside a function; move it to its module's top level")
    if "." in name:
        raise ValueError(f"{label} is not at the top level of {module}; pass a top-level function or class")
    if _found(module, name) is not obj:
        raise ValueError(f"{label}: {module}:{name} does not lead back to it (a decorator that renames, or a "
                         "name rebound since); pass an object its module defines under its own name")
    return module, name


def _found(module: str, name: str):
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


@contextmanager
def parts_replaced(target, **parts):
    """Within the block, the notebook's names point at the reference functions or classes `parts`: a
    composite is graded with reference parts, so a mistake in a part never costs its composite."""
    if not isinstance(target, Handle):
        raise TypeError("parts_replaced needs an object in the student's kernel")
    remote: Remote = object.__getattribute__(target, "_remote")
    names = {name: list(remote.load_part(reference)) for name, reference in parts.items()}
    remote.request("swap", names=names)
    try:
        yield
    finally:
        remote.request("restore")


def part_source(*references) -> str:
    """Source defining the reference functions or classes `references` (all from one module), as shipped.

    Only the grader's own package travels as source; anything else (course_lib's building blocks) the kernel
    can import, so it is imported there."""
    addresses = [address_of(reference) for reference in references]
    modules = {module for module, _ in addresses}
    if len(modules) != 1:
        raise ValueError(f"part_source needs objects from one module, got {sorted(modules) or 'none'}")
    module, names = modules.pop(), [name for _, name in addresses]
    if module.split(".")[0] != "autograde":
        return f"from {module} import {', '.join(names)}\n"
    return _module_source(module, names)


def _module_source(module: str, names: list[str]) -> str:
    """Source defining `names` from `module`: its imports and only the top-level definitions they use.

    Parts come from `autograde.reference`; their own imports from `autograde` are inlined the same way,
    because the kernel cannot import the grader's package."""
    path = REPO_ROOT / (module.replace(".", "/") + ".py")
    if not path.is_file():
        path = REPO_ROOT / module.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_text())
    defined = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    defined[target.id] = node
    needed, queue = set(), list(names)
    while queue:
        name = queue.pop()
        if name in needed or name not in defined:
            continue
        needed.add(name)
        queue += [n.id for n in ast.walk(defined[name]) if isinstance(n, ast.Name)]
    header, inlined = [], []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograde"):
            used = _used(needed, defined)
            wanted = [alias.name for alias in node.names if (alias.asname or alias.name) in used]
            if wanted:
                inlined.append(_module_source(node.module, wanted))
                inlined += [f"{alias.asname} = {alias.name}" for alias in node.names
                            if alias.asname and alias.name in wanted]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            header.append(ast.unparse(node))
    body = [ast.unparse(node) for node in tree.body
            if any(defined.get(name) is node for name in needed)]
    missing = [name for name in names if name not in needed]
    if missing:
        raise LookupError(f"{module} defines no {', '.join(missing)}")
    return "\n".join(header + inlined + body) + "\n"


def _used(needed: set[str], defined: dict) -> set[str]:
    return {n.id for name in needed for n in ast.walk(defined[name]) if isinstance(n, ast.Name)}


# ----------------------------------------------------------------------------------------------
# What the hidden checks use: the same code grades a learner's object in the kernel (a Handle, when
# grading) or in this process (the unit tests' implementations).


def in_kernel(learner) -> bool:
    return isinstance(learner, Handle)


def remote_of(handle: Handle) -> Remote:
    return object.__getattribute__(handle, "_remote")


@contextmanager
def with_parts(learner, **parts):
    """Within the block, the learner's notebook names `parts` (name=reference function or class) are the
    reference's: a composite is graded with reference parts, so a mistake in a part costs it nothing."""
    if in_kernel(learner):
        with parts_replaced(learner, **parts):
            yield
        return
    # A class's own methods share the notebook's globals; an inherited __init__ may not.
    function = (learner.__dict__.get("__init__") or learner.__dict__.get("call") or learner.__init__
                if isinstance(learner, type) else learner)
    with local_parts_replaced(function, **{name: _here(reference) for name, reference in parts.items()}):
        yield


def _here(obj):
    """`obj` itself, once it is known to be addressable: a check that could not run in the kernel fails in the
    unit tests too."""
    address_of(obj)
    return obj


def part(learner, reference):
    """The reference function or class where the learner's code runs (a toy model to decode with)."""
    if in_kernel(learner):
        return object.__getattribute__(learner, "_remote").part(reference)
    return _here(reference)


def run_there(learner, function, *args, **kwargs):
    """`function` (a course_lib function) called where `learner` lives; a CheckFailed it raises is ours.

    Only helpers that build, walk, call or diagnose run there (one request instead of dozens); every verdict
    is reached in the grader."""
    function = library(learner, function)
    try:
        return function(*args, **kwargs)
    except Exception as error:  # LearnerError is a mixin, not an exception type of its own
        if isinstance(error, LearnerError) and error.remote_type == "CheckFailed":
            raise CheckFailed(str(error)) from None
        raise


def library(learner, obj):
    """A library object (`keras.layers.MultiHeadAttention`) where the learner's code runs."""
    if in_kernel(learner):
        return object.__getattribute__(learner, "_remote").library(obj)
    return _here(obj)
