"""Assignment 06, the model side: the visible checks of `build_token_classifier` and `masked_token_loss`, and the
helpers both checks share.

`build_token_classifier` is checked on a tiny keras-hub `BertBackbone` (course_lib.heads: random sizes, every weight
set from a seeded generator, dropout 0 inside the encoder): `run_token_classifier` builds the learner's model on it,
sets the head's weights, and calls it on padded batches; `expect_token_classifier` compares with logits the
reference computed with the same weights (`course_lib/expected/06_ner.json`) and names the usual mistakes.
`masked_token_loss` is called eagerly with int32 and int64 labels, and as Keras calls a loss during `fit`
(course_lib.ner.loss: inside a `tf.function`, labels as float32, shapes unknown until run). The hidden checks
(autograde.checks.ner.model) run the same helpers in the student's kernel, on random cases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from course_lib.checking import CheckFailed, call_learner, expect_close, passed, quiet, to_array
from course_lib.expected import load as load_expected
from course_lib.heads import (
    HEAD_DROPOUT,
    TINY_BACKBONE,
    TOL,
    call_built_model,
    classifier_batches,
    expect_deterministic,
    expect_trained_encoder_and_dropout,
    gradient_reach,
    head_candidates,
    seeded_classifier_weights,
    tiny_backbone,
)
from course_lib.ner.loss import IGNORE, LOSS_CASES, expect_loss, loss_case, run_loss

STEM = "06_ner"

# ----------------------------------------------------------------------------------------------
# build_token_classifier: running the learner's model (where the learner's code lives)


def _describe(layer) -> dict:
    activation = getattr(layer, "activation", None)
    bias = getattr(layer, "bias", None)
    return {"name": layer.name, "type": type(layer).__name__, "kernel": [int(d) for d in layer.kernel.shape],
            "bias": None if bias is None else [int(d) for d in bias.shape],
            "activation": getattr(activation, "__name__", str(activation))}


def _call_model(model, inputs: Mapping, training: bool | None) -> np.ndarray:
    output = call_built_model(model, inputs, training, "build_token_classifier")
    if isinstance(output, Mapping):
        raise CheckFailed(
            f"the model returns a dict (keys {sorted(output)}), not logits: take backbone(inputs)[\"sequence_output\"] "
            "and put the Dense head on it")
    if isinstance(output, (list, tuple)):
        raise CheckFailed(f"the model returns a {type(output).__name__} of {len(output)} outputs; it should return "
                          "one tensor of logits (batch, seq, num_labels)")
    return to_array(output, "the model's output")


def run_token_classifier(build_token_classifier, config: Mapping, num_labels: int, *, backbone_weights: Mapping,
                         head_weights: Mapping, batches: Sequence[Mapping]) -> dict:
    """Build the learner's model on a tiny backbone with `backbone_weights`, give its head `head_weights`, and
    call it on every batch (training=False), the first one again, with training=True, and as built with
    dropout=0. Plain data comes back: output shapes, the layers that could be the head, which backbone
    weights train, and logits; every verdict is `expect_token_classifier`'s."""
    import keras

    backbone = tiny_backbone(config, backbone_weights)
    with quiet():
        model = call_learner(build_token_classifier, backbone, num_labels, dropout=HEAD_DROPOUT)
    if model is None:
        raise CheckFailed("build_token_classifier returned None: did you forget `return keras.Model(...)`?")
    if not isinstance(model, keras.Model):
        raise CheckFailed(f"build_token_classifier should return a keras.Model, got a {type(model).__name__}: "
                          "return keras.Model(inputs, logits)")
    first = _call_model(model, batches[0], training=False)
    report = {"shape": list(first.shape), "heads": [_describe(layer) for layer in head_candidates(model, backbone)],
              **gradient_reach(model, backbone, batches[0]), "logits": None}
    hidden = config["hidden_dim"]
    heads = [layer for layer in head_candidates(model, backbone) if tuple(layer.kernel.shape) == (hidden, num_labels)]
    if len(heads) != 1 or getattr(heads[0], "bias", None) is None:
        return report
    heads[0].kernel.assign(np.asarray(head_weights["kernel"], np.float32))
    heads[0].bias.assign(np.asarray(head_weights["bias"], np.float32))
    report["logits"] = [_call_model(model, inputs, training=False) for inputs in batches]
    report["again"] = _call_model(model, batches[0], training=False)
    report["no_training_argument"] = _call_model(model, batches[0], training=None)
    report["training"] = _call_model(model, batches[0], training=True)
    with quiet():
        without = call_learner(build_token_classifier, backbone, num_labels, dropout=0.0)
    if isinstance(without, keras.Model):
        _call_model(without, batches[0], training=False)
        again = [layer for layer in head_candidates(without, backbone)
                 if tuple(layer.kernel.shape) == (hidden, num_labels) and getattr(layer, "bias", None) is not None]
        if len(again) == 1:
            again[0].kernel.assign(np.asarray(head_weights["kernel"], np.float32))
            again[0].bias.assign(np.asarray(head_weights["bias"], np.float32))
            report["training_without_dropout"] = _call_model(without, batches[0], training=True)
    return report


# ----------------------------------------------------------------------------------------------
# build_token_classifier: the verdict (in the grader's process when grading)


def _shape_failure(report: dict, expected_shape: tuple, shape_mistakes, label: str) -> None:
    got = tuple(int(d) for d in report["shape"])
    if got == tuple(expected_shape):
        return
    for wrong_shape, message in shape_mistakes:
        if got == tuple(int(d) for d in np.asarray(wrong_shape).reshape(-1)):
            raise CheckFailed(f"[{label}] the logits have shape {got}, expected {tuple(expected_shape)}: {message}")
    raise CheckFailed(f"[{label}] the logits have shape {got}, expected {tuple(expected_shape)} = (batch, seq, "
                      "num_labels): one logit per label for every token")


def _head_failure(report: dict, hidden: int, num_labels: int, label: str) -> None:
    heads = report["heads"]
    matching = [head for head in heads if tuple(head["kernel"]) == (hidden, num_labels)]
    if len(matching) > 1:
        raise CheckFailed(f"[{label}] {len(matching)} layers outside the backbone have a kernel of shape ({hidden}, "
                          f"{num_labels}) ({', '.join(h['name'] for h in matching)}): the head is one Dense layer")
    if matching and matching[0]["bias"] is None:
        raise CheckFailed(f"[{label}] the head {matching[0]['name']} has no bias: z = hW + b, keep Dense's default "
                          "use_bias=True")
    found = "; ".join(f"{h['name']} ({h['type']}, kernel {tuple(h['kernel'])})" for h in heads) or "none"
    raise CheckFailed(f"[{label}] no layer outside the backbone has a kernel of shape (hidden_dim, num_labels) = "
                      f"({hidden}, {num_labels}); layers with a kernel: {found}. The head is one "
                      "keras.layers.Dense(num_labels) applied to the sequence_output")


def _first_mismatch(logits: Sequence, expected: Sequence) -> int | None:
    for index, (got, want) in enumerate(zip(logits, expected, strict=True)):
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
        if got.shape != want.shape or not np.allclose(got, want, **TOL):
            return index
    return None


def _mask_diagnosis(logits: Sequence, batches: Sequence[Mapping]) -> str:
    """Why the values differ, from the two probes at the end of the batches (see classifier_batches)."""
    base, padded, changed = (np.asarray(x, np.float64) for x in (logits[0], logits[-2], logits[-1]))
    real = np.asarray(batches[0]["padding_mask"]) == 1
    if not np.allclose(base[real], padded[real], **TOL):
        return ("Changing only the token ids at padding positions (padding_mask 0) changed the logits of real "
                "tokens: the backbone attends to the padding. Pass it the padding_mask of its inputs, unchanged "
                "(call it on its whole input dict)")
    if np.allclose(base, changed, **TOL):
        return "Changing a token id changed no logit: the logits must come from the backbone's sequence_output"
    return ""


def expect_token_classifier(report: dict, expected: Sequence, label: str, *, num_labels: int, hidden: int,
                            batches: Sequence[Mapping], shape_mistakes=(), value_mistakes=()) -> None:
    """The verdict on `run_token_classifier`'s report: shapes, the head, determinism, values (naming the usual
    mistakes), a trainable encoder, the dropout's place and rate. `value_mistakes` are (index of the batch,
    wrong logits, message)."""
    expected_shape = np.shape(expected[0])
    _shape_failure(report, expected_shape, shape_mistakes, label)
    if report["logits"] is None:
        _head_failure(report, hidden, num_labels, label)
    logits = report["logits"]
    shapes = [np.shape(x) for x in expected]
    for got, want in zip(logits, shapes, strict=True):
        if np.shape(got) != want:
            raise CheckFailed(f"[{label}] on a batch of shape {want[:2]} the logits have shape {np.shape(got)}, "
                              f"expected {want}: the model must accept any batch size and sequence length")
    expect_deterministic(report, logits[0], label)
    index = _first_mismatch(logits, expected)
    if index is not None:
        where = f"{label}, batch of shape {shapes[index][:2]}"
        mistakes = [(value, message) for number, value, message in value_mistakes if number == index]
        diagnosis = _mask_diagnosis(logits, batches)
        expect_close(logits[index], expected[index], f"[{where}] the model's output", mistakes=mistakes,
                     hint=diagnosis or "The logits are Dense(num_labels) of the sequence_output, without activation",
                     **TOL)
    expect_trained_encoder_and_dropout(report, logits[0], label)


# ----------------------------------------------------------------------------------------------
# build_token_classifier: the visible check

CLASSIFIER_CASES = [  # label, num_labels, (batch, seq) of each batch, seed
    ("9 labels, batches of 3 x 7 and 2 x 12", 9, [(3, 7), (2, 12)], 61),
    ("4 labels, batches of 2 x 5 and 1 x 3", 4, [(2, 5), (1, 3)], 62),
]


def classifier_case(index: int):
    """(label, num_labels, backbone weights, head weights, batches) of a visible case."""
    label, num_labels, shapes, seed = CLASSIFIER_CASES[index]
    backbone, head = seeded_classifier_weights(TINY_BACKBONE, num_labels, seed)
    return label, num_labels, backbone, head, classifier_batches(np.random.default_rng(seed), TINY_BACKBONE, shapes)


def check_build_token_classifier(build_token_classifier) -> None:
    """Logits on padded batches of a tiny BERT with seeded weights; trainable encoder; dropout before the head."""
    stored = load_expected(STEM, "model", "build_token_classifier")
    for index in range(len(CLASSIFIER_CASES)):
        label, num_labels, backbone, head, batches = classifier_case(index)
        case = stored[label]
        report = run_token_classifier(build_token_classifier, TINY_BACKBONE, num_labels, backbone_weights=backbone,
                                      head_weights=head, batches=batches)
        shape_mistakes = [(entry["value"], entry["message"]) for entry in case["shapes"].values()]
        value_mistakes = [(number, entry["value"], entry["message"])
                          for number, wrong in enumerate(case["mistakes"]) for entry in wrong.values()]
        expect_token_classifier(report, list(case["logits"]), label, num_labels=num_labels,
                                hidden=TINY_BACKBONE["hidden_dim"], batches=batches, shape_mistakes=shape_mistakes,
                                value_mistakes=value_mistakes)
    passed("build_token_classifier gives the logits of a Dense head on the sequence output of a tiny BERT (with its "
           "padding mask), keeps the encoder trainable and applies dropout before the head")


# ----------------------------------------------------------------------------------------------
# masked_token_loss: the visible check (its helpers are in course_lib.ner.loss)


def check_masked_token_loss(masked_token_loss) -> None:
    """Small batches with -100 positions and sentences of different lengths, large logits, a batch without
    labels; int32, int64 labels, and as Keras calls a loss during fit."""
    stored = load_expected(STEM, "model", "masked_token_loss")
    for index in range(len(LOSS_CASES)):
        label, labels, logits = loss_case(index)
        case = stored[label]
        mistakes = [(entry["value"], entry["message"]) for entry in case["mistakes"].values()]
        labelled = int(np.sum(labels != IGNORE))
        for dtype, keras_style in (("int32", False), ("int64", False), ("float32", True)):
            report = run_loss(masked_token_loss, labels, logits, labels_dtype=dtype, keras_style=keras_style)
            expect_loss(report, float(case["loss"]), f"{label}, labels {dtype}", labelled=labelled, mistakes=mistakes,
                        nan_message=case["nan_message"], keras_style=keras_style)
    passed("masked_token_loss averages the cross-entropy over the labelled positions only (0 when there are none), "
           "with int or float labels, as Keras calls it")
