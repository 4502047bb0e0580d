"""What the exercise tests share: a function defined by a notebook cell's code, a solution notebook's cell, and the
failure messages of an exercise's visible and hidden checks on a function."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

from autograde.variants import solution_cells
from course_lib.checking import CheckFailed


def cell_function(source: str, name: str, *, imports: str = "", namespace: dict | None = None):
    """The function `name` that the cell `source` defines, run after `imports` in `namespace` (a fresh dict)."""
    namespace = {} if namespace is None else dict(namespace)
    exec(imports, namespace)
    exec(compile(source, f"<cell {name}>", "exec"), namespace)
    return namespace[name]


@functools.cache
def _solution_cells(stem: str) -> dict[str, str]:
    return solution_cells(stem)


def solution_cell(stem: str, name: str) -> str:
    """The solution notebook's code of `name` (markers removed); AssertionError if it is not there."""
    source = _solution_cells(stem).get(name, "")
    assert f"def {name}(" in source or f"class {name}(" in source, (
        f"solutions/{stem}/{stem}.ipynb has no cell defining {name}: the grading tests need the instructor's answer")
    return source


def beside_companion(stem: str, companion: str, names: dict, name: str, source: str | None = None, *,
                     companion_source: str | None = None):
    """The notebook's function `name` (its solution cell, or `source`), defined among the notebook's `names` next to
    the solution's `companion` (or `companion_source`), the exercise it calls."""
    namespace = dict(names)
    exec(companion_source or solution_cell(stem, companion), namespace)
    if name != companion or source:
        exec(source or solution_cell(stem, name), namespace)
    return namespace[name]


def notebook_function(row, source: str):
    """What the cell `source` defines for the registry row `row`, as in the notebook: after the set-up cell's imports
    (`row.imports`) and the solution cells of the exercises before it (the ones this process can define)."""
    from autograde import registry

    namespace: dict = {}
    exec(row.imports, namespace)
    for earlier in registry.exercises(row.stem)[:registry.exercises(row.stem).index(row)]:
        if not earlier.kernel_setup:
            exec(compile(solution_cell(row.stem, earlier.name), f"<cell {earlier.name}>", "exec"), namespace)
    exec(compile(source, f"<cell {row.name}>", "exec"), namespace)
    return namespace[row.name]


def failure_messages(checks: Iterable[Callable], fn) -> list[str]:
    """Each check's failure message on `fn`, "" for a pass (the visible check's first, then the hidden one's)."""
    messages = []
    for check in checks:
        try:
            check(fn)
            messages.append("")
        except CheckFailed as failure:
            messages.append(str(failure))
    return messages
