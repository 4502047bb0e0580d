"""Assignment 08: the helpers of the qa_loss checks (the visible check is in course_lib.qa_pytorch.model).

`run_qa_loss` calls the learner's loss where the learner's code lives, on float32 logits that record gradients and
int64 positions, then backpropagates through what it returned; plain data comes back (its type, shape, value and
the gradient that reached the logits). `expect_qa_loss` is the verdict: a scalar tensor equal to the reference,
through which the reference's gradient flows, the usual mistakes named.
"""

from __future__ import annotations

import numpy as np

from course_lib.checking import CheckFailed, call_learner, expect_close, quiet

LOSS_TOL = {"atol": 1e-5, "rtol": 1e-4}


def run_qa_loss(qa_loss, start_logits, end_logits, start_positions, end_positions) -> dict:
    """Call the learner's qa_loss on tensors and backpropagate through its result."""
    import torch

    start = torch.tensor(np.asarray(start_logits, np.float32), requires_grad=True)
    end = torch.tensor(np.asarray(end_logits, np.float32), requires_grad=True)
    positions = [torch.as_tensor(np.asarray(p, np.int64)) for p in (start_positions, end_positions)]
    with quiet():
        value = call_learner(qa_loss, start, end, *positions)
    report = {"type": type(value).__name__, "is_tensor": isinstance(value, torch.Tensor), "gradient": None}
    try:
        array = np.asarray(value.detach().cpu().numpy() if report["is_tensor"] else value, np.float64)
    except (TypeError, ValueError, AttributeError):
        return {**report, "value": None, "shape": None}
    report.update(value=array.reshape(-1).tolist(), shape=list(array.shape))
    if report["is_tensor"] and value.requires_grad and value.numel() == 1:
        value.reshape(()).backward()
        if start.grad is not None and end.grad is not None:
            report["gradient"] = np.stack([start.grad.numpy(), end.grad.numpy()]).astype(np.float64)
    return report


def expect_qa_loss(report: dict, expected: float, gradient: np.ndarray, label: str, *, mistakes=()) -> None:
    """The verdict on one `run_qa_loss` report; `gradient` is (2, batch, seq), d loss / d start and end logits."""
    if report["value"] is None:
        raise CheckFailed(f"[{label}] qa_loss returned a {report['type']}, not a number: return the loss as a scalar "
                          "torch tensor")
    value = np.asarray(report["value"], np.float64).reshape([int(d) for d in report["shape"]])
    if value.shape != ():
        what = " one loss per window: average over the batch" if value.ndim == 1 else ""
        raise CheckFailed(f"[{label}] qa_loss returned shape {value.shape};{what} it should return one number")
    if not np.isfinite(value):
        raise CheckFailed(f"[{label}] the loss is {float(value)}: compute the cross-entropy from the logits "
                          "(torch.nn.functional.cross_entropy), not log(softmax(...)) by hand")
    expect_close(value, expected, f"[{label}] the loss", mistakes=mistakes, **LOSS_TOL)
    if not report["is_tensor"]:
        raise CheckFailed(f"[{label}] qa_loss returned a {report['type']}, not a tensor: loss.backward() needs the "
                          "tensor; turning it into a number (.item()) is train_step's job, after backward")
    if report["gradient"] is None:
        raise CheckFailed(f"[{label}] no gradient reaches the logits from the loss: it was cut from their graph "
                          "(.detach(), .item(), NumPy, or torch.no_grad() inside qa_loss)")
    expect_close(report["gradient"], gradient, f"[{label}] the gradient of the loss with respect to the logits",
                 atol=1e-6, rtol=1e-4)


LOSS_CASES = [  # label, batch, seq, logit scale, seed
    ("3 windows of 8 tokens", 3, 8, 2.0, 91),
    ("5 windows of 12 tokens, logits up to about 60 in size", 5, 12, 20.0, 92),
    ("1 window of 4 tokens", 1, 4, 1.0, 93),
]


def positions(rng: np.random.Generator, batch: int, seq: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and end positions as the notebook's windows have them: the first window's answer starts at 0 ([CLS],
    no answer in the window), the last one's ends at the last token, the rest anywhere with end >= start."""
    start = rng.integers(0, seq, size=batch)
    end = np.minimum(start + rng.integers(0, 4, size=batch), seq - 1)
    start[0] = end[0] = 0
    if batch > 1:
        end[-1] = seq - 1
        start[-1] = min(start[-1], end[-1])
    if batch > 2:
        start[1], end[1] = 1, 3 % seq  # start and end differ, so that swapping them shows
    return start.astype(np.int64), end.astype(np.int64)


def loss_case(index: int):
    """(label, start logits, end logits, start positions, end positions) of a visible case."""
    label, batch, seq, scale, seed = LOSS_CASES[index]
    rng = np.random.default_rng(seed)
    start_logits = (scale * rng.standard_normal((batch, seq))).astype(np.float32)
    end_logits = (scale * rng.standard_normal((batch, seq))).astype(np.float32)
    start, end = positions(rng, batch, seq)
    return label, start_logits, end_logits, start, end
