"""Hidden checks of train_step and evaluate (assignment 08).

Both are graded on a stand-in network (course_lib.qa_pytorch.standin) wrapped in the reference QAModel, sent to the
student's kernel as source, and with the reference qa_loss in place of the learner's: a mistake in QAModel or
qa_loss never costs these exercises. Weights and batches are drawn here, the reference is simulated here in NumPy
float64 (autograde.reference.qa_pytorch.training), and the usual mistakes are simulated too, so that a wrong step is
named (autograde.mistakes.qa_pytorch.training).

- train_step: from a dirty start (gradients left over in .grad), three or four steps with SGD and with AdamW,
  LambdaLR schedules of changing factors, max_grad_norm passed (small enough to clip) or left at its default; the
  loss returned, the learning rate and every weight after each step.
- evaluate: several batch sizes (a smaller last batch, a batch of one) on a network with dropout, handed over in
  training mode and in evaluation mode: evaluation mode and no gradients during the loop, the loss over windows, the
  logits, training mode afterwards (as the notebook asks, whatever the mode before).
"""

from __future__ import annotations

from autograde.checks import rng as draw
from autograde.checks import seed_of
from autograde.mistakes import results
from autograde.mistakes.qa_pytorch import training as mistakes
from autograde.reference.qa_pytorch.model import QAModel as ReferenceModel
from autograde.reference.qa_pytorch.model import qa_loss as reference_loss
from autograde.reference.qa_pytorch.training import evaluate_numpy, simulate_training
from autograde.remote import part, run_there, with_parts
from course_lib.checking import passed, quiet
from course_lib.qa_pytorch.training import (
    expect_evaluation,
    expect_train_steps,
    run_evaluate,
    run_train_steps,
    stale_gradients,
    standin_batches,
    standin_weights,
)

SMALL = {"vocabulary_size": 20, "hidden_dim": 5, "num_segments": 2}
WIDER = {"vocabulary_size": 15, "hidden_dim": 8, "num_segments": 2}

TRAIN_CASES = [  # network, optimizer, schedule factors, max_grad_norm (None: the default, 1.0), (batch, seq) per step
    (SMALL, {"name": "sgd", "lr": 0.5}, [1.0, 0.5, 0.25, 0.125], 0.05, [(4, 7), (3, 9), (4, 7)]),
    (SMALL, {"name": "adamw", "lr": 0.05, "weight_decay": 0.01, "eps": 1e-3}, [1.0, 0.7, 0.4, 0.1], None,
     [(4, 8), (4, 8), (2, 8)]),
    (WIDER, {"name": "adamw", "lr": 0.02, "weight_decay": 0.1, "eps": 1e-3}, [0.5, 1.0, 0.75, 0.5, 0.25], 0.5,
     [(3, 10), (5, 6), (2, 12), (4, 9)]),
]
# AdamW's eps is larger than its default so that a gradient that is 0 in exact arithmetic (the head's bias: a softmax
# over positions ignores a shift) cannot turn float32 rounding into a full step.


def _train_label(optimizer: dict, max_grad_norm, steps: int) -> str:
    clip = "the default max_grad_norm" if max_grad_norm is None else f"max_grad_norm={max_grad_norm:g}"
    return f"{'SGD' if optimizer['name'] == 'sgd' else 'AdamW'}, {clip}, {steps} steps"


def grade_train_step(train_step) -> None:
    model_class = part(train_step, ReferenceModel)
    for index, (config, optimizer, factors, max_grad_norm, shapes) in enumerate(TRAIN_CASES):
        weights = standin_weights(config, seed_of(1080 + index))
        batches = standin_batches(draw(1090 + index), config, shapes)
        stale = stale_gradients(weights)
        settings = {"optimizer": optimizer, "factors": factors, "loss": "qa",
                    "max_grad_norm": 1.0 if max_grad_norm is None else max_grad_norm, "stale": stale}
        with quiet(), with_parts(train_step, qa_loss=reference_loss):
            report = run_there(train_step, run_train_steps, train_step, model_class, config, weights, batches,
                               optimizer=optimizer, factors=factors, max_grad_norm=max_grad_norm, stale=stale)
        expected = simulate_training(weights, batches, **settings)
        wrong = results(mistakes.STEPS, weights, batches, **settings)
        expect_train_steps(report, expected, _train_label(optimizer, max_grad_norm, len(shapes)), mistakes=wrong)
    passed(f"train_step matches the reference's losses, learning rates and weights over {len(TRAIN_CASES)} short runs "
           "(SGD and AdamW, changing schedules, gradients clipped at several norms), each begun with stale gradients "
           "in .grad")


EVALUATION_CASES = [  # network, (batch, seq) of each batch (one seq per case), the model's mode when handed over
    (SMALL, [(4, 9), (4, 9), (2, 9)], "training"),
    (WIDER, [(3, 6)], "evaluation"),
    (SMALL, [(5, 12), (5, 12), (5, 12), (1, 12)], "training"),
    (WIDER, [(1, 7)], "evaluation"),
]


def grade_evaluate(evaluate) -> None:
    model_class = part(evaluate, ReferenceModel)
    for index, (config, shapes, mode) in enumerate(EVALUATION_CASES):
        weights = standin_weights(config, seed_of(1100 + index))
        batches = standin_batches(draw(1110 + index), config, shapes)
        with quiet(), with_parts(evaluate, qa_loss=reference_loss):
            report = run_there(evaluate, run_evaluate, evaluate, model_class, config, weights, batches,
                               start_training=mode == "training")
        expected = evaluate_numpy(weights, batches, loss="qa")
        label = ("batches of " + ", ".join(str(batch) for batch, _ in shapes) + f" windows of {shapes[0][1]} tokens, "
                 f"the model handed over in {mode} mode")
        expect_evaluation(report, expected, label, mistakes=results(mistakes.EVALUATION, expected))
    passed(f"evaluate matches the reference's loss and logits on {len(EVALUATION_CASES)} sets of batches (a smaller "
           "last batch, dropout in the network, a model handed over in either mode), in evaluation mode without "
           "gradients, leaving training mode on")
