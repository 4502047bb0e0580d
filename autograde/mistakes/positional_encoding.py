"""Named mistakes of assignment 01. The encoding's mistakes (sine and cosine swapped, halves, ...) are
derived from a correct encoding alone, so they live with the visible checks
(`course_lib.positional_encoding.encoding_mistakes`) and serve both checks from there."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake


def _floats(pos, k):
    return np.asarray(pos, dtype=np.float64), np.asarray(k, dtype=np.float64)


def _no_pairing(pos, k, d):
    pos, k = _floats(pos, k)
    return pos / 10000.0 ** (k / d)


def _no_floor(pos, k, d):
    pos, k = _floats(pos, k)
    return pos / 10000.0 ** (2 * k / d)


def _multiplied(pos, k, d):
    pos, k = _floats(pos, k)
    return pos * 10000.0 ** (2 * (k // 2) / d)


def _d_forgotten(pos, k, d):
    pos, k = _floats(pos, k)
    return pos / 10000.0 ** (2 * (k // 2))


def _column_numbers(pos, k, d):
    """The angles of the columns 0, 1, ..., D-1 whatever k holds (the same as k's when k starts at 0)."""
    columns = np.arange(np.shape(k)[-1])[np.newaxis, :]
    return np.asarray(pos, dtype=np.float64) / 10000.0 ** (2 * (columns // 2) / d)


GET_ANGLES = (
    Mistake("no_pairing", "dimensions 2i and 2i+1 must share one angle rate: the exponent uses 2*(k//2), not k",
            _no_pairing),
    Mistake("no_floor", "use integer division in the exponent, 2*(k//2), so that k = 2i and k = 2i+1 give the "
            "same value", _no_floor),
    Mistake("multiplied", "divide pos by 10000**(2*(k//2)/d); you multiplied", _multiplied),
    Mistake("d_forgotten", "the exponent is 2*(k//2)/d: divide by d", _d_forgotten),
    Mistake("column_numbers", "k holds the dimension indices themselves: use its values, 2*(k//2), not the "
            "column numbers 0, 1, 2, ...", _column_numbers),
)
