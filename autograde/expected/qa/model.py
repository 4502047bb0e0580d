"""Expected values of the build_qa_model check of assignment 07 (`course_lib.qa.model`): the outputs of the
reference head, stacked (2, batch, seq), on the tiny backbone of each visible case (keras-hub's BertBackbone with the
check's seeded weights), the outputs of the named mistakes that differ from them, and the output shapes of the
named shape mistakes."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import stored
from autograde.mistakes.qa import model as mistakes
from autograde.reference.qa import model as ref
from course_lib.qa.model import QA_CASES, TINY_BACKBONE, TOL, qa_case


def _case(index: int) -> tuple[str, dict]:
    label, backbone, head, batches = qa_case(index)
    outputs, wrong = [], []
    for inputs in batches:
        forward = ref.backbone_forward(TINY_BACKBONE, backbone, inputs)
        right = ref.stacked_span_logits(forward["sequence_output"], head["kernel"], head["bias"])
        outputs.append(right)
        found = stored(mistakes.LOGITS, forward, head["kernel"], head["bias"])
        wrong.append({name: entry for name, entry in found.items()
                      if np.shape(entry["value"]) != right.shape or not np.allclose(entry["value"], right, **TOL)})
    batch, seq = batches[0]["token_ids"].shape
    shapes = {name: entry for name, entry in stored(mistakes.SHAPES, batch, seq, TINY_BACKBONE["hidden_dim"]).items()
              if [tuple(shape) for shape in entry["value"]] != [(batch, seq), (batch, seq)]}
    return label, {"outputs": outputs, "mistakes": wrong, "shapes": shapes}


def generate() -> dict:
    return {"model": {"build_qa_model": dict(_case(i) for i in range(len(QA_CASES)))}}
