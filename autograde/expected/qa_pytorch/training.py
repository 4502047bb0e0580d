"""Expected values of the training-side checks of assignment 08 (`course_lib.qa_pytorch.training`): for each visible
train_step case the reference's steps (loss returned, learning rate and weights after each step) simulated in NumPy
on the stand-in network with the stand-in loss, and the steps of each named mistake; for each visible evaluate case
the reference's result and the named mistakes' losses. A mistake that gives the right answer on a case is left out
of it."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import stored
from autograde.mistakes.qa_pytorch import training as mistakes
from autograde.reference.qa_pytorch.training import evaluate_numpy, simulate_training
from course_lib.qa_pytorch.training import (
    EVALUATION_CASES,
    LOSS_TOL,
    TRAIN_CASES,
    evaluation_case,
    same_steps,
    stale_gradients,
    train_case,
)

DEFAULT_MAX_GRAD_NORM = 1.0  # train_step's default, used when a case does not pass max_grad_norm


def _train(index: int) -> tuple[str, dict]:
    label, optimizer, factors, max_grad_norm, weights, batches = train_case(index)
    settings = {"optimizer": optimizer, "factors": factors, "loss": "stand_in",
                "max_grad_norm": DEFAULT_MAX_GRAD_NORM if max_grad_norm is None else max_grad_norm,
                "stale": stale_gradients(weights)}
    steps = simulate_training(weights, batches, **settings)
    wrong = {name: entry for name, entry in stored(mistakes.STEPS, weights, batches, **settings).items()
             if not same_steps(entry["value"], steps)}
    return label, {"steps": steps, "mistakes": wrong}


def _evaluation(index: int) -> tuple[str, dict]:
    label, weights, batches = evaluation_case(index)
    result = evaluate_numpy(weights, batches, loss="stand_in")
    wrong = {name: entry for name, entry in stored(mistakes.EVALUATION, result).items()
             if not np.isclose(entry["value"], result["loss"], **LOSS_TOL)}
    kept = {key: result[key] for key in ("loss", "start_logits", "end_logits")}
    return label, {"result": kept, "mistakes": wrong}


def generate() -> dict:
    return {"train_step": dict(_train(i) for i in range(len(TRAIN_CASES))),
            "evaluate": dict(_evaluation(i) for i in range(len(EVALUATION_CASES)))}
