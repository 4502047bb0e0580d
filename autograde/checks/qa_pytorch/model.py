"""Hidden checks of QAModel and qa_loss (assignment 08).

- QAModel: for tiny keras-hub BertBackbones of two sizes, built on the PyTorch backend in the student's kernel with
  weights chosen here (`run_qa_model`, one request per case), the learner's module is called on padded batches in
  evaluation and training mode; its start and end logits are compared with the head computed here, in float64, on
  the sequence output of the same backbone with the same weights run in this process (on TensorFlow: the two
  backends agree to about 2e-6). The structure (a torch module, the backbone kept and trained, a Linear(hidden, 2)
  head), the values (the padding mask matters), the dropout's response to train() and eval() and the gradient are
  checked; the usual mistakes are named (autograde.mistakes.qa_pytorch.model).
- qa_loss: random logits of several scales and positions (0 included, start and end apart), compared with the
  NumPy reference, value and gradient.
`grade_*(fn)` raises CheckFailed with a diagnosis or prints one success line (stdout only).
"""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks import seed_of
from autograde.mistakes import results
from autograde.mistakes.qa_pytorch import model as mistakes
from autograde.reference.heads import backbone_forward
from autograde.reference.qa_pytorch import model as ref
from autograde.remote import run_there
from course_lib.checking import passed, quiet
from course_lib.heads import TINY_BACKBONE, classifier_batches
from course_lib.qa_pytorch.loss import expect_qa_loss, positions, run_qa_loss
from course_lib.qa_pytorch.model import expect_qa_model, run_qa_model, seeded_weights

OTHER_BACKBONE = {"vocabulary_size": 40, "num_layers": 1, "num_heads": 3, "hidden_dim": 12, "intermediate_dim": 20,
                  "max_sequence_length": 24, "num_segments": 2}

MODEL_CASES = [  # backbone sizes, (batch, seq) of each batch
    (TINY_BACKBONE, [(4, 9), (1, 4)]),
    (OTHER_BACKBONE, [(2, 16), (3, 6)]),
    (TINY_BACKBONE, [(5, 11)]),
]


def _label(config: dict, shapes) -> str:
    sizes = ", ".join(f"{b} x {s}" for b, s in shapes)
    layers = config["num_layers"]
    return (f"a BertBackbone with hidden_dim {config['hidden_dim']}, {layers} layer{'s' if layers > 1 else ''}, "
            f"{config['num_heads']} heads; batches of {sizes}")


def grade_qa_model(QAModel) -> None:  # noqa: N803
    for index, (config, shapes) in enumerate(MODEL_CASES):
        _grade_model_case(QAModel, index, config, shapes)
    passed(f"QAModel gives the reference start and end logits on {len(MODEL_CASES)} tiny BERTs (2 sizes, padded "
           "batches), trains the encoder, and switches the backbone's dropout with train() and eval()")


def _grade_model_case(QAModel, index: int, config: dict, shapes) -> None:  # noqa: N803
    label = _label(config, shapes)
    backbone, head = seeded_weights(config, seed_of(1060 + index))
    batches = classifier_batches(draw(1050 + index), config, shapes)
    with quiet():
        report = run_there(QAModel, run_qa_model, QAModel, config, backbone_weights=backbone, head_weights=head,
                           batches=batches)
        expected, wrong = [], []
        for number, inputs in enumerate(batches):
            forward = backbone_forward(config, backbone, inputs)
            expected.append(np.stack(ref.span_logits(forward["sequence_output"], head["kernel"], head["bias"])))
            wrong += [(number, value, message)
                      for value, message in results(mistakes.LOGITS, forward, head["kernel"], head["bias"])]
    batch, seq = shapes[0]
    shape_mistakes = [(shape, message) for shape, message in results(mistakes.SHAPES, batch, seq, config["hidden_dim"])
                      if tuple(shape) != (batch, seq)]
    expect_qa_model(report, expected, label, hidden=config["hidden_dim"], batches=batches,
                    shape_mistakes=shape_mistakes, value_mistakes=wrong)


# ----------------------------------------------------------------------------------------------
# qa_loss

LOSS_CASES = [  # batch, seq, logit scale
    (4, 10, 3.0),
    (2, 6, 1.0),
    (8, 32, 10.0),
    (1, 5, 2.0),
    (3, 16, 40.0),
    (6, 9, 0.5),
]


def grade_qa_loss(qa_loss) -> None:
    with quiet():
        for index, (batch, seq, scale) in enumerate(LOSS_CASES):
            rng = draw(1070 + index)
            start = (scale * rng.standard_normal((batch, seq))).astype(np.float32)
            end = (scale * rng.standard_normal((batch, seq))).astype(np.float32)
            start_positions, end_positions = positions(rng, batch, seq)
            expected = ref.qa_loss_numpy(start, end, start_positions, end_positions)
            gradient = np.stack(ref.qa_loss_gradient(start, end, start_positions, end_positions))
            report = run_there(qa_loss, run_qa_loss, qa_loss, start, end, start_positions, end_positions)
            label = f"batch {batch}, seq {seq}, logits of scale {scale:g}"
            expect_qa_loss(report, expected, gradient, label,
                           mistakes=results(mistakes.LOSS, start, end, start_positions, end_positions))
    passed(f"qa_loss matches the reference's value and gradient on {len(LOSS_CASES)} random batches (logits up to "
           "scale 40, answers at [CLS] and elsewhere)")
