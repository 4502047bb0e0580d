"""The inputs each graded function must handle, written down, and a proof that its hidden check draws every one.

`autograde/input_classes/<topic>.py` lists, for each graded function of one assignment, the classes of inputs
that its docstring, signature and the notebook's text allow (`CLASSES`: exercise name -> InputClass, ...). A
class has a predicate over one call's arguments, bound by name to the solution's signature (defaults applied),
so `missing(stem)` can run each hidden check against the solution, test every call as it is made, and say which
classes no call fell in. tests/test_input_classes.py asserts there are none; `python -m autograde.input_classes STEM`
prints the table for CONTRIBUTING.md and an issue's note.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import io
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from autograde import registry
from autograde.kernel_agent import Agent
from autograde.remote import Remote
from autograde.sandbox import Outcome
from autograde.variants import solution_cells


@dataclass(frozen=True)
class InputClass:
    name: str  # short, unique within its function
    description: str  # what the class is, in the notebook's words
    drawn: Callable[[Mapping], bool]  # given one call's arguments by name: is this call of the class?


# Why a module's UNLISTED names a Keras layer class: the recorder wraps plain functions and torch modules only.
KERAS_LAYER = ("a Keras layer class: its checks build it at several sizes and call it on padded batches, but the "
               "recorder sees only plain functions and torch modules, so no class of it could be shown drawn")


def _module(stem: str):
    return importlib.import_module(f"autograde.input_classes.{registry.topic(stem)}")


def classes(stem: str) -> dict[str, tuple[InputClass, ...]]:
    """exercise name -> its input classes."""
    return dict(_module(stem).CLASSES)


def unlisted(stem: str) -> dict[str, str]:
    """exercise name -> why its classes are not listed (none for most assignments)."""
    return dict(getattr(_module(stem), "UNLISTED", {}))


def _namespace(stem: str) -> dict:
    """The solution notebook's graded definitions, defined after the set-up the registry names."""
    rows = registry.exercises(stem)
    namespace: dict = {}
    exec(rows[0].imports, namespace)
    for source in solution_cells(stem).values():
        exec(source, namespace)
    return namespace


class _Recorder:
    """Stands for the learner's function in the notebook's namespace: each call's arguments, bound by name, are
    tested against every class as the call is made (a model's mode or gradients change afterwards)."""

    def __init__(self, target, listed):
        self.target, self.listed = target, listed
        self.signature = inspect.signature(target)
        self.drawn: set[str] = set()
        functools.update_wrapper(self, target, updated=())

    def note(self, signature, args, kwargs) -> None:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return  # a call the function refuses is of no class
        bound.apply_defaults()
        self.drawn |= {c.name for c in self.listed if _safe(c.drawn, bound.arguments)}

    def __call__(self, *args, **kwargs):
        self.note(self.signature, args, kwargs)
        return self.target(*args, **kwargs)


def _recording_class(target, recorder: _Recorder):
    """A torch module class that notes its construction and every forward call (with `self`, so a class can ask
    for the mode); named like the learner's, as the checks name it."""
    forward = inspect.signature(target.forward)

    def __init__(self, *args, **kwargs):
        recorder.note(recorder.signature, args, kwargs)
        target.__init__(self, *args, **kwargs)

    def recorded_forward(self, *args, **kwargs):
        recorder.note(forward, (self, *args), kwargs)
        return target.forward(self, *args, **kwargs)

    return type(target.__name__, (target,), {"__init__": __init__, "forward": recorded_forward})


def drawn_classes(stem: str, name: str) -> set[str]:
    """The classes of `name` that its hidden check's calls of the solution fell in, run through the grader's Remote
    and agent (served in this process, without a sandbox)."""
    namespace = _namespace(stem)
    recorder = _Recorder(namespace[name], classes(stem)[name])
    target = namespace[name]
    namespace[name] = _recording_class(target, recorder) if isinstance(target, type) else recorder
    row = next(row for row in registry.exercises(stem) if row.name == name)

    class Kernel:  # the agent served here: the hidden check runs as in grading
        def __init__(self, work: Path):
            self.work, self.grading_folder = work, work / ".grading"
            self.grading_folder.mkdir(exist_ok=True)
            self.agent = Agent(namespace, str(self.grading_folder))

        def run(self, code: str, timeout: float) -> Outcome:
            self.agent.serve(int(code.rpartition("(")[2].rstrip(")")))
            return Outcome("ok")

    with tempfile.TemporaryDirectory(prefix=f"classes-{stem}-") as folder, \
            contextlib.redirect_stdout(io.StringIO()):
        remote = Remote(Kernel(Path(folder)))
        registry.resolve(row.hidden)(remote.lookup(name))
    return recorder.drawn


def missing(stem: str) -> dict[str, list[str]]:
    """exercise name -> the classes its hidden check never drew (only names with some missing)."""
    found = {}
    for name, listed in classes(stem).items():
        drawn = drawn_classes(stem, name)
        absent = [c.name for c in listed if c.name not in drawn]
        if absent:
            found[name] = absent
    return found


def _safe(predicate: Callable, call: Mapping) -> bool:
    try:
        return bool(predicate(call))
    except Exception:  # a call of another shape (refused arguments) is not of the class
        return False


def markdown(stem: str) -> str:
    lines = ["| exercise | input class | what it is |", "| --- | --- | --- |"]
    for name, listed in classes(stem).items():
        lines += [f"| `{name}` | {c.name} | {c.description} |" for c in listed]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """python -m autograde.input_classes [--verify] STEM ...: print the table, or the classes never drawn."""
    verify = "--verify" in argv
    stems = [a for a in argv if a != "--verify"] or registry.stems()
    status = 0
    for stem in stems:
        if verify:
            absent = missing(stem)
            for name, names in absent.items():
                print(f"{stem} {name}: never drawn: {', '.join(names)}")
            status |= bool(absent)
        else:
            sys.stdout.write(f"\n### {stem}\n\n" + markdown(stem))
    return status
