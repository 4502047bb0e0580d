"""Every graded exercise of the registry against its checks, in this process (fast; tests/test_variants.py grades
the variants end to end through a sandboxed kernel):

- the reference passes the visible and the hidden check, one check mark each, quietly (nothing on stderr, no "Note:");
- the hidden check passes the reference at the grading seeds;
- the solution notebook's cell passes both checks, as the reference does;
- each wrong variant fails both checks, each message naming its mistake (`Variant.message`): the visible check here,
  the hidden one as graded in a sandboxed kernel (tests/judged_variants.py); each right one passes both, quietly.

All of it comes from the registry rows and autograde.variants: which reference the checks take (`checked`), what the
notebook's set-up cell imports (`imports`), and whether an exercise is checked only in a kernel of its own
(`kernel_setup`: 08's QAModel, on Keras's PyTorch backend, while this process runs TensorFlow)."""

from __future__ import annotations

import re

import nbformat
import numpy as np
import pytest
import tensorflow as tf
from cell_checks import failure_messages, notebook_function, solution_cell
from graded_batches import SEED
from judged_variants import group, hidden_message

from autograde import checks, registry
from autograde.variants import variants

from conftest import release_path

GRADING_SEEDS = (1, SEED)  # 1, and the seed tests/test_variants.py and the grading tests grade at
CHECK_MARK = "\N{CHECK MARK}"

ROWS = registry.EXERCISES
IN_PROCESS = [row for row in ROWS if not row.kernel_setup]
IN_KERNEL = [row for row in ROWS if row.kernel_setup]


def row_id(row) -> str:
    return f"{row.stem}:{row.name}"


def variant_id(row, variant) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", variant.what.lower()).strip("-")[:70].rstrip("-")
    return f"{row_id(row)}:{'right' if variant.correct else 'wrong'}-{slug}"


def variant_params(rows, *, correct: bool | None = None, marks=lambda row: ()) -> list:
    """(row, variant) of every variant of `rows` (only the right or the wrong ones if `correct` says which)."""
    return [pytest.param(row, variant, id=variant_id(row, variant), marks=marks(row))
            for row in rows for variant in variants(row.stem)
            if variant.name == row.name and correct in (None, variant.correct)]


def both_checks(row):
    return registry.resolve(row.visible), registry.resolve(row.hidden)


def reference(row):
    """The reference the checks take; as TensorFlow would return it where the checks want tensors (`row.tensors`)."""
    fn = registry.resolve(row.checked)
    if not row.tensors:
        return fn

    def convert(value):
        value = np.asarray(value)
        return tf.constant(value, tf.float32 if np.issubdtype(value.dtype, np.floating) else None)

    def as_tensors(*args, **kwargs):
        if not tf.executing_eagerly():  # in a check's tf.function (03's split and merge): a graph op of one result
            return tf.numpy_function(lambda *values: np.asarray(fn(*values, **kwargs), np.float32),
                                     list(args), tf.float32)
        result = fn(*args, **kwargs)
        return tuple(convert(v) for v in result) if isinstance(result, tuple) else convert(result)

    return as_tensors


def expect_quiet_passes(output, messages: list[str]) -> None:
    """Both checks passed, each with one check mark, nothing on stderr and no note about its parts."""
    assert messages == ["", ""], messages
    assert output.out.count(CHECK_MARK) == 2 and output.err == "", (output.out, output.err)
    assert "Note:" not in output.out, output.out


def expect_verdict(variant, messages: list[str]) -> None:
    """A right variant passes both checks; a wrong one fails both, each message naming its mistake. Where the
    visible check is known to be blind (`visible_gap`), it must still give the opposite verdict: when it learns to
    see the variant, the gap is to be removed."""
    fragments = [variant.visible_message or variant.message, variant.message]
    if variant.visible_gap:
        assert bool(messages[0]) == variant.correct, f"the visible check now judges {variant.what!r} right"
        messages, fragments = messages[1:], fragments[1:]
    if variant.correct:
        assert not any(messages), f"a check failed {variant.what!r}: {messages}"
        return
    assert all(messages), f"a check passed {variant.what!r}: {messages}"
    for message, fragment in zip(messages, fragments, strict=True):
        assert fragment in message, message


# ------------------------------------------------------------------------------------------------
# In this process


@pytest.mark.thorough
@pytest.mark.parametrize("row", IN_PROCESS, ids=row_id)
def test_reference_passes_both_checks(row, capsys):
    messages = failure_messages(both_checks(row), reference(row))
    expect_quiet_passes(capsys.readouterr(), messages)


@pytest.mark.thorough
@pytest.mark.parametrize("seed", GRADING_SEEDS)
@pytest.mark.parametrize("row", IN_PROCESS, ids=row_id)
def test_hidden_check_passes_the_reference_at_grading_seeds(row, seed):
    checks.use_seed(seed)
    try:
        registry.resolve(row.hidden)(reference(row))
    finally:
        checks.use_seed(None)


@pytest.mark.thorough
@pytest.mark.parametrize("row", IN_PROCESS, ids=row_id)
def test_solution_cell_passes_both_checks(row, capsys):
    fn = notebook_function(row, solution_cell(row.stem, row.name))
    capsys.readouterr()
    messages = failure_messages(both_checks(row), fn)
    expect_quiet_passes(capsys.readouterr(), messages)


@pytest.mark.thorough
@pytest.mark.parametrize("row,variant", variant_params(IN_PROCESS, correct=True))
def test_right_variant_passes_both_checks_quietly(row, variant, capsys):
    fn = notebook_function(row, variant.cell(solution_cell(row.stem, row.name)))
    capsys.readouterr()
    messages = failure_messages(both_checks(row), fn)
    expect_verdict(variant, messages)
    if not variant.visible_gap:
        expect_quiet_passes(capsys.readouterr(), messages)


# The hidden check's message on a wrong variant is read from its grading in a sandboxed kernel (tests/
# judged_variants.py, which tests/test_variants.py checks too): the same check, as grading runs it, run once.
@pytest.mark.thorough
@pytest.mark.grading
@pytest.mark.parametrize("row,variant", variant_params(IN_PROCESS, correct=False, marks=lambda row: group(row.stem)))
def test_wrong_variant_fails_both_checks_naming_its_mistake(row, variant):
    fn = notebook_function(row, variant.cell(solution_cell(row.stem, row.name)))
    visible = failure_messages([registry.resolve(row.visible)], fn)
    expect_verdict(variant, [*visible, hidden_message(variant, row.stem)])


@pytest.mark.parametrize("stem", registry.stems())
def test_every_wrong_variant_has_its_message(stem):
    names = {row.name for row in registry.exercises(stem)}
    found = variants(stem)
    assert {variant.name for variant in found} <= names, "a variant of no exercise"
    assert not [v.what for v in found if not v.correct and not v.message], "wrong variants without a message"
    assert not [v.what for v in found if v.correct and v.message], "a right variant has no mistake to name"


# ------------------------------------------------------------------------------------------------
# In a kernel of their own (another Keras backend): defined there, the visible check run there, the hidden check
# through the real Remote, as grading runs it. One worker starts the kernel once for all of them.

IN_A_KERNEL = [pytest.mark.grading, pytest.mark.xdist_group("exercises-in-a-kernel")]


@pytest.fixture(scope="module")
def kernel(request, tmp_path_factory):
    """A sandboxed kernel for the row `request.param`, started with its set-up and the notebook's imports."""
    from autograde.confinement import sandbox_check
    from autograde.remote import Remote
    from autograde.sandbox import SandboxKernel, declared_env

    row = request.param
    problem = sandbox_check()
    if problem:
        pytest.fail(problem, pytrace=False)
    env = declared_env(nbformat.read(release_path(row.stem), as_version=4))
    sandboxed = SandboxKernel(tmp_path_factory.mktemp(f"kernel-{row.stem}") / "work", env=env)
    sandboxed.start()
    try:
        module, _, check = row.visible.partition(":")
        outcome = sandboxed.run(f"{row.kernel_setup}{row.imports}from {module} import {check}\n", 300)
        assert outcome.status == "ok", outcome
        remote = Remote(sandboxed, timeout=120)
        remote.install()
        yield row, sandboxed, remote
    finally:
        sandboxed.stop()


def kernel_checks(kernel, source: str, seed: int | None = None) -> list[str]:
    """Define the exercise in the kernel from `source`; the visible check's and the hidden check's messages ("" for
    a pass)."""
    from autograde.judge import _judge

    row, sandboxed, remote = kernel
    defined = sandboxed.run(source, 120)
    assert defined.status == "ok", defined
    visible = sandboxed.run(f"{row.visible.partition(':')[2]}({row.name})", 300, keep_stdout=True)
    if visible.status == "ok":
        assert CHECK_MARK in "".join(visible.stdout)
        messages = [""]
    else:
        assert visible.status == "error", visible
        messages = [f"{visible.ename}: {visible.evalue}"]
    checks.use_seed(seed)
    try:
        result, healthy = _judge(row, remote)
    finally:
        checks.use_seed(None)
    assert healthy, result.message
    return [*messages, "" if result.score == result.max_score else result.message]


def reference_source(row) -> str:
    from autograde.remote import part_source

    return part_source(registry.resolve(row.checked))


@pytest.mark.parametrize("kernel", [pytest.param(row, id=row_id(row), marks=IN_A_KERNEL) for row in IN_KERNEL],
                         indirect=True)
def test_reference_and_solution_pass_both_checks_in_their_kernel(kernel):
    row = kernel[0]
    assert kernel_checks(kernel, reference_source(row)) == ["", ""]
    assert kernel_checks(kernel, solution_cell(row.stem, row.name)) == ["", ""]


@pytest.mark.parametrize("seed", GRADING_SEEDS)
@pytest.mark.parametrize("kernel", [pytest.param(row, id=row_id(row), marks=IN_A_KERNEL) for row in IN_KERNEL],
                         indirect=True)
def test_hidden_check_passes_the_reference_at_grading_seeds_in_their_kernel(kernel, seed):
    assert kernel_checks(kernel, reference_source(kernel[0]), seed)[1] == ""


@pytest.mark.parametrize("kernel,variant", variant_params(IN_KERNEL, marks=lambda row: IN_A_KERNEL),
                         indirect=["kernel"])
def test_variant_gets_its_verdict_in_their_kernel(kernel, variant):
    row = kernel[0]
    expect_verdict(variant, kernel_checks(kernel, variant.cell(solution_cell(row.stem, row.name))))
