"""Assignment 06: fine-tuning a token classifier, with the course's fine-tuning loop (course_lib.finetuning).

- `token_accuracy`: the share of labelled tokens whose most likely label is right, the metric of `fit`'s progress bar.
- `fine_tune`: course_lib.finetuning.fine_tune (AdamW, warm-up then linear decay, batches of similar lengths), with
  token accuracy as its metric.
- `predict_labels`: the most likely label id of every token, in the arrays' order and shape.
- `predict_word_tags`: the model's IOB2 tag for every word, read from the word's first token.
- `epochs_for_steps`: the epochs a recipe set in optimizer steps needs on a file of a given size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import keras
import numpy as np

from course_lib import finetuning
from course_lib.finetuning import batch_plan, lengths_of
from course_lib.heads import INPUT_NAMES
from course_lib.ner import LABELS
from course_lib.ner.encoding import IGNORE


def token_accuracy(labels, logits):
    """The share of labelled tokens (label != -100) whose most likely label is right."""
    labels = keras.ops.cast(labels, "int32")
    counted = keras.ops.cast(keras.ops.not_equal(labels, IGNORE), "float32")
    right = keras.ops.cast(keras.ops.equal(keras.ops.cast(keras.ops.argmax(logits, axis=-1), "int32"), labels),
                           "float32")
    return keras.ops.sum(right * counted) / keras.ops.maximum(keras.ops.sum(counted), 1.0)


def fine_tune(model, loss: Callable, train: Mapping, validation: Mapping | None = None, **settings):
    """course_lib.finetuning.fine_tune with `token_accuracy` as its metric unless `metrics` says otherwise; `settings`
    (epochs, batch_size, peak_learning_rate, ...) as there. Returns Keras's History, with `history.steps`."""
    return finetuning.fine_tune(model, loss, train, validation, **{"metrics": (token_accuracy,), **settings})


def epochs_for_steps(steps: int, sentences: int, batch_size: int) -> int:
    """The whole epochs that give at least `steps` optimizer steps over `sentences` in batches of `batch_size`:
    a recipe set in steps sees a small file more times than a large one."""
    if steps < 1 or sentences < 1 or batch_size < 1:
        raise ValueError(f"steps, sentences and batch_size must be positive, got {steps}, {sentences}, {batch_size}")
    return max(1, -(-steps // -(-sentences // batch_size)))


def predict_labels(model, arrays: Mapping, batch_size: int = 64, *, bucket: int = 16) -> np.ndarray:
    """The most likely label id of every token, int32 of the shape of arrays["token_ids"] (0 on positions past
    each batch's width, all padding). The sentences are run in batches of similar lengths."""
    inputs = {name: np.asarray(arrays[name], np.int32) for name in INPUT_NAMES}
    n, max_length = inputs["token_ids"].shape
    predicted = np.zeros((n, max_length), np.int32)
    for rows, width in batch_plan(lengths_of(arrays), batch_size, bucket=bucket, max_length=max_length):
        logits = model.predict_on_batch({name: values[rows, :width] for name, values in inputs.items()})
        predicted[rows, :width] = np.argmax(np.asarray(logits), axis=-1)
    return predicted


def predict_word_tags(model, arrays: Mapping, sentences: Sequence, *, labels: Sequence[str] = LABELS,
                      batch_size: int = 64) -> list[list[str]]:
    """The model's tag for every word of `sentences`, encoded in `arrays` by encode_sentences: the label of each
    word's first token (where arrays["labels"] is not -100). A sentence cut at max_length lost its last words before
    the model saw them; they count as O, so that every sentence gets one tag per word."""
    label_ids = predict_labels(model, arrays, batch_size=batch_size)
    first_tokens = np.asarray(arrays["labels"]) != IGNORE
    tags = [[labels[i] for i in row[keep]] for row, keep in zip(label_ids, first_tokens, strict=True)]
    return [found + ["O"] * (len(sentence.tokens) - len(found))
            for found, sentence in zip(tags, sentences, strict=True)]
