"""course_lib/layers.py for the kit: its marked answers (`answer_blocks`, which the README and the
command's summary name too), and the copy in which those not handed out are stubs (`student_layers`).

Each answer in course_lib/layers.py is marked with its assignment (`@answer_to`); only the assignments the
kit hands out keep their bodies, and every other marked body becomes `raise not_handed_out(...)`, so the
module still imports and says what to do when used.
"""

from __future__ import annotations

import ast
import json
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from autograde.student_kit.errors import KitError

LAYERS = Path("course_lib/layers.py")


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
