"""Reference train_step and evaluate (assignment 08), and the NumPy float64 simulation the hidden checks compare
with.

`train_step` is the step of every PyTorch training loop: clear the gradients, forward, loss, backward, clip the
gradients' global norm, step the optimizer, then the schedule; it returns the loss as a Python float. `evaluate` runs
the model in evaluation mode (dropout off) without recording gradients, and returns the loss averaged over the
windows with every window's logits, in order, as NumPy arrays; it puts the model back in training mode.

`simulate_training` repeats what train_step does, step by step, on the stand-in network (standin.py) with SGD or
AdamW and a LambdaLR schedule given by its factors; a `Recipe` other than the default reproduces a named mistake
(autograde.mistakes.qa_pytorch.training). `evaluate_numpy` is evaluate's result on the stand-in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from autograde.reference.qa_pytorch import standin
from autograde.reference.qa_pytorch.model import qa_loss, qa_loss_gradient, qa_loss_numpy


def train_step(model, batch, optimizer, scheduler, max_grad_norm=1.0):
    """One optimisation step on one batch; the batch's loss (before the step) as a float."""
    optimizer.zero_grad()
    start_logits, end_logits = model(batch["token_ids"], batch["segment_ids"], batch["padding_mask"])
    loss = qa_loss(start_logits, end_logits, batch["start_positions"], batch["end_positions"])
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def evaluate(model, batches):
    """{"loss": mean over windows, "start_logits", "end_logits": (windows, seq) arrays}; the model left in training
    mode."""
    model.eval()
    total, count, starts, ends = 0.0, 0, [], []
    with torch.no_grad():
        for batch in batches:
            start_logits, end_logits = model(batch["token_ids"], batch["segment_ids"], batch["padding_mask"])
            loss = qa_loss(start_logits, end_logits, batch["start_positions"], batch["end_positions"])
            size = len(batch["token_ids"])
            total += loss.item() * size
            count += size
            starts.append(start_logits.cpu().numpy())
            ends.append(end_logits.cpu().numpy())
    model.train()
    return {"loss": total / count, "start_logits": np.concatenate(starts), "end_logits": np.concatenate(ends)}


# ----------------------------------------------------------------------------------------------
# NumPy, float64: the training steps and the evaluation on the stand-in network

LOSSES = {"qa": (qa_loss_numpy, qa_loss_gradient),
          "stand_in": (standin.stand_in_loss, standin.stand_in_loss_gradient)}


@dataclass(frozen=True)
class Recipe:
    """How each step is done: the reference's by default, a named mistake otherwise."""

    zero_grad: str = "before"  # "before" the forward pass | "never": the steps' gradients add up | "after" the step
    backward: bool = True  # False: no gradient reaches the weights, the optimizer skips them
    clip: str = "norm"  # "norm" at max_grad_norm | "none" | "value" (each entry to +-max_grad_norm) | "norm_1"
    scheduler: str = "after"  # "after" the optimizer | "never" | "before" the optimizer


def _clipped(grads: dict, max_grad_norm: float, clip: str) -> dict:
    if clip == "none":
        return grads
    if clip == "value":
        return {name: np.clip(g, -max_grad_norm, max_grad_norm) for name, g in grads.items()}
    limit = 1.0 if clip == "norm_1" else max_grad_norm
    norm = np.sqrt(sum(float(np.sum(g ** 2)) for g in grads.values()))
    scale = min(limit / (norm + 1e-6), 1.0)  # torch.nn.utils.clip_grad_norm_
    return {name: g * scale for name, g in grads.items()}


def _adamw(weights: dict, grads: dict, state: dict, lr: float, settings: Mapping) -> None:
    """torch.optim.AdamW's update, in place (decoupled weight decay, bias-corrected moments)."""
    beta1, beta2 = settings.get("betas", (0.9, 0.999))
    eps, decay = settings.get("eps", 1e-8), settings.get("weight_decay", 0.01)
    state["step"] = state.get("step", 0) + 1
    t = state["step"]
    for name, grad in grads.items():
        m = state.setdefault(("m", name), np.zeros_like(grad))
        v = state.setdefault(("v", name), np.zeros_like(grad))
        m[...] = beta1 * m + (1 - beta1) * grad
        v[...] = beta2 * v + (1 - beta2) * grad ** 2
        weights[name] = weights[name] * (1 - lr * decay)
        denominator = np.sqrt(v) / np.sqrt(1 - beta2 ** t) + eps
        weights[name] = weights[name] - (lr / (1 - beta1 ** t)) * m / denominator


def simulate_training(weights: Mapping, batches: Sequence[Mapping], *, optimizer: Mapping, factors: Sequence[float],
                      max_grad_norm: float = 1.0, loss: str = "qa", recipe: Recipe = Recipe(),
                      stale: Mapping | None = None) -> list[dict]:
    """One entry per batch: {"loss": the loss train_step returns, "lr": the optimizer's learning rate after the
    step, "weights": every weight after the step}. `optimizer` is {"name": "sgd" or "adamw", "lr", ...} (AdamW's
    weight_decay, eps, betas); the schedule multiplies lr by factors[k] after k scheduler steps. `stale`: gradients
    already in .grad before the first step (float32, as the model held them)."""
    loss_value, loss_gradient = LOSSES[loss]
    current = {name: np.asarray(value, np.float64).copy() for name, value in weights.items()}
    grads = None if stale is None else {name: np.asarray(value, np.float32).astype(np.float64)
                                        for name, value in stale.items()}
    base, state, scheduled, steps = float(optimizer["lr"]), {}, 0, []

    def factor(k: int) -> float:
        return float(factors[min(k, len(factors) - 1)])

    for batch in batches:
        if recipe.zero_grad == "before":
            grads = None
        if recipe.scheduler == "before":
            scheduled += 1
        forward = standin.forward(current, batch)
        value = loss_value(forward["start"], forward["end"], batch["start_positions"], batch["end_positions"])
        if recipe.backward:
            d_start, d_end = loss_gradient(forward["start"], forward["end"], batch["start_positions"],
                                           batch["end_positions"])
            new = standin.gradient(current, batch, forward, d_start, d_end)
            grads = new if grads is None else {name: grads[name] + new[name] for name in new}
        if grads is not None:
            grads = _clipped(grads, max_grad_norm, recipe.clip)
            lr = base * factor(scheduled)
            if optimizer["name"] == "sgd":
                current = {name: current[name] - lr * grads[name] for name in current}
            else:
                _adamw(current, grads, state, lr, optimizer)
        if recipe.scheduler == "after":
            scheduled += 1
        if recipe.zero_grad == "after":
            grads = None
        steps.append({"loss": value, "lr": base * factor(scheduled),
                      "weights": {name: array.copy() for name, array in current.items()}})
    return steps


def evaluate_numpy(weights: Mapping, batches: Sequence[Mapping], loss: str = "qa") -> dict:
    """evaluate's result on the stand-in (dropout off), with "batch_losses" and "sizes" for the mistakes."""
    loss_value = LOSSES[loss][0]
    losses, sizes, starts, ends = [], [], [], []
    for batch in batches:
        forward = standin.forward(weights, batch)
        losses.append(loss_value(forward["start"], forward["end"], batch["start_positions"], batch["end_positions"]))
        sizes.append(len(batch["token_ids"]))
        starts.append(forward["start"])
        ends.append(forward["end"])
    return {"loss": float(np.dot(losses, sizes) / np.sum(sizes)), "start_logits": np.concatenate(starts),
            "end_logits": np.concatenate(ends), "batch_losses": losses, "sizes": sizes}
