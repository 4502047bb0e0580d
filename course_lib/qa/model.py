"""Assignment 07, the span head: the visible check of `build_qa_model` and the helpers its hidden check shares.

`build_qa_model(backbone, dropout)` is checked as assignment 06's token classifier is (course_lib.heads): on a
tiny keras-hub `BertBackbone` with every weight set from a seeded generator, `run_qa_model` builds the learner's
model, finds its head and gives it the check's weights, and calls it on padded batches; `expect_qa_model` compares
the two outputs, stacked as (2, batch, seq) with the start logits first, with what the reference computed with the
same weights (`course_lib/expected/07_qa.json`) and names the usual mistakes. The head may be one Dense(2) or two
Dense(1) (one per end): the check's (hidden, 2) kernel is given column by column to the layer that feeds each
output. The hidden check (autograde.checks.qa.model) runs the same helpers in the student's kernel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from course_lib.checking import CheckFailed, call_learner, expect_close, passed, quiet, to_array
from course_lib.expected import load as load_expected
from course_lib.heads import (
    HEAD_DROPOUT,
    TINY_BACKBONE,
    call_built_model,
    classifier_batches,
    expect_deterministic,
    expect_trained_encoder_and_dropout,
    gradient_reach,
    head_candidates,
    seeded_classifier_weights,
    tiny_backbone,
)

STEM = "07_qa"
TOL = {"atol": 1e-4, "rtol": 1e-4}
OUTPUTS = "a list of two outputs, [start_logits, end_logits], each of shape (batch, seq)"

# ----------------------------------------------------------------------------------------------
# Running the learner's model (where the learner's code lives)


def _layer_facts(layer) -> dict:
    bias = getattr(layer, "bias", None)
    activation = getattr(layer, "activation", None)
    return {"name": layer.name, "type": type(layer).__name__, "kernel": [int(d) for d in layer.kernel.shape],
            "bias": bias is not None, "activation": getattr(activation, "__name__", str(activation))}


def _outputs(model, inputs: Mapping, training: bool | None) -> tuple[str, list[np.ndarray]]:
    """(how the model returned its outputs: "list", "tuple" or "tensor"; the outputs as arrays)."""
    output = call_built_model(model, inputs, training, "build_qa_model")
    if isinstance(output, Mapping):
        raise CheckFailed(f"the model returns a dict (keys {sorted(output)}); it should return {OUTPUTS}: "
                          "keras.Model(inputs, [start_logits, end_logits])")
    if isinstance(output, (list, tuple)):
        return type(output).__name__, [to_array(item, f"output {i} of the model") for i, item in enumerate(output)]
    return "tensor", [to_array(output, "the model's output")]


def _stacked(model, inputs: Mapping, training: bool | None) -> np.ndarray:
    return np.stack(_outputs(model, inputs, training)[1])


def _layout(heads: list, hidden: int) -> list | None:
    """The head layers in the order of the kernel's columns: [one Dense(2)], [two Dense(1)], or None."""
    pairs = [layer for layer in heads if tuple(layer.kernel.shape) == (hidden, 2)]
    singles = [layer for layer in heads if tuple(layer.kernel.shape) == (hidden, 1)]
    found = pairs if len(pairs) == 1 and not singles else singles if len(singles) == 2 and not pairs else None
    if found is None or any(getattr(layer, "bias", None) is None for layer in found):
        return None
    return found


def _give(layout: list, kernel, bias) -> None:
    kernel, bias = np.asarray(kernel, np.float32), np.asarray(bias, np.float32)
    if len(layout) == 1:
        layout[0].kernel.assign(kernel)
        layout[0].bias.assign(bias)
        return
    for column, layer in enumerate(layout):
        layer.kernel.assign(kernel[:, column:column + 1])
        layer.bias.assign(bias[column:column + 1])


def _feeding_order(model, layout: list, kernel, bias, inputs: Mapping) -> list:
    """Two Dense(1) heads: the one whose values reach the first output (the start) first. With the start column in
    one layer and zeros in the other, the output fed by the zeros is the same at every token (a softmax too)."""
    if len(layout) == 1:
        return layout
    _give(layout, np.concatenate([np.asarray(kernel)[:, :1], np.zeros_like(kernel)[:, :1]], axis=1),
          np.array([bias[0], 0.0]))
    outputs = _outputs(model, inputs, training=False)[1]
    if len(outputs) != 2 or outputs[0].ndim != 2:
        return layout
    varies = [float(np.ptp(output[0])) > 1e-6 for output in outputs]  # the first row has no padding
    return layout[::-1] if varies == [False, True] else layout


def _built(build_qa_model, backbone, dropout: float):
    import keras

    with quiet():
        model = call_learner(build_qa_model, backbone, dropout=dropout)
    if model is None:
        raise CheckFailed("build_qa_model returned None: did you forget `return keras.Model(...)`?")
    if not isinstance(model, keras.Model):
        raise CheckFailed(f"build_qa_model should return a keras.Model, got a {type(model).__name__}: return "
                          "keras.Model(inputs, [start_logits, end_logits])")
    return model


def run_qa_model(build_qa_model, config: Mapping, *, backbone_weights: Mapping, head_weights: Mapping,
                 batches: Sequence[Mapping]) -> dict:
    """Build the learner's model on a tiny backbone with `backbone_weights`, give its head `head_weights` (a
    (hidden, 2) kernel and a bias of 2), and call it on every batch (training=False), on the first one again, with
    training=True, and as built with dropout=0. Plain data comes back: how the outputs came and their shapes, the
    layers that could be the head, which backbone weights train, and the outputs stacked (2, batch, seq) when
    there are two; every verdict is `expect_qa_model`'s."""
    backbone = tiny_backbone(config, backbone_weights)
    model = _built(build_qa_model, backbone, HEAD_DROPOUT)
    kind, first = _outputs(model, batches[0], training=False)
    heads = head_candidates(model, backbone)
    report = {"kind": kind, "shapes": [list(output.shape) for output in first],
              "heads": [_layer_facts(layer) for layer in heads], **gradient_reach(model, backbone, batches[0]),
              "outputs": None}
    layout = _layout(heads, config["hidden_dim"])
    if layout is None or len(first) != 2 or first[0].shape != first[1].shape:
        return report
    kernel, bias = head_weights["kernel"], head_weights["bias"]
    layout = _feeding_order(model, layout, kernel, bias, batches[0])
    _give(layout, kernel, bias)
    report["layout"] = [layer.name for layer in layout]
    report["outputs"] = [_stacked(model, inputs, training=False) for inputs in batches]
    report["again"] = _stacked(model, batches[0], training=False)
    report["no_training_argument"] = _stacked(model, batches[0], training=None)
    report["training"] = _stacked(model, batches[0], training=True)
    without = _built(build_qa_model, backbone, 0.0)
    kind, outputs = _outputs(without, batches[0], training=False)
    again = _layout(head_candidates(without, backbone), config["hidden_dim"])
    if again is not None and len(outputs) == 2:
        _give(_feeding_order(without, again, kernel, bias, batches[0]), kernel, bias)
        report["training_without_dropout"] = _stacked(without, batches[0], training=True)
    return report


# ----------------------------------------------------------------------------------------------
# The verdict (in the grader's process when grading)


def _shapes(value) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(d) for d in np.ravel(shape)) for shape in value)


def _structure_failure(report: dict, want: tuple, shape_mistakes, label: str) -> None:
    got = _shapes(report["shapes"])
    if got == want:
        return
    what = (f"one tensor of shape {got[0]}" if report["kind"] == "tensor" else
            f"a {report['kind']} of {len(got)} output{'s' if len(got) != 1 else ''} of shapes {list(got)}")
    for shapes, message in shape_mistakes:
        if _shapes(shapes) == got:
            raise CheckFailed(f"[{label}] the model returns {what}: {message}")
    raise CheckFailed(f"[{label}] the model returns {what}; it should return {OUTPUTS}, here {want[0]}")


def _head_failure(report: dict, hidden: int, label: str) -> None:
    heads = report["heads"]
    found = "; ".join(f"{h['name']} ({h['type']}, kernel {tuple(h['kernel'])})" for h in heads) or "none"
    sizes = [tuple(h["kernel"]) for h in heads if h["kernel"][0] == hidden]
    unbiased = [h["name"] for h in heads if tuple(h["kernel"]) in ((hidden, 2), (hidden, 1)) and not h["bias"]]
    if unbiased:
        why = f"{', '.join(unbiased)} has no bias: z = hW + b, keep Dense's default use_bias=True"
    elif sizes == [(hidden, 1)]:
        why = ("the head has one unit, Dense(1): one logit per token cannot score both where the answer starts and "
               "where it ends. Use Dense(2), one unit for the start and one for the end")
    elif len(sizes) == 1 and sizes[0][1] > 2:
        why = (f"the head has {sizes[0][1]} units: a span needs exactly two logits per token, Dense(2) (column 0 the "
               "start, column 1 the end)")
    elif sum(size == (hidden, 2) for size in sizes) > 1:
        why = "several layers have a kernel of shape (hidden_dim, 2): the head is one Dense(2)"
    else:
        why = ("no layer outside the backbone reads the sequence_output with a kernel of shape (hidden_dim, 2) = "
               f"({hidden}, 2). The head is one keras.layers.Dense(2) on the sequence_output (or two Dense(1), one "
               "per end)")
    raise CheckFailed(f"[{label}] {why}. Layers with a kernel outside the backbone: {found}")


def _mask_diagnosis(outputs: Sequence, batches: Sequence[Mapping]) -> str:
    """Why the values differ, from the two probes at the end of the batches (course_lib.heads's
    classifier_batches: the padding given other token ids, then one real token changed)."""
    base, padded, changed = (np.asarray(outputs[i], np.float64) for i in (0, -2, -1))
    real = np.asarray(batches[0]["padding_mask"]) == 1
    if not np.allclose(base[:, real], padded[:, real], **TOL):
        return ("Changing only the token ids at padding positions (padding_mask 0) changed the logits of real "
                "tokens: the backbone attends to the padding. Pass it the padding_mask of its inputs, unchanged "
                "(call it on its whole input dict)")
    if np.allclose(base, changed, **TOL):
        return "Changing a token id changed no logit: the logits must come from the backbone's sequence_output"
    return ""


def expect_qa_model(report: dict, expected: Sequence, label: str, *, hidden: int, batches: Sequence[Mapping],
                    shape_mistakes=(), value_mistakes=()) -> None:
    """The verdict on `run_qa_model`'s report: the outputs' form and shapes, the head, determinism, values (naming
    the usual mistakes), a trainable encoder, the dropout's place and rate. `expected` holds the outputs of each
    batch stacked (2, batch, seq); `value_mistakes` are (index of the batch, wrong outputs, message)."""
    want = tuple(tuple(np.shape(expected[0])[1:]) for _ in range(2))
    _structure_failure(report, want, shape_mistakes, label)
    if report["outputs"] is None:
        _head_failure(report, hidden, label)
    outputs = report["outputs"]
    for got, right in zip(outputs, expected, strict=True):
        if np.shape(got) != np.shape(right):
            raise CheckFailed(f"[{label}] on a batch of shape {np.shape(right)[1:]} the outputs have shape "
                              f"{np.shape(got)[1:]}: the model must accept any batch size and sequence length")
    expect_deterministic(report, outputs[0], label)
    for index, (got, right) in enumerate(zip(outputs, expected, strict=True)):
        if np.allclose(got, right, **TOL):
            continue
        mistakes = [(value, message) for number, value, message in value_mistakes if number == index]
        expect_close(got, right, f"[{label}, batch of shape {np.shape(right)[1:]}] the pair "
                     "[start_logits, end_logits]", mistakes=mistakes,
                     hint=(_mask_diagnosis(outputs, batches) or "start_logits and end_logits are columns 0 and 1 "
                           "of Dense(2) on the sequence_output, without activation") + " (the first index is 0 for "
                     "start_logits, 1 for end_logits)", **TOL)
    expect_trained_encoder_and_dropout(report, outputs[0], label)


# ----------------------------------------------------------------------------------------------
# The visible check

QA_CASES = [  # label, (batch, seq) of each batch, seed
    ("batches of 3 x 9 and 2 x 14", [(3, 9), (2, 14)], 71),
    ("batches of 2 x 6 and 1 x 4", [(2, 6), (1, 4)], 72),
]


def qa_case(index: int):
    """(label, backbone weights, head weights, batches) of a visible case: the head's kernel is (hidden, 2)."""
    label, shapes, seed = QA_CASES[index]
    backbone, head = seeded_classifier_weights(TINY_BACKBONE, 2, seed)
    return label, backbone, head, classifier_batches(np.random.default_rng(seed), TINY_BACKBONE, shapes)


def check_build_qa_model(build_qa_model) -> None:
    """Start and end logits on padded batches of a tiny BERT with seeded weights; trainable encoder; dropout
    before the head."""
    stored = load_expected(STEM, "model", "build_qa_model")
    for index in range(len(QA_CASES)):
        label, backbone, head, batches = qa_case(index)
        case = stored[label]
        report = run_qa_model(build_qa_model, TINY_BACKBONE, backbone_weights=backbone, head_weights=head,
                              batches=batches)
        shape_mistakes = [(entry["value"], entry["message"]) for entry in case["shapes"].values()]
        value_mistakes = [(number, entry["value"], entry["message"])
                          for number, wrong in enumerate(case["mistakes"]) for entry in wrong.values()]
        expect_qa_model(report, list(case["outputs"]), label, hidden=TINY_BACKBONE["hidden_dim"], batches=batches,
                        shape_mistakes=shape_mistakes, value_mistakes=value_mistakes)
    passed("build_qa_model gives [start_logits, end_logits] of a Dense(2) head on the sequence output of a tiny BERT "
           "(with its padding mask), keeps the encoder trainable and applies dropout before the head")
