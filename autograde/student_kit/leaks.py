"""Searching a kit for the answers and the hidden tests (`find_leaks`); `build` deletes a kit
that holds one and fails.

The search compares code, line by line, with every notebook cell and every text file of the kit. Lines are
normalised: comments and all whitespace removed, blank lines dropped. A single short line proves nothing
(`return x`, `else:`, `x = self.dropout(x, training=training)` are in stubs and checks too), so the unit of
evidence is a run of consecutive lines long enough to be telling; there is one from every line on, so that
every line is covered, a short one together with its neighbours.

- Solution cells (the code between `### BEGIN SOLUTION` and `### END SOLUTION`): runs of at least
  `SOLUTION_RUN` characters, one line or more; an answer shorter than that is one run. These are the
  answers themselves, so the bar is low: any telling line of one is a leak.
- Hidden-test sources (`autograde/checks`, `reference`, `mistakes`, `variants`), less docstrings, imports and
  `__init__` methods (a graded layer's `__init__` is given in the notebook's template): runs of at least
  `HIDDEN_RUN` lines and characters. Visible checks legitimately share short idioms with them (the decoder's
  attention keys, reading ids from a tensor), which three lines still match and four do not.
- A function or class that the hidden-test sources define, and neither `notebooks/` nor `course_lib/` does,
  must not be defined in the kit (`def grade_positional_encoding(`).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from autograde.course import RELEASE_DIRECTORY, REPO_ROOT, SOURCE_DIRECTORY
from autograde.student_kit.layers import LAYERS, given_block_lines

# Where the hidden tests' code lives (everything a student must not see besides the solution notebooks).
HIDDEN_SOURCES = ("autograde/checks", "autograde/reference", "autograde/mistakes", "autograde/variants")
SOLUTION_RUN = 40  # characters
HIDDEN_RUN = (4, 100)  # lines, characters
SOLUTION = re.compile(r"### BEGIN SOLUTION[^\n]*\n(.*?)^[ \t]*### END SOLUTION", re.DOTALL | re.MULTILINE)


def code_line(line: str) -> str:
    """A line without its comment (a `#` outside quotes) and without any whitespace."""
    quote, escaped = "", False
    for i, char in enumerate(line):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#":
            line = line[:i]
            break
    return "".join(line.split())


def code_lines(text: str) -> list[str]:
    """The normalised, non-empty lines of `text`."""
    return [line for line in map(code_line, text.splitlines()) if line]


def evidence(lines: list[str], characters: int, min_lines: int = 1, *, whole: bool = False) -> set[tuple[str, ...]]:
    """From each line on, the shortest run of consecutive lines holding `characters` characters and at least
    `min_lines` lines; with `whole`, all the lines as one run when even they are shorter."""
    runs = set()
    for start in range(len(lines)):
        total, end = 0, start
        while end < len(lines) and (total < characters or end - start < min_lines):
            total += len(lines[end])
            end += 1
        if total >= characters and end - start >= min_lines:
            runs.add(tuple(lines[start:end]))
    if whole and lines and not runs:
        runs.add(tuple(lines))
    return runs


@dataclass(frozen=True)
class Evidence:
    run: tuple[str, ...]
    origin: str  # where the answer comes from, for the message


def solution_evidence(repo: Path = REPO_ROOT) -> list[Evidence]:
    """Runs of every solution cell's code in solutions/*/*.ipynb."""
    found = []
    for path in sorted((repo / SOURCE_DIRECTORY).glob("*/*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell.get("source", []))
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "a solution cell")
            for body in SOLUTION.findall(source):
                origin = f"{path.relative_to(repo)} ({grade_id})"
                found += [Evidence(run, origin) for run in evidence(code_lines(body), SOLUTION_RUN, whole=True)]
    return found


def _python_files(folder: Path) -> Iterator[Path]:
    yield from sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _telling_code(source: str) -> str:
    """`source` without what it shares with the students' material by design: docstrings, imports, and
    `__init__` methods (a graded Keras layer's is the notebook template's)."""
    tree = ast.parse(source)
    dropped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            dropped.update(range(node.lineno, node.end_lineno + 1))
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            dropped.update(range(first, node.end_lineno + 1))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                dropped.update(range(first.lineno, first.end_lineno + 1))
    return "\n".join(line for n, line in enumerate(source.splitlines(), start=1) if n not in dropped)


def hidden_test_evidence(repo: Path = REPO_ROOT) -> list[Evidence]:
    """Runs of the code of the hidden checks, references, named mistakes and variants."""
    found = []
    for folder in HIDDEN_SOURCES:
        for path in _python_files(repo / folder):
            lines = code_lines(_telling_code(path.read_text(encoding="utf-8")))
            lines_needed, characters = HIDDEN_RUN
            found += [Evidence(run, str(path.relative_to(repo))) for run in evidence(lines, characters, lines_needed)]
    return found


def _definitions(source: str) -> set[str]:
    return set(re.findall(r"^[ \t]*(?:async\s+)?(?:def|class)\s+(\w+)", source, re.MULTILINE))


def hidden_definitions(repo: Path = REPO_ROOT) -> dict[str, str]:
    """{name: file} of the functions and classes that only the hidden-test sources define."""
    shipped = set()
    for folder in (RELEASE_DIRECTORY, "course_lib"):
        for path in sorted((repo / folder).rglob("*")):
            if path.suffix in (".py", ".ipynb") and "__pycache__" not in path.parts:
                shipped |= _definitions("\n".join(_texts(path)))
    found = {}
    for folder in HIDDEN_SOURCES:
        for path in _python_files(repo / folder):
            for name in _definitions(path.read_text(encoding="utf-8")) - shipped:
                found.setdefault(name, str(path.relative_to(repo)))
    return found


def _texts(path: Path) -> list[str]:
    """The searchable texts of a kit file: a notebook's cells one by one, any other file whole."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            cells = json.loads(text).get("cells", [])
        except (json.JSONDecodeError, AttributeError):
            return [text]
        return ["".join(cell.get("source", [])) for cell in cells]
    return [text]


def _is_text(path: Path) -> bool:
    with open(path, "rb") as file:
        return b"\0" not in file.read(8192)


def find_leaks(kit: Path, given: Iterable[str] = (), *, repo: Path = REPO_ROOT) -> list[str]:
    """What of the solutions and hidden tests `kit` holds, one message each; empty for a clean kit.

    The bodies of the layers.py answers that the kit hands out (`given`) are not searched: they are the
    answers the instructor chose to give."""
    kit = Path(kit)
    given = set(given)
    units: list[tuple[str, list[str]]] = []
    definitions: list[tuple[str, str]] = []
    for path in sorted(p for p in kit.rglob("*") if p.is_file() and _is_text(p)):
        relative = path.relative_to(kit)
        texts = _texts(path)
        if relative == LAYERS:
            source = texts[0]
            handed = given_block_lines(source, given)
            texts = ["\n".join(line for n, line in enumerate(source.splitlines(), start=1) if n not in handed)]
        for text in texts:
            units.append((str(relative), code_lines(text)))
            definitions += [(name, str(relative)) for name in _definitions(text)]
    windows: dict[int, dict[tuple[str, ...], str]] = {}
    leaks = []
    for item in solution_evidence(repo) + hidden_test_evidence(repo):
        size = len(item.run)
        if size not in windows:
            windows[size] = {}
            for where, lines in units:
                for start in range(len(lines) - size + 1):
                    windows[size].setdefault(tuple(lines[start:start + size]), where)
        where = windows[size].get(item.run)
        if where is not None:
            leaks.append(f"{where} holds code of {item.origin}: {' / '.join(item.run)[:120]}")
    hidden = hidden_definitions(repo)
    leaks += [f"{where} defines {name}, which only {hidden[name]} defines in the course"
              for name, where in definitions if name in hidden]
    return sorted(set(leaks))
