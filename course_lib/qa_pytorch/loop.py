"""Assignment 08: what a PyTorch fine-tuning loop needs around the learner's train_step and evaluate.

- `torch_batches`: the windows of assignment 07 (course_lib.qa.features.Windows.arrays) as a list of dicts of int64
  tensors, the batch format of train_step and evaluate. For training, shuffled batches of windows of similar lengths,
  each cut to its longest window rounded up to a multiple of 16 (course_lib.finetuning.batch_plan); for
  evaluation, the windows in order, every batch cut to the same width, so that the logits of all batches stack.
- `to_device`: a batch moved to the GPU (or wherever the model is).
- `parameter_groups`: AdamW's groups, without weight decay on biases and layer-norm scales and offsets (as BERT).
- `full_width`: logits of cut windows padded back to the windows' length with -inf, never chosen by best_span.
- `plot_learning_curves`: training loss per step with its moving average, evaluation losses, learning rate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from course_lib.finetuning import NO_WEIGHT_DECAY, batch_plan, lengths_of, release_memory  # noqa: F401 (08 uses it)
from course_lib.heads import INPUT_NAMES


def _round_up(length: int, bucket: int) -> int:
    return bucket * -(-max(int(length), 1) // bucket)


def torch_batches(arrays: Mapping, batch_size: int, *, seed: int | None = None, bucket: int = 16,
                  limit: int | None = None) -> list[dict]:
    """Batches of windows as dicts of int64 tensors: token_ids, segment_ids, padding_mask and, when the arrays have
    labels, start_positions and end_positions. With `seed`, shuffled (reproducibly) into batches of similar lengths,
    each cut to its own width; without, in order, all cut to one width. `limit` keeps the first batches only."""
    import torch

    lengths = lengths_of(arrays)
    max_length = int(np.shape(arrays["token_ids"])[1])
    if seed is None:
        width = min(max_length, _round_up(lengths.max(initial=1), bucket))
        plan = [(np.arange(start, min(start + batch_size, len(lengths))), width)
                for start in range(0, len(lengths), batch_size)]
    else:
        plan = batch_plan(lengths, batch_size, bucket=bucket, max_length=max_length, rng=np.random.default_rng(seed))
    batches = []
    for rows, width in plan[:limit]:
        batch = {name: torch.as_tensor(np.asarray(arrays[name])[rows, :width], dtype=torch.int64)
                 for name in INPUT_NAMES}
        if "labels" in arrays:
            labels = np.asarray(arrays["labels"])[rows]
            batch["start_positions"] = torch.as_tensor(labels[:, 0], dtype=torch.int64)
            batch["end_positions"] = torch.as_tensor(labels[:, 1], dtype=torch.int64)
        batches.append(batch)
    return batches


def to_device(batch: Mapping, device) -> dict:
    """The batch's tensors on `device` (a no-op on the CPU)."""
    return {name: value.to(device) for name, value in batch.items()}


def parameter_groups(model, weight_decay: float) -> list[dict]:
    """AdamW's parameter groups: weight decay on the weight matrices, none on biases and layer-norm parameters."""
    decayed, plain = [], []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            (plain if name.endswith(NO_WEIGHT_DECAY) else decayed).append(parameter)
    return [{"params": decayed, "weight_decay": weight_decay}, {"params": plain, "weight_decay": 0.0}]


def full_width(logits, max_length: int) -> np.ndarray:
    """(windows, width) logits padded with -inf to (windows, max_length)."""
    logits = np.asarray(logits, np.float32)
    padded = np.full((logits.shape[0], max_length), -np.inf, np.float32)
    padded[:, :logits.shape[1]] = logits
    return padded


def plot_learning_curves(losses: Sequence[float], learning_rates: Sequence[float],
                         evaluations: Sequence[tuple[int, float]] = (), *, smooth: int = 20):
    """Training loss per step (and its moving average) with (step, loss) evaluation points, beside the learning rate
    per step; return the figure."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.5), constrained_layout=True)
    steps = np.arange(1, len(losses) + 1)
    left.plot(steps, losses, color="#4c72b0", alpha=0.3, linewidth=0.8, label="training loss (each step)")
    window = max(1, min(smooth, len(losses) // 10))
    if window > 1:
        average = np.convolve(np.asarray(losses, np.float64), np.ones(window) / window, mode="valid")
        left.plot(steps[window - 1:], average, color="#4c72b0", label=f"mean of the last {window} steps")
    if evaluations:
        at, values = zip(*evaluations, strict=True)
        left.plot(at, values, "o-", color="#c44e52", label="test loss")
    left.set_xlabel("step")
    left.set_ylabel("(start + end cross-entropy) / 2")
    left.set_title("Fine-tuning in PyTorch")
    left.legend()
    right.plot(steps, learning_rates, color="#dd8452")
    right.set_xlabel("step")
    right.set_ylabel("learning rate")
    right.set_title("Warm-up, then linear decay (LambdaLR)")
    return fig


def first_questions(windows, count: int):
    """The windows of the first `count` questions (course_lib.qa.features.Windows), as a Windows of their own."""
    from course_lib.qa.features import Windows

    rows = np.flatnonzero(np.asarray(windows.example) < count)
    return Windows({name: np.asarray(value)[rows] for name, value in windows.arrays.items()},
                   np.asarray(windows.example)[rows], [windows.offsets[row] for row in rows],
                   np.asarray(windows.context_mask)[rows])
