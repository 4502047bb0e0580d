"""Signs of an attempt to cheat, for the status column: each note starts with "flagged:" so that an
instructor can search for it. A flag never changes a score (the sandbox and the grader's own judging do
that); it points a human at a submission worth reading."""

from __future__ import annotations

import re

from autograde.normalise import nbgrader_meta

PATTERNS = [
    (r"\bautograde\b", "flagged: refers to the grader's package (autograde)"),
    (r"\b(subprocess|os\.fork|os\.system|os\.setsid|Popen|os\.exec\w*|pty\.spawn)\b",
     "flagged: starts processes"),
    (r"^\s*(np|numpy|tf|tensorflow|keras|builtins|math)(\.\w+)+\s*=[^=]", "flagged: rebinds a library function"),
    (r"^\s*(import builtins|__builtins__)", "flagged: touches builtins"),
    (r"^\s*(check_\w+|course_lib(\.\w+)+)\s*=[^=]", "flagged: rebinds the course's checks"),
    (r"\b(gradebook|nbgrader)\b", "flagged: refers to the gradebook or nbgrader"),
    (r"\b(u?mount|remount|unshare|nsenter|chroot|pivot_root|set(re)?s?[ug]id|capset|prctl|sudo)\b|\bCap(Eff|Prm|Bnd)\b",
     "flagged: tries to change the sandbox (mounts, user ids or capabilities)"),
    (r"\b(submitted|autograded|feedback|solutions|\.nbgrader|\.git)/", "flagged: looks for other students' work or "
                                                                      "the grading state"),
]


def flags_in_cells(notebook, withheld: set[str] = frozenset()) -> list[str]:
    """Flags raised by the code of the cells the student can edit (the source's test cells excluded); `withheld`
    names the course's own answers that the graded assignment asks for (autograde/kernel_view.py)."""
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code" and not nbgrader_meta(c).get("grade"))
    found = []
    for pattern, flag in PATTERNS:
        if re.search(pattern, code, flags=re.MULTILINE) and flag not in found:
            found.append(flag)
    names = "|".join(sorted(map(re.escape, withheld)))
    # In any form: from-import, a module alias or import_module, then the answer's name as an attribute.
    uses_layers = re.search(r"course_lib\.layers|from\s+course_lib\s+import\s+[^#\n]*\blayers\b", code)
    imported = rf"^\s*from\s+course_lib(\.layers)?\s+import\s+(\([^)]*|[^#\n]*)\b({names})\b"
    takes = names and re.search(rf"{imported}|\.({names})\b", code, flags=re.MULTILINE)
    if uses_layers and takes:
        found.append("flagged: imports the course's own answer to this assignment (course_lib.layers)")
    return found


def flags_in_errors(errors: list[tuple[str, str]]) -> list[str]:
    """Flags raised by what went wrong while the notebook ran in the sandbox."""
    found = []
    for ename, evalue in errors:
        if ename == "ModuleNotFoundError" and "autograde" in evalue:
            found.append("flagged: tried to import the grader's package (autograde)")
        if "Read-only file system" in evalue:
            found.append("flagged: tried to write outside its working folder")
    return sorted(set(found))
