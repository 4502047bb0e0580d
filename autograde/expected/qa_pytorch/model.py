"""Expected values of the model-side checks of assignment 08 (`course_lib.qa_pytorch.model`): the start and end
logits of the reference head on the tiny backbone of each visible case (keras-hub's BertBackbone, computed here on
TensorFlow, with the check's seeded weights), those of the named mistakes and their output shapes; the reference
loss and its gradient on each visible loss case, with the named mistakes' losses. A mistake that gives the right
answer on a case is left out of it."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import stored
from autograde.mistakes.qa_pytorch import model as mistakes
from autograde.reference.heads import backbone_forward
from autograde.reference.qa_pytorch import model as ref
from course_lib.heads import TINY_BACKBONE
from course_lib.qa_pytorch.loss import LOSS_CASES, LOSS_TOL, loss_case
from course_lib.qa_pytorch.model import MODEL_CASES, TOL, model_case


def _model(index: int) -> tuple[str, dict]:
    label, backbone, head, batches = model_case(index)
    logits, wrong = [], []
    for inputs in batches:
        forward = backbone_forward(TINY_BACKBONE, backbone, inputs)
        expected = np.stack(ref.span_logits(forward["sequence_output"], head["kernel"], head["bias"]))
        logits.append(expected)
        found = stored(mistakes.LOGITS, forward, head["kernel"], head["bias"])
        wrong.append({name: entry for name, entry in found.items()
                      if not np.allclose(entry["value"], expected, **TOL)})
    batch, seq = batches[0]["token_ids"].shape
    shapes = {name: entry for name, entry in stored(mistakes.SHAPES, batch, seq, TINY_BACKBONE["hidden_dim"]).items()
              if tuple(entry["value"]) != (batch, seq)}
    return label, {"logits": logits, "mistakes": wrong, "shapes": shapes}


def _loss(index: int) -> tuple[str, dict]:
    label, start, end, start_positions, end_positions = loss_case(index)
    expected = ref.qa_loss_numpy(start, end, start_positions, end_positions)
    gradient = np.stack(ref.qa_loss_gradient(start, end, start_positions, end_positions))
    wrong = {name: entry for name, entry in stored(mistakes.LOSS, start, end, start_positions, end_positions).items()
             if not np.isclose(entry["value"], expected, **LOSS_TOL)}
    return label, {"loss": expected, "gradient": gradient, "mistakes": wrong}


def generate() -> dict:
    return {"QAModel": dict(_model(i) for i in range(len(MODEL_CASES))),
            "qa_loss": dict(_loss(i) for i in range(len(LOSS_CASES)))}
