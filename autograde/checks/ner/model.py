"""Hidden checks of build_token_classifier and masked_token_loss (assignment 06).

- build_token_classifier: for tiny keras-hub BertBackbones of two sizes, built in the student's kernel with
  weights chosen here (`run_token_classifier`, one request per case), the learner's model is called on padded
  batches of several shapes; its logits are compared with the head computed here, in float64, on the sequence
  output of the same backbone with the same weights run in this process. The output shape for several
  num_labels, the values (the padding mask matters), a trainable encoder and the dropout's place and rate are
  checked; the usual mistakes are named (autograde.mistakes.ner.model).
- masked_token_loss: random labels (-100 at [CLS], [SEP], padding and continuation pieces; one sentence
  without any label; a batch without any; a batch without -100; a batch where the last label id is on no
  position) and logits of several scales, with int32, int64 and, as Keras passes them, float32 labels in a
  tf.function; compared with the NumPy reference.
`grade_*(fn)` raises CheckFailed with a diagnosis or prints one success line (stdout only).
"""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks import seed_of
from autograde.mistakes import results
from autograde.mistakes.ner import model as mistakes
from autograde.reference.ner import model as ref
from autograde.remote import run_there
from course_lib.checking import CheckFailed, passed, quiet
from course_lib.heads import TINY_BACKBONE, classifier_batches, seeded_classifier_weights
from course_lib.ner.loss import IGNORE, expect_loss, run_loss, token_labels
from course_lib.ner.model import expect_token_classifier, run_token_classifier

OTHER_BACKBONE = {"vocabulary_size": 40, "num_layers": 1, "num_heads": 3, "hidden_dim": 12, "intermediate_dim": 20,
                  "max_sequence_length": 24, "num_segments": 2}

# backbone sizes, num_labels, (batch, seq) of each batch
CLASSIFIER_CASES = [
    (TINY_BACKBONE, 9, [(4, 9), (1, 4)]),
    (OTHER_BACKBONE, 5, [(2, 16), (3, 6)]),
    (TINY_BACKBONE, 3, [(5, 11)]),
]


def _label(config: dict, num_labels: int, shapes) -> str:
    sizes = ", ".join(f"{b} x {s}" for b, s in shapes)
    layers = config["num_layers"]
    return (f"a BertBackbone with hidden_dim {config['hidden_dim']}, {layers} layer{'s' if layers > 1 else ''}, "
            f"{config['num_heads']} heads; num_labels {num_labels}; batches of {sizes}")


def grade_build_token_classifier(build_token_classifier) -> None:
    for index, (config, num_labels, shapes) in enumerate(CLASSIFIER_CASES):
        _grade_classifier_case(build_token_classifier, index, config, num_labels, shapes)
    passed(f"build_token_classifier gives the reference logits on {len(CLASSIFIER_CASES)} tiny BERTs (2 sizes, "
           "num_labels 9, 5 and 3, padded batches), keeps the encoder trainable and applies dropout before the head")


def _grade_classifier_case(build_token_classifier, index: int, config: dict, num_labels: int, shapes) -> None:
    label = _label(config, num_labels, shapes)
    backbone, head = seeded_classifier_weights(config, num_labels, seed_of(960 + index))
    batches = classifier_batches(draw(950 + index), config, shapes)
    with quiet():
        report = run_there(build_token_classifier, run_token_classifier, build_token_classifier, config, num_labels,
                           backbone_weights=backbone, head_weights=head, batches=batches)
        expected, wrong = [], []
        for number, inputs in enumerate(batches):
            forward = ref.backbone_forward(config, backbone, inputs)
            expected.append(ref.token_logits(forward["sequence_output"], head["kernel"], head["bias"]))
            wrong += [(number, value, message)
                      for value, message in results(mistakes.LOGITS, forward, head["kernel"], head["bias"])]
    batch, seq = shapes[0]
    shape_mistakes = [(shape, message) for shape, message in
                      results(mistakes.SHAPES, batch, seq, config["hidden_dim"], num_labels)
                      if tuple(shape) != (batch, seq, num_labels)]
    expect_token_classifier(report, expected, label, num_labels=num_labels, hidden=config["hidden_dim"],
                            batches=batches, shape_mistakes=shape_mistakes, value_mistakes=wrong)


# ----------------------------------------------------------------------------------------------
# masked_token_loss

# batch, seq, num_labels, logit scale, labels dtype (float32: called as Keras calls a loss)
LOSS_CASES = [
    (4, 12, 9, 3.0, "int32"),
    (2, 30, 5, 1.0, "int64"),
    (8, 20, 17, 10.0, "float32"),
    (1, 6, 2, 2.0, "int32"),
    (3, 16, 9, 40.0, "int32"),
    (6, 9, 4, 1.0, "int64"),
]


def _loss_inputs(index: int, batch: int, seq: int, num_labels: int, scale: float):
    rng = draw(970 + index)
    lengths = rng.integers(3, seq + 1, size=batch)
    lengths[0] = seq
    if batch > 2:
        lengths[-1] = 2  # [CLS] [SEP]: a sentence without any labelled position
    labels = token_labels(rng, lengths, seq, num_labels)
    if not np.any(labels[0] != IGNORE):
        labels[0, 1] = rng.integers(num_labels)
    logits = (scale * rng.standard_normal((batch, seq, num_labels))).astype(np.float32)
    return labels, logits


def _grade_loss(masked_token_loss, labels, logits, label: str, dtype: str) -> None:
    keras_style = dtype == "float32"
    expected = ref.masked_token_loss_numpy(labels, logits)
    wrong = results(mistakes.LOSS, labels, logits)
    try:
        report = run_there(masked_token_loss, run_loss, masked_token_loss, labels, logits, labels_dtype=dtype,
                           keras_style=keras_style)
    except CheckFailed as failure:  # a crash: say on which batch
        raise CheckFailed(f"[{label}, labels {dtype}] {failure}") from failure
    expect_loss(report, expected, f"{label}, labels {dtype}", labelled=int(np.sum(labels != IGNORE)), mistakes=wrong,
                nan_message=mistakes.EMPTY_NAN, keras_style=keras_style)


def _unusual_batches(rng: np.random.Generator) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Valid batches the random ones never give: no position -100, and the last label id on no position (the
    number of labels is the logits' last axis, not the largest label + 1)."""
    full = rng.integers(0, 4, size=(2, 5))
    full[0, :4] = np.arange(4)
    without_last = token_labels(rng, [8, 6], 8, 5)
    without_last[0, 1] = 0
    return [("batch 2, seq 5, 4 labels, every position labelled (no -100)", full,
             rng.standard_normal((2, 5, 4)).astype(np.float32)),
            ("batch 2, seq 8, 6 labels, the last label id (5) on no position", without_last,
             (2 * rng.standard_normal((2, 8, 6))).astype(np.float32))]


def grade_masked_token_loss(masked_token_loss) -> None:
    with quiet():
        for index, (batch, seq, num_labels, scale, dtype) in enumerate(LOSS_CASES):
            labels, logits = _loss_inputs(index, batch, seq, num_labels, scale)
            label = (f"batch {batch}, seq {seq}, {num_labels} labels, {int(np.sum(labels != IGNORE))} labelled "
                     f"positions, logits of scale {scale:g}")
            _grade_loss(masked_token_loss, labels, logits, label, dtype)
            if index == 0:  # the same batch as Keras passes it
                _grade_loss(masked_token_loss, labels, logits, label, "float32")
        rng = draw(979)
        empty = np.full((3, 7), IGNORE)
        logits = rng.standard_normal((3, 7, 5)).astype(np.float32)
        for dtype in ("int32", "float32"):
            _grade_loss(masked_token_loss, empty, logits, "a batch where every position is -100", dtype)
        for label, labels, logits in _unusual_batches(draw(978)):
            _grade_loss(masked_token_loss, labels, logits, label, "int32")
    passed(f"masked_token_loss matches the reference on {len(LOSS_CASES) + 2} random batches (int32, int64 and "
           "float32 labels, in a tf.function as Keras calls it, logits up to scale 40, no -100, the last label unused) "
           "and is 0 on a batch without labels")
