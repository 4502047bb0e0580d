"""Named mistakes of build_qa_model (assignment 07).

- SHAPES: a wrong head or a wrong split gives outputs of wrong shapes; each takes (batch, seq, hidden) and gives the
  list of the model's output shapes (one entry when the model returns a single tensor).
- LOGITS: a model of the right output shapes that computes something else; each takes (forward, kernel, bias),
  where `forward` holds the tiny backbone's "sequence_output" and "unmasked_sequence_output" (the padding mask
  replaced by ones) on the check's batch, and gives the outputs stacked as (2, batch, seq), start first.
A head of the wrong size (Dense(1), Dense(3)), a frozen encoder and a misplaced dropout are diagnosed from the
model's structure and its training-mode outputs, in course_lib.qa.model.
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake
from autograde.reference.heads import log_softmax, token_logits
from autograde.reference.qa import model as ref

SPLIT = "split the (batch, seq, 2) logits on the last axis: keras.ops.unstack(logits, num=2, axis=-1)"

SHAPES = (
    Mistake("pooled_output", "the head reads pooled_output (or the [CLS] vector), one vector per question: a span "
            "needs a start and an end logit for every token. Put the Dense(2) on backbone(inputs)[\"sequence_output\"]",
            lambda batch, seq, hidden: [(batch,), (batch,)]),
    Mistake("pooled_output_not_split", "the output is one pair of logits per question, from pooled_output (or the "
            "[CLS] vector): put the Dense(2) on backbone(inputs)[\"sequence_output\"], then " + SPLIT,
            lambda batch, seq, hidden: [(batch, 2)]),
    Mistake("one_output", "the model returns one tensor (batch, seq, 2), the Dense(2) output itself: " + SPLIT
            + ", and return keras.Model(inputs, [start_logits, end_logits])",
            lambda batch, seq, hidden: [(batch, seq, 2)]),
    Mistake("not_squeezed", "each output keeps a last axis of size 1 (keras.ops.split keeps it): squeeze it "
            "(keras.ops.squeeze(x, axis=-1)), or " + SPLIT,
            lambda batch, seq, hidden: [(batch, seq, 1), (batch, seq, 1)]),
    Mistake("no_head", "these are the backbone's vectors (hidden_dim per token): put a keras.layers.Dense(2) on "
            "them, then " + SPLIT, lambda batch, seq, hidden: [(batch, seq, hidden)]),
)


def _right(forward, kernel, bias) -> np.ndarray:
    return ref.stacked_span_logits(forward["sequence_output"], kernel, bias)


def _softmax_over_tokens(forward, kernel, bias) -> np.ndarray:
    return np.exp(log_softmax(_right(forward, kernel, bias)))  # the last axis of (2, batch, seq) is the sequence


def _softmax_over_pair(forward, kernel, bias) -> np.ndarray:
    logits = token_logits(forward["sequence_output"], kernel, bias)  # (batch, seq, 2)
    return np.moveaxis(np.exp(log_softmax(logits)), -1, 0)


LOGITS = (
    Mistake("swapped", "start and end are swapped: column 0 of the Dense(2) output is start_logits, column 1 "
            "end_logits, and the model returns [start_logits, end_logits] in that order",
            lambda forward, kernel, bias: _right(forward, kernel, bias)[::-1].copy()),
    Mistake("softmax_over_tokens", "each output sums to 1 over the tokens: a softmax was applied. Return logits (no "
            "activation); the loss applies the softmax itself (from logits), and best_span adds logits",
            _softmax_over_tokens),
    Mistake("softmax_over_pair", "start and end add up to 1 at every token: the Dense(2) has a softmax activation "
            "(over its two units). Return logits, no activation", _softmax_over_pair),
    Mistake("no_padding_mask", "these are the logits of a backbone that attends to the padding: the padding_mask "
            "does not reach it. Call the backbone on its whole input dict (backbone.input), padding_mask included",
            lambda forward, kernel, bias: ref.stacked_span_logits(forward["unmasked_sequence_output"], kernel, bias)),
)
