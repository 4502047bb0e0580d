"""Fine-tuning a head on BERT, fast enough for a laptop CPU (06's token classifier, 07's span head; 08's PyTorch loop
batches the same way).

- `WarmupLinearDecay`: the learning rate rises linearly from 0 to `peak` over `warmup_steps`, then falls
  linearly to 0 at `total_steps` (BERT's schedule); a Keras schedule, serialisable.
- `batch_plan` and `batches`: batches of examples of similar lengths, each cut to its longest one, rounded up to a
  multiple of `bucket` (a `tf.data.Dataset` of (inputs, labels)). Most examples are far shorter than the padded
  length, so this does several times less work than padding every batch to 128 tokens, and with few distinct
  widths there is little to retrace.
- `fine_tune`: AdamW (no weight decay on layer-norm scales and offsets nor on biases, as in BERT) with the
  schedule, the unused pooler frozen, `model.fit` with Keras's progress bar, for a number of epochs or of steps;
  the History it returns also holds every step's loss and learning rate (`history.steps`), which
  `plot_learning_curves` draws.
- `measure_step_cost` and `planned_positions`: a few real steps timed, and the steps a run will take, from which
  course_lib.time_budget predicts how long fine-tuning will last on this machine.

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
    """eta_s = peak * s / w for s < w, then peak * (T - s) / (T - w), and 0 from step T on.

    The three values live in variables, so that `set` can change them after the training step's graph is built:
    a run measured before its length is known keeps the graph of its measurement."""

    def __init__(self, peak, warmup_steps, total_steps):
        self._variables = [keras.Variable(0.0, dtype="float32", trainable=False, name=name)
                           for name in ("peak", "warmup_steps", "total_steps")]
        self.set(peak, warmup_steps, total_steps)

    def set(self, peak, warmup_steps, total_steps) -> None:
        if not 0 <= warmup_steps <= total_steps or total_steps <= 0:
            raise ValueError(f"need 0 <= warmup_steps <= total_steps and total_steps > 0, got warmup_steps="
                             f"{warmup_steps}, total_steps={total_steps}")
        self.peak = float(peak)
        self.warmup_steps = int(warmup_steps)
        self.total_steps = int(total_steps)
        for variable, value in zip(self._variables, (self.peak, self.warmup_steps, self.total_steps), strict=True):
            variable.assign(float(value))

    def __call__(self, step):
        step = keras.ops.cast(step, "float32")
        peak, warmup, total = (keras.ops.convert_to_tensor(variable) for variable in self._variables)
        rising = peak * step / keras.ops.maximum(warmup, 1.0)
        falling = peak * (total - step) / keras.ops.maximum(total - warmup, 1.0)
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
    """A generator of (inputs, labels) batches for tf.data that remembers the batch sizes of each call.

    Each call (one Keras epoch) yields a whole new plan (an epoch over the data), or with `per_call` that many
    batches from an endless stream of plans, so that a run can be a number of steps rather than of epochs."""

    def __init__(self, arrays: Mapping, batch_size: int, *, shuffle: bool, seed: int, bucket: int,
                 per_call: int | None = None):
        self.inputs = {name: np.asarray(arrays[name], np.int32) for name in INPUT_NAMES}
        self.labels = None if "labels" not in arrays else np.asarray(arrays["labels"], np.int32)
        self.lengths = lengths_of(arrays)
        self.max_length = self.inputs["token_ids"].shape[1]
        self.batch_size, self.bucket, self.per_call = batch_size, bucket, per_call
        self.rng = np.random.default_rng(seed) if shuffle else None
        self.sizes: list[list[int]] = []  # batch sizes of each call, in the order the batches were made
        self._pending: list[tuple[np.ndarray, int]] = []

    def count(self) -> int:
        return self.per_call if self.per_call is not None else math.ceil(len(self.lengths) / self.batch_size)

    def _plan(self) -> list[tuple[np.ndarray, int]]:
        return batch_plan(self.lengths, self.batch_size, bucket=self.bucket, max_length=self.max_length, rng=self.rng)

    def plans(self, calls: int) -> list[list[tuple[np.ndarray, int]]]:
        """The batches of the next `calls` calls, without making them (the generator's state is unchanged)."""
        saved_rng = None if self.rng is None else np.random.default_rng()
        if saved_rng is not None:
            saved_rng.bit_generator.state = self.rng.bit_generator.state
        pending = list(self._pending)
        result = [self._take() for _ in range(calls)]
        self._pending = pending
        if saved_rng is not None:
            self.rng = saved_rng
        return result

    def _take(self) -> list[tuple[np.ndarray, int]]:
        if self.per_call is None:
            return self._plan()
        while len(self._pending) < self.per_call:
            self._pending += self._plan()
        taken, self._pending = self._pending[:self.per_call], self._pending[self.per_call:]
        return taken

    def __call__(self):
        plan = self._take()
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
    """Each training step's loss (recovered from Keras's running mean, which weighs batches by their size),
    learning rate and passes over the data so far."""

    def __init__(self, source: _Batches, schedule: WarmupLinearDecay):
        super().__init__()
        self.source, self.schedule = source, schedule
        self.steps = {"step": [], "epoch": [], "loss": [], "learning_rate": [], "sentences": []}
        self.examples = max(len(source.lengths), 1)
        self.passed = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.seen, self.total = 0, 0.0

    def on_train_batch_end(self, batch, logs=None):
        if not logs or "loss" not in logs:
            return
        sizes = self.source.sizes[-1] if self.source.sizes else []
        size = sizes[batch] if batch < len(sizes) else self.source.batch_size
        seen = self.seen + size
        total = float(logs["loss"]) * seen
        step = len(self.steps["step"])
        self.passed += size
        self.steps["step"].append(step + 1)
        self.steps["epoch"].append(self.passed / self.examples)  # passes over the training data
        self.steps["loss"].append((total - self.total) / size)
        self.steps["learning_rate"].append(float(self.schedule(step)))
        self.steps["sentences"].append(size)
        self.seen, self.total = seen, total


def _compile(model, loss: Callable, schedule, *, weight_decay: float, clip_norm: float | None, metrics=()) -> None:
    """AdamW (no weight decay on layer-norm scales and offsets nor on biases) with `schedule`, the pooler frozen."""
    optimizer = keras.optimizers.AdamW(learning_rate=schedule, weight_decay=weight_decay, global_clipnorm=clip_norm)
    optimizer.exclude_from_weight_decay(var_names=list(NO_WEIGHT_DECAY))
    freeze_unused_pooler(model)
    model.compile(optimizer=optimizer, loss=loss, metrics=list(metrics))
    model._course_training = {"schedule": schedule, "weight_decay": weight_decay, "clip_norm": clip_norm}


def _measured_compile(model, schedule, *, weight_decay: float, clip_norm: float | None) -> bool:
    """Whether `model` was compiled by `measure_step_cost` with these settings; if so, its optimizer is set back to
    its start and its schedule to `schedule`'s values, so that the run keeps the measured step's graph."""
    kept = getattr(model, "_course_training", None)
    if not kept or not kept.get("measured") or kept["weight_decay"] != weight_decay or kept["clip_norm"] != clip_norm:
        return False
    kept["schedule"].set(schedule.peak, schedule.warmup_steps, schedule.total_steps)
    for variable in model.optimizer.variables:  # moments and the step count from before the run
        variable.assign(keras.ops.zeros(variable.shape, variable.dtype))
    kept["measured"] = False  # a second run compiles afresh
    return True


def _source(train: Mapping, batch_size: int, *, epochs: int, steps: int | None, seed: int, bucket: int) -> _Batches:
    if epochs < 1 or (steps is not None and steps < 1):
        raise ValueError(f"epochs and steps must be at least 1, got epochs={epochs}, steps={steps}")
    per_call = None if steps is None else math.ceil(steps / epochs)
    return _Batches(train, batch_size, shuffle=True, seed=seed, bucket=bucket, per_call=per_call)


def planned_positions(train: Mapping, batch_size: int, *, epochs: int = 1, steps: int | None = None, seed: int = 0,
                      bucket: int = 16) -> list[int]:
    """The positions (examples x width) of every step `fine_tune` will take with these settings, in order."""
    source = _source(train, batch_size, epochs=epochs, steps=steps, seed=seed, bucket=bucket)
    return [len(rows) * width for plan in source.plans(epochs) for rows, width in plan]


def fine_tune(model, loss: Callable, train: Mapping, validation: Mapping | None = None, *, epochs: int,
              batch_size: int, peak_learning_rate: float, warmup_fraction: float = 0.1, weight_decay: float = 0.01,
              seed: int = 0, bucket: int = 16, verbose="auto", callbacks=(), metrics=(),
              clip_norm: float | None = None, steps: int | None = None):
    """Compile `model` with `loss`, AdamW and the warm-up/linear-decay schedule, and fit it on `train` (int32
    token_ids/segment_ids/padding_mask with per-example "labels": 06's encode_sentences, 07's Windows.arrays) for
    `epochs`, in batches of similar lengths (`batches`); with `steps`, the run is that many steps (rounded up to a
    multiple of `epochs`) in `epochs` equal parts, whatever the size of the data. `validation` is evaluated after each
    epoch (or part); `callbacks` are passed to fit, `metrics` to compile; `clip_norm` scales the gradients down to
    that global norm when they are larger (BERT's 1.0; None, 06's recipe: no clipping). Returns Keras's History, with
    `history.steps` holding every step's loss, learning rate and passes over the data."""
    source = _source(train, batch_size, epochs=epochs, steps=steps, seed=seed, bucket=bucket)
    total_steps = epochs * source.count()
    schedule = WarmupLinearDecay(peak_learning_rate, warmup_steps=round(warmup_fraction * total_steps),
                                 total_steps=total_steps)
    if _measured_compile(model, schedule, weight_decay=weight_decay, clip_norm=clip_norm):
        schedule = model._course_training["schedule"]
    else:
        _compile(model, loss, schedule, weight_decay=weight_decay, clip_norm=clip_norm, metrics=metrics)
    recorder = _StepRecorder(source, schedule)
    validation_data = None if validation is None else batches(validation, max(batch_size, 32), shuffle=False,
                                                              bucket=bucket)
    history = model.fit(_dataset(source), validation_data=validation_data, epochs=epochs, verbose=verbose,
                        callbacks=[recorder, *callbacks], shuffle=False)  # the batches are shuffled by _Batches
    history.steps = recorder.steps
    history.schedule = schedule
    return history


class _StepTimer(keras.callbacks.Callback):
    def __init__(self, clock: Callable[[], float]):
        super().__init__()
        self.clock, self.seconds = clock, []

    def on_train_batch_begin(self, batch, logs=None):
        self.started = self.clock()

    def on_train_batch_end(self, batch, logs=None):
        self.seconds.append(self.clock() - self.started)


def measure_step_cost(model, loss: Callable, train: Mapping, *, batch_size: int, weight_decay: float = 0.01,
                      clip_norm: float | None = None, metrics=(), seed: int = 0, bucket: int = 16,
                      steps: int | None = None, clock: Callable[[], float] | None = None):
    """Time a few real training steps of `model` (Keras's `fit`, as `fine_tune` runs it, with a learning rate of 0)
    on batches of `train` chosen across their widths; return the fitted course_lib.time_budget.StepCost. Every
    weight is put back as it was, and a `fine_tune` that follows with the same settings keeps the compiled step
    (its graph is not built twice)."""
    import time

    from course_lib import time_budget

    saved = model.get_weights()
    _compile(model, loss, WarmupLinearDecay(0.0, 0, 1), weight_decay=weight_decay, clip_norm=clip_norm,
             metrics=metrics)
    source = _Batches(train, batch_size, shuffle=True, seed=seed, bucket=bucket)
    plan = source.plans(1)[0]
    chosen = time_budget.spread_over_widths(plan, steps or time_budget.PROBE_STEPS)
    while len(chosen) < time_budget.START_STEPS + 2:  # a tiny data set (fast mode): its batches timed again
        chosen = chosen + chosen
    probe = _Batches(train, batch_size, shuffle=False, seed=seed, bucket=bucket, per_call=len(chosen))
    probe._pending = [plan[i] for i in chosen]
    timer = _StepTimer(clock or time.perf_counter)
    try:
        model.fit(_dataset(probe), epochs=1, verbose=0, callbacks=[timer], shuffle=False)
    finally:
        model.set_weights(saved)
    model._course_training["measured"] = True
    samples = [(len(plan[i][0]) * plan[i][1], seconds) for i, seconds in zip(chosen, timer.seconds, strict=True)]
    return time_budget.StepCost.fit(samples)


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
        parts = len(per_epoch["val_loss"])
        epochs = np.arange(1, parts + 1, dtype=float)
        if steps and steps["epoch"]:  # after each part of the run: whole epochs, or equal shares of its steps
            ends = [round((part + 1) * len(steps["epoch"]) / parts) - 1 for part in range(parts)]
            epochs = np.asarray(steps["epoch"])[ends]
        left.plot(epochs, per_epoch["val_loss"], "o-", color="#c44e52", label="validation loss")
    left.set_xlabel("passes over the training data (epochs)")
    left.set_ylabel("cross-entropy per labelled token")
    left.set_title("Fine-tuning")
    left.legend()
    return fig
