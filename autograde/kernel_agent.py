"""The grader's agent inside a student's kernel: it runs the student's code on inputs the grader sends.

The grader executes this module's source, then `wire.py`'s into the same namespace, in the kernel once the notebook
has run (remote.py), then sends requests as files in the kernel's working folder. The agent never sees a reference
result, a check or a score: it looks names up in the notebook, calls them, sets weights, and writes back what they
returned. Objects that are not plain data stay here, in a table, and the grader refers to them by number. Tampering
with the agent can only change what the student's code is reported to return, which the grader judges.

A file beside the notebook may be named like anything the agent could import (`autograde.py`, `numpy.py`, a module
a library tries and does not find): the agent imports only modules an IPython kernel has loaded already, and imports
anything else with the submission's folder out of reach (`grader_imports`).
"""

from __future__ import annotations

# Modules every IPython kernel has loaded before any cell runs: importing them here finds nothing new.
import contextlib
import importlib
import io
import os
import sys
import types
import warnings

# Imported as a module in the grader and the tests. In the kernel this source runs with no module spec, and wire.py's
# names arrive in the same namespace after it: the kernel never imports the grader's package, which is hidden there
# (a submission's `autograde.py` would answer).
if __spec__ is not None:
    from autograde.wire import Decoder, WireError, dump, read, type_name


@contextlib.contextmanager
def grader_imports(folder: str | None = None):
    """Imports within find what is installed, never a submission's file: the submission folder's finder (sandbox.py
    puts it last) and any sys.path entry in `folder` (a notebook may have put its own folder first) are set aside,
    and whatever a module raises while it is imported, SystemExit included, becomes an ImportError."""
    finders = [finder for finder in sys.meta_path if isinstance(getattr(finder, "submission_folder", None), str)]
    folders = {os.path.realpath(finder.submission_folder) for finder in finders}
    if folder:
        folders.add(os.path.realpath(folder))

    def inside(entry) -> bool:  # '' is the working folder
        real = os.path.realpath(entry or os.curdir)
        return any(real == top or real.startswith(top.rstrip(os.sep) + os.sep) for top in folders)

    entries = [(index, entry) for index, entry in enumerate(sys.path) if isinstance(entry, str) and inside(entry)]
    for index, _ in reversed(entries):
        del sys.path[index]
    for finder in finders:
        sys.meta_path.remove(finder)
    try:
        yield
    except Exception:
        raise
    except BaseException as error:  # a module's SystemExit or KeyboardInterrupt is not the agent's end
        raise ImportError(f"an import raised {type(error).__name__}: {str(error)[:300]}") from None
    finally:
        for index, entry in entries:
            sys.path.insert(index, entry)
        sys.meta_path.extend(finder for finder in finders if finder not in sys.meta_path)  # last again


def library(name: str, folder: str | None = None) -> types.ModuleType:
    """The module `name` as the kernel has it (the notebook imported it), else imported by `grader_imports`."""
    module = sys.modules.get(name)
    if module is None:
        with grader_imports(folder):
            module = importlib.import_module(name)
    return module


class Agent:
    def __init__(self, namespace: dict, folder: str, submission: str | None = None):
        self.namespace = namespace
        self.folder = folder
        # The notebook's folder (by default the one `folder` lives in), which the agent's imports set aside.
        self.submission = submission or os.path.dirname(os.path.abspath(folder))
        self.objects: dict[int, object] = {}
        self.parts: dict[str, types.ModuleType] = {}
        self.saved: list[dict] = []
        self.answers: types.ModuleType | None = None  # the grader's course_lib.layers, once a part needs it

    # -- handles -------------------------------------------------------------------------------
    def handle_of(self, value) -> int:
        key = id(value)
        self.objects[key] = value  # kept alive while the grader may refer to it
        return key

    def object(self, key: int, _type: str = ""):
        if key not in self.objects:
            raise LookupError(f"no object {key} in the kernel (released or never sent)")
        return self.objects[key]

    def tensor(self, array):
        """A tensor the grader sends, made with the kernel's TensorFlow."""
        return library("tensorflow", self.submission).constant(array)

    # -- one request ---------------------------------------------------------------------------
    def serve(self, number: int) -> None:
        """Answer request `number`: read `<number>.in`, write `<number>.out`."""
        tree, arrays = read(os.path.join(self.folder, f"{number}.in"))
        decoder = Decoder(arrays, tensor=self.tensor, handle=self.object)
        request = decoder.decode(tree)
        try:
            result = {"ok": getattr(self, "op_" + request["op"])(**request["args"])}
        except NotImplementedError as error:
            result = {"raised": {"type": "NotImplementedError", "message": str(error)[:2000], "unfinished": True}}
        except BaseException as error:  # SystemExit from the student's code (or a module it imports) is its answer
            result = {"raised": {"type": type_name(error), "message": _message(error)}}
        path = os.path.join(self.folder, f"{number}.out")
        try:
            dump(path, result, self.handle_of)
        except WireError as error:
            dump(path, {"raised": {"type": "WireError", "message": str(error), "unsendable": True}})

    # -- operations ----------------------------------------------------------------------------
    def op_lookup(self, name: str):
        if name not in self.namespace:
            raise NameError(f"name {name!r} is not defined in the notebook")
        return self.namespace[name]

    def op_call(self, target, args=(), kwargs=None, method: str | None = None):
        function = getattr(target, method) if method else target
        with _quiet():
            return function(*args, **(kwargs or {}))

    def op_getattr(self, target, name: str):
        with _quiet():
            return getattr(target, name)

    def op_getattr_each(self, targets: list, name: str):
        with _quiet():
            return [getattr(target, name) for target in targets]

    def op_assign_each(self, targets: list, values: list):
        """Set each variable to its array (cast to the variable's dtype), after checking the shapes agree."""
        with _quiet():
            for variable, value in zip(targets, values, strict=True):
                if tuple(variable.shape) != tuple(value.shape):
                    raise ValueError(f"a variable has shape {tuple(variable.shape)}, expected {tuple(value.shape)}")
                variable.assign(value.astype(getattr(variable.dtype, "name", variable.dtype)))
        return None

    def op_load_part(self, key: str, source: str, answers: str | None = None):
        """A reference part, given as source, in a module of its own. `answers`: the grader's course_lib/layers.py,
        which the part imports from (the kernel's copy holds stubs for the assignment being graded)."""
        module = types.ModuleType(f"course_grading_part_{key}")
        if answers is not None and self.answers is None:
            self.answers = types.ModuleType("course_lib.layers")
            with grader_imports(self.submission):
                exec(compile(answers, "<the grader's course_lib/layers.py>", "exec"), self.answers.__dict__)
        with grader_imports(self.submission), _in_place_of_layers(self.answers if answers is not None else None):
            exec(compile(source, f"<reference part {key}>", "exec"), module.__dict__)  # its imports are the grader's
        self.parts[key] = module
        return None

    def op_part(self, key: str, attribute: str):
        """A reference part itself (a toy model the student's function is given, say)."""
        return getattr(self.parts[key], attribute)

    def op_library(self, module: str, attribute: str):
        """A library object made in the kernel (a keras layer the student's code copies weights from)."""
        if module.split(".")[0] not in {"keras", "keras_hub", "tensorflow", "numpy", "course_lib"}:
            raise ValueError(f"{module} is not a library the grader uses")
        return getattr(library(module, self.submission), attribute)

    def op_swap(self, names: dict):
        """Point notebook names at reference parts (names -> [part key, attribute]) until `op_restore`."""
        missing = object()
        saved = {name: self.namespace.get(name, missing) for name in names}
        self.saved.append({"values": saved, "missing": missing})
        for name, (key, attribute) in names.items():
            self.namespace[name] = getattr(self.parts[key], attribute)
        return None

    def op_restore(self):
        entry = self.saved.pop()
        for name, value in entry["values"].items():
            if value is entry["missing"]:
                self.namespace.pop(name, None)
            else:
                self.namespace[name] = value
        return None

    def op_release(self):
        self.objects.clear()
        return None


@contextlib.contextmanager
def _in_place_of_layers(module: types.ModuleType | None):
    """Within the block, `import course_lib.layers` (in any form) gives `module`; the kernel's own afterwards."""
    if module is None:
        yield
        return
    package = library("course_lib")
    saved = sys.modules.get("course_lib.layers"), package.__dict__.get("layers")
    sys.modules["course_lib.layers"], package.layers = module, module
    try:
        yield
    finally:
        for place, key, value in ((sys.modules, "course_lib.layers", saved[0]), (package.__dict__, "layers", saved[1])):
            if value is None:
                place.pop(key, None)
            else:
                place[key] = value


def _message(error: BaseException) -> str:
    text = str(error)
    return text if len(text) <= 2000 else text[:2000] + " ..."


class _Sink(io.TextIOBase):
    """A text stream that forgets what it is given (a call may print any amount)."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


@contextlib.contextmanager
def _quiet():
    """The student's prints and warnings go nowhere while the grader calls their code."""
    sink = _Sink()
    with warnings.catch_warnings(), library("numpy").errstate(all="ignore"), \
            contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        warnings.simplefilter("ignore")
        yield
