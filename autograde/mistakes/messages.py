"""Which mistake a failed check's message tells, for the class report (autograde/report.py): a mistake of the
catalogues here, a kind of failure with no answer to judge, an exception the learner's code raised, or the message
itself with its sample values (shapes, values, positions) hidden, so that the messages of one mistake read alike."""

from __future__ import annotations

import re
from functools import cache

from autograde import mistakes, registry

# Failures with no answer to judge: (pattern, group); None: the message, sample values as "#", says why.
NOT_JUDGED = ((r"is not implemented yet", "not implemented yet"), (r"^not graded", None),
              (r"is not defined in the notebook", "not defined in the notebook"),
              (r"did not return within|timed out", "timed out"),
              (r"killed the kernel|ran out of memory", "crashed the kernel or ran out of memory"),
              (r"^grading \w+ failed", "the grader failed"), (r"^missing: ", "no notebook in the submission"),
              (r"^invalid notebook", "invalid notebook"), (r"^invalid student folder name", "invalid student id"))
TEACHING = ("named", "error", "other")  # what the answer got wrong: the lecture's material


@cache
def catalogue(stem: str | None = None) -> dict[str, str]:
    """message -> name of every mistake in the assignment's catalogue (autograde/mistakes/<topic>), or in all of
    them: one assignment's spares a batch of 01 the import of 08's PyTorch references."""
    import importlib
    import pkgutil

    names = [module.name for module in pkgutil.walk_packages(mistakes.__path__, "autograde.mistakes.",
                                                              onerror=lambda name: None)]
    if stem is not None:
        prefix = f"autograde.mistakes.{registry.topic(stem)}"
        names = [name for name in names if name == prefix or name.startswith(prefix + ".")]
    found = {}
    for name in names:
        try:
            values = vars(importlib.import_module(name)).values()
        except Exception:  # noqa: BLE001 (a library missing here: that catalogue's messages are grouped by text)
            continue
        for value in values:
            for item in value if isinstance(value, (tuple, list)) else ():
                if isinstance(item, mistakes.Mistake):
                    found.setdefault(item.message, item.name)
    return found


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
OPERATORS = "*/+^<>"  # a number beside one is an operand of a formula, not a sample value
# A pattern written out in prose ("indices 1, 3, 5, ..."), not a list of values cut short ("[3, 4, 5, ...]").
PATTERN = re.compile(r"(?<=[A-Za-z] )(?:\d+, ){2,}\.\.\.")
# A bracketed list, not the arguments of a call ("f(x, 2)") nor an index ("a[0]").
BRACKETED = re.compile(r"(?<!\w)[(\[]([^()\[\]]*)[)\]]")


def _kept_spans(text: str) -> list[tuple[int, int]]:
    """Where the numbers of a symbolic shape ("(batch, 1, seq)": names and integers) or a written-out pattern are."""
    spans = [m.span() for m in PATTERN.finditer(text)]
    for match in BRACKETED.finditer(text):
        items = [item.strip() for item in match[1].split(",")]
        names = [i for i in items if re.fullmatch(r"[A-Za-z_]\w*", i) and i not in ("None", "True", "False")]
        if len(items) > 1 and names and all(i in names or i.isdigit() for i in items):
            spans.append(match.span())
    return spans


def hide_samples(text: str) -> str:
    """`text` with its sample values as "#": the numbers that differ from input to input (shapes, values, positions:
    "(1, 2)", "0.84", "index 3", "d=8"). A number stays when it belongs to a formula (next to * / + ^ < > == !=, a %
    before it, or a - between operands: 10000**(2*(k//2)/d), h*depth-1, (1.0 - mask) * -1e9), to a name (float32,
    d_k2, 2i, 2-D), to a symbolic shape ((batch, 1, seq)) or to a written-out pattern (indices 1, 3, 5, ...)."""
    kept = _kept_spans(text)

    def hide(match: re.Match) -> str:
        start, end = match.span()
        before, after = text[:start], text[end:]
        left, right = before.rstrip(" "), after.lstrip(" ")
        formula = (
            any(a <= start and end <= b for a, b in kept)
            or re.search(r"(?:\w|\w\.)$", before) is not None and not before.endswith("..")  # a name: float32, v1.2
            or re.match(r"\w|-[A-Za-z(]", after) is not None  # 2i, 2-D
            or bool(left) and left[-1] in OPERATORS + "%" or bool(right) and right[0] in OPERATORS
            or left.endswith(("==", "!="))
            or right.startswith(("==", "!=", "- "))  # the left operand of a minus: (1.0 - mask)
            or not match[0].startswith("-") and re.search(r"[\w)\]] ?- $", before) is not None)  # end - 1
        return match[0] if formula else "#"

    return NUMBER.sub(hide, text)


def group(message: str, stem: str | None = None) -> tuple[str, str, str]:
    """(kind, mistake, what it says) of a failed exercise's message (of assignment `stem`), a kind of TEACHING or
    "not judged": see autograde.report.Group."""
    text = " ".join(message.split())
    for pattern, name in NOT_JUDGED:
        if re.search(pattern, text):
            return "not judged", name or hide_samples(text), name or hide_samples(text)
    known = catalogue(stem)
    named = [m for m in known if m in text]
    if named:  # the longest: a message that contains another is the more specific
        return "named", known[max(named, key=len)], max(named, key=len)
    crash = re.search(r"(\w+) raised (\w+):", text) or re.match(r"(\w+): (\w+(?:Error|Exception)):", text)
    if crash:  # what follows the type is the learner's own code talking, different for each
        return "error", f"{crash[1]} raised {crash[2]}", f"{crash[1]} raised {crash[2]}"
    text = re.sub(r"^\[[^\]]*\]\s*", "", text)  # the case label says where, not what
    text = hide_samples(re.split(r" (?:is|are) wrong: ", text, maxsplit=1)[-1])
    return "other", text, text
