"""Hidden check of build_qa_model (assignment 07).

For tiny keras-hub BertBackbones of two sizes, built in the student's kernel with weights chosen here
(`course_lib.qa.model.run_qa_model`, one request per case), the learner's model is called on padded batches of
several shapes; its two outputs, stacked (2, batch, seq), are compared with the head computed here, in float64, on
the sequence output of the same backbone with the same weights run in this process. The outputs' form (a list of
two, start first), the head (one Dense(2), or two Dense(1)), the values (the padding mask matters), a trainable
encoder and the dropout's place and rate are checked; the usual mistakes are named (autograde.mistakes.qa.model).
`grade_build_qa_model(fn)` raises CheckFailed with a diagnosis or prints one success line (stdout only).
"""

from __future__ import annotations

from autograde.checks import rng as draw
from autograde.checks import seed_of
from autograde.mistakes import results
from autograde.mistakes.qa import model as mistakes
from autograde.reference.qa import model as ref
from autograde.remote import run_there
from course_lib.checking import passed, quiet
from course_lib.heads import classifier_batches, seeded_classifier_weights
from course_lib.qa.model import TINY_BACKBONE, expect_qa_model, run_qa_model

OTHER_BACKBONE = {"vocabulary_size": 45, "num_layers": 1, "num_heads": 2, "hidden_dim": 10, "intermediate_dim": 16,
                  "max_sequence_length": 24, "num_segments": 2}

# backbone sizes, (batch, seq) of each batch
QA_CASES = [
    (TINY_BACKBONE, [(4, 10), (1, 5)]),
    (OTHER_BACKBONE, [(2, 16), (3, 7)]),
    (TINY_BACKBONE, [(5, 12)]),
]


def _label(config: dict, shapes) -> str:
    sizes = ", ".join(f"{b} x {s}" for b, s in shapes)
    layers = config["num_layers"]
    return (f"a BertBackbone with hidden_dim {config['hidden_dim']}, {layers} layer{'s' if layers > 1 else ''}, "
            f"{config['num_heads']} heads; batches of {sizes}")


def grade_build_qa_model(build_qa_model) -> None:
    for index, (config, shapes) in enumerate(QA_CASES):
        _grade_case(build_qa_model, index, config, shapes)
    passed(f"build_qa_model gives the reference start and end logits on {len(QA_CASES)} tiny BERTs (2 sizes, padded "
           "batches), keeps the encoder trainable and applies dropout before the head")


def _grade_case(build_qa_model, index: int, config: dict, shapes) -> None:
    label = _label(config, shapes)
    backbone, head = seeded_classifier_weights(config, 2, seed_of(1080 + index))
    batches = classifier_batches(draw(1070 + index), config, shapes)
    with quiet():
        report = run_there(build_qa_model, run_qa_model, build_qa_model, config, backbone_weights=backbone,
                           head_weights=head, batches=batches)
        expected, wrong = [], []
        for number, inputs in enumerate(batches):
            forward = ref.backbone_forward(config, backbone, inputs)
            expected.append(ref.stacked_span_logits(forward["sequence_output"], head["kernel"], head["bias"]))
            wrong += [(number, value, message)
                      for value, message in results(mistakes.LOGITS, forward, head["kernel"], head["bias"])]
    batch, seq = shapes[0]
    shape_mistakes = [(value, message) for value, message in results(mistakes.SHAPES, batch, seq, config["hidden_dim"])
                      if [tuple(shape) for shape in value] != [(batch, seq), (batch, seq)]]
    expect_qa_model(report, expected, label, hidden=config["hidden_dim"], batches=batches,
                    shape_mistakes=shape_mistakes, value_mistakes=wrong)
