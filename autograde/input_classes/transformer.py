"""The inputs assignment 04's graded functions must handle (autograde/input_classes/__init__.py), in notebook order."""

from __future__ import annotations

import numpy as np

from autograde.input_classes import KERAS_LAYER, InputClass
from autograde.reference.transformer import decoding as ref

# EncoderLayer, Encoder, DecoderLayer, Decoder and Transformer are left out: their hidden checks build and call the
# Keras layer classes, and the recorder of autograde.input_classes follows a class's construction and forward calls
# only for torch modules.

# ----------------------------------------------------------------------------------------------
# greedy_decode(predict_next, encoder_ids, start_id, end_id, max_length)


def _greedy(a) -> np.ndarray:
    """The right answer on this call, from the same predict_next."""
    return ref.greedy_decode(a["predict_next"], a["encoder_ids"], a["start_id"], a["end_id"], a["max_length"])


def _end_steps(a) -> list[int]:
    """The step at which each row produces end_id (max_length for a row that never does)."""
    return [list(row).index(a["end_id"]) if a["end_id"] in row else a["max_length"] for row in _greedy(a)]


def _other_ids(a) -> bool:
    return (a["start_id"], a["end_id"]) != (1, 2)


GREEDY = (
    InputClass("batch_of_one", "one sentence", lambda a: len(a["encoder_ids"]) == 1),
    InputClass("max_length_one", "max_length = 1", lambda a: a["max_length"] == 1),
    InputClass("all_end_early", "every row produces end_id before max_length (the loop stops early, padding follows)",
               lambda a: max(_end_steps(a)) < a["max_length"] - 1),
    InputClass("row_never_ends", "a row that never produces end_id, stopped by max_length",
               lambda a: max(_end_steps(a)) == a["max_length"]),
    InputClass("first_row_ends_first", "the first row ends while the others go on",
               lambda a: len(set(_end_steps(a))) > 1 and _end_steps(a)[0] == min(_end_steps(a))),
    InputClass("other_ids", "start and end ids other than the notebook's 1 and 2", _other_ids),
)

# ----------------------------------------------------------------------------------------------
# beam_search(predict_next, encoder_ids, start_id, end_id, max_length, beam_width, alpha)


def _beam(a, alpha=None) -> list:
    return ref.beam_search(a["predict_next"], a["encoder_ids"], a["start_id"], a["end_id"], a["max_length"],
                           a["beam_width"], a["alpha"] if alpha is None else alpha)


def _finished(hypotheses, a) -> list[bool]:
    return [bool(tokens) and tokens[-1] == a["end_id"] for tokens, _ in hypotheses]


def _beats_greedy(a) -> bool:
    greedy = ref.greedy_decode(a["predict_next"], a["encoder_ids"], a["start_id"], a["end_id"], a["max_length"])[0]
    return _beam(a, 0.0)[0][0] != [int(t) for t in greedy if t]


BEAM = (
    InputClass("beam_width_one", "beam_width = 1", lambda a: a["beam_width"] == 1),
    InputClass("wide_beam", "beam_width of 4 or more", lambda a: a["beam_width"] >= 4),
    InputClass("alpha_zero", "alpha = 0: the plain log P", lambda a: a["alpha"] == 0),
    InputClass("alpha_one", "alpha = 1: log P per token", lambda a: a["alpha"] == 1),
    InputClass("alpha_between", "0 < alpha < 1", lambda a: 0 < a["alpha"] < 1),
    InputClass("source_of_one_token", "an input sentence of one token", lambda a: np.shape(a["encoder_ids"])[1] == 1),
    InputClass("all_finished", "every hypothesis returned has ended", lambda a: all(_finished(_beam(a), a))),
    InputClass("finished_and_unfinished", "finished and unfinished hypotheses ranked together",
               lambda a: len(set(_finished(_beam(a), a))) == 2),
    InputClass("beam_beats_greedy", "beam search (alpha 0) finds a more probable sentence than greedy decoding",
               _beats_greedy),
    InputClass("normalisation_changes_winner", "alpha changes the best hypothesis",
               lambda a: a["alpha"] > 0 and _beam(a)[0][0] != _beam(a, 0.0)[0][0]),
    InputClass("other_ids", "start and end ids other than the notebook's 1 and 2", _other_ids),
)

CLASSES = {"greedy_decode": GREEDY, "beam_search": BEAM}

UNLISTED = {  # exercises whose classes this proof cannot show drawn, and why
    "EncoderLayer": KERAS_LAYER,
    "Encoder": KERAS_LAYER,
    "DecoderLayer": KERAS_LAYER,
    "Decoder": KERAS_LAYER,
    "Transformer": KERAS_LAYER,
}
