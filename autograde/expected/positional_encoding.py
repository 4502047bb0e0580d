"""Expected values of assignment 01's visible checks (`course_lib.positional_encoding`)."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import positional_encoding as mistakes
from autograde.mistakes import stored
from autograde.reference import positional_encoding as ref

# The visible checks' inputs: angles for positions 0, 1, 5 with d = 6, then d = 8 with only 4 columns of k, then
# positions 1 and 4 with k = 3..6 and an odd d = 7.
POSITIONS = [[0], [1], [5]]
LATER_POSITIONS, LATER_K, ODD_D = [[1], [4]], [[3, 4, 5, 6]], 7


def generate() -> dict:
    pos, k = np.array(POSITIONS), np.arange(6)[np.newaxis, :]
    large = ref.positional_encoding(50, 16)
    return {
        "get_angles": {
            "positions": POSITIONS,
            "expected": ref.get_angles(pos, k, 6),
            "mistakes": stored(mistakes.GET_ANGLES, pos, k, 6),
        },
        "get_angles_d8": {"expected": ref.get_angles([[2]], np.arange(4)[np.newaxis, :], 8)},
        "get_angles_later_k_odd_d": {
            "expected": ref.get_angles(LATER_POSITIONS, LATER_K, ODD_D),
            "mistakes": stored(mistakes.GET_ANGLES, LATER_POSITIONS, LATER_K, ODD_D),
        },
        "encoding_3_4": ref.positional_encoding(3, 4),
        "encoding_3_5": ref.positional_encoding(3, 5),
        "encoding_50_16": {"position_0": large[0, 0], "entry_49_0": large[0, 49, 0]},
    }
