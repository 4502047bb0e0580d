"""Assignment 08: examples per second of one fine-tuning step, on TensorFlow and on PyTorch, on the same windows
with the same batch size.

A step is the same recipe in both: forward through the pretrained BertBackbone and a Dense/Linear(hidden, 2) head,
the mean of the start and end cross-entropies, backward, gradients clipped at a global norm of 1.0, an AdamW update
of the parameters that train: all of them, or the head's and those of the encoder layers from `train_from` up, as
`train_top_layers` (course_lib.heads) leaves them. Each framework runs in a process of its own, Keras on its backend:
`tensorflow_rate` in a child process (Keras's `train_on_batch`, compiled as `fit` compiles it), `torch_rate` wherever
the module and train_step are (the notebook times the learner's own, frozen as its fine-tuning was),
`torch_rate_child` in a child on a module and a train_step named by their paths (the benchmark). The first `warmup`
steps are not timed: they build the graph (TensorFlow) and warm the allocators.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

from course_lib.heads import INPUT_NAMES, freeze_unused_pooler


def timing_windows(arrays: Mapping, batch_size: int, batches: int, *, width: int | None = None) -> dict:
    """The first batch_size * batches windows (repeated if there are fewer), cut to `width` tokens (default: the
    longest of them, rounded up to 16): the data both frameworks are timed on."""
    count = batch_size * batches
    rows = np.arange(count) % len(arrays["token_ids"])
    lengths = np.asarray(arrays["padding_mask"])[rows].sum(axis=1)
    width = int(width or min(np.shape(arrays["token_ids"])[1], 16 * -(-int(lengths.max()) // 16)))
    chosen = {name: np.asarray(arrays[name])[rows, :width].astype(np.int32) for name in INPUT_NAMES}
    chosen["labels"] = np.minimum(np.asarray(arrays["labels"])[rows], width - 1).astype(np.int32)
    return chosen


def _rate(seconds: list[float], batch_size: int) -> dict:
    per_step = float(np.median(seconds))
    return {"examples_per_second": batch_size / per_step, "seconds_per_step": per_step, "steps": len(seconds)}


def tensorflow_rate(*, arrays: Mapping, batch_size: int, steps: int, warmup: int = 2,
                    train_from: int | None = None) -> dict:
    """Fine-tuning steps of the pretrained backbone with a Dense(2) head on TensorFlow (run it in a child process:
    run_in_backend("tensorflow", "course_lib.qa_pytorch.throughput:tensorflow_rate", ...)); with `train_from`, the
    embeddings and the encoder layers below it frozen (train_top_layers), as the notebook's fine-tuning has them."""
    from course_lib.env import quiet_tensorflow

    quiet_tensorflow()
    import keras

    from course_lib.heads import train_top_layers
    from course_lib.pretrained import load_bert
    from course_lib.qa.training import span_loss

    backbone = load_bert().backbone
    freeze_unused_pooler(backbone)  # the head reads the sequence output, not the pooler
    if train_from is not None:
        train_top_layers(backbone, train_from)
    logits = keras.layers.Dense(2, name="span_logits")(backbone(backbone.input)["sequence_output"])
    model = keras.Model(backbone.input, logits)
    model.compile(optimizer=keras.optimizers.AdamW(2e-5, weight_decay=0.01, global_clipnorm=1.0), loss=span_loss)
    count = len(arrays["token_ids"]) // batch_size
    seconds = []
    for step in range(warmup + steps):
        rows = slice((step % count) * batch_size, (step % count + 1) * batch_size)
        inputs = {name: np.asarray(arrays[name][rows]) for name in INPUT_NAMES}
        started = time.perf_counter()
        model.train_on_batch(inputs, np.asarray(arrays["labels"][rows]))
        if step >= warmup:
            seconds.append(time.perf_counter() - started)
    return {**_rate(seconds, batch_size), "framework": "TensorFlow"}


def torch_rate(model, train_step, arrays: Mapping, *, batch_size: int, steps: int, warmup: int = 2,
               device=None) -> dict:
    """Calls of train_step(model, batch, AdamW, LambdaLR) on the windows, in this process; AdamW gets the parameters
    with requires_grad (freeze the model beforehand to time a step with frozen layers)."""
    import torch

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-5, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    model.train()
    count = len(arrays["token_ids"]) // batch_size
    seconds = []
    for step in range(warmup + steps):
        rows = slice((step % count) * batch_size, (step % count + 1) * batch_size)
        batch = {name: torch.as_tensor(np.asarray(arrays[name][rows]), dtype=torch.int64) for name in INPUT_NAMES}
        labels = np.asarray(arrays["labels"][rows])
        batch["start_positions"] = torch.as_tensor(labels[:, 0], dtype=torch.int64)
        batch["end_positions"] = torch.as_tensor(labels[:, 1], dtype=torch.int64)
        if device is not None:
            batch = {name: value.to(device) for name, value in batch.items()}
        started = time.perf_counter()
        train_step(model, batch, optimizer, scheduler)
        if device is not None and torch.device(device).type == "cuda":
            torch.cuda.synchronize()
        if step >= warmup:
            seconds.append(time.perf_counter() - started)
    return {**_rate(seconds, batch_size), "framework": "PyTorch"}


def torch_rate_child(*, arrays: Mapping, batch_size: int, steps: int, warmup: int = 2, module: str,
                     train_step: str) -> dict:
    """torch_rate in a child process (run_in_backend("torch", ...)) on the pretrained backbone, with the module class
    and the train_step function given as "package.module:name"."""
    import importlib

    from course_lib.env import quiet_tensorflow

    quiet_tensorflow()
    from course_lib.pretrained import load_bert

    def named(path: str):
        module_path, _, name = path.partition(":")
        return getattr(importlib.import_module(module_path), name)

    model = named(module)(load_bert().backbone)
    return torch_rate(model, named(train_step), arrays, batch_size=batch_size, steps=steps, warmup=warmup)
