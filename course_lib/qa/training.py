"""Assignment 07: fine-tuning a start/end head with the course's fine-tuning loop (course_lib.finetuning).

The learner's model gives two outputs, start and end logits of shape (batch, seq). For Keras's `fit`, one output
is simpler: `stacked` puts them side by side, (batch, seq, 2), and `span_loss` reads the labels (batch, 2) of the
windows, the answer's start and end positions. The loss is the mean of the start and end cross-entropies,

    L = -(log p_start(s*) + log p_end(e*)) / 2,   p_start = softmax over the window's positions of the start logits.

`predict_logits` runs windows in batches of similar lengths and returns float32 (windows, max_length) arrays,
with -inf past each batch's width (padding, never chosen).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

import keras
import numpy as np

from course_lib.finetuning import batch_plan, fine_tune, lengths_of
from course_lib.heads import INPUT_NAMES


def describe_outputs(outputs) -> str:
    """What a model returned, in words, for an error message: "a dict with keys [...]", "one tensor of shape ..."."""
    if isinstance(outputs, Mapping):
        return f"a dict with keys {sorted(str(key) for key in outputs)}"
    if isinstance(outputs, (list, tuple)):
        parts = ", ".join(describe_outputs(output) for output in outputs)
        return f"a {type(outputs).__name__} of {len(outputs)} output{'s' * (len(outputs) != 1)}" + (
            f" ({parts})" if parts else "")
    shape = getattr(outputs, "shape", None)
    if shape is not None:
        return f"one tensor of shape {tuple(None if d is None else int(d) for d in shape)}"
    return f"a {type(outputs).__name__}"


def start_and_end(outputs, what: str = "the QA model"):
    """The (start_logits, end_logits) that a QA model returned, each (batch, seq); a ValueError that names what it
    returned instead."""
    if (isinstance(outputs, (list, tuple)) and len(outputs) == 2
            and all(len(getattr(output, "shape", ())) == 2 for output in outputs)):
        return outputs[0], outputs[1]
    raise ValueError(f"{what} should return two outputs, [start_logits, end_logits], each of shape (batch, seq); it "
                     f"returned {describe_outputs(outputs)}")


def stacked(model) -> keras.Model:
    """The learner's [start, end] model as one output (batch, seq, 2), sharing its layers and weights.

    A functional model's inputs and outputs are used as they are; a subclassed keras.Model has neither, so it is
    called on new inputs, which works for every kind of model the exercise allows. The same model gets the same
    stacked model each time, so that a training step compiled while measuring is the one that trains."""
    if model in _STACKED:
        return _STACKED[model]
    _STACKED[model] = _stacked(model)
    return _STACKED[model]


_STACKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _stacked(model) -> keras.Model:
    try:  # a functional model's outputs as it declared them (a list, or a dict that start_and_end refuses)
        declared = model.output if getattr(model, "outputs", None) else None
    except (AttributeError, ValueError):
        declared = None
    if declared is not None:
        # The functional model's own graph, extended, rather than the model nested as one layer of a new one.
        start, end = start_and_end(declared)
        return keras.Model(model.inputs, keras.ops.stack([start, end], axis=-1), name="span_model")
    inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in INPUT_NAMES}
    start, end = start_and_end(model(inputs))
    return keras.Model(inputs, keras.ops.stack([start, end], axis=-1), name="span_model")


def span_loss(positions, logits):
    """Mean of the start and end cross-entropies: positions (batch, 2) int, logits (batch, seq, 2)."""
    positions = keras.ops.cast(positions, "int32")
    logits = keras.ops.cast(logits, "float32")  # a softmax over hundreds of positions needs float32's precision
    start = keras.losses.sparse_categorical_crossentropy(positions[:, 0], logits[..., 0], from_logits=True)
    end = keras.losses.sparse_categorical_crossentropy(positions[:, 1], logits[..., 1], from_logits=True)
    return keras.ops.mean((start + end) / 2.0)


def exact_span(positions, logits):
    """The share of windows whose most likely start and end are both the answer's."""
    positions = keras.ops.cast(positions, "int32")
    predicted = keras.ops.cast(keras.ops.argmax(logits, axis=1), "int32")  # (batch, 2)
    both = keras.ops.all(keras.ops.equal(predicted, positions), axis=-1)
    return keras.ops.mean(keras.ops.cast(both, "float32"))


def fine_tune_spans(model, train: Mapping, validation: Mapping | None = None, **settings):
    """Fine-tune the learner's start/end model on windows (Windows.arrays with labels): AdamW, warm-up then
    linear decay, batches of similar lengths, Keras's progress bar. `settings` go to
    course_lib.finetuning.fine_tune (epochs, batch_size, peak_learning_rate, ...). Returns Keras's History."""
    return fine_tune(stacked(model), span_loss, train, validation, metrics=(exact_span,), **settings)


def predict_logits(model, arrays: Mapping, batch_size: int = 32, *, bucket: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Start and end logits, float32 (windows, max_length), -inf past each batch's width."""
    inputs = {name: np.asarray(arrays[name], np.int32) for name in INPUT_NAMES}
    n, max_length = inputs["token_ids"].shape
    start = np.full((n, max_length), -np.inf, np.float32)
    end = np.full((n, max_length), -np.inf, np.float32)
    for rows, width in batch_plan(lengths_of(arrays), batch_size, bucket=bucket, max_length=max_length):
        outputs = model.predict_on_batch({name: values[rows, :width] for name, values in inputs.items()})
        outputs = start_and_end(outputs)
        start[rows, :width], end[rows, :width] = (np.asarray(output, np.float32) for output in outputs)
    return start, end
