"""Assignment 08, the training side: the NumPy simulation of the reference's steps is what torch does (SGD and AdamW,
clipping, LambdaLR) and every named mistake is told apart from it; the visible checks
(course_lib.qa_pytorch.training) and the hidden checks (autograde.checks.qa_pytorch.training) keep an unfinished
exercise unfinished, a crash is a failed check, an always-equal result fails; the hidden checks work through the real
wire.

train_step and evaluate run on the stand-in network and need no Keras: everything here runs in this process.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cell_checks import cell_function, failure_messages  # noqa: E402
from cell_checks import solution_cell as solution_cell_of  # noqa: E402

from autograde.checks.qa_pytorch import training as hidden  # noqa: E402
from autograde.mistakes.qa_pytorch import training as mistakes  # noqa: E402
from autograde.reference.qa_pytorch import model as ref_model  # noqa: E402
from autograde.reference.qa_pytorch import standin as ref_standin  # noqa: E402
from autograde.reference.qa_pytorch import training as ref  # noqa: E402
from autograde.variants.qa_pytorch import VARIANTS  # noqa: E402
from course_lib.checking import NotImplementedYet  # noqa: E402
from course_lib.expected import load as load_expected  # noqa: E402
from course_lib.qa_pytorch import loop, standin  # noqa: E402
from course_lib.qa_pytorch import training as visible  # noqa: E402

from conftest import AlwaysEqual  # noqa: E402

STEM = "08_qa_pytorch"
NOTEBOOK_IMPORTS = "import numpy as np\nimport torch\nimport torch.nn.functional as F\n"
CHECKS = {
    "train_step": (visible.check_train_step, hidden.grade_train_step),
    "evaluate": (visible.check_evaluate, hidden.grade_evaluate),
}
def define(source: str, name: str, qa_loss=ref_model.qa_loss):
    """The function a cell defines, with the notebook's imports and a qa_loss in its namespace."""
    return cell_function(source, name, imports=NOTEBOOK_IMPORTS, namespace={"qa_loss": qa_loss})


def both_checks(name: str, fn) -> list[str]:
    return failure_messages(CHECKS[name], fn)


def solution_cell(name: str) -> str:
    return solution_cell_of(STEM, name)


# ------------------------------------------------------------------------------------------------
# The reference and its simulation


def _setting(seed: int, config=visible.STAND_IN, shapes=((4, 7), (3, 9), (4, 7))):
    rng = np.random.default_rng(seed)
    return visible.standin_weights(config, seed), visible.standin_batches(rng, config, shapes)


def _torch_run(weights, batches, optimizer, factors, max_grad_norm, train_step=ref.train_step):
    model = standin.build(ref_model.QAModel, visible.STAND_IN, weights)
    chosen = visible._optimizer(model, optimizer)
    scheduler = torch.optim.lr_scheduler.LambdaLR(chosen, lambda k: factors[min(k, len(factors) - 1)])
    steps = []
    for batch in batches:
        loss = train_step(model, visible._tensors(batch), chosen, scheduler, max_grad_norm)
        steps.append({"loss": loss, "lr": chosen.param_groups[0]["lr"], "weights": standin.get_weights(model)})
    return steps


@pytest.mark.parametrize("optimizer", [{"name": "sgd", "lr": 0.5},
                                       {"name": "adamw", "lr": 0.05, "weight_decay": 0.01, "eps": 1e-3}])
@pytest.mark.parametrize("max_grad_norm", [0.05, 1.0, 100.0])
def test_the_simulation_is_what_torch_does(optimizer, max_grad_norm):
    weights, batches = _setting(3)
    factors = [1.0, 0.6, 0.3, 0.1]
    simulated = ref.simulate_training(weights, batches, optimizer=optimizer, factors=factors,
                                      max_grad_norm=max_grad_norm)
    assert visible.same_steps(_torch_run(weights, batches, optimizer, factors, max_grad_norm), simulated)


def test_the_stand_in_forward_and_gradient_are_torch_s():
    weights, batches = _setting(4)
    batch = batches[0]
    model = standin.build(ref_model.QAModel, visible.STAND_IN, weights)
    tensors = visible._tensors(batch)
    start, end = model(tensors["token_ids"], tensors["segment_ids"], tensors["padding_mask"])
    loss = ref_model.qa_loss(start, end, tensors["start_positions"], tensors["end_positions"])
    loss.backward()
    forward = ref_standin.forward(weights, batch)
    np.testing.assert_allclose(start.detach().numpy(), forward["start"], atol=1e-5)
    d_start, d_end = ref_model.qa_loss_gradient(forward["start"], forward["end"], batch["start_positions"],
                                                batch["end_positions"])
    gradient = ref_standin.gradient(weights, batch, forward, d_start, d_end)
    np.testing.assert_allclose(model.backbone.token_embedding.weight.grad.numpy(), gradient["token_embedding"],
                               atol=1e-6)
    np.testing.assert_allclose(model.qa_outputs.weight.grad.numpy().T, gradient["kernel"], atol=1e-6)


def test_the_stand_in_loss_is_its_numpy_twin():
    weights, batches = _setting(5)
    forward = ref_standin.forward(weights, batches[0])
    args = (forward["start"], forward["end"], batches[0]["start_positions"], batches[0]["end_positions"])
    start = torch.tensor(forward["start"], requires_grad=True)
    end = torch.tensor(forward["end"], requires_grad=True)
    value = standin.stand_in_loss(start, end, *(torch.as_tensor(p) for p in args[2:]))
    value.backward()
    assert float(value.detach()) == pytest.approx(ref_standin.stand_in_loss(*args))
    d_start, d_end = ref_standin.stand_in_loss_gradient(*args)
    np.testing.assert_allclose(start.grad.numpy(), d_start, atol=1e-12)
    np.testing.assert_allclose(end.grad.numpy(), d_end, atol=1e-12)


def test_every_mistake_differs_from_the_reference_in_a_visible_case():
    stored = load_expected(STEM, "training", "train_step")
    assert {name for case in stored.values() for name in case["mistakes"]} == {m.name for m in mistakes.STEPS}
    evaluation = load_expected(STEM, "training", "evaluate")
    assert {name for case in evaluation.values() for name in case["mistakes"]} == {m.name for m in mistakes.EVALUATION}


def test_evaluate_numpy_weights_batches_by_their_size():
    weights, batches = _setting(6, shapes=((4, 9), (1, 9)))
    result = ref.evaluate_numpy(weights, batches)
    assert result["loss"] == pytest.approx(np.dot(result["batch_losses"], [4, 1]) / 5)
    assert result["start_logits"].shape == (5, 9)


# ------------------------------------------------------------------------------------------------
# The checks on the reference, the solution cells and the variants: tests/test_exercises.py; here what is
# particular to the training exercises


def test_each_training_exercise_has_four_wrong_variants():
    for name in CHECKS:
        assert sum(not v.correct for v in VARIANTS if v.name == name) >= 4


def test_a_wrong_qa_loss_costs_train_step_and_evaluate_nothing():
    """The checks give train_step and evaluate their own loss: the learner's qa_loss is never called."""
    def broken_loss(*args):
        raise RuntimeError("qa_loss is broken")

    for name in CHECKS:
        fn = define(solution_cell(name), name, qa_loss=broken_loss)
        assert both_checks(name, fn) == ["", ""]


# ------------------------------------------------------------------------------------------------
# Unfinished, crashing and always-equal answers


def unfinished_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
    raise NotImplementedError()


def unfinished_evaluate(model, batches):
    raise NotImplementedError()


@pytest.mark.parametrize("name,fn", [("train_step", unfinished_step), ("evaluate", unfinished_evaluate)])
def test_unfinished_stays_unfinished(name, fn):
    with pytest.raises(NotImplementedYet):
        CHECKS[name][0](fn)
    with pytest.raises(NotImplementedError):
        CHECKS[name][1](fn)


def test_a_crash_is_a_failed_check_naming_the_error():
    def crashing_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
        return model(batch["tokens"])

    def crashing_evaluate(model, batches):
        return {"loss": 0.0, "start_logits": np.concatenate([]), "end_logits": None}

    for name, fn, error in [("train_step", crashing_step, "KeyError"), ("evaluate", crashing_evaluate, "ValueError")]:
        for message in both_checks(name, fn):
            assert error in message, message


def test_always_equal_results_fail():
    def equal_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
        return AlwaysEqual()

    def equal_evaluate(model, batches):
        model(batches[0]["token_ids"], batches[0]["segment_ids"], batches[0]["padding_mask"])
        return {"loss": AlwaysEqual(), "start_logits": AlwaysEqual(), "end_logits": AlwaysEqual()}

    assert all(both_checks("train_step", equal_step))
    assert all(both_checks("evaluate", equal_evaluate))


def test_a_step_that_does_nothing_fails_and_says_so():
    def lazy_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
        return 1.5

    for message in both_checks("train_step", lazy_step):
        assert "returned the loss 1.5" in message


# ------------------------------------------------------------------------------------------------
# Through the real wire: the hidden checks on handles to functions in an agent's namespace


def test_hidden_checks_through_the_wire(tmp_path):
    from in_process_kernel import InProcessKernel

    from autograde.judge import _judge
    from autograde.registry import exercises
    from autograde.remote import Remote

    namespace: dict = {}
    exec(NOTEBOOK_IMPORTS, namespace)
    for name in ("qa_loss", "train_step", "evaluate"):
        exec(solution_cell(name), namespace)
    kernel = InProcessKernel(tmp_path, namespace)
    remote = Remote(kernel)
    rows = {row.name: row for row in exercises(STEM)}
    for name in ("qa_loss", "train_step", "evaluate"):
        result, healthy = _judge(rows[name], remote)
        assert healthy and result.score == result.max_score, result.message
    assert kernel.requests < 60, f"{kernel.requests} requests: each case should take a handful"


# ------------------------------------------------------------------------------------------------
# The loop's helpers


def _windows(count=10, max_length=32, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(6, max_length + 1, size=count)
    mask = (np.arange(max_length)[None, :] < lengths[:, None]).astype(np.int32)
    ids = rng.integers(5, 100, size=(count, max_length)) * mask
    labels = np.stack([np.minimum(3, lengths - 1), np.minimum(5, lengths - 1)], axis=1)
    return {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": mask, "labels": labels}


def test_evaluation_batches_keep_the_order_and_one_width():
    arrays = _windows()
    batches = loop.torch_batches(arrays, 4)
    assert [len(b["token_ids"]) for b in batches] == [4, 4, 2]
    assert len({b["token_ids"].shape[1] for b in batches}) == 1
    stacked = torch.cat([b["token_ids"] for b in batches]).numpy()
    np.testing.assert_array_equal(stacked, arrays["token_ids"][:, :stacked.shape[1]])
    assert all(b["start_positions"].dtype == torch.int64 for b in batches)


def test_training_batches_cover_every_window_once():
    arrays = _windows(count=23)
    arrays["token_ids"][:, 0] = 1000 + np.arange(23)  # each window's first token names it
    batches = loop.torch_batches(arrays, 4, seed=1)
    assert sorted(int(t) for b in batches for t in b["token_ids"][:, 0]) == list(range(1000, 1023))
    assert [int(t) for b in batches for t in b["token_ids"][:, 0]] != list(range(1000, 1023)), "not shuffled"
    for batch in batches:
        assert batch["token_ids"].shape[1] % 16 == 0 or batch["token_ids"].shape[1] == 32


def test_parameter_groups_leave_biases_undecayed():
    model = standin.build(ref_model.QAModel, visible.STAND_IN, visible.standin_weights(visible.STAND_IN, 0))
    decayed, plain = loop.parameter_groups(model, 0.01)
    assert plain["weight_decay"] == 0.0 and any(p is model.qa_outputs.bias for p in plain["params"])
    assert any(p is model.qa_outputs.weight for p in decayed["params"])


def test_full_width_pads_with_minus_infinity():
    padded = loop.full_width(np.ones((2, 3)), 5)
    assert padded.shape == (2, 5) and np.all(np.isneginf(padded[:, 3:])) and np.all(padded[:, :3] == 1)
