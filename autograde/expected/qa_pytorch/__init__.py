"""Expected values of assignment 08's visible checks: the model side (model.py) and the training side (training.py)."""

from autograde.expected.qa_pytorch import model, training


def generate() -> dict:
    return {"model": model.generate(), "training": training.generate()}
