"""The inputs assignment 01's graded functions must handle (autograde/input_classes/__init__.py), in notebook order."""

from __future__ import annotations

import numpy as np

from autograde.input_classes import InputClass

# ----------------------------------------------------------------------------------------------
# get_angles(pos, k, d): pos a column (P, 1) of positions, k a row (1, D) of dimension indices, d the encoding size


def _pos(a) -> np.ndarray:
    return np.asarray(a["pos"])


def _k(a) -> np.ndarray:
    return np.asarray(a["k"]).reshape(-1)


ANGLES = (
    InputClass("one_position", "a single position, pos of shape (1, 1)", lambda a: _pos(a).shape[0] == 1),
    InputClass("no_positions", "no position at all, pos of shape (0, 1)", lambda a: _pos(a).shape[0] == 0),
    InputClass("position_zero", "position 0 among the positions (all its angles are 0)",
               lambda a: bool(np.any(_pos(a) == 0))),
    InputClass("int_positions", "integer positions", lambda a: _pos(a).dtype.kind in "iu"),
    InputClass("float_positions", "float positions (whole numbers, as np.arange(..., dtype=np.float32) gives)",
               lambda a: _pos(a).dtype.kind == "f"),
    InputClass("unordered_positions", "positions not in increasing order, some in the hundreds",
               lambda a: bool(np.any(np.diff(_pos(a).reshape(-1)) < 0)) and _pos(a).max() >= 100),
    InputClass("k_from_zero", "k = 0, 1, ..., D-1", lambda a: np.array_equal(_k(a), np.arange(len(_k(a))))),
    InputClass("k_from_odd_index", "k starting at an odd index above 0 (a later block of dimensions: its first index's "
               "partner is not in k)", lambda a: _k(a)[0] > 0 and _k(a)[0] % 2 == 1),
    InputClass("k_short_of_d", "k not reaching d - 1 (fewer indices than d)", lambda a: _k(a).max() < a["d"] - 1),
    InputClass("one_pair", "d = 2: one pair of dimensions", lambda a: a["d"] == 2),
    InputClass("odd_d", "an odd d, k reaching d - 1 (the last index is even and has no partner)",
               lambda a: a["d"] % 2 == 1 and _k(a).max() == a["d"] - 1),
    InputClass("d_512", "d = 512, the original Transformer's size", lambda a: a["d"] == 512),
)

# ----------------------------------------------------------------------------------------------
# positional_encoding(positions, d)

ENCODING = (
    InputClass("one_position", "a single position", lambda a: a["positions"] == 1),
    InputClass("no_positions", "no position at all: an encoding of shape (1, 0, d)", lambda a: a["positions"] == 0),
    InputClass("one_pair", "d = 2: one pair of dimensions", lambda a: a["d"] == 2),
    InputClass("odd_d", "an odd d (the last index is even: a sine with no cosine beside it)",
               lambda a: a["d"] % 2 == 1),
    InputClass("more_positions_than_d", "more positions than dimensions", lambda a: a["positions"] > a["d"]),
    InputClass("fewer_positions_than_d", "fewer positions than dimensions", lambda a: 0 < a["positions"] < a["d"]),
    InputClass("d_512", "d = 512, the original Transformer's size", lambda a: a["d"] == 512),
)

CLASSES = {"get_angles": ANGLES, "positional_encoding": ENCODING}
