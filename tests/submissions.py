"""Submissions as students make them: the release notebook with answers typed in, then broken on purpose.

`BUILDERS` maps each row name of INSTRUCTORS.md's table of bad submissions to a function that writes that
submission into a folder. tests/test_grading.py grades them all in one batch and compares every outcome with
the table, so the guide and the grader cannot drift apart.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat

from autograde.normalise import is_demo, nbgrader_meta
from autograde.variants import solution_cells
from course_lib import notebooks

from conftest import REPO, release_path

STEM = "01_positional_encoding"
OTHER = "02_scaled_dot_product_attention"
REFERENCE = REPO / "autograde" / "reference" / "positional_encoding.py"
ROOT_ESCAPE = Path("/course-grading-root-escape.txt")  # on the machine's real disk, were the sandbox's / writable


def answered(stem: str = STEM) -> nbformat.NotebookNode:
    """The release notebook with every solution cell answered correctly."""
    notebook = nbformat.read(release_path(stem), as_version=4)
    answers = solution_cells(stem)
    for cell in notebook.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if nbgrader_meta(cell).get("solution") and grade_id in answers:
            cell.source = answers[grade_id]
    return notebook


def with_cell(code: str, *, after: str = "get_angles") -> nbformat.NotebookNode:
    """A correct notebook with a cell of the student's own right after the solution cell `after`."""
    notebook = answered()
    at = next(i for i, c in enumerate(notebook.cells) if nbgrader_meta(c).get("grade_id") == after)
    notebook.cells.insert(at + 1, nbformat.v4.new_code_cell(code))
    return notebook


def with_answer(grade_id: str, code: str) -> nbformat.NotebookNode:
    notebook = answered()
    next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == grade_id).source = code
    return notebook


def test_cell(notebook, grade_id: str = "test_get_angles"):
    return next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == grade_id)


def _deleted_test_cell():
    notebook = answered()
    notebook.cells.remove(test_cell(notebook))
    return notebook


def _duplicated(grade_id: str, change=None):
    notebook = answered()
    cell = next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == grade_id)
    twin = copy.deepcopy(cell)
    if change:
        change(twin)
    notebook.cells.insert(notebook.cells.index(cell) + 1, twin)
    return notebook


def _edited_test_cell():
    notebook = answered()
    test_cell(notebook).source = "print('all good')"
    return notebook


def _meta(**changes):
    notebook = answered()
    test_cell(notebook).metadata["nbgrader"].update(changes)
    return notebook


def _kernel():
    notebook = answered()
    notebook.metadata["kernelspec"] = {"name": "ir", "display_name": "R", "language": "R"}
    return notebook


def _split_solution():
    """JupyterLab's split cell on get_angles's answer: a helper above, the function below, both with its grade id."""
    notebook = answered()
    cell = next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == "get_angles")
    helper = copy.deepcopy(cell)
    helper.source = "def _rate(k, d):\n    return np.power(10000, (2 * (k // 2)) / np.float64(d))"
    cell.source = "def get_angles(pos, k, d):\n    return pos / _rate(k, d)"
    cell["id"] = "split-lower"
    notebook.cells.insert(notebook.cells.index(cell), helper)
    return notebook


def _markdown_test_cell():
    """The first test cell's type changed to markdown (JupyterLab keeps its metadata and id)."""
    notebook = answered()
    cell = test_cell(notebook)
    notebook.cells[notebook.cells.index(cell)] = nbformat.v4.new_markdown_cell(
        cell.source, metadata=copy.deepcopy(cell.metadata), id=cell.id)
    return notebook


def _pasted_solution():
    """The student pasted get_angles's cell below itself and left the pasted copy as the template."""
    notebook = answered()
    cell = next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == "get_angles")
    stub = next(c for c in nbformat.read(release_path(STEM), as_version=4).cells
                if nbgrader_meta(c).get("grade_id") == "get_angles")
    notebook.cells.insert(notebook.cells.index(cell), copy.deepcopy(stub))  # the template above the answer
    return notebook


ALWAYS_EQUAL = '''
class AlwaysEqual:
    shape = (1, 1)
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __array__(self, *args, **kwargs): raise TypeError("no")

def get_angles(pos, k, d):
    return AlwaysEqual()
'''
PATCH_NUMPY = '''
np.isclose = lambda *args, **kwargs: np.ones(np.broadcast(*args[:2]).shape, bool)
np.allclose = lambda *args, **kwargs: True

def get_angles(pos, k, d):
    return np.zeros((pos.shape[0], k.shape[1]))
'''
PATCH_TF_AND_BUILTINS = '''
import builtins
builtins.isinstance = lambda *args: True
tf.debugging.assert_near = lambda *args, **kwargs: None

def get_angles(pos, k, d):
    return np.zeros((pos.shape[0], k.shape[1]))
'''
REBIND_CHECKS = '''
import course_lib.positional_encoding
import course_lib.checking
check_get_angles = lambda f: print("✓ get_angles")
course_lib.positional_encoding.check_get_angles = check_get_angles
course_lib.checking.expect_close = lambda *args, **kwargs: None

def get_angles(pos, k, d):
    return np.zeros((pos.shape[0], k.shape[1]))
'''
HELPER_SCALE = '''
import my_helpers


def get_angles(pos, k, d):
    return pos / np.power(my_helpers.SCALE, (2 * (k // 2)) / np.float64(d))
'''
# Files beside the notebook named like what the course, its libraries, Python or the grader's agent import; each
# stops whoever imports it. The grader's own package is hidden from the kernel, so `autograde` is the student's.
SHADOWS = ("autograde.py", "autograde/__init__.py", "course_lib.py", "numpy.py", "keras.py", "tensorflow.py",
           "sitecustomize.py", "usercustomize.py", "wire.py", "kernel_agent.py", "ipykernel.py", "json.py", "os.py",
           "io.py", "types.py", "warnings.py", "contextlib.py", "zipfile.py", "importlib.py",
           # configuration a kernel would read under HOME, the submission's folder: the sandbox points elsewhere
           ".ipython/profile_default/startup/00-stop.py", ".keras/keras.json")
IMPORT_GRADER = '''
from autograde.reference.positional_encoding import get_angles
'''
DETACHED = '''
import subprocess, sys
# Outlives the kernel, then tries to give itself full marks.
CHEAT = ("import time, glob\\ntime.sleep(20)\\nfor p in glob.glob('/tmp/**/grades.csv', recursive=True):\\n"
         "    open(p, 'a').write('x,01_positional_encoding,5,5,graded')")
subprocess.Popen([sys.executable, "-c", CHEAT], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def get_angles(pos, k, d):
    raise NotImplementedError()
'''
WRITE_OUTSIDE = '''
import pathlib
for target in ["/tmp/course-grading-escape.txt", str(pathlib.Path(np.__file__).parent / "escape.txt")]:
    open(target, "w").write("escaped")
'''
# Point 1 of the sandbox's allow list: the course's own answer to the graded assignment (the stub is all there is).
COURSE_ANSWER = """
from course_lib.layers import positional_encoding
"""
# As root (make test, CI), the kernel tries to take the cover off, remount the disk and read the grader's reference.
ATTACK_SANDBOX = f"""
import subprocess
for argv in (["umount", "{REPO / 'autograde'}"], ["umount", "{REPO / 'course_lib'}"],
             ["mount", "-o", "remount,rw", "/"], ["unshare", "-Urm", "true"]):
    subprocess.run(argv, capture_output=True)
open("{ROOT_ESCAPE}", "w").write("escaped")
exec(open("{REPO / 'autograde' / 'reference' / 'positional_encoding.py'}").read())
"""
# Another student's answer, from wherever graded or submitted notebooks might lie (the batch's folders are in /var/tmp).
OTHER_STUDENTS = f"""
import glob, json
places = ["/var/tmp/**/*.ipynb", "{REPO}/autograded/**/*.ipynb", "{REPO}/submitted/**/*.ipynb"]
for path in [p for place in places for p in glob.glob(place, recursive=True)]:
    for cell in json.load(open(path))["cells"]:
        source = "".join(cell["source"])
        if source.startswith("def positional_encoding") and "NotImplementedError" not in source:
            exec(source)
"""
SETUP_TYPO = "import pandsa as pd  # a typo in the imports cell\n"


def _setup_typo():
    """The student added an import with a typo to the notebook's imports cell: the whole cell fails."""
    notebook = answered()
    imports = next(c for c in notebook.cells if c.cell_type == "code" and "import numpy as np" in c.source)
    imports.source = SETUP_TYPO + imports.source
    return notebook


BUILDERS = {
    "correct": answered,
    "endless cell": lambda: with_cell("import time\ntime.sleep(100_000)"),
    "endless cell, interrupt ignored": lambda: with_cell(
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.1)"),
    "endless get_angles": lambda: with_answer("get_angles",
                                              "def get_angles(pos, k, d):\n    while True:\n        pass"),
    "os._exit(1)": lambda: with_cell("import os\nos._exit(1)"),
    # One array far past the kernel's cap, as a student's n-by-n matrix of a large n is. A loop of smaller pieces
    # proves the same cap but races the cell's time limit: touching gigabytes of fresh pages can take longer than it.
    "memory bomb": lambda: with_cell("hog = np.ones((2**16, 2**16))  # 32 GiB"),
    "200,000 lines of output": lambda: with_cell("for i in range(200_000):\n    print('line', i)"),
    "stderr output": lambda: with_cell("import sys, warnings\nprint('debug', file=sys.stderr)\n"
                                       "warnings.warn('careful')"),
    "test cell deleted": _deleted_test_cell,
    "test cell duplicated": lambda: _duplicated("test_get_angles"),
    "test cell edited": _edited_test_cell,
    "test cell grade id renamed": lambda: _meta(grade_id="my_test"),
    "test cell unlocked": lambda: _meta(locked=False),
    "points changed": lambda: _meta(points=100),
    "solution cell pasted twice": _pasted_solution,
    "solution cell split": _split_solution,
    "test cell turned into markdown": _markdown_test_cell,
    "another kernel": _kernel,
    "always-equal object": lambda: with_answer("get_angles", ALWAYS_EQUAL),
    "numpy monkeypatched": lambda: with_answer("get_angles", PATCH_NUMPY),
    "TensorFlow and builtins monkeypatched": lambda: with_answer("get_angles", PATCH_TF_AND_BUILTINS),
    "checks rebound": lambda: with_answer("get_angles", REBIND_CHECKS),
    "grader imported": lambda: with_answer("get_angles", IMPORT_GRADER),
    "detached process": lambda: with_answer("get_angles", DETACHED),
    "writes outside its folder": lambda: with_cell(WRITE_OUTSIDE),
    "course's answer imported": lambda: with_answer("positional_encoding", COURSE_ANSWER),
    "sandbox attacked": lambda: with_answer("positional_encoding", ATTACK_SANDBOX),
    "other students' work read": lambda: with_answer("positional_encoding", OTHER_STUDENTS),
    "set-up cell fails": _setup_typo,
}


def write(notebook, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def make_zip(path: Path, members: dict[str, bytes], *, symlinks: tuple[str, ...] = ()) -> Path:
    """An archive of `members`, those named in `symlinks` marked as symbolic links."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if name in symlinks:
                info.external_attr = 0o120777 << 16
            archive.writestr(info, data)
    return path


def version_3(notebook) -> str:
    return nbformat.writes(nbformat.convert(copy.deepcopy(notebook), 3))


def without_metadata(notebook):
    """The notebook as retyped into a new one: no nbgrader metadata, so only its name can tell what it is."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        cell.metadata.pop("nbgrader", None)
    return notebook


def big(notebook, size: int = notebooks.MAX_NOTEBOOK_BYTES + 2**20):
    """The notebook with an output past `size` bytes, as a cell printing in a loop leaves it."""
    notebook = copy.deepcopy(notebook)
    notebook.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * size)]
    return notebook


def _linked_reference(folder: Path) -> None:
    write(with_answer("get_angles", "from answer import get_angles"), folder / f"{STEM}.ipynb")
    (folder / "answer.py").symlink_to(REFERENCE)


def _pipe_and_links(folder: Path) -> None:
    write(answered(), folder / f"{STEM}.ipynb")
    os.mkfifo(folder / "pipe")
    (folder / ".venv" / "bin").mkdir(parents=True)
    (folder / ".venv" / "bin" / "python").symlink_to("/nonexistent/bin/python3")
    (folder / "solutions").symlink_to(REPO / "solutions")


def _archive(folder: Path, members: dict[str, bytes]) -> None:
    folder.parent.mkdir(parents=True, exist_ok=True)
    make_zip(folder.parent / f"{folder.name}.zip", {f"{folder.name}/{name}": data for name, data in members.items()})


def _notebook_bytes(notebook) -> bytes:
    return nbformat.writes(notebook).encode()

# Rows that write files of their own (a student folder, or the archive `<folder.name>.zip` beside it).
WRITERS = {
    "symbolic link to the grader's reference": _linked_reference,
    "pipe and dangling links": _pipe_and_links,
    "nbformat 3": lambda folder: (folder.mkdir(parents=True), (folder / f"{STEM}.ipynb").write_text(
        version_3(answered()))),
    "archive of another assignment only": lambda folder: _archive(
        folder, {f"{OTHER}.ipynb": release_path(OTHER).read_bytes()}),
    "notebook renamed by the browser": lambda folder: write(answered(), folder / f"{STEM} (1).ipynb"),
    "misspelt notebook in an archive": lambda folder: _archive(
        folder, {"01_positional_encodng.ipynb": _notebook_bytes(without_metadata(answered()))}),
    "archive with a stray file": lambda folder: _archive(
        folder, {f"{STEM}.ipynb": _notebook_bytes(answered()), "run_me.sh": b"rm -rf ~"}),
    "notebook over 50 MiB in an archive": lambda folder: _archive(
        folder, {f"{STEM}.ipynb": _notebook_bytes(big(answered()))}),
}


RAW = {
    "empty notebook {}": b"{}",
    "not JSON": b'{"cells": [',
}


def write_submission(name: str, folder: Path) -> None:
    """Write the submission named `name` (a row of the guide's table) into `folder`."""
    if name in WRITERS:
        WRITERS[name](folder)
        return
    folder.mkdir(parents=True)
    target = folder / f"{STEM}.ipynb"
    if name in RAW:
        target.write_bytes(RAW[name])
    elif name == "extra files":
        nbformat.write(answered(), target)
        (folder / "helpers.py").write_text("SCALE = 10000\n")
        (folder / "notes.txt").write_text("my notes\n")
    elif name == "files named like modules":
        nbformat.write(with_answer("get_angles", HELPER_SCALE), target)
        (folder / "my_helpers.py").write_text("SCALE = 10000\n")
        for shadow in SHADOWS:
            (folder / shadow).parent.mkdir(parents=True, exist_ok=True)
            (folder / shadow).write_text("raise SystemExit('shadowed')\n")
    elif name == "files named like optional modules":
        nbformat.write(answered(), target)
        for module in optional_modules_tried():
            (folder / f"{module}.py").write_text("STUDENT = True  # a harmless file of the student's\n")
    elif name == "notebook missing":  # another assignment's notebook under a name of its own: nothing to grade
        nbformat.write(nbformat.read(release_path(OTHER), as_version=4), folder / "homework.ipynb")
    else:
        nbformat.write(BUILDERS[name](), target)


def names() -> list[str]:
    return [*BUILDERS, *WRITERS, *RAW, "extra files", "files named like modules", "files named like optional modules",
            "notebook missing"]


def optional_modules_tried(stem: str = STEM) -> list[str]:
    """The top-level modules that the release's set-up cells try to import and do not find (pandas tries pytz, Keras
    tries jax, ...): seen by a finder placed after every other in a fresh interpreter."""
    release = nbformat.read(release_path(stem), as_version=4)
    cells = [c.source for c in release.cells if c.cell_type == "code" and not is_demo(c)
             and not nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution")]
    code = ("import sys, json\ntried = set()\nclass Recorder:\n    @staticmethod\n"
            "    def find_spec(name, path=None, target=None):\n        tried.add(name) if path is None else None\n"
            "sys.meta_path.append(Recorder)\n" + "\n".join(cells) + "\nprint('\\nTRIED', json.dumps(sorted(tried)))\n")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "COURSE_FAST": "1", "MPLBACKEND": "Agg"})
    lines = [line for line in ran.stdout.splitlines() if line.startswith("TRIED ")]
    assert ran.returncode == 0 and lines, f"the set-up cells of {stem} did not run: {ran.stderr[-2000:]}"
    names = [name for name in json.loads(lines[-1].removeprefix("TRIED ")) if "." not in name]
    assert names, "no optional import seen: nothing to test with"
    return names


def outcome_table(path: Path) -> dict[str, dict[str, str]]:
    """INSTRUCTORS.md's table of bad submissions: name -> {score, status} (status: text it must contain)."""
    rows, inside = {}, False
    for line in path.read_text().splitlines():
        if line.startswith("| submission | what it does |"):
            inside = True
            continue
        if inside and not line.startswith("|"):
            break
        if inside and not line.startswith("| ---"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = {"score": cells[2], "status": cells[3].strip("`"), "reads": cells[4]}
    return rows

