"""Hidden checks of BertEmbedding and BertEncoder (assignment 05).

- BertEmbedding: built in several sizes, weights set from a seeded generator, compared with the NumPy
  reference; usual mistakes are named (`autograde.mistakes.bert.encoder`).
- BertEncoder: built with the REFERENCE BertEmbedding (the notebook's name `BertEmbedding` points at it
  while the encoder is constructed), so a mistake in exercise 5.2 does not cost 5.3; weights seeded,
  inputs padded, compared with the NumPy reference.

The layers are made and built where the learner's code runs (the student's kernel when grading); their
structure is read here, through handles, and every weight is set to a value chosen here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograde.checks import rng as draw
from autograde.checks import seed_of
from autograde.checks.layers import make_layer
from autograde.checks.weights import set_seeded, variables_of
from autograde.mistakes import results
from autograde.mistakes.bert import encoder as mistakes
from autograde.reference.bert import encoder as ref
from autograde.reference.bert.keras_layers import BertEmbedding as ReferenceEmbedding
from autograde.remote import run_there, with_parts
from course_lib.bert.encoder import EMBEDDING_HINT, ENCODER_HINT, padded_batch, prebuild
from course_lib.checking import (
    CheckFailed,
    call_layer,
    expect_close,
    expect_deterministic,
    expect_dropout_in_training,
    passed,
    quiet,
    to_array,
)
from course_lib.keras_weights import bert_variables

TOL = dict(atol=1e-4, rtol=1e-4)


@dataclass(frozen=True)
class Case:
    vocab: int
    hidden: int
    max_len: int
    segments: int
    batch: int
    seq: int
    layers: int = 1
    heads: int = 1
    inter: int = 8
    eps: float = 1e-12

    def config(self) -> dict:
        return {"vocabulary_size": self.vocab, "num_layers": self.layers, "num_heads": self.heads,
                "hidden_dim": self.hidden, "intermediate_dim": self.inter, "max_sequence_length": self.max_len,
                "num_segments": self.segments}

    def label(self) -> str:
        return (f"vocabulary {self.vocab}, hidden {self.hidden}, {self.max_len} positions, {self.segments} segments, "
                f"batch {self.batch}, seq {self.seq}" + (f", {self.layers} layers, {self.heads} heads"
                                                         if self.layers > 1 or self.heads > 1 else ""))


def _seeded(layer, config: dict, seed: int, part: str = "encoder") -> dict:
    """Build the learner's layer where it lives (without tracing it), check its structure here, set every
    weight from `seed`; return the values set, by attribute path."""
    with quiet():
        run_there(layer, prebuild, layer, config)
        return set_seeded(variables_of(layer, bert_variables, config, part=part), seed)


# ----------------------------------------------------------------------------------------------
# BertEmbedding

EMBEDDING_CASES = [
    Case(vocab=9, hidden=8, max_len=10, segments=2, batch=2, seq=5),  # ids < max_len: positions-from-ids fits
    Case(vocab=30, hidden=4, max_len=7, segments=2, batch=3, seq=7),
    Case(vocab=12, hidden=16, max_len=20, segments=3, batch=1, seq=1),
    Case(vocab=50, hidden=12, max_len=64, segments=2, batch=4, seq=9, eps=1e-3),
]


def grade_bert_embedding(BertEmbedding) -> None:  # noqa: N803
    for index, case in enumerate(EMBEDDING_CASES):
        _grade_embedding_case(BertEmbedding, index, case)
    passed(f"BertEmbedding matches the reference in {len(EMBEDDING_CASES)} configurations")


def _grade_embedding_case(BertEmbedding, index: int, case: Case) -> None:  # noqa: N803
    config = case.config()
    ids, segments, _ = padded_batch(draw(900 + index), config, case.batch, case.seq)
    layer = make_layer(BertEmbedding, case.vocab, case.hidden, max_sequence_length=case.max_len,
                       num_segments=case.segments, dropout=0.5, layernorm_eps=case.eps)
    weights = _seeded(layer, config, seed_of(910 + index), part="embedding")
    output, again, training = (call_layer(layer, ids, segments, training=t, hint=EMBEDDING_HINT)
                               for t in (False, False, True))
    name = f"BertEmbedding output ({case.label()})"
    expect_deterministic(output, again, name)
    expected = ref.bert_embedding(weights, ids, segments, eps=case.eps)
    wrong = results(mistakes.EMBEDDING, weights, ids, segments, eps=case.eps, where="BertEmbedding")
    expect_close(output, expected, name, mistakes=wrong, **TOL)
    expect_dropout_in_training(output, training, name)


# ----------------------------------------------------------------------------------------------
# BertEncoder (built with the reference BertEmbedding)

ENCODER_CASES = [
    Case(vocab=20, hidden=8, max_len=12, segments=2, batch=5, seq=5, layers=2, heads=2, inter=16),  # batch == seq
    Case(vocab=15, hidden=12, max_len=10, segments=2, batch=3, seq=6, layers=3, heads=3, inter=20),
    Case(vocab=9, hidden=4, max_len=4, segments=2, batch=2, seq=4, layers=2, heads=1, inter=8),
    Case(vocab=40, hidden=16, max_len=30, segments=3, batch=2, seq=9, layers=1, heads=4, inter=32),
]


def _run_encoder(BertEncoder, case: Case, index: int):  # noqa: N803
    config = case.config()
    ids, segments, mask = padded_batch(draw(920 + index), config, case.batch, case.seq)
    encoder = make_layer(BertEncoder, case.vocab, case.layers, case.heads, case.hidden, case.inter, dropout=0.5,
                         max_sequence_length=case.max_len, num_segments=case.segments)
    weights = _seeded(encoder, config, seed_of(930 + index))
    outputs = [call_layer(encoder, ids, segments, mask, training=t, hint=ENCODER_HINT) for t in (False, False, True)]
    return (ids, segments, mask), weights, outputs


def grade_bert_encoder(BertEncoder) -> None:  # noqa: N803
    for index, case in enumerate(ENCODER_CASES):
        _grade_encoder_case(BertEncoder, index, case)
    _note_own_embedding(BertEncoder)
    passed(f"BertEncoder matches the reference in {len(ENCODER_CASES)} configurations with padding (graded with "
           "the reference BertEmbedding)")


def _grade_encoder_case(BertEncoder, index: int, case: Case) -> None:  # noqa: N803
    with with_parts(BertEncoder, BertEmbedding=ReferenceEmbedding):
        inputs, weights, (output, again, training) = _run_encoder(BertEncoder, case, index)
    name = (f"BertEncoder output ({case.label()}; built with the reference BertEmbedding, so BertEncoder.call "
            "is at fault)")
    expect_deterministic(output, again, name)
    expected = ref.bert_encoder(weights, *inputs, case.layers)
    wrong = results(mistakes.ENCODER, weights, *inputs, case.layers, where="BertEncoder",
                    skip=mistakes.LAYER_ORDER if case.layers == 1 else ())
    expect_close(output, expected, name, mistakes=wrong, **TOL)
    expect_dropout_in_training(output, training, name)


def _note_own_embedding(BertEncoder) -> None:  # noqa: N803
    """BertEncoder is right; say (stdout) if it gives other results with the learner's own BertEmbedding."""
    case = ENCODER_CASES[1]
    try:
        inputs, weights, (output, _, _) = _run_encoder(BertEncoder, case, 1)
        if np.allclose(to_array(output, "output"), ref.bert_encoder(weights, *inputs, case.layers), **TOL):
            return
    except NotImplementedError:  # the embedding is unfinished: its own test says so
        return
    except CheckFailed:
        pass
    print("Note: BertEncoder is right, but with your own BertEmbedding its results differ from the reference: "
          "BertEmbedding is at fault (its own test says why).")
