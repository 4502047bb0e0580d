"""Assignment 08, the training side: the visible checks of `train_step` and `evaluate`, and the helpers they share
with the hidden checks (autograde.checks.qa_pytorch.training).

Both run the learner's function on a stand-in network small enough to follow in NumPy (course_lib.qa_pytorch.standin)
with chosen weights. `run_train_steps` builds the optimizer (SGD or AdamW) and a LambdaLR schedule of given factors,
calls train_step on a few batches and returns, after every step, what it returned, the learning rate and every weight.
`run_evaluate` calls evaluate on a model in training mode whose backbone has dropout, and returns what came back with
the backbone's record of its calls (training mode? gradients recorded?) and the mode the model was left in. The
verdicts, `expect_train_steps` and `expect_evaluation`, compare with the reference's simulation
(course_lib/expected/08_qa_pytorch.json; the hidden checks simulate in the grader) and name the usual mistakes.
The visible checks give the learner's functions a stand-in loss in place of their qa_loss, so that a mistake in
qa_loss never fails them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from course_lib.checking import CheckFailed, call_learner, expect_close, parts_replaced, passed, quiet
from course_lib.expected import load as load_expected
from course_lib.qa_pytorch import standin

STEM = "08_qa_pytorch"
BATCH_KEYS = ("token_ids", "segment_ids", "padding_mask", "start_positions", "end_positions")
STAND_IN = {"vocabulary_size": 20, "hidden_dim": 5, "num_segments": 2}
EVALUATION_DROPOUT = 0.5  # the stand-in's dropout when evaluate is checked: left on, it changes every logit
WEIGHT_TOL = {"atol": 2e-5, "rtol": 1e-4}
LOSS_TOL = {"atol": 1e-5, "rtol": 1e-4}
ORDER = ("optimizer.zero_grad(); forward; loss = qa_loss(...); loss.backward(); "
         "torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm); optimizer.step(); scheduler.step(); "
         "return loss.item()")

# ----------------------------------------------------------------------------------------------
# Inputs


def standin_weights(config: Mapping, seed: int) -> dict[str, np.ndarray]:
    """float32 weights of the stand-in network by standin.WEIGHT_NAMES, from a seeded generator."""
    rng = np.random.default_rng(seed)
    hidden = config["hidden_dim"]
    return {"token_embedding": rng.standard_normal((config["vocabulary_size"], hidden)).astype(np.float32),
            "segment_embedding": (0.5 * rng.standard_normal((config["num_segments"], hidden))).astype(np.float32),
            "kernel": (rng.standard_normal((hidden, 2)) / np.sqrt(hidden)).astype(np.float32),
            "bias": (0.2 * rng.standard_normal(2)).astype(np.float32)}


def standin_batches(rng: np.random.Generator, config: Mapping, shapes: Sequence[tuple[int, int]]) -> list[dict]:
    """Windows like the notebook's, one dict of int64 arrays per (batch, seq): [CLS], a question (segment 0),
    context (segment 1), padding; the answer's start and end among the real tokens, (0, 0) for some windows."""
    batches = []
    for batch, seq in shapes:
        lengths = rng.integers(max(2, seq // 2), seq + 1, size=batch)
        lengths[0] = seq
        mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)
        ids = rng.integers(1, config["vocabulary_size"], size=(batch, seq)) * mask
        question = rng.integers(1, 3, size=batch)
        segments = ((np.arange(seq)[None, :] > question[:, None]) * mask).astype(np.int64)
        start = np.array([rng.integers(0, length) for length in lengths])
        end = np.minimum(start + rng.integers(0, 3, size=batch), lengths - 1)
        if batch > 1:
            start[-1] = end[-1] = 0  # a window without the answer points at [CLS]
        batches.append({"token_ids": ids.astype(np.int64), "segment_ids": segments, "padding_mask": mask,
                        "start_positions": start.astype(np.int64), "end_positions": end.astype(np.int64)})
    return batches


def stale_gradients(weights: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Gradients left over from before train_step is called (a backward pass elsewhere, not cleared), one per weight:
    a fixed pattern of about the size of a step's own, so a step that keeps them moves the weights visibly."""
    return {name: np.sin(np.arange(1, np.size(value) + 1)).reshape(np.shape(value)) for name, value in weights.items()}


def _tensors(batch: Mapping) -> dict:
    import torch

    return {key: torch.as_tensor(np.asarray(batch[key], np.int64)) for key in BATCH_KEYS}


def _number(value) -> tuple[str, float | None]:
    """(type name, the number it holds or None)."""
    name = type(value).__name__
    try:
        if hasattr(value, "detach"):
            value = value.detach().cpu().numpy()
        array = np.asarray(value, np.float64)
    except (TypeError, ValueError, RuntimeError):
        return name, None
    return name, float(array.reshape(-1)[0]) if array.size == 1 else None


# ----------------------------------------------------------------------------------------------
# train_step: running the learner's function, and the verdict


def _optimizer(model, settings: Mapping):
    import torch

    if settings["name"] == "sgd":
        return torch.optim.SGD(model.parameters(), lr=settings["lr"])
    return torch.optim.AdamW(model.parameters(), lr=settings["lr"], weight_decay=settings.get("weight_decay", 0.01),
                             eps=settings.get("eps", 1e-8), betas=tuple(settings.get("betas", (0.9, 0.999))))


def run_train_steps(train_step, model_class, config: Mapping, weights: Mapping, batches: Sequence[Mapping], *,
                    optimizer: Mapping, factors: Sequence[float], max_grad_norm: float | None = None,
                    stale: Mapping | None = None) -> dict:
    """`train_step` on each batch, in order, with a fresh model(StandInBackbone) given `weights` (and `stale`
    gradients left in .grad, when given), the optimizer of `optimizer` ({"name": "sgd" or "adamw", "lr", ...}) and
    LambdaLR(factors[k] after k steps); max_grad_norm is passed only when given. After each step: what train_step
    returned, the learning rate and the weights."""
    import torch

    model = standin.build(model_class, config, weights)
    if stale is not None:
        standin.set_gradients(model, stale)
    model.train()
    chosen = _optimizer(model, optimizer)
    factors = [float(f) for f in factors]
    scheduler = torch.optim.lr_scheduler.LambdaLR(chosen, lambda k: factors[min(k, len(factors) - 1)])
    extra = {} if max_grad_norm is None else {"max_grad_norm": float(max_grad_norm)}
    steps = []
    for number, batch in enumerate(batches, 1):
        try:
            with quiet():
                returned = call_learner(train_step, model, _tensors(batch), chosen, scheduler, **extra)
        except CheckFailed as failure:
            if "does not require grad" in str(failure):
                raise CheckFailed(f"at step {number}, {failure}. The loss has no gradient history: was the forward "
                                  "pass or the loss computed under torch.no_grad(), or detached, before "
                                  "loss.backward()?") from failure.__cause__
            raise
        kind, value = _number(returned)
        steps.append({"type": kind, "loss": value, "lr": float(chosen.param_groups[0]["lr"]),
                      "weights": standin.get_weights(model)})
    return {"steps": steps}


def same_steps(got: Sequence[Mapping], want: Sequence[Mapping]) -> bool:
    for step, reference in zip(got, want, strict=True):
        if step["loss"] is None or not np.isclose(step["loss"], reference["loss"], **LOSS_TOL):
            return False
        if not np.isclose(step["lr"], reference["lr"], rtol=1e-6, atol=1e-12):
            return False
        for name, value in reference["weights"].items():
            if not np.allclose(step["weights"][name], value, **WEIGHT_TOL):
                return False
    return True


FLOAT_TYPES = ("float", "float64", "float32")


def expect_train_steps(report: dict, expected: Sequence[Mapping], label: str, *, mistakes=()) -> None:
    """The verdict on `run_train_steps`'s report; `expected` and each mistake's steps are lists of {"loss", "lr",
    "weights"} (the reference's simulation), `mistakes` (steps, message) pairs."""
    steps = report["steps"]
    for number, step in enumerate(steps, 1):
        if step["type"] == "Tensor":
            raise CheckFailed(f"[{label}] step {number}: train_step returned a Tensor; return the loss as a Python "
                              "number, loss.item() (a tensor keeps the step's graph alive, and the learning curves "
                              "need numbers)")
        if step["type"] not in FLOAT_TYPES:
            raise CheckFailed(f"[{label}] step {number}: train_step returned a {step['type']}; return the loss as a "
                              "Python number, loss.item()")
    if same_steps(steps, expected):
        return
    named = [message for wrong, message in mistakes if same_steps(steps, wrong)]
    if named:  # two mistakes can give the same steps (no clipping, and clipping above every gradient's norm)
        raise CheckFailed(f"[{label}] " + " Or: ".join(dict.fromkeys(named)))
    for number, (step, reference) in enumerate(zip(steps, expected, strict=True), 1):
        if not np.isclose(step["loss"], reference["loss"], **LOSS_TOL):
            raise CheckFailed(f"[{label}] step {number} returned the loss {step['loss']:.6g}, expected "
                              f"{reference['loss']:.6g}: return the loss of this batch computed with qa_loss, before "
                              "the update")
        if not np.isclose(step["lr"], reference["lr"], rtol=1e-6, atol=1e-12):
            raise CheckFailed(f"[{label}] after step {number} the learning rate is {step['lr']:.6g}, expected "
                              f"{reference['lr']:.6g}: call scheduler.step() once per step, after optimizer.step()")
        for name, value in reference["weights"].items():
            got = np.asarray(step["weights"][name])
            if not np.allclose(got, value, **WEIGHT_TOL):
                raise CheckFailed(f"[{label}] after step {number} the weights ({name}) differ from the reference's by "
                                  f"up to {np.max(np.abs(got - value)):.3g}. One step is: {ORDER}")


# ----------------------------------------------------------------------------------------------
# evaluate: running the learner's function, and the verdict

RESULT_KEYS = ("loss", "start_logits", "end_logits")


def run_evaluate(evaluate, model_class, config: Mapping, weights: Mapping, batches: Sequence[Mapping], *,
                 dropout: float = EVALUATION_DROPOUT, start_training: bool = True) -> dict:
    """`evaluate(model, batches)` on a model(StandInBackbone with dropout) in training mode (in evaluation mode when
    not `start_training`: the notebook asks for training mode afterwards either way); what came back, the
    backbone's record of its calls, the mode the model was left in and whether its weights changed."""
    model = standin.build(model_class, config, weights, dropout=dropout)
    model.train(start_training)
    before = standin.get_weights(model)
    model.backbone.calls.clear()
    try:
        with quiet():
            result = call_learner(evaluate, model, [_tensors(batch) for batch in batches])
    except CheckFailed as failure:
        if "requires grad" in str(failure):
            raise CheckFailed(f"{failure}. The logits still record their gradient history: run the loop under "
                              "`with torch.no_grad():`, and .numpy() works on them") from failure.__cause__
        raise
    after = standin.get_weights(model)
    report = {"type": type(result).__name__, "keys": None, "calls": list(model.backbone.calls),
              "training_after": bool(model.training),
              "weights_changed": any(not np.array_equal(before[name], after[name]) for name in before)}
    if not isinstance(result, Mapping):
        return report
    report["keys"] = sorted(str(key) for key in result)
    if "loss" in result:
        report["loss_type"], report["loss"] = _number(result["loss"])
    for key in RESULT_KEYS[1:]:
        if key in result:
            value = result[key]
            report[f"{key}_type"] = type(value).__name__
            if hasattr(value, "detach"):
                value = value.detach().cpu().numpy()
            try:
                report[key] = np.asarray(value, np.float64)
            except (TypeError, ValueError):
                report[key] = None
    return report


def expect_evaluation(report: dict, expected: Mapping, label: str, *, mistakes=()) -> None:
    """The verdict on `run_evaluate`'s report; `expected` is evaluate_numpy's result, `mistakes` (loss, message)."""
    if report["keys"] is None:
        raise CheckFailed(f"[{label}] evaluate returned a {report['type']}; it should return a dict with the keys "
                          "'loss', 'start_logits' and 'end_logits'")
    missing = [key for key in RESULT_KEYS if key not in report["keys"]]
    if missing:
        raise CheckFailed(f"[{label}] the dict evaluate returned has no {', '.join(repr(k) for k in missing)} (it has "
                          f"{report['keys']})")
    calls = report["calls"]
    if not calls:
        raise CheckFailed(f"[{label}] evaluate never called the model")
    if any(call["training"] for call in calls):
        raise CheckFailed(f"[{label}] the model ran in training mode, with dropout on: call model.eval() before the "
                          "loop (and model.train() after it)")
    if any(call["grad_enabled"] for call in calls):
        raise CheckFailed(f"[{label}] gradients were being recorded while evaluating: run the loop under `with "
                          "torch.no_grad():` (nothing is trained here, and the recorded graph costs memory and time)")
    for key in RESULT_KEYS[1:]:
        if report[f"{key}_type"] != "ndarray":
            raise CheckFailed(f"[{label}] {key} is a {report[f'{key}_type']}: return one NumPy array of every window's "
                              "logits (tensor.cpu().numpy() of each batch, concatenated in order)")
        want = expected[key]
        got = report[key]
        if got is None or got.shape != np.shape(want):
            shape = None if got is None else got.shape
            raise CheckFailed(f"[{label}] {key} has shape {shape}, expected {np.shape(want)} (windows, seq): the "
                              "batches' rows, concatenated in order")
        expect_close(got, want, f"[{label}] {key}", hint="the logits of every batch, in the order of the batches",
                     atol=1e-5, rtol=1e-4)
    if report["loss_type"] not in FLOAT_TYPES:
        raise CheckFailed(f"[{label}] the loss is a {report['loss_type']}: return a Python number (the sum of "
                          "loss.item() * batch size over the batches, divided by the number of windows)")
    expect_close(report["loss"], expected["loss"], f"[{label}] the loss", mistakes=mistakes, **LOSS_TOL)
    if not report["training_after"]:
        raise CheckFailed(f"[{label}] evaluate left the model in evaluation mode: call model.train() before returning "
                          "(whatever mode it was in before), or the training that follows runs without dropout")
    if report["weights_changed"]:
        raise CheckFailed(f"[{label}] evaluate changed the model's weights: it only runs the model")


# ----------------------------------------------------------------------------------------------
# The visible checks

TRAIN_CASES = [  # label, optimizer, schedule factors, max_grad_norm (None: train_step's default), shapes, seed
    ("SGD, max_grad_norm=0.05, 3 steps", {"name": "sgd", "lr": 0.5}, [1.0, 0.5, 0.25, 0.125], 0.05,
     [(4, 7), (3, 9), (4, 7)], 101),
    ("AdamW, the default max_grad_norm, 3 steps", {"name": "adamw", "lr": 0.05, "weight_decay": 0.01, "eps": 1e-3},
     [1.0, 0.7, 0.4, 0.1], None, [(4, 8), (4, 8), (2, 8)], 102),
]
EVALUATION_CASES = [  # label, shapes (one sequence length per case), seed
    ("batches of 4, 4 and 2 windows of 9 tokens", [(4, 9), (4, 9), (2, 9)], 111),
    ("one batch of 3 windows of 6 tokens, the model handed over in evaluation mode", [(3, 6)], 112),
]


def train_case(index: int):
    """(label, optimizer, factors, max_grad_norm, weights, batches) of a visible train_step case."""
    label, optimizer, factors, max_grad_norm, shapes, seed = TRAIN_CASES[index]
    rng = np.random.default_rng(seed)
    return label, optimizer, factors, max_grad_norm, standin_weights(STAND_IN, seed), standin_batches(rng, STAND_IN,
                                                                                                       shapes)


def evaluation_case(index: int):
    """(label, weights, batches) of a visible evaluate case."""
    label, shapes, seed = EVALUATION_CASES[index]
    return label, standin_weights(STAND_IN, seed), standin_batches(np.random.default_rng(seed), STAND_IN, shapes)


def check_train_step(train_step) -> None:
    """A few steps with SGD and with AdamW on a stand-in network (and a stand-in loss in place of your qa_loss),
    starting with gradients left over in .grad: the losses returned, the learning rates and every weight after each
    step."""
    stored = load_expected(STEM, "training", "train_step")
    for index in range(len(TRAIN_CASES)):
        label, optimizer, factors, max_grad_norm, weights, batches = train_case(index)
        case = stored[label]
        with parts_replaced(train_step, qa_loss=standin.stand_in_loss):
            report = run_train_steps(train_step, standin.StandInQAModel, STAND_IN, weights, batches,
                                     optimizer=optimizer, factors=factors, max_grad_norm=max_grad_norm,
                                     stale=stale_gradients(weights))
        mistakes = [(entry["value"], entry["message"]) for entry in case["mistakes"].values()]
        expect_train_steps(report, case["steps"], label, mistakes=mistakes)
    passed("train_step clears the gradients, backpropagates the loss, clips the gradients' norm, steps the optimizer "
           "then the schedule, and returns the loss as a number")


def check_evaluate(evaluate) -> None:
    """evaluate on a stand-in network with dropout (and a stand-in loss in place of your qa_loss): evaluation mode,
    no gradients, the loss over windows, every window's logits, training mode afterwards."""
    stored = load_expected(STEM, "training", "evaluate")
    for index in range(len(EVALUATION_CASES)):
        label, weights, batches = evaluation_case(index)
        case = stored[label]
        with parts_replaced(evaluate, qa_loss=standin.stand_in_loss):
            report = run_evaluate(evaluate, standin.StandInQAModel, STAND_IN, weights, batches,
                                  start_training=index == 0)
        mistakes = [(entry["value"], entry["message"]) for entry in case["mistakes"].values()]
        expect_evaluation(report, case["result"], label, mistakes=mistakes)
    passed("evaluate runs the model in evaluation mode without recording gradients, returns the loss over windows "
           "and every window's logits as NumPy arrays, and leaves the model in training mode")
