"""Fine-tuning a head on BERT, fast enough for a laptop CPU (06's token classifier, 07's span head; 08's PyTorch loop
batches the same way).

- `WarmupLinearDecay`: the learning rate rises linearly from 0 to `peak` over `warmup_steps`, then falls
  linearly to 0 at `total_steps` (BERT's schedule); a Keras schedule, serialisable.
- `batch_plan` and `batches`: batches of examples of similar lengths, each cut to its longest one, rounded up to a
  multiple of `bucket` (a `tf.data.Dataset` of (inputs, labels)). Most examples are far shorter than the padded
  length, so this does several times less work than padding every batch to 128 tokens, and with few distinct
  widths there is little to retrace.
- `fine_tune`: AdamW (no weight decay on layer-norm scales and offsets nor on biases, as in BERT) with the
  schedule, the unused pooler frozen, `model.fit` with Keras's progress bar; the History it returns also holds
  every step's loss and learning rate (`history.steps`), which `plot_learning_curves` draws.

TensorFlow's thread pools are left at their defaults (0: as many threads as cores), so both cores of a laptop
work.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import keras
import numpy as np

from course_lib.heads import INPUT_NAMES, freeze_unused_pooler

# Ends of variable and parameter names that BERT leaves undecayed: layer-norm scale and offset, biases.
NO_WEIGHT_DECAY = ("gamma", "beta", "bias")


@keras.saving.register_keras_serializable(package="course_lib")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """eta_s = peak * s / w for s < w, then peak * (T - s) / (T - w), and 0 from step T on."""

    def __init__(self, peak, warmup_steps, total_steps):
        if not 0 <= warmup_steps <= total_steps or total_steps <= 0:
            raise ValueError(f"need 0 <= warmup_steps <= total_steps and total_steps > 0, got warmup_steps="
                             f"{warmup_steps}, total_steps={total_steps}")
        self.peak = float(peak)
        self.warmup_steps = int(warmup_steps)
        self.total_steps = int(total_steps)

    def __call__(self, step):
        step = keras.ops.cast(step, "float32")
        warmup = keras.ops.cast(self.warmup_steps, "float32")
        total = keras.ops.cast(self.total_steps, "float32")
        rising = self.peak * step / keras.ops.maximum(warmup, 1.0)
        falling = self.peak * (total - step) / keras.ops.maximum(total - warmup, 1.0)
        return keras.ops.maximum(keras.ops.where(step < warmup, rising, falling), 0.0)

    def get_config(self) -> dict:
        return {"peak": self.peak, "warmup_steps": self.warmup_steps, "total_steps": self.total_steps}


# ----------------------------------------------------------------------------------------------
# Batches of similar lengths


def lengths_of(arrays: Mapping) -> np.ndarray:
    """Real tokens per sentence ([CLS] and [SEP] included)."""
    return np.asarray(arrays["padding_mask"]).sum(axis=1).astype(np.int64)


def batch_plan(lengths: np.ndarray, batch_size: int, *, bucket: int = 16, max_length: int | None = None,
               rng: np.random.Generator | None = None, pool: int = 50) -> list[tuple[np.ndarray, int]]:
    """(row indices, width) of each batch. Without `rng` the rows are sorted by length and cut into batches in
    that order; with it, they are shuffled, sorted by length within pools of `pool` batches (so a batch still
    mixes sentences from all over the data), cut into batches, and the batches shuffled. A batch's width is its
    longest sentence rounded up to a multiple of `bucket`, at most `max_length`."""
    lengths = np.asarray(lengths)
    if batch_size < 1 or bucket < 1:
        raise ValueError(f"batch_size and bucket must be at least 1, got {batch_size} and {bucket}")
    limit = int(max_length if max_length is not None else max(int(lengths.max(initial=1)), 1))
    if rng is None:
        order = np.argsort(lengths, kind="stable")
        chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    else:
        shuffled = rng.permutation(len(lengths))
        chunks = []
        for start in range(0, len(shuffled), pool * batch_size):
            group = shuffled[start:start + pool * batch_size]
            group = group[np.argsort(lengths[group], kind="stable")]
            chunks += [group[i:i + batch_size] for i in range(0, len(group), batch_size)]
        chunks = [chunks[i] for i in rng.permutation(len(chunks))]
    return [(rows, min(limit, bucket * math.ceil(max(int(lengths[rows].max()), 1) / bucket))) for rows in chunks]


class _Batches:
    """A generator of (inputs, labels) batches for tf.data that remembers each epoch's batch sizes."""

    def __init__(self, arrays: Mapping, batch_size: int, *, shuffle: bool, seed: int, bucket: int):
        self.inputs = {name: np.asarray(arrays[name], np.int32) for name in INPUT_NAMES}
        self.labels = None if "labels" not in arrays else np.asarray(arrays["labels"], np.int32)
        self.lengths = lengths_of(arrays)
        self.max_length = self.inputs["token_ids"].shape[1]
        self.batch_size, self.bucket = batch_size, bucket
        self.rng = np.random.default_rng(seed) if shuffle else None
        self.sizes: list[list[int]] = []  # batch sizes of each epoch, in the order the batches were made

    def count(self) -> int:
        return math.ceil(len(self.lengths) / self.batch_size)

    def __call__(self):
        plan = batch_plan(self.lengths, self.batch_size, bucket=self.bucket, max_length=self.max_length, rng=self.rng)
        self.sizes.append([len(rows) for rows, _ in plan])
        for rows, width in plan:
            inputs = {name: values[rows, :width] for name, values in self.inputs.items()}
            yield (inputs, self.labels[rows, :width]) if self.labels is not None else inputs


def _dataset(source: _Batches):
    import tensorflow as tf

    spec = tf.TensorSpec((None, None), tf.int32)
    inputs = {name: spec for name in INPUT_NAMES}
    signature = (inputs, spec) if source.labels is not None else inputs
    dataset = tf.data.Dataset.from_generator(source, output_signature=signature)
    return dataset.apply(tf.data.experimental.assert_cardinality(source.count())).prefetch(2)


def batches(arrays: Mapping, batch_size: int, *, shuffle: bool, seed: int = 0, bucket: int = 16):
    """A tf.data.Dataset of (inputs dict, labels) batches of similar lengths, each cut to its longest sentence
    rounded up to a multiple of `bucket` (see `batch_plan`); reshuffled at every epoch when `shuffle`,
    reproducibly from `seed`. Without "labels" in `arrays`, batches of inputs alone."""
    return _dataset(_Batches(arrays, batch_size, shuffle=shuffle, seed=seed, bucket=bucket))


def padding_share(arrays: Mapping, batch_size: int, *, bucket: int = 16) -> float:
    """The share of the positions in the batches of `batches` that are padding (for one epoch)."""
    lengths = lengths_of(arrays)
    plan = batch_plan(lengths, batch_size, bucket=bucket, max_length=np.shape(arrays["token_ids"])[1],
                      rng=np.random.default_rng(0))
    positions = sum(len(rows) * width for rows, width in plan)
    return 1.0 - float(lengths.sum()) / positions


# ----------------------------------------------------------------------------------------------
# Fine-tuning


class _StepRecorder(keras.callbacks.Callback):
    """Each training step's loss (recovered from Keras's running mean, which weighs batches by their size) and
    learning rate."""

    def __init__(self, source: _Batches, schedule: WarmupLinearDecay):
        super().__init__()
        self.source, self.schedule = source, schedule
        self.steps = {"step": [], "epoch": [], "loss": [], "learning_rate": [], "sentences": []}
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch, self.seen, self.total = epoch, 0, 0.0

    def on_train_batch_end(self, batch, logs=None):
        if not logs or "loss" not in logs:
            return
        sizes = self.source.sizes[-1] if self.source.sizes else []
        size = sizes[batch] if batch < len(sizes) else self.source.batch_size
        seen = self.seen + size
        total = float(logs["loss"]) * seen
        step = len(self.steps["step"])
        self.steps["step"].append(step + 1)
        self.steps["epoch"].append(self.epoch + (batch + 1) / max(len(sizes), 1))
        self.steps["loss"].append((total - self.total) / size)
        self.steps["learning_rate"].append(float(self.schedule(step)))
        self.steps["sentences"].append(size)
        self.seen, self.total = seen, total


def fine_tune(model, loss: Callable, train: Mapping, validation: Mapping | None = None, *, epochs: int,
              batch_size: int, peak_learning_rate: float, warmup_fraction: float = 0.1, weight_decay: float = 0.01,
              seed: int = 0, bucket: int = 16, verbose="auto", callbacks=(), metrics=(),
              clip_norm: float | None = None):
    """Compile `model` with `loss`, AdamW and the warm-up/linear-decay schedule, and fit it on `train` (int32
    token_ids/segment_ids/padding_mask with per-example "labels": 06's encode_sentences, 07's Windows.arrays) for
    `epochs`, in batches of similar lengths (`batches`); `validation` is evaluated after each epoch; `callbacks` are
    passed to fit, `metrics` to compile; `clip_norm` scales the gradients down to that global norm when they are
    larger (BERT's 1.0; None, 06's recipe: no clipping). Returns Keras's History, with `history.steps` holding
    every step's loss and learning rate."""
    source = _Batches(train, batch_size, shuffle=True, seed=seed, bucket=bucket)
    total_steps = epochs * source.count()
    schedule = WarmupLinearDecay(peak_learning_rate, warmup_steps=round(warmup_fraction * total_steps),
                                 total_steps=total_steps)
    optimizer = keras.optimizers.AdamW(learning_rate=schedule, weight_decay=weight_decay, global_clipnorm=clip_norm)
    optimizer.exclude_from_weight_decay(var_names=list(NO_WEIGHT_DECAY))
    freeze_unused_pooler(model)
    model.compile(optimizer=optimizer, loss=loss, metrics=list(metrics))
    recorder = _StepRecorder(source, schedule)
    validation_data = None if validation is None else batches(validation, max(batch_size, 32), shuffle=False,
                                                              bucket=bucket)
    history = model.fit(_dataset(source), validation_data=validation_data, epochs=epochs, verbose=verbose,
                        callbacks=[recorder, *callbacks], shuffle=False)  # the batches are shuffled by _Batches
    history.steps = recorder.steps
    history.schedule = schedule
    return history


def release_memory() -> None:
    """Hand memory that Python, TensorFlow and PyTorch have freed back to the operating system. glibc's allocator
    (Linux) keeps freed memory for reuse, so after training the process still holds about a gigabyte of activations
    it no longer needs; malloc_trim returns it, leaving room for a child process or the next large arrays.
    Elsewhere, only a garbage collection."""
    import ctypes
    import ctypes.util
    import gc
    import sys

    gc.collect()
    if sys.platform.startswith("linux"):
        library = ctypes.util.find_library("c")
        if library:
            ctypes.CDLL(library).malloc_trim(0)


# ----------------------------------------------------------------------------------------------
# Learning curves


def plot_learning_curves(history, *, smooth: int = 20):
    """Training loss per step (and its moving average over `smooth` steps) with the validation loss after each
    epoch, beside the learning rate per step; return the figure. A plain Keras History gives the per-epoch
    losses only."""
    import matplotlib.pyplot as plt

    steps = getattr(history, "steps", None)
    per_epoch = history.history
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.5), constrained_layout=True)
    if steps and steps["loss"]:
        epoch_axis = np.asarray(steps["epoch"])
        loss = np.asarray(steps["loss"])
        left.plot(epoch_axis, loss, color="#4c72b0", alpha=0.3, linewidth=0.8, label="training loss (each step)")
        window = max(1, min(smooth, len(loss) // 10))
        if window > 1:
            average = np.convolve(loss, np.ones(window) / window, mode="valid")
            left.plot(epoch_axis[window - 1:], average, color="#4c72b0", label=f"mean of the last {window} steps")
        right.plot(steps["step"], steps["learning_rate"], color="#dd8452")
        right.set_xlabel("step")
        right.set_ylabel("learning rate")
        right.set_title("Warm-up, then linear decay")
    else:
        epochs = np.arange(1, len(per_epoch.get("loss", [])) + 1)
        left.plot(epochs, per_epoch.get("loss", []), "o-", color="#4c72b0", label="training loss (epoch mean)")
        right.axis("off")
    if "val_loss" in per_epoch:
        epochs = np.arange(1, len(per_epoch["val_loss"]) + 1)
        left.plot(epochs, per_epoch["val_loss"], "o-", color="#c44e52", label="validation loss (after each epoch)")
    left.set_xlabel("epoch")
    left.set_ylabel("cross-entropy per labelled token")
    left.set_title("Fine-tuning")
    left.legend()
    return fig
