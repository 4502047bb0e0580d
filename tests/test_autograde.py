"""The grading machinery's own pieces, without running nbgrader."""

from __future__ import annotations

import re

import nbformat
import numpy as np
import pytest

from autograde import confinement, grade, release, sandbox
from autograde.course import IGNORED_STDERR_PATTERN
from autograde.judge import notebook_problem
from autograde.sandbox import kernel_env
from autograde.suspicion import flags_in_cells

from conftest import ASSIGNMENTS, solution_path

TENSORFLOW_STDERR = [
    "2026-11-22 15:00:00.123456: I tensorflow/core/util/port.cc:153] oneDNN custom operations are on.",
    "I0000 00:00:1795362538.443345    3448 port.cc:153] oneDNN custom operations are on.",
    "E0000 00:00:1795362538.775284    3448 cuda_executor.cc:1] Could not find cuda drivers",
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "WARNING:tensorflow:5 out of the last 5 calls to <function f> triggered tf.function retracing.",
    "WARNING:absl:an absl log line",
    "/x/lib/keras/src/layer.py:12: UserWarning: Do not pass an `input_shape` argument\n  warnings.warn(",
]


@pytest.mark.parametrize("line", TENSORFLOW_STDERR)
def test_library_noise_on_stderr_is_ignored(line):
    assert re.search(IGNORED_STDERR_PATTERN, line)


@pytest.mark.parametrize("line", ["my debug print", "Traceback (most recent call last):", "error: 3 != 4"])
def test_other_stderr_still_counts(line):
    assert not re.search(IGNORED_STDERR_PATTERN, line)


def test_numpy_and_tensorflow_out_of_memory_errors_count_as_running_out_of_memory():
    import tensorflow as tf

    try:
        np.empty((2**24, 2**24))  # 2 PiB: refused before any page is touched
    except MemoryError as error:
        numpy_name = type(error).__name__
    names = [numpy_name, "MemoryError", tf.errors.ResourceExhaustedError.__name__]
    assert all(sandbox.Outcome("error", name, "").out_of_memory() for name in names), names
    assert not sandbox.Outcome("error", "ValueError", "").out_of_memory()
    assert not sandbox.Outcome("ok", "MemoryError", "").out_of_memory()


def test_notebook_problem_names_each_kind_of_bad_file(tmp_path):
    stem = "01_positional_encoding"
    path = tmp_path / f"{stem}.ipynb"
    assert notebook_problem(path, stem) == f"missing: no {stem}.ipynb in the submission"
    path.write_bytes(b"\xff\xfe not text")
    assert notebook_problem(path, stem).startswith("invalid notebook: not UTF-8")
    path.write_text('{"cells": [')
    assert notebook_problem(path, stem).startswith("invalid notebook: not valid JSON (line 1")
    path.write_text('{"cells": "not a list", "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    assert notebook_problem(path, stem).startswith("invalid notebook:")
    path.write_text("[]")
    assert notebook_problem(path, stem).startswith("invalid notebook:")
    assert notebook_problem(solution_path(ASSIGNMENTS[0]), ASSIGNMENTS[0]) is None


def test_grade_command_rejects_unknown_assignment_and_missing_folder(tmp_path, capsys):
    with pytest.raises(SystemExit):
        grade.main(["--assignment", "99_nope", "--submissions", str(tmp_path), "--out", str(tmp_path)])
    assert "unknown assignment '99_nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        grade.main(["--assignment", ASSIGNMENTS[0], "--submissions", str(tmp_path / "x"), "--out", str(tmp_path)])
    assert "does not exist" in capsys.readouterr().err


def test_release_command_rejects_unknown_assignment(capsys):
    with pytest.raises(SystemExit):
        release.main(["99_nope"])
    assert "no such assignment in solutions/: 99_nope" in capsys.readouterr().err


def test_a_course_cloned_into_tmp_is_mounted_after_the_sandbox_empties_tmp(monkeypatch, tmp_path):
    """The sandbox's /tmp is empty; a clone there (its notebooks, course_lib, venv) is mounted after it is made, and
    the folders above it are made traversable by the kernel's user (bwrap would make them root's alone)."""
    clone = tmp_path / "course"
    (clone / "notebooks").mkdir(parents=True)
    monkeypatch.setattr(confinement, "REPO_ROOT", clone)
    monkeypatch.setattr(confinement, "bwrap_path", lambda: "bwrap")
    argv = confinement.sandbox_command(tmp_path / "work", ["python"], {}, memory=2**30)
    runs = [argv[i:i + 4] for i in range(len(argv) - 3)]
    emptied = runs.index(["--perms", "1777", "--tmpfs", "/tmp"])
    above = runs.index(["--perms", "0755", "--dir", str(clone)])
    shown = argv.index(str(clone / "notebooks"))
    assert emptied < above < shown and argv[shown - 1] == "--ro-bind"
    assert str(clone / "solutions") not in argv and str(clone) not in argv[shown + 1:], "more than the allow list"


def test_grading_kernels_get_a_clean_environment(monkeypatch, tmp_path):
    """Fast mode, the grading flag, a home in the work folder, and nothing of the grader's environment."""
    monkeypatch.setenv("GRADER_SECRET", "x")
    env = kernel_env(tmp_path, threads=2)
    assert env["COURSE_FAST"] == "1" and env["COURSE_GRADING"] == "1" and env["HOME"] == str(tmp_path)
    assert env["OMP_NUM_THREADS"] == "2" and "GRADER_SECRET" not in env and "PYTHONPATH" not in env


@pytest.mark.parametrize("value", [np.float32(2.5), np.array(3.0), np.zeros((2, 0)), np.arange(6).reshape(2, 3).T])
def test_arrays_cross_the_wire_with_their_shape(tmp_path, value):
    """A 0-d array (the value of a scalar tensor, such as a loss) stays 0-d, an empty or transposed one keeps its
    shape and values."""
    from autograde import wire

    wire.dump(tmp_path / "value.npz", {"x": np.asarray(value)})
    tree, arrays = wire.read(tmp_path / "value.npz")
    received = wire.Decoder(arrays).decode(tree)["x"]
    assert received.shape == np.asarray(value).shape
    np.testing.assert_array_equal(received, value)


@pytest.mark.parametrize("code", [
    "from course_lib.layers import positional_encoding",
    "from course_lib.layers import (\n    get_angles as g, positional_encoding)",
    "import course_lib.layers as L\npositional_encoding = L.positional_encoding",
    "from course_lib import layers\nf = layers.positional_encoding",
    "import importlib\nf = importlib.import_module('course_lib.layers').positional_encoding",
])
def test_taking_the_courses_own_answer_is_flagged_in_any_form(code):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    assert "flagged: imports the course's own answer" in " ".join(flags_in_cells(notebook, {"positional_encoding"}))


@pytest.mark.parametrize("code", [
    "from course_lib.layers import create_padding_mask, positional_encoding",  # 04's set-up: earlier answers
    "def positional_encoding(positions, d):\n    return angles.positional_encoding",  # no course_lib.layers at all
])
def test_earlier_answers_and_own_code_are_not_flagged(code):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    assert not flags_in_cells(notebook, {"EncoderLayer"} if "create_padding_mask" in code else {"positional_encoding"})
