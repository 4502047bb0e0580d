"""Named mistakes of build_token_classifier and masked_token_loss (assignment 06).

- SHAPES: a wrong head gives logits of a wrong shape; each takes (batch, seq, hidden, num_labels).
- LOGITS: a head of the right shape that computes something else; each takes (forward, kernel, bias), where
  `forward` holds the tiny backbone's "sequence_output", "pooled_output" and "unmasked_sequence_output" (the
  padding mask replaced by ones) on the check's batch.
- LOSS: each takes (labels, logits) and gives the wrong loss; EMPTY_NAN is the message for a NaN on a batch
  without labelled positions (no value to compare: the check sees the NaN itself).
A frozen encoder and a misplaced dropout are diagnosed from the model's structure and its training-mode output,
in course_lib.ner.model.
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake
from autograde.reference.ner import model as ref


def _needs(condition: bool) -> None:
    if not condition:
        raise ValueError("this mistake gives the right result here")


def _nine(batch, seq, hidden, num_labels):
    _needs(num_labels != 9)
    return (batch, seq, 9)


SHAPES = (
    Mistake("pooled_output", "the head reads pooled_output, one vector per sentence (the [CLS] path of sentence "
            "classification); a tagger needs one vector per token: backbone(inputs)[\"sequence_output\"]",
            lambda batch, seq, hidden, num_labels: (batch, num_labels)),
    Mistake("no_head", "these are the backbone's vectors (hidden_dim per token): put a keras.layers.Dense(num_labels) "
            "on them", lambda batch, seq, hidden, num_labels: (batch, seq, hidden)),
    Mistake("one_label_short", "one logit too few: Dense(num_labels), one unit per label, O included",
            lambda batch, seq, hidden, num_labels: (batch, seq, num_labels - 1)),
    Mistake("nine_labels", "9 logits per token whatever num_labels is: use the argument num_labels, not 9 or "
            "len(LABELS)", _nine),
)


def _softmax(z):
    return np.exp(ref.log_softmax(z))


LOGITS = (
    Mistake("softmax", "each row of the output sums to 1: the head has a softmax activation. Return logits (no "
            "activation); the loss applies the softmax itself (from logits)",
            lambda forward, kernel, bias: _softmax(ref.token_logits(forward["sequence_output"], kernel, bias))),
    Mistake("no_padding_mask", "these are the logits of a backbone that attends to the padding: the padding_mask "
            "does not reach it. Call the backbone on its whole input dict (backbone.input), padding_mask included",
            lambda forward, kernel, bias: ref.token_logits(forward["unmasked_sequence_output"], kernel, bias)),
    Mistake("pooled_everywhere", "every token gets the logits of the pooled [CLS] vector: read sequence_output, one "
            "vector per token, not pooled_output",
            lambda forward, kernel, bias: np.broadcast_to(
                ref.token_logits(forward["pooled_output"], kernel, bias)[:, None, :],
                np.shape(forward["sequence_output"])[:2] + (np.shape(kernel)[1],)).copy()),
)

# ----------------------------------------------------------------------------------------------
# masked_token_loss


def _mean(losses, weights) -> float:
    total = float(np.sum(weights))
    return float(np.sum(losses * weights) / total) if total else 0.0


def _ignored_as(which: str):
    """-100 replaced by a real class (0, or the last one) and counted like any label."""
    def produce(labels, logits):
        labels = np.asarray(labels).astype(np.int64)
        _needs(bool(np.any(labels == ref.IGNORE)))
        replacement = 0 if which == "first" else np.shape(logits)[-1] - 1
        losses, _ = ref.token_losses(np.where(labels == ref.IGNORE, replacement, labels), logits)
        return float(losses.mean())
    return produce


def _over_all_positions(labels, logits):
    losses, counts = ref.token_losses(labels, logits)
    _needs(not counts.all())
    return float(losses.sum() / losses.size)


def _sum(labels, logits):
    losses, counts = ref.token_losses(labels, logits)
    _needs(counts.sum() > 1)
    return float(losses.sum())


def _per_sentence(labels, logits):
    losses, counts = ref.token_losses(labels, logits)
    per_row = [_mean(row, kept) for row, kept in zip(losses, counts, strict=True)]
    return float(np.mean(per_row))


def _softmax_twice(labels, logits):
    return ref.masked_token_loss_numpy(labels, _softmax(logits))


def _logits_as_probabilities(labels, logits):
    """Keras's sparse_categorical_crossentropy with from_logits=False: the logits clipped to [1e-7, 1 - 1e-7]
    and read as (unnormalised) probabilities."""
    clipped = np.clip(np.asarray(logits, np.float64), 1e-7, 1 - 1e-7)
    return ref.masked_token_loss_numpy(labels, np.log(clipped))


LOSS = (
    Mistake("ignored_as_class_0", "the positions labelled -100 count, as if their label were 0 (O): leave them out "
            "of the loss and of the count (a mask of labels != -100)", _ignored_as("first")),
    Mistake("ignored_as_last_class", "the positions labelled -100 count, as if their label were the last class: "
            "leave them out of the loss and of the count (a mask of labels != -100)", _ignored_as("last")),
    Mistake("mean_over_all_positions", "the sum of the kept losses is divided by batch * seq, every position: divide "
            "by the number of labelled positions only, so that -100 positions do not dilute the mean",
            _over_all_positions),
    Mistake("sum", "this is the sum of the losses of the labelled positions: divide it by their number (the mean)",
            _sum),
    Mistake("per_sentence_mean", "this is the mean over sentences of each sentence's mean: a sentence with few "
            "labelled tokens weighs as much as a long one. Average over all labelled positions of the batch at once",
            _per_sentence),
    Mistake("softmax_twice", "the softmax is applied twice: the logits were turned into probabilities and then "
            "given to a loss that applies the softmax itself (from_logits=True). Give it the logits", _softmax_twice),
    Mistake("logits_as_probabilities", "the logits are read as probabilities: the loss needs from_logits=True "
            "(Keras's default, from_logits=False, expects probabilities that sum to 1)", _logits_as_probabilities),
)

EMPTY_NAN = ("when no position is labelled the mean is 0 / 0: return 0 then (tf.math.divide_no_nan, or divide by "
             "tf.maximum(count, 1)), or a batch of padding alone would make the whole training NaN")
