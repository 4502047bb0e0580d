"""Expected values of the model-side checks of assignment 06 (`course_lib.ner.model`): the logits of the
reference head on the tiny backbone of each visible case (keras-hub's BertBackbone with the check's seeded
weights), the logits and output shapes of the named mistakes, and the reference loss on each visible loss case
with the named mistakes' losses. A mistake that gives the right answer on a case is left out of it."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import stored
from autograde.mistakes.ner import model as mistakes
from autograde.reference.ner import model as ref
from course_lib.heads import TINY_BACKBONE, TOL
from course_lib.ner.loss import LOSS_CASES, loss_case
from course_lib.ner.model import CLASSIFIER_CASES, classifier_case


def _classifier(index: int) -> tuple[str, dict]:
    label, num_labels, backbone, head, batches = classifier_case(index)
    logits, wrong = [], []
    for inputs in batches:
        forward = ref.backbone_forward(TINY_BACKBONE, backbone, inputs)
        expected = ref.token_logits(forward["sequence_output"], head["kernel"], head["bias"])
        logits.append(expected)
        found = stored(mistakes.LOGITS, forward, head["kernel"], head["bias"])
        wrong.append({name: entry for name, entry in found.items() if np.shape(entry["value"]) != expected.shape
                      or not np.allclose(entry["value"], expected, **TOL)})
    batch, seq = batches[0]["token_ids"].shape
    right = (batch, seq, num_labels)
    shapes = {name: entry for name, entry in
              stored(mistakes.SHAPES, batch, seq, TINY_BACKBONE["hidden_dim"], num_labels).items()
              if tuple(entry["value"]) != right}
    return label, {"logits": logits, "mistakes": wrong, "shapes": shapes}


def _loss(index: int) -> tuple[str, dict]:
    label, labels, logits = loss_case(index)
    expected = ref.masked_token_loss_numpy(labels, logits)
    wrong = {name: entry for name, entry in stored(mistakes.LOSS, labels, logits).items()
             if not np.isclose(entry["value"], expected, atol=1e-5, rtol=1e-4)}
    return label, {"loss": expected, "mistakes": wrong, "nan_message": mistakes.EMPTY_NAN}


def generate() -> dict:
    return {"model": {
        "build_token_classifier": dict(_classifier(i) for i in range(len(CLASSIFIER_CASES))),
        "masked_token_loss": dict(_loss(i) for i in range(len(LOSS_CASES))),
    }}
