"""Assignment 06: the helpers of the masked_token_loss checks (the visible check is in course_lib.ner.model).

`run_loss` calls the learner's loss where the learner's code lives, eagerly with int32 or int64 labels, or as
Keras calls a loss during `fit` (float32 labels, inside a `tf.function` whose shapes are unknown), and returns
plain data; `expect_loss` is the verdict (a float32 scalar tensor equal to the reference, the usual mistakes
named). `token_labels` makes labels shaped like the notebook's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from course_lib.checking import CheckFailed, NotImplementedYet, call_learner, expect_close, plain_message, quiet
from course_lib.ner.encoding import IGNORE

KERAS_HINT = ("Keras calls a loss inside a tf.function, with the labels as float32 and the batch and sequence sizes "
              "unknown until it runs: use TensorFlow operations (tf.* or keras.ops), tf.shape(x) instead of x.shape, "
              "and cast the labels to an integer type")


def _short(error: BaseException) -> str:
    """A TensorFlow error's message in one line: the error itself, without the "in user code" trace before it
    or the op's definition after it."""
    text = plain_message(error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1] if "in user code" in text else lines[0]
    prefix = f"{type(error).__name__}: "
    line = line[len(prefix):] if line.startswith(prefix) else line
    return line.split("; NodeDef")[0].rstrip(" .;")


def _loss_call(call, masked_token_loss, labels, logits, how: str):
    """`call(labels, logits)`; a crash becomes a failed check in one line (NotImplementedError passes through
    when `call` is the learner's function itself)."""
    name = getattr(masked_token_loss, "__name__", "masked_token_loss")
    try:
        with quiet():
            return call_learner(call, labels, logits) if call is masked_token_loss else call(labels, logits)
    except (NotImplementedYet, CheckFailed) as failure:
        if isinstance(failure, NotImplementedYet) or failure.__cause__ is None:
            raise
        error = failure.__cause__
    except Exception as crash:  # NotImplementedError too: TensorFlow raises it for NumPy on a symbolic tensor
        error = crash
    hint = f". {KERAS_HINT}" if how else ""
    raise CheckFailed(f"{name} raised {type(error).__name__}{how}: {_short(error)}{hint}") from error


def run_loss(masked_token_loss, labels, logits, *, labels_dtype: str = "int32", keras_style: bool = False) -> dict:
    """Call the learner's loss on tensors (labels of `labels_dtype`), or as Keras does during fit
    (`keras_style`: float32 labels, in a tf.function whose shapes are unknown); return what came back."""
    import tensorflow as tf

    logits = tf.constant(np.asarray(logits, np.float32))
    if keras_style:
        labels = tf.constant(np.asarray(labels, np.float32))
        # Eagerly first: a NotImplementedError there is the unfinished exercise, not TensorFlow's.
        _loss_call(masked_token_loss, masked_token_loss, labels, logits, " with float32 labels, as Keras passes them")
        traced = tf.function(lambda y, z: masked_token_loss(y, z), input_signature=[
            tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None, None, logits.shape[-1]], tf.float32)])
        value = _loss_call(traced, masked_token_loss, labels, logits, " when called as Keras calls a loss")
    else:
        labels = tf.constant(np.asarray(labels).astype(labels_dtype))
        value = _loss_call(masked_token_loss, masked_token_loss, labels, logits, "")
    report = {"is_tensor": bool(tf.is_tensor(value)), "dtype": getattr(getattr(value, "dtype", None), "name", None),
              "type": type(value).__name__}
    try:
        array = np.asarray(value, np.float64)
    except (TypeError, ValueError):
        return {**report, "value": None, "shape": None}
    # The numbers as a list and the shape apart: a 0-d array would cross to the grader as shape (1,).
    return {**report, "value": array.reshape(-1).tolist(), "shape": list(array.shape)}


def expect_loss(report: dict, expected: float, label: str, *, labelled: int, mistakes=(), nan_message: str = "",
                keras_style: bool = False) -> None:
    """The verdict on one `run_loss` report: a float32 scalar tensor equal to `expected`."""
    how = " (called as Keras calls a loss)" if keras_style else ""
    if report["value"] is None:
        raise CheckFailed(f"[{label}] masked_token_loss returned a {report['type']}, not a number: return a scalar "
                          "tensor")
    value = np.asarray(report["value"], np.float64).reshape([int(d) for d in report["shape"]])
    if value.shape != ():
        extra = (" one loss per sentence" if value.ndim == 1 else " one loss per token" if value.ndim == 2 else "")
        raise CheckFailed(f"[{label}] masked_token_loss returned shape {value.shape}{extra}{how}; it should return one "
                          "number, the mean loss over the labelled positions")
    if not np.isfinite(value):
        if labelled == 0 and nan_message:
            raise CheckFailed(f"[{label}] the loss is {float(value)}: {nan_message}")
        raise CheckFailed(f"[{label}] the loss is {float(value)}{how}: compute it from the logits with a stable "
                          "function (from_logits=True, or tf.nn.sparse_softmax_cross_entropy_with_logits), not "
                          "log(softmax(...)), and never give a label of -100 to it")
    if not report["is_tensor"]:
        raise CheckFailed(f"[{label}] masked_token_loss returned a {report['type']}{how}: it should return a "
                          "TensorFlow tensor (Keras differentiates it), so compute it with tf.* or keras.ops")
    if report["dtype"] != "float32":
        raise CheckFailed(f"[{label}] masked_token_loss returned a {report['dtype']} tensor{how}, expected float32 "
                          "(the dtype of the logits)")
    expect_close(value, expected, f"[{label}] the loss{how}", mistakes=mistakes, atol=1e-5, rtol=1e-4)


def token_labels(rng: np.random.Generator, lengths: Sequence[int], seq: int, num_labels: int,
                 continuation: float = 0.3) -> np.ndarray:
    """Labels (batch, seq) shaped like the notebook's: -100 at [CLS] (0), at the [SEP] closing each row's real
    tokens, at the padding and at continuation pieces (a share `continuation` of the others), a label elsewhere."""
    labels = np.full((len(lengths), seq), IGNORE, np.int64)
    for row, length in enumerate(lengths):
        words = np.arange(1, max(1, length - 1))
        first = words[rng.random(len(words)) >= continuation]
        labels[row, first] = rng.integers(0, num_labels, size=len(first))
    return labels


LOSS_CASES = [  # label, lengths of the rows, seq, num_labels, logit scale, seed, label ids drawn below (None: all)
    ("2 sentences of 8 and 4 tokens (padding and pieces labelled -100), 5 labels", (8, 4), 8, 5, 2.0, 71, None),
    ("3 sentences, 9 labels, logits up to about 60 in size", (10, 6, 3), 10, 9, 30.0, 72, None),
    ("a batch where every position is -100", (1, 2), 4, 3, 1.0, 73, None),
    ("2 sentences, 6 labels, the last label id (5) on no position", (8, 6), 8, 6, 2.0, 74, 5),
]


def loss_case(index: int) -> tuple[str, np.ndarray, np.ndarray]:
    label, lengths, seq, num_labels, scale, seed, drawn = LOSS_CASES[index]
    rng = np.random.default_rng(seed)
    labels = token_labels(rng, lengths, seq, num_labels if drawn is None else drawn)
    logits = (scale * rng.standard_normal((len(lengths), seq, num_labels))).astype(np.float32)
    return label, labels, logits
