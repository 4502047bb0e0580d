"""The house's imports go one way.

- No import circle in autograde, course_lib or bench: imports inside functions count, and so does a string
  "package.module:attribute" that names a helper to import elsewhere (autograde.remote).
- Between assignments: a module of one assignment's topic imports another topic's module only along an edge of
  `ALLOWED`, where a later lesson builds on an earlier one; never from an earlier lesson to a later one. Shared
  machinery (course_lib.layers, checking, finetuning, heads, calls, squad_files, ...) belongs to no topic and may be
  imported by any."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from autograde.course import list_assignments
from autograde.registry import topic

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("course_lib", "autograde.checks", "autograde.reference", "autograde.expected", "autograde.mistakes",
         "autograde.variants")
TOPICS = tuple(topic(stem) for stem in list_assignments())
DOTTED = re.compile(r"(course_lib|autograde)(\.\w+)+:\w+")

# (importer's topic, imported topic): why the later lesson needs the earlier one's module.
ALLOWED = {
    ("multi_head_attention", "scaled_dot_product_attention"): "each head runs scaled dot-product attention",
    ("transformer", "scaled_dot_product_attention"): "the encoder and decoder use its masks and attention",
    ("bert", "transformer"): "BERT's encoder is a stack of 04's encoder layers",
    ("qa_pytorch", "qa"): "08 trains 07's QA model in PyTorch: 07's windows, decoding and saved weights",
}
HOUSE = ("autograde", "course_lib", "bench")  # bench's scripts import each other as top-level modules


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def topic_of(module: str) -> str | None:
    """The assignment topic of a dotted module name under one of ROOTS, or None (shared, or outside ROOTS)."""
    for root in ROOTS:
        if module == root or module.startswith(root + "."):
            rest = module[len(root) + 1:].split(".")
            return rest[0] if rest[0] in TOPICS else None
    return None


def _imported(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted name) of every import in a module, relative ones resolved; a `from x import y` counts as x.y
    too, so that importing a topic's submodule from its package is seen. A string "package.module:attribute" (a
    helper that a hidden check runs in the student's kernel, see autograde.remote) counts as an import too."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and DOTTED.fullmatch(node.value):
            found.append((node.lineno, node.value.replace(":", ".")))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[:len(package) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def cross_topic_imports() -> list[tuple[str, str, str, int, str]]:
    """(importer's topic, imported topic, file, line, imported name) of every import between two topics."""
    edges = []
    for folder in ROOTS:
        for path in sorted((REPO / folder.replace(".", "/")).rglob("*.py")):
            module = _module_name(path)
            source = topic_of(module)
            if source is None:
                continue
            tree = ast.parse(path.read_text(), filename=str(path))
            for line, name in _imported(tree, module, path.name == "__init__.py"):
                target = topic_of(name)
                if target is not None and target != source:
                    edges.append((source, target, str(path.relative_to(REPO)), line, name))
    return edges


def house_sources() -> dict[str, tuple[str, bool]]:
    """{dotted module name: (source, whether it is a package's __init__)} of every module of HOUSE."""
    sources = {}
    for folder in HOUSE:
        for path in sorted((REPO / folder).rglob("*.py")):
            name = _module_name(path)
            sources[name.removeprefix("bench.")] = (path.read_text(), path.name == "__init__.py")
    return sources


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, dict[str, int]]:
    """{module: {module of `sources` it imports: line}}, late imports included. Importing `a.b.c` runs the packages
    `a` and `a.b` first, so an import reaches the packages above its module too, except the importer's own (they
    ran before it); a package named in an import is reached whoever names it."""
    graph: dict[str, dict[str, int]] = {name: {} for name in sources}
    for module, (source, is_package) in sources.items():
        own = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        for line, name in _imported(ast.parse(source), module, is_package):
            parts = name.split(".")
            named = next((".".join(parts[:end]) for end in range(len(parts), 0, -1)
                          if ".".join(parts[:end]) in sources), None)
            if named is None:
                continue
            above = {".".join(named.split(".")[:i]) for i in range(1, named.count(".") + 1)}
            for target in {named} | (above & set(sources)) - own:
                if target != module:
                    graph[module].setdefault(target, line)
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    work.append((target, iter(graph[target])))
                elif target in stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def describe_circle(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    edges = [f"  {module} -> {target} (line {line})" for module in component
             for target, line in sorted(graph[module].items()) if target in component]
    return f"{len(component)} modules import each other:\n" + "\n".join(edges)


def test_the_house_has_no_import_circle():
    graph = import_graph(house_sources())
    found = circles(graph)
    assert not found, ("an import circle (late imports included): move what both sides need below them, or the "
                       "caller above what it calls\n" + "\n".join(describe_circle(c, graph) for c in found))


def test_a_late_import_circle_is_found():
    sources = {"autograde.course": ("def hook():\n    from autograde.grading import record\n", False),
               "autograde.grading": ("from autograde.course import hook\n", False),
               "autograde.judge": ("from autograde import course\n", False),
               "autograde": ("", True)}
    graph = import_graph(sources)
    assert circles(graph) == [["autograde.course", "autograde.grading"]]
    assert "autograde.course -> autograde.grading (line 2)" in describe_circle(circles(graph)[0], graph)


def test_a_package_that_imports_its_own_user_is_a_circle():
    sources = {"kit": ("from kit.cli import main\n", True), "kit.cli": ("from kit import OVERVIEW\n", False),
               "kit.layers": ("from kit import cli\n", False), "kit.leaks": ("import kit.layers\n", False)}
    assert circles(import_graph(sources)) == [["kit", "kit.cli"]]


def late_imports(source: str) -> list[tuple[int, str]]:
    """(line, dotted name) of every import of a house module inside a function, with no comment saying why: on its
    line, or just above it or the block of imports it is in."""
    lines = source.splitlines()
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or (isinstance(node, ast.ImportFrom) and node.level):
                continue
            name = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            if name.split(".")[0] not in HOUSE:
                continue
            above = node.lineno - 2  # a comment over a block of imports speaks for the block
            while above >= 0 and lines[above].strip().startswith(("from ", "import ")):
                above -= 1
            said = "#" in lines[node.lineno - 1] or (above >= 0 and lines[above].strip().startswith("#"))
            if not said:
                found.append((node.lineno, name))
    return sorted(set(found))


def test_a_late_import_in_autograde_says_why():
    """autograde imports its own modules at the top; one imported inside a function says in a comment why it must
    wait (what it would load, or what it would close into a circle)."""
    silent = [f"autograde/{path.relative_to(REPO / 'autograde')}:{line} imports {name}"
              for path in sorted((REPO / "autograde").rglob("*.py"))
              for line, name in late_imports(path.read_text())]
    assert not silent, "move these imports to the top, or say why they wait:\n" + "\n".join(silent)


def test_a_silent_late_import_is_found():
    source = ("import os\n\ndef f():\n    from autograde.judge import x\n    import numpy\n\n"
              "def g():\n    # the grader loads only here\n    from autograde import grade\n"
              "    import autograde.judge\n"
              "    from course_lib.env import pick  # light, but only g needs it\n")
    assert late_imports(source) == [(4, "autograde.judge")]


def lesson(topic_name: str) -> int:
    return TOPICS.index(topic_name)


def test_no_edge_from_an_earlier_lesson_to_a_later_one():
    forward = [f"{file}:{line} imports {name} ({source} -> {target})"
               for source, target, file, line, name in cross_topic_imports() if lesson(source) < lesson(target)]
    forward += [f"ALLOWED lists {source} -> {target}" for source, target in ALLOWED if lesson(source) < lesson(target)]
    assert not forward, ("an earlier lesson depends on a later one: move what they share into a module of its own, "
                         "below both\n" + "\n".join(forward))


def test_topics_are_the_assignments():
    assert {"ner", "qa", "qa_pytorch"} <= set(TOPICS)
    assert all(a in TOPICS and b in TOPICS for a, b in ALLOWED), "ALLOWED names a topic that is not an assignment"


def test_imports_between_assignments_follow_the_allowed_edges():
    forbidden = [f"{file}:{line} imports {name} ({source} -> {target})"
                 for source, target, file, line, name in cross_topic_imports() if (source, target) not in ALLOWED]
    assert not forbidden, ("an assignment imports another's module; move what they share into a module of its own, "
                           "or add the edge to ALLOWED with its reason:\n" + "\n".join(forbidden))


def test_every_allowed_edge_is_used():
    used = {(source, target) for source, target, *_ in cross_topic_imports()}
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"ALLOWED lists edges that no import uses; remove them: {stale}"


def test_a_relative_import_is_resolved():
    tree = ast.parse("from .spans import x\nfrom ..ner import model\nrun('course_lib.bert.inputs:f')\n")
    assert sorted(_imported(tree, "course_lib.qa.windows", False)) == [
        (1, "course_lib.qa.spans.x"), (2, "course_lib.ner.model"), (3, "course_lib.bert.inputs.f")]
