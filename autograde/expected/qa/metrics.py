"""Expected values of the squad_em_f1 check of assignment 07 (`course_lib.qa.metrics`): the reference's scores of
each case, its normalised texts (for the messages), and the scores of the named mistakes that differ from them."""

from __future__ import annotations

from autograde.mistakes import stored
from autograde.mistakes.qa import metrics as mistakes
from autograde.reference.qa import metrics as ref
from course_lib.qa.metrics import METRIC_CASES, TOLERANCE


def _case(prediction, gold_answers) -> dict:
    right = ref.squad_em_f1(prediction, gold_answers)
    wrong = stored(mistakes.METRICS, prediction, gold_answers)
    return {"expected": list(right), "prediction": ref.normalize_answer(prediction),
            "gold_answers": [ref.normalize_answer(gold) for gold in gold_answers],
            "mistakes": {name: {"value": list(entry["value"]), "message": entry["message"]}
                         for name, entry in wrong.items()
                         if any(abs(a - b) > TOLERANCE for a, b in zip(entry["value"], right, strict=True))}}


def generate() -> dict:
    return {"metrics": {"squad_em_f1": {label: _case(prediction, gold_answers)
                                        for label, prediction, gold_answers in METRIC_CASES}}}
