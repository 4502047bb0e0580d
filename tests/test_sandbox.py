"""A grading kernel probed from inside, as an adversarial student would: what it can see, and what it can do.

The kernel is started as grading starts it (autograde/confinement.py, the course_lib of assignment 01), by whoever
runs the tests: as root under `make test` and CI, where it must still be an unprivileged user without capabilities.
A fake grading state (another student's folders, a gradebook, OUT/) is laid out where `make grade COURSE=...` keeps
it, and nothing of it may be reachable.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
import tempfile
from pathlib import Path

import pytest

from autograde import wire
from autograde.confinement import kernel_user, python_roots, sandbox_check
from autograde.course import REPO_ROOT
from autograde.kernel_view import course_lib_for
from autograde.sandbox import SandboxKernel

pytestmark = pytest.mark.grading
STEM = "01_positional_encoding"
GRADING_STATE = ("submitted/alice/01_positional_encoding/01_positional_encoding.ipynb",
                 "autograded/alice/01_positional_encoding/01_positional_encoding.ipynb",
                 "feedback/alice/01_positional_encoding/01_positional_encoding.html", ".nbgrader/gradebook.db",
                 "out/grades.csv", "subs/bob/01_positional_encoding.ipynb")


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """run(code) -> the JSON the code prints, in one kernel confined for grading 01, next to a fake grading state."""
    problem = sandbox_check()
    if problem:
        pytest.fail(problem, pytrace=False)
    # Outside /tmp, which the sandbox has always emptied: only the allow list keeps it out of sight.
    state = Path(tempfile.mkdtemp(prefix="course-state-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    for name in GRADING_STATE:
        (state / name).parent.mkdir(parents=True, exist_ok=True)
        (state / name).write_text("secret of another student")
    kernel = SandboxKernel(tmp_path_factory.mktemp("grade-probe") / "work", course_lib=course_lib_for(STEM))
    kernel.start()

    def run(code: str):
        outcome = kernel.run(f"import json as _json, os, subprocess\n{code}", 60, keep_stdout=True)
        assert outcome.status == "ok", f"{outcome.ename}: {outcome.evalue}"
        return json.loads("".join(outcome.stdout))

    try:
        yield run, state, kernel
    finally:
        kernel.stop()
        shutil.rmtree(state, ignore_errors=True)


def test_the_kernel_is_an_unprivileged_user_without_capabilities(probe):
    run, _, _ = probe
    seen = run("status = dict(line.split(':\\t') for line in open('/proc/self/status').read().splitlines() "
               "if ':\\t' in line)\n"
               "print(_json.dumps({'uid': os.getuid(), 'euid': os.geteuid(), 'gid': os.getgid(), "
               "'caps': {k: status[k] for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb')}, "
               "'no_new_privs': status.get('NoNewPrivs')}))")
    expected_uid = kernel_user()[0] if kernel_user() else os.getuid()
    assert seen["uid"] == seen["euid"] == expected_uid != 0, seen
    assert all(int(value, 16) == 0 for value in seen["caps"].values()), f"the kernel has capabilities: {seen}"
    if kernel_user():  # dropped by setpriv when the grader is root
        assert seen["no_new_privs"] == "1", seen


def test_the_kernel_cannot_unmount_remount_or_nest_its_way_out(probe):
    run, _, _ = probe
    course_lib = str(course_lib_for(STEM).parent.parent)  # any path: the kernel must not be able to mount at all
    tries = {
        "umount course_lib": ["umount", str(REPO_ROOT / "course_lib")],
        "umount /usr": ["umount", "/usr"],
        "remount / rw": ["mount", "-o", "remount,rw", "/"],
        "remount /usr rw": ["mount", "-o", "remount,rw", "/usr"],
        "mount the host's folder": ["mount", "--bind", course_lib, "/tmp"],
        "new user namespace, then umount": ["unshare", "-Urm", "sh", "-c", f"umount {REPO_ROOT / 'course_lib'}"],
        "new user namespace, then remount": ["unshare", "-Urm", "sh", "-c", "mount -o remount,rw /usr"],
        "sudo": ["sudo", "-n", "true"],
        "su": ["su", "-c", "true"],
    }
    seen = run(f"tries = {tries!r}\nout = {{}}\n"
               "for name, argv in tries.items():\n"
               "    try:\n"
               "        out[name] = subprocess.run(argv, capture_output=True, timeout=20).returncode\n"
               "    except OSError as error:\n"
               "        out[name] = str(error)\n"
               "print(_json.dumps(out))")
    succeeded = [name for name, code in seen.items() if code == 0]
    assert not succeeded, f"the kernel could: {succeeded}"


def test_the_kernel_writes_only_in_its_own_folders(probe):
    run, state, kernel = probe
    work = kernel.work
    site = next(p for p in sys.path if p.endswith("site-packages"))
    targets = [REPO_ROOT / "course_lib" / "x.py", REPO_ROOT / "notebooks" / "x", REPO_ROOT / "x", f"{site}/x.py",
               "/usr/x", "/etc/x", "/x", "/root/x", state / "out" / "grades.csv", *[p / "x" for p in python_roots()]]
    seen = run(f"out = {{}}\nfor target in {[str(t) for t in targets]!r} + ['{work}/mine.txt', '/tmp/mine.txt']:\n"
               "    try:\n"
               "        with open(target, 'a') as handle:\n"
               "            handle.write('escaped')\n"
               "        out[target] = 'written'\n"
               "    except OSError as error:\n"
               "        out[target] = error.strerror\n"
               "print(_json.dumps(out))")
    assert seen.pop(f"{work}/mine.txt") == "written" and seen.pop("/tmp/mine.txt") == "written", seen
    written = [target for target, what in seen.items() if what == "written"]
    assert not written, f"the kernel wrote outside its folders: {written}"
    assert (state / "out" / "grades.csv").read_text() == "secret of another student"


def test_the_kernel_sees_the_allow_list_and_no_grading_state(probe):
    run, state, _ = probe
    hidden = [REPO_ROOT / name for name in ("autograde", "tests", "solutions", ".git", "bench", "INSTRUCTORS.md",
                                            "submitted", "autograded", "feedback", ".nbgrader")]
    hidden += [state / name for name in GRADING_STATE] + [state]
    seen = run(f"paths = {[str(p) for p in hidden]!r}\n"
               "found = [p for p in paths if os.path.lexists(p)]\n"
               "everything = []\n"
               "for top in os.listdir('/'):\n"
               "    if top not in ('usr', 'etc', 'sys', 'proc', 'dev') and not os.path.islink('/' + top):\n"
               "        for folder, _, files in os.walk('/' + top):\n"
               "            everything += [os.path.join(folder, f) for f in files]\n"
               "def secret(path):\n"
               "    try:\n"
               "        with open(path, errors='ignore') as handle:\n"
               "            return 'secret of another' in handle.read(200)\n"
               "    except OSError:\n"
               "        return False\n"
               f"print(_json.dumps({{'found': found, 'repo': sorted(os.listdir({str(REPO_ROOT)!r})), "
               "'files': len(everything), 'secrets': [p for p in everything if secret(p)]}))")
    assert not seen["found"], f"the kernel sees {seen['found']}"
    assert set(seen["repo"]) <= {".venv", "course_lib", "notebooks"}, seen["repo"]
    assert seen["files"] > 1000, "the walk saw too little to prove anything (Python's prefixes are outside /usr)"
    assert not seen["secrets"], f"the kernel can read the grading state: {seen['secrets']}"


def test_the_assignments_own_answers_are_stubs_and_earlier_ones_are_given():
    from autograde.student_kit.layers import answer_blocks

    for stem in ("01_positional_encoding", "04_transformer", "07_qa", "08_qa_pytorch"):
        view = course_lib_for(stem)
        for compiled in view.rglob("*.pyc"):  # each compiled from the view's own source, none from the repository's
            source = view / compiled.parent.parent.relative_to(view) / (compiled.name.split(".")[0] + ".py")
            header = compiled.read_bytes()[8:16]
            stamp = source.stat()
            assert header == struct.pack("<II", int(stamp.st_mtime) & 0xFFFFFFFF, stamp.st_size & 0xFFFFFFFF), (
                f"{compiled} was not compiled from {source}")
        lines = (view / "layers.py").read_text().splitlines()
        wrong = []
        for block in answer_blocks("\n".join(lines)):
            body = [line.strip() for line in lines[block.body_start - 1:block.body_end]]
            stubbed = len(body) == 1 and body[0].startswith("raise not_handed_out(")
            if stubbed != (block.stem >= stem):
                wrong.append(f"{block.name} ({block.stem}) {'stubbed' if stubbed else 'given'}")
        assert not wrong, f"while {stem} is graded: {wrong}"


def test_the_kernel_cannot_turn_the_graders_files_into_links(probe, tmp_path):
    """The grader writes requests and reads answers in a folder the kernel writes in too: the kernel can neither
    replace that folder nor have the grader write, read or delete through a link it left there."""
    run, _, kernel = probe
    target = tmp_path / "host-file"
    target.write_text("the machine's")
    folder = kernel.grading_folder
    seen = run(f"folder = {str(folder)!r}\nout = {{}}\n"
               "for name, act in [('rename', lambda: os.rename(folder, folder + '-x')),\n"
               "                  ('remove', lambda: os.rmdir(folder)),\n"
               "                  ('replace parent', lambda: os.rename(os.path.dirname(folder), folder + '-y')),\n"
               f"                  ('plant links', lambda: [os.symlink({str(target)!r}, os.path.join(folder, n))\n"
               "                                           for n in ('900.in', '900.out')])]:\n"
               "    try:\n"
               "        act()\n"
               "        out[name] = 'done'\n"
               "    except OSError as error:\n"
               "        out[name] = error.strerror\n"
               "print(_json.dumps(out))")
    assert seen.pop("plant links") == "done", "the test needs the links in place"
    assert all(what != "done" for what in seen.values()), seen
    with pytest.raises((OSError, wire.WireError)):
        wire.save(folder / "900.in", {"t": "list", "v": []}, [])
    with pytest.raises(wire.WireError):
        wire.read(folder / "900.out")
    assert target.read_text() == "the machine's"
