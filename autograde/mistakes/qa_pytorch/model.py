"""Named mistakes of QAModel and qa_loss (assignment 08).

- SHAPES: a module whose start logits have a wrong shape; each takes (batch, seq, hidden).
- LOGITS: a module of the right shape that computes something else; each takes (forward, kernel, bias), where
  `forward` holds the tiny backbone's "sequence_output", "pooled_output" and "unmasked_sequence_output" (the padding
  mask replaced by ones), and gives (2, batch, seq): start logits, then end logits.
- LOSS: each takes (start_logits, end_logits, start_positions, end_positions) and gives the wrong loss.
Dropout that does not follow train()/eval(), logits without a gradient, a frozen or unregistered encoder and a
wrong head are diagnosed from the module's behaviour and structure, in course_lib.qa_pytorch.model.
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake
from autograde.reference.qa_pytorch import model as ref


def _needs(condition: bool) -> None:
    if not condition:
        raise ValueError("this mistake gives the right result here")


def _pair(sequence_output, kernel, bias) -> np.ndarray:
    return np.stack(ref.span_logits(sequence_output, kernel, bias))


SHAPES = (
    Mistake("pooled_output", "the head reads pooled_output, one vector per window (the [CLS] path of sentence "
            "classification); a span needs a start and an end logit for every token: use sequence_output",
            lambda batch, seq, hidden: (batch,)),
)

LOGITS = (
    Mistake("swapped", "start and end are swapped: column 0 of the head's output is the start logit and column 1 the "
            "end logit, as in assignment 07's Dense(2)",
            lambda forward, kernel, bias: _pair(forward["sequence_output"], kernel, bias)[::-1].copy()),
    Mistake("softmax_over_positions", "each window's start logits sum to 1 over the positions: a softmax was applied. "
            "Return logits; cross_entropy applies the softmax itself",
            lambda forward, kernel, bias: ref.softmax(_pair(forward["sequence_output"], kernel, bias), axis=-1)),
    Mistake("softmax_over_the_pair", "at every position the start and the end logit sum to 1: a softmax over the "
            "head's two outputs. Return the head's output as it is",
            lambda forward, kernel, bias: ref.softmax(_pair(forward["sequence_output"], kernel, bias), axis=0)),
    Mistake("no_padding_mask", "these are the logits of a backbone that attends to the padding: the padding_mask does "
            "not reach it. Give the backbone the padding_mask forward received",
            lambda forward, kernel, bias: _pair(forward["unmasked_sequence_output"], kernel, bias)),
)

# ----------------------------------------------------------------------------------------------
# qa_loss


def _cross_entropies(start, end, start_positions, end_positions):
    return ref.cross_entropy(start, start_positions), ref.cross_entropy(end, end_positions)


def _swapped(start, end, start_positions, end_positions):
    _needs(bool(np.any(np.asarray(start_positions) != np.asarray(end_positions))))
    return ref.qa_loss_numpy(start, end, end_positions, start_positions)


def _sum_of_both(start, end, start_positions, end_positions):
    return 2 * ref.qa_loss_numpy(start, end, start_positions, end_positions)


def _summed_over_batch(start, end, start_positions, end_positions):
    _needs(np.shape(start)[0] > 1)
    first, second = _cross_entropies(start, end, start_positions, end_positions)
    return float((first.sum() + second.sum()) / 2)


def _softmax_first(start, end, start_positions, end_positions):
    return ref.qa_loss_numpy(ref.softmax(start), ref.softmax(end), start_positions, end_positions)


def _one_side(which: str):
    def produce(start, end, start_positions, end_positions):
        first, second = _cross_entropies(start, end, start_positions, end_positions)
        return float((first if which == "start" else second).mean())
    return produce


def _nll_on_logits(start, end, start_positions, end_positions):
    rows = np.arange(np.shape(start)[0])
    picked = (np.asarray(start, np.float64)[rows, start_positions] + np.asarray(end, np.float64)[rows, end_positions])
    return float(-picked.mean() / 2)


LOSS = (
    Mistake("swapped", "the start logits are scored against the end positions and the end logits against the start "
            "positions: pair start_logits with start_positions", _swapped),
    Mistake("sum_of_both", "this is the sum of the start and the end loss: take their mean, (start + end) / 2",
            _sum_of_both),
    Mistake("summed_over_batch", "the cross-entropies are summed over the windows of the batch (reduction='sum'): "
            "average them, cross_entropy's default reduction='mean'", _summed_over_batch),
    Mistake("softmax_first", "a softmax is applied twice: cross_entropy takes logits and applies log-softmax itself; "
            "give it the logits", _softmax_first),
    Mistake("start_only", "this is the start loss alone: add the end loss and halve the sum", _one_side("start")),
    Mistake("end_only", "this is the end loss alone: add the start loss and halve the sum", _one_side("end")),
    Mistake("nll_on_logits", "nll_loss was given logits: it expects log-probabilities (log_softmax first), or use "
            "cross_entropy, which does both", _nll_on_logits),
)
