"""Assignment 08, the model side: the visible checks of `QAModel` and `qa_loss`, and the helpers they share with the
hidden checks (autograde.checks.qa_pytorch.model).

`QAModel` is checked on a tiny keras-hub `BertBackbone` built on the PyTorch backend (random sizes, every weight
set from a seeded generator, dropout inside): `run_qa_model` builds the learner's module on it, gives its head
seeded weights, and calls it on padded batches in evaluation mode, again, and twice in training mode; plain data
comes back. `expect_qa_model` compares with the logits the reference computed from the same weights
(course_lib/expected/08_qa_pytorch.json; the hidden check computes them in the grader, with keras-hub on TensorFlow)
and names the usual mistakes. `qa_loss`'s helpers are in course_lib.qa_pytorch.loss.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from course_lib.checking import CheckFailed, call_learner, expect_close, passed, plain_message, quiet
from course_lib.expected import load as load_expected
from course_lib.heads import (
    INPUT_NAMES,
    TINY_BACKBONE,
    classifier_batches,
    encoder_paths,
    seeded_classifier_weights,
    some_paths,
)
from course_lib.qa_pytorch.loss import LOSS_CASES, expect_qa_loss, loss_case, run_qa_loss

STEM = "08_qa_pytorch"
BACKBONE_DROPOUT = 0.3  # inside the tiny backbone: training mode must show it, evaluation mode must not
TOL = {"atol": 1e-4, "rtol": 1e-4}
TRAINING_HINT = ("Keras layers do not follow torch's model.train() and model.eval(): call the backbone with "
                 "training=self.training")

# ----------------------------------------------------------------------------------------------
# A tiny BertBackbone on the PyTorch backend, with chosen weights


def torch_backbone(config: Mapping, weights: Mapping[str, np.ndarray] | None = None, *, dropout: float = 0.0):
    """keras-hub's BertBackbone of the sizes in `config` (this process's Keras backend), `weights` set by
    variable path, its parameters registered with torch (course_lib.pretrained.register_torch_parameters)."""
    import keras_hub

    from course_lib.pretrained import register_torch_parameters

    with quiet():
        backbone = keras_hub.models.BertBackbone(**dict(config), dropout=dropout)
    if weights is not None:
        variables = {variable.path: variable for variable in backbone.weights}
        if set(variables) != set(weights):
            raise ValueError(f"the backbone's weights are {sorted(variables)}, not {sorted(weights)}")
        for path, value in weights.items():
            variables[path].assign(np.asarray(value, np.float32))
    return register_torch_parameters(backbone)


def seeded_weights(config: Mapping, seed: int) -> tuple[dict, dict]:
    """(backbone weights by path, head {"kernel": (hidden, 2), "bias": (2,)}), float32, seeded."""
    return seeded_classifier_weights(config, 2, seed)


# ----------------------------------------------------------------------------------------------
# QAModel: running the learner's module (where the learner's code lives)


def _describe_head(head) -> dict | None:
    import torch

    if head is None:
        return None
    description = {"type": type(head).__name__, "linear": isinstance(head, torch.nn.Linear)}
    if description["linear"]:
        description.update(in_features=int(head.in_features), out_features=int(head.out_features),
                           bias=head.bias is not None)
    return description


def _parameters(model, backbone) -> dict:
    """How many of the backbone's trainable weights model.parameters() lists, and how many still require a gradient
    (its other variables, such as the dropout layers' random states, are never trained)."""
    owned = {id(variable.value): variable.value for variable in backbone.trainable_weights}
    listed = {id(p) for p in model.parameters()}
    return {"backbone_parameters": len(owned), "registered": sum(key in listed for key in owned),
            "trainable": sum(p.requires_grad for p in owned.values())}


def _call(model, inputs: Mapping, dtype) -> tuple[list, list[bool]]:
    """([start, end] as float64 arrays, whether each carries a gradient) of one call on `inputs`."""
    import torch

    tensors = [torch.as_tensor(np.asarray(inputs[name]), dtype=dtype) for name in INPUT_NAMES]
    shape = tuple(tensors[0].shape)
    try:
        with quiet():
            output = model(*tensors)
    except NotImplementedError:
        raise
    except Exception as error:
        raise CheckFailed(f"calling the QAModel on a batch of shape {shape} (token_ids, segment_ids, padding_mask) "
                          f"raised {type(error).__name__}: {plain_message(error)}") from error
    if isinstance(output, torch.Tensor):
        raise CheckFailed(f"forward returned one tensor of shape {tuple(output.shape)}; it should return a pair, "
                          "(start_logits, end_logits), each of shape (batch, seq)")
    if not isinstance(output, (tuple, list)) or len(output) != 2:
        raise CheckFailed(f"forward returned a {type(output).__name__}; it should return a pair, "
                          "(start_logits, end_logits), each of shape (batch, seq)")
    arrays, grads = [], []
    for name, value in zip(("start_logits", "end_logits"), output, strict=True):
        if not isinstance(value, torch.Tensor):
            raise CheckFailed(f"{name} is a {type(value).__name__}, not a torch tensor: keep the module's output as "
                              "tensors, so that the loss can backpropagate through them")
        arrays.append(value.detach().cpu().numpy().astype(np.float64))
        grads.append(bool(value.requires_grad))
    return arrays, grads


def run_qa_model(QAModel, config: Mapping, *, backbone_weights: Mapping, head_weights: Mapping,  # noqa: N803
                 batches: Sequence[Mapping], dropout: float = BACKBONE_DROPOUT) -> dict:
    """Build the learner's module on a tiny backbone with `backbone_weights`, give its head `head_weights`, call it
    on every batch in evaluation mode (int64 ids, int32 for the second batch), the first batch again, then twice in
    training mode. Plain data comes back; every verdict is `expect_qa_model`'s."""
    import torch

    backbone = torch_backbone(config, backbone_weights, dropout=dropout)
    with quiet():
        model = call_learner(QAModel, backbone)
    report = {"type": type(model).__name__, "is_module": isinstance(model, torch.nn.Module), "logits": None}
    if not report["is_module"]:
        return report
    head = getattr(model, "qa_outputs", None)
    report.update(keeps_backbone=getattr(model, "backbone", None) is backbone, head=_describe_head(head),
                  backbone_paths=[variable.path for variable in backbone.trainable_weights],
                  **_parameters(model, backbone))
    hidden = int(config["hidden_dim"])
    if not (report["keeps_backbone"] and report["head"] and report["head"]["linear"] and report["head"]["bias"]
            and (head.in_features, head.out_features) == (hidden, 2)):
        return report  # the verdict names what is missing before anything is called
    with torch.no_grad():
        head.weight.copy_(torch.from_numpy(np.asarray(head_weights["kernel"], np.float32).T.copy()))
        head.bias.copy_(torch.from_numpy(np.asarray(head_weights["bias"], np.float32)))
    model.eval()
    report["logits"] = [_call(model, inputs, torch.int32 if number == 1 else torch.int64)[0]
                        for number, inputs in enumerate(batches)]
    report["again"] = _call(model, batches[0], torch.int64)[0]
    model.train()
    first, grads = _call(model, batches[0], torch.int64)
    second, _ = _call(model, batches[0], torch.int64)
    report.update(training=[first, second], carries_gradient=all(grads), reached=_reached(model, backbone, batches[0]))
    model.eval()  # and back: the mode must follow every switch, not only the first
    report["eval_after_train"] = _call(model, batches[0], torch.int64)[0]
    return report


def _reached(model, backbone, inputs: Mapping) -> list[str]:
    """The paths of the backbone's weights that a loss on the logits (a fixed weighted sum, in training mode) sends
    a non-zero gradient to: what an optimizer step would change."""
    import torch

    model.zero_grad(set_to_none=True)
    tensors = [torch.as_tensor(np.asarray(inputs[name]), dtype=torch.int64) for name in INPUT_NAMES]
    with quiet():
        start, end = model(*tensors)
    if not (start.requires_grad or end.requires_grad):
        return []
    weights = torch.sin(torch.arange(1, start.numel() * 2 + 1, dtype=start.dtype)).reshape(2, *start.shape)
    (torch.sum(start * weights[0]) + torch.sum(end * weights[1])).backward()
    reached = [variable.path for variable in backbone.trainable_weights
               if variable.value.grad is not None and bool(torch.any(variable.value.grad != 0))]
    model.zero_grad(set_to_none=True)
    return reached


# ----------------------------------------------------------------------------------------------
# QAModel: the verdict (in the grader's process when grading)


def _structure_failure(report: dict, hidden: int, label: str) -> None:
    if not report["is_module"]:
        raise CheckFailed(f"[{label}] QAModel(backbone) made a {report['type']}, not a torch.nn.Module: write "
                          "class QAModel(torch.nn.Module) and call super().__init__() first in __init__")
    if not report["keeps_backbone"]:
        raise CheckFailed(f"[{label}] the module does not keep the backbone it was given as self.backbone")
    head = report["head"]
    if head is None:
        raise CheckFailed(f"[{label}] the module has no attribute qa_outputs: the head is "
                          f"self.qa_outputs = torch.nn.Linear(hidden_dim, 2)")
    if not head["linear"]:
        raise CheckFailed(f"[{label}] self.qa_outputs is a {head['type']}, not a torch.nn.Linear(hidden_dim, 2)")
    if head["in_features"] != hidden:
        raise CheckFailed(f"[{label}] self.qa_outputs takes {head['in_features']} inputs, but this backbone's vectors "
                          f"have {hidden}: read the size from the backbone (backbone.hidden_dim), do not write a "
                          "number")
    if head["out_features"] != 2:
        raise CheckFailed(f"[{label}] self.qa_outputs gives {head['out_features']} outputs per token; it should give "
                          "2, the start and the end logit")
    if not head["bias"]:
        raise CheckFailed(f"[{label}] self.qa_outputs has no bias: keep Linear's default bias=True, as 07's Dense(2)")


def _parameter_failure(report: dict, label: str) -> None:
    total = report["backbone_parameters"]
    if report["registered"] < total:
        raise CheckFailed(f"[{label}] model.parameters() lists {report['registered']} of the backbone's {total} "
                          "weights, so an optimizer built from it would not train them: assign the backbone as an "
                          "attribute, self.backbone = backbone, after super().__init__()")
    if report["trainable"] < total:
        raise CheckFailed(f"[{label}] {total - report['trainable']} of the backbone's {total} weights have "
                          "requires_grad=False: fine-tuning trains the encoder with the head; do not freeze it")


def _shape_hint(got: tuple, want: tuple) -> str:
    """What a wrong shape of the logits shows, from the shapes alone."""
    if want[0] == 1 and got == want[1:]:
        return ("on a batch of one window the batch axis is gone: squeeze() without an axis drops every axis of "
                "size 1. Take the column (logits[..., 0]) or squeeze only the last axis (squeeze(-1))")
    if got == (*want, 1):
        return "each keeps a last axis of size 1: squeeze it (squeeze(-1)), or take the column, logits[..., 0]"
    if got == want[::-1]:
        return "the batch and token axes are swapped: keep (batch, seq)"
    return "expected one logit per token, (batch, seq)"


def _mask_diagnosis(logits: Sequence, batches: Sequence[Mapping]) -> str:
    """Why the values differ, from the two probes at the end of the batches (course_lib.heads.classifier_batches)."""
    base, padded, changed = (np.asarray(x, np.float64) for x in (logits[0], logits[-2], logits[-1]))
    real = np.asarray(batches[0]["padding_mask"]) == 1
    if not np.allclose(base[:, real], padded[:, real], **TOL):
        return ("Changing only the token ids at padding positions changed the logits of real tokens: the backbone "
                "attends to the padding. Pass it the padding_mask you were given")
    if np.allclose(base, changed, **TOL):
        return "Changing a token id changed no logit: the logits must come from the backbone's sequence_output"
    return "The logits are Linear(hidden_dim, 2) of the sequence_output: column 0 the start, column 1 the end"


def expect_qa_model(report: dict, expected: Sequence, label: str, *, hidden: int, batches: Sequence[Mapping],
                    shape_mistakes=(), value_mistakes=()) -> None:
    """The verdict on `run_qa_model`'s report. `expected` holds one (2, batch, seq) array per batch, start then end;
    `shape_mistakes` are (shape, message), `value_mistakes` (index of the batch, wrong (2, batch, seq), message)."""
    _structure_failure(report, hidden, label)
    _parameter_failure(report, label)
    logits = [np.asarray(pair, np.float64) for pair in report["logits"]]
    for number, (got, want) in enumerate(zip(logits, expected, strict=True)):
        want_shape = np.shape(want)[1:]
        if got.shape[1:] != want_shape:
            # The named shape mistakes are worked out for the first batch's sizes only.
            for shape, message in shape_mistakes if number == 0 else ():
                if got.shape[1:] == tuple(int(d) for d in np.asarray(shape).reshape(-1)):
                    raise CheckFailed(f"[{label}] start_logits have shape {got.shape[1:]}, expected {want_shape}: "
                                      f"{message}")
            raise CheckFailed(f"[{label}] start_logits have shape {got.shape[1:]} on a batch of shape {want_shape}: "
                              f"{_shape_hint(got.shape[1:], want_shape)}")
    if not np.allclose(report["again"], logits[0], atol=1e-6):
        raise CheckFailed(f"[{label}] two calls in evaluation mode (model.eval()) gave different logits: dropout is "
                          "on at inference. Call the backbone with training=self.training, not training=True")
    for number, (got, want) in enumerate(zip(logits, expected, strict=True)):
        if np.allclose(got, want, **TOL):
            continue
        mistakes = [(value, message) for index, value, message in value_mistakes if index == number]
        expect_close(got, want, f"[{label}, batch of shape {np.shape(want)[1:]}] (start_logits, end_logits)",
                     mistakes=mistakes, hint=_mask_diagnosis(logits, batches), **TOL)
    if not report["carries_gradient"]:
        raise CheckFailed(f"[{label}] in training mode the logits carry no gradient (requires_grad is False): keep "
                          "them tensors computed from the parameters, without .detach(), .numpy() or torch.no_grad()")
    encoder = encoder_paths(report["backbone_paths"])
    cut = [path for path in encoder if path not in report["reached"]]
    if cut:
        raise CheckFailed(f"[{label}] a loss on the start and end logits sends no gradient to {len(cut)} of the "
                          f"encoder's {len(encoder)} weights ({some_paths(cut)}), so training would not change them, "
                          "although they have requires_grad=True: the head must read the backbone's sequence_output "
                          "itself, not a .detach()ed copy or one computed under torch.no_grad()")
    first, second = (np.asarray(pair, np.float64) for pair in report["training"])
    if np.allclose(first, second, atol=1e-6) and np.allclose(first, logits[0], atol=1e-6):
        raise CheckFailed(f"[{label}] in training mode (model.train()) the logits are those of evaluation mode: the "
                          f"backbone's dropout never acts. {TRAINING_HINT}")
    if not np.allclose(report["eval_after_train"], logits[0], atol=1e-6):
        raise CheckFailed(f"[{label}] after model.train() and then model.eval() again, the logits are not those of "
                          f"the first evaluation-mode call: dropout stayed on. {TRAINING_HINT}, read at every call")


# ----------------------------------------------------------------------------------------------
# The visible checks

MODEL_CASES = [  # label, (batch, seq) of each batch, seed
    ("batches of 3 x 7 and 2 x 12", [(3, 7), (2, 12)], 81),
    ("batches of 1 x 5 and 4 x 9", [(1, 5), (4, 9)], 82),
]


def model_case(index: int):
    """(label, backbone weights, head weights, batches) of a visible case, on TINY_BACKBONE."""
    label, shapes, seed = MODEL_CASES[index]
    backbone, head = seeded_weights(TINY_BACKBONE, seed)
    return label, backbone, head, classifier_batches(np.random.default_rng(seed), TINY_BACKBONE, shapes)


def check_qa_model(QAModel) -> None:  # noqa: N803
    """Logits of a tiny BERT with seeded weights (on the PyTorch backend) on padded batches: evaluation and training
    mode, gradients, trainable encoder."""
    stored = load_expected(STEM, "model", "QAModel")
    for index in range(len(MODEL_CASES)):
        label, backbone, head, batches = model_case(index)
        case = stored[label]
        report = run_qa_model(QAModel, TINY_BACKBONE, backbone_weights=backbone, head_weights=head, batches=batches)
        shape_mistakes = [(entry["value"], entry["message"]) for entry in case["shapes"].values()]
        value_mistakes = [(number, entry["value"], entry["message"])
                          for number, wrong in enumerate(case["mistakes"]) for entry in wrong.values()]
        expect_qa_model(report, list(case["logits"]), label, hidden=TINY_BACKBONE["hidden_dim"], batches=batches,
                        shape_mistakes=shape_mistakes, value_mistakes=value_mistakes)
    passed("QAModel gives the start and end logits of Linear(hidden_dim, 2) on a tiny BERT's sequence output (with "
           "its padding mask), trains the encoder, and switches the backbone's dropout with train() and eval()")


def check_qa_loss(qa_loss) -> None:
    """Small batches with answers anywhere (position 0, the last token), large logits: value, type and gradient."""
    stored = load_expected(STEM, "model", "qa_loss")
    for index in range(len(LOSS_CASES)):
        label, start, end, start_positions, end_positions = loss_case(index)
        case = stored[label]
        report = run_qa_loss(qa_loss, start, end, start_positions, end_positions)
        mistakes = [(entry["value"], entry["message"]) for entry in case["mistakes"].values()]
        expect_qa_loss(report, float(case["loss"]), np.asarray(case["gradient"]), label, mistakes=mistakes)
    passed("qa_loss is the mean of the start and end cross-entropies, a scalar tensor the gradient flows through")

