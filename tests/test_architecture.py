"""The import graph between assignments: a module of one assignment's topic imports another topic's module only
along an edge of `ALLOWED`, where a later lesson builds on an earlier one. Shared machinery (course_lib.layers,
checking, finetuning, heads, calls, ...) belongs to no topic and may be imported by any."""

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
    # The one edge from an earlier lesson to a later one: the course finds and checks SQuAD's files in one place.
    ("ner", "qa"): "06's real-text corpus is stand-off over SQuAD v1.1's train file, which squad_v1 finds and checks",
}


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
