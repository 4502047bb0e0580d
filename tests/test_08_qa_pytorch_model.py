"""Assignment 08, the model side: the reference loss is the NumPy one (value and gradient); the visible checks
(course_lib.qa_pytorch.model) and the hidden checks (autograde.checks.qa_pytorch.model) keep an unfinished exercise
unfinished, a crash is a failed check, an always-equal result fails.

QAModel wraps keras-hub's BertBackbone on Keras's PyTorch backend, and a process has one backend: this one runs
TensorFlow (the grader's side, which computes the references), so QAModel runs in a sandboxed kernel started on the
torch backend, as grading starts it, and its hidden check talks to that kernel through the real Remote. qa_loss is
plain PyTorch and is checked in this process too.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import nbformat
import numpy as np
import pytest
import torch
from cell_checks import cell_function, failure_messages  # noqa: E402

from autograde.checks.qa_pytorch import model as hidden  # noqa: E402
from autograde.confinement import sandbox_check  # noqa: E402
from autograde.judge import _judge  # noqa: E402
from autograde.mistakes.qa_pytorch import model as mistakes  # noqa: E402
from autograde.reference.qa_pytorch import model as ref  # noqa: E402
from autograde.registry import exercises  # noqa: E402
from autograde.remote import Remote  # noqa: E402
from autograde.sandbox import SandboxKernel, declared_env  # noqa: E402
from autograde.variants.qa_pytorch import VARIANTS  # noqa: E402
from course_lib.checking import NotImplementedYet  # noqa: E402
from course_lib.expected import load as load_expected  # noqa: E402
from course_lib.qa_pytorch import loss as loss_helpers  # noqa: E402
from course_lib.qa_pytorch import model as visible  # noqa: E402

from conftest import AlwaysEqual, release_path  # noqa: E402

STEM = "08_qa_pytorch"
QA_MODEL = next(row for row in exercises(STEM) if row.name == "QAModel")
NOTEBOOK_IMPORTS = QA_MODEL.imports
KERNEL_SETUP = QA_MODEL.kernel_setup + NOTEBOOK_IMPORTS + "from course_lib.qa_pytorch.model import check_qa_model\n"


# ------------------------------------------------------------------------------------------------
# qa_loss, in this process


def define(source: str, name: str):
    return cell_function(source, name, imports=NOTEBOOK_IMPORTS)


def loss_checks(fn) -> list[str]:
    return failure_messages((visible.check_qa_loss, hidden.grade_qa_loss), fn)


def test_reference_loss_by_hand():
    logits = torch.log(torch.tensor([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
    starts, ends = torch.tensor([0, 2]), torch.tensor([1, 2])
    expected = -(np.log(0.5) + np.log(0.8) + np.log(0.25) + np.log(0.8)) / 4
    assert float(ref.qa_loss(logits, logits, starts, ends)) == pytest.approx(expected, rel=1e-6)
    assert ref.qa_loss_numpy(logits.numpy(), logits.numpy(), starts.numpy(), ends.numpy()) == pytest.approx(expected)


@pytest.mark.parametrize("case", range(len(loss_helpers.LOSS_CASES)))
def test_reference_loss_and_gradient_are_the_numpy_ones(case):
    _, start, end, starts, ends = loss_helpers.loss_case(case)
    report = loss_helpers.run_qa_loss(ref.qa_loss, start, end, starts, ends)
    assert report["is_tensor"] and report["shape"] == []
    assert report["value"][0] == pytest.approx(ref.qa_loss_numpy(start, end, starts, ends), rel=1e-5)
    np.testing.assert_allclose(report["gradient"], np.stack(ref.qa_loss_gradient(start, end, starts, ends)),
                               atol=1e-7)


def test_uniform_logits_give_log_of_the_length():
    uniform = np.zeros((3, 8), np.float32)
    assert ref.qa_loss_numpy(uniform, uniform, [0, 1, 7], [2, 3, 7]) == pytest.approx(np.log(8))


def test_every_loss_mistake_is_told_apart_in_a_visible_case():
    stored = load_expected(STEM, "model", "qa_loss")
    assert {name for case in stored.values() for name in case["mistakes"]} == {m.name for m in mistakes.LOSS}
    for case in stored.values():
        values = [float(entry["value"]) for entry in case["mistakes"].values()] + [float(case["loss"])]
        assert len(values) == len({round(v, 5) for v in values}), "two mistakes give the same loss"


# (The reference, the solution cell and the variants of qa_loss against both checks: tests/test_exercises.py)


def test_unfinished_crashing_and_always_equal_losses():
    def unfinished(start_logits, end_logits, start_positions, end_positions):
        raise NotImplementedError()

    with pytest.raises(NotImplementedYet):
        visible.check_qa_loss(unfinished)
    with pytest.raises(NotImplementedError):
        hidden.grade_qa_loss(unfinished)

    def crashing(start_logits, end_logits, start_positions, end_positions):
        return F.cross_entropy(start_logits, start_positions.float())  # noqa: F821

    assert all("NameError" in message for message in loss_checks(crashing))
    assert all(loss_checks(lambda *args: AlwaysEqual()))


# ------------------------------------------------------------------------------------------------
# QAModel, in a kernel on the torch backend


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    problem = sandbox_check()
    if problem:
        pytest.fail(problem, pytrace=False)
    work = tmp_path_factory.mktemp("qa-pytorch-kernel") / "work"
    env = declared_env(nbformat.read(release_path(STEM), as_version=4))
    sandboxed = SandboxKernel(work, env=env)
    sandboxed.start()
    try:
        outcome = sandboxed.run(KERNEL_SETUP, 300)
        assert outcome.status == "ok", outcome
        remote = Remote(sandboxed, timeout=120)
        remote.install()
        yield sandboxed, remote
    finally:
        sandboxed.stop()


def model_checks(kernel, source: str) -> list[str]:
    """Define QAModel in the kernel from `source`; the visible check's and the hidden check's messages ("" for a
    pass)."""
    sandboxed, remote = kernel
    defined = sandboxed.run(source, 120)
    assert defined.status == "ok", defined
    visible_outcome = sandboxed.run("check_qa_model(QAModel)", 300, keep_stdout=True)
    if visible_outcome.status == "ok":
        assert "\N{CHECK MARK}" in "".join(visible_outcome.stdout)
        messages = [""]
    else:
        assert visible_outcome.status == "error", visible_outcome
        messages = [f"{visible_outcome.ename}: {visible_outcome.evalue}"]
    row = next(row for row in exercises(STEM) if row.name == "QAModel")
    result, healthy = _judge(row, remote)
    assert healthy, result.message
    messages.append("" if result.score == result.max_score else result.message)
    return messages


@pytest.mark.thorough
def test_the_kernel_runs_keras_on_torch(kernel):
    outcome = kernel[0].run("import keras, os\nprint(keras.config.backend(), os.environ['KERAS_BACKEND'])", 60,
                            keep_stdout=True)
    assert "".join(outcome.stdout).split() == ["torch", "torch"]


# (The reference, the solution cell and the variants of QAModel against both checks, in a kernel of their own:
# tests/test_exercises.py)


def test_each_model_exercise_has_four_wrong_variants():
    for name in ("QAModel", "qa_loss"):
        assert sum(not v.correct for v in VARIANTS if v.name == name) >= 4


@pytest.mark.thorough
def test_unfinished_model_stays_unfinished(kernel):
    stub = next(cell.source for cell in nbformat.read(release_path(STEM), as_version=4).cells
                if cell.metadata.get("nbgrader", {}).get("grade_id") == "QAModel")
    messages = model_checks(kernel, stub)
    assert messages[0].startswith("NotImplementedYet"), messages
    assert "not implemented yet" in messages[1], messages


@pytest.mark.parametrize("source,expected", [
    ("class QAModel:\n    def __init__(self, backbone):\n        self.backbone = backbone\n", "not a torch.nn.Module"),
    ("class QAModel(torch.nn.Module):\n    def __init__(self, backbone):\n        self.backbone = backbone\n",
     "raised AttributeError"),
    ("class QAModel(torch.nn.Module):\n    def __init__(self, backbone):\n        super().__init__()\n"
     "        self.backbone = backbone\n        self.qa_outputs = torch.nn.Linear(backbone.hidden_dim, 2)\n\n"
     "    def forward(self, token_ids, segment_ids, padding_mask):\n"
     "        return self.qa_outputs(self.backbone(token_ids)['sequence_output'])\n", "raised"),
    ("class QAModel(torch.nn.Module):\n    def __init__(self, backbone):\n        super().__init__()\n"
     "        self.backbone = backbone\n        self.qa_outputs = torch.nn.Linear(backbone.hidden_dim, 2)\n\n"
     "    def forward(self, token_ids, segment_ids, padding_mask):\n"
     "        inputs = dict(token_ids=token_ids, segment_ids=segment_ids, padding_mask=padding_mask)\n"
     "        return self.qa_outputs(self.backbone(inputs, training=self.training)['sequence_output'])\n",
     "should return a pair"),
    ("class QAModel(torch.nn.Module):\n    def __init__(self, backbone):\n        super().__init__()\n"
     "        self.parts = [backbone]\n        self.qa_outputs = torch.nn.Linear(backbone.hidden_dim, 2)\n",
     "does not keep the backbone"),
], ids=["not a module", "no super().__init__()", "crash in forward", "one tensor", "backbone in a list"])
@pytest.mark.thorough
def test_malformed_modules_fail_both_checks(kernel, source, expected):
    for message in model_checks(kernel, source):
        assert expected in message, message


def test_every_logits_and_shape_mistake_is_stored():
    stored = load_expected(STEM, "model", "QAModel")
    assert {name for case in stored.values() for batch in case["mistakes"] for name in batch} == \
        {mistake.name for mistake in mistakes.LOGITS}
    assert {name for case in stored.values() for name in case["shapes"]} == {m.name for m in mistakes.SHAPES}
