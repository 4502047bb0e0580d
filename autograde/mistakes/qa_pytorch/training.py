"""Named mistakes of train_step and evaluate (assignment 08).

- STEPS: a training step done another way, as a `Recipe` of the reference's simulation
  (autograde.reference.qa_pytorch.training.simulate_training); each takes simulate_training's arguments and gives
  its steps done that way, and its message is what a learner reads when the weights, learning rates and losses of
  their steps are those.
- EVALUATION: each takes evaluate_numpy's result and gives the wrong loss.
A loss returned as a tensor, backward where no gradient is recorded, dropout left on, a graph recorded during
evaluation and a model left in evaluation mode are diagnosed from what the learner's code returns and from the
stand-in network's record of its calls, in course_lib.qa_pytorch.training.
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake
from autograde.reference.qa_pytorch.training import Recipe, simulate_training


def _steps(**recipe):
    def produce(weights, batches, **settings):
        return simulate_training(weights, batches, recipe=Recipe(**recipe), **settings)
    return produce

STEPS = (
    Mistake("gradients_accumulate", "the gradients add up from one step to the next: call optimizer.zero_grad() at the "
            "start of every step (PyTorch adds each backward's gradients to .grad until you clear it)",
            _steps(zero_grad="never")),
    Mistake("cleared_after_the_step", "the first step used the gradients already in .grad when train_step was called "
            "(left by an earlier backward pass): clear them at the start of every step, optimizer.zero_grad() before "
            "the forward pass, not only after the update", _steps(zero_grad="after")),
    Mistake("no_gradient", "no weight changed: the optimizer found no gradient. Call loss.backward() before "
            "optimizer.step(), and clear the gradients before backward, not between backward and the step",
            _steps(backward=False)),
    Mistake("not_clipped", "the gradients are not clipped: call torch.nn.utils.clip_grad_norm_(model.parameters(), "
            "max_grad_norm) after loss.backward() and before optimizer.step()", _steps(clip="none")),
    Mistake("clipped_by_value", "each gradient entry was clipped to +-max_grad_norm (clip_grad_value_): clip the norm "
            "of all the gradients together, torch.nn.utils.clip_grad_norm_", _steps(clip="value")),
    Mistake("clipped_at_1", "the gradients were clipped at a norm of 1.0 whatever max_grad_norm was: pass "
            "max_grad_norm to clip_grad_norm_", _steps(clip="norm_1")),
    Mistake("schedule_not_stepped", "the learning rate never changed: call scheduler.step() once per training step, "
            "after optimizer.step()", _steps(scheduler="never")),
    Mistake("schedule_stepped_first", "the schedule was stepped before the optimizer, so every step used the next "
            "step's learning rate: call scheduler.step() after optimizer.step()", _steps(scheduler="before")),
)


def _unweighted(result: dict) -> float:
    sizes = result.get("sizes")
    if sizes is not None and len(set(sizes)) == 1:
        raise ValueError("this mistake gives the right result here")
    return float(np.mean(result["batch_losses"]))


EVALUATION = (
    Mistake("unweighted_mean", "the loss is the mean of the batches' losses, so the windows of a smaller last batch "
            "weigh more: weight each batch's loss by its number of windows (the mean over windows)", _unweighted),
)
