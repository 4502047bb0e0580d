"""Other implementations of each graded function, wrong and right, that the grader must tell apart.

`autograde/variants/<topic>.py` lists them for one assignment as `VARIANTS`. A wrong one must lose exactly its
exercise's points, a right one (another way to write it: NumPy vs TensorFlow, einsum vs matmul, a loop, ...)
must keep them. tests/test_variants.py grades every one; `python -m autograde.variants STEM` prints a table.
"""

from __future__ import annotations

import importlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograde import registry
from autograde.course import REPO_ROOT, SOURCE_DIRECTORY
from autograde.normalise import SKIP_KEY, nbgrader_meta


@dataclass(frozen=True)
class Variant:
    name: str  # the exercise (function or class) it replaces
    what: str  # the mistake, or the other way of writing it
    correct: bool
    old: str = ""  # replace `old` (found exactly once in the solution cell) with `new` ...
    new: str = ""
    source: str = ""  # ... or the whole cell
    message: str = ""  # a wrong one's mistake, as both checks name it (a part of their failure messages)
    visible_gap: str = ""  # why the visible check's verdict on it is the wrong one (only the hidden check is right)
    visible_message: str = ""  # the visible check's words for the mistake, where they are not `message`

    def cell(self, solution: str) -> str:
        """The solution cell's code with this variant in it."""
        if self.source:
            return self.source
        if solution.count(self.old) != 1:
            raise ValueError(f"{self.name}: {self.what!r} expects its text exactly once in the solution cell")
        return solution.replace(self.old, self.new)


def wrong(name: str, what: str, old: str = "", new: str = "", source: str = "", *, message: str = "",
          visible_gap: str = "", visible_message: str = "") -> Variant:
    return Variant(name, what, False, old, new, source, message, visible_gap, visible_message)


def named(catalogue, name: str) -> str:
    """The message of the mistake `name` in an autograde.mistakes catalogue: what both checks say of it."""
    return next(mistake.message for mistake in catalogue if mistake.name == name)


def right(name: str, what: str, old: str = "", new: str = "", source: str = "", *, visible_gap: str = "") -> Variant:
    return Variant(name, what, True, old, new, source, visible_gap=visible_gap)


def variants(stem: str) -> list[Variant]:
    """The assignment's variants (none if it has no module yet)."""
    try:
        module = importlib.import_module(f"autograde.variants.{registry.topic(stem)}")
    except ModuleNotFoundError:
        return []
    return list(module.VARIANTS)


def solution_cells(stem: str) -> dict[str, str]:
    """grade id -> the solution notebook's code for it (markers removed)."""
    notebook = nbformat.read(REPO_ROOT / SOURCE_DIRECTORY / stem / f"{stem}.ipynb", as_version=4)
    return {nbgrader_meta(c)["grade_id"]: "\n".join(line for line in c.source.splitlines()
                                                    if "### BEGIN SOLUTION" not in line
                                                    and "### END SOLUTION" not in line)
            for c in notebook.cells if nbgrader_meta(c).get("solution")}


def judge_variants(stem: str, chosen: list[Variant] | None = None, *, seed: int = 0, log=None):
    """[(variant, CellResult)]: each variant defined in one sandboxed kernel that ran the solution notebook,
    judged by its exercise's hidden check, then the solution's code put back."""
    # Not at the top: judging loads the grader (the sandbox, the checks and what they import), which listing the
    # variants, as the tests and the registry do, does not need.
    from autograde import checks
    from autograde.judge import _judge, _restart
    from autograde.remote import Remote
    from autograde.sandbox import SandboxKernel, declared_env

    rows = {row.name: row for row in registry.exercises(stem)}
    chosen = variants(stem) if chosen is None else chosen
    solutions = solution_cells(stem)
    notebook = nbformat.read(REPO_ROOT / SOURCE_DIRECTORY / stem / f"{stem}.ipynb", as_version=4)
    cells = [c.source for c in notebook.cells if c.cell_type == "code" and not nbgrader_meta(c).get("grade")
             and not c.metadata.get(SKIP_KEY, {}).get("skip") and "demo" not in c.metadata.get("tags", [])]
    outcomes = []
    with tempfile.TemporaryDirectory(prefix=f"variants-{stem}-") as tmp:
        kernel = SandboxKernel(Path(tmp) / "work", env=declared_env(notebook))
        kernel.start()
        try:
            for source in cells:
                kernel.run(source, 300)
            remote = Remote(kernel)
            remote.install()
            checks.use_seed(seed)
            for variant in chosen:
                row = rows[variant.name]
                defined = kernel.run(variant.cell(solutions[row.name]), 120)
                result, healthy = _judge(row, remote)
                if defined.status == "error" and defined.ename not in ("NotImplementedError",):
                    result.message = f"(defining it raised {defined.ename}: {defined.evalue}) {result.message}"
                outcomes.append((variant, result))
                if log:
                    log(f"{'right' if variant.correct else 'wrong'} {variant.name}: {variant.what}: "
                        f"{result.score:g}/{result.max_score:g} {result.message[:160]}")
                if not healthy:
                    _restart(kernel, cells, _Limits())
                    remote.install()
                kernel.run(solutions[row.name], 120)
        finally:
            checks.use_seed(None)
            kernel.stop()
    return outcomes


class _Limits:
    cell_timeout = 300


def main(argv: list[str]) -> int:
    """python -m autograde.variants [STEM ...] [--seed N]: grade each variant and print a table."""
    seed = 0
    if "--seed" in argv:
        at = argv.index("--seed")
        seed, argv = int(argv[at + 1]), argv[:at] + argv[at + 2:]
    for stem in argv or registry.stems():
        for variant, result in judge_variants(stem, seed=seed):
            verdict = "ok" if (result.score == result.max_score) == variant.correct else "WRONG VERDICT"
            print(f"{stem} | {variant.name} | {'right' if variant.correct else 'wrong'} | {variant.what} | "
                  f"{result.score:g}/{result.max_score:g} | {verdict} | {result.message[:120]}")
    return 0
