"""Hidden checks of assignment 01: the learner's functions against the NumPy reference on seeded
random inputs of several shapes. Each raises `CheckFailed` with a diagnosis or prints one line."""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.mistakes import positional_encoding as mistakes
from autograde.mistakes import results
from autograde.reference import positional_encoding as ref
from autograde.remote import with_parts
from course_lib.checking import CheckFailed, call_learner, expect_close, passed, quiet, to_array
from course_lib.positional_encoding import ANGLE_HINT, expect_encoding

# (positions P, first dimension index, D indices, d): D differs from d in some cases, so d must come from the
# argument; k starts at an odd index in one, so its values count, not its column numbers; d is odd in two
# (the last index, d - 1, is even and has no partner); no positions at all in the last.
ANGLE_CASES = [(1, 0, 2, 2), (5, 0, 8, 8), (20, 0, 16, 16), (7, 0, 5, 12), (3, 0, 64, 64), (50, 0, 512, 512),
               (4, 5, 6, 12), (6, 0, 7, 7), (0, 0, 4, 4)]
# (positions, d): an odd d and no positions at all last. (1, 2) is not first: at position 0 every sine is 0, so there
# "only sines" gives zeros, which cannot be told from a result left blank, and the check stops at its first failure.
ENCODING_CASES = [(10, 4), (1, 2), (33, 6), (50, 16), (128, 64), (200, 512), (7, 5), (0, 8)]


def _called(name: str, fn, *args):
    """The learner's result; a crash is reported with the call that raised it."""
    try:
        return call_learner(fn, *args)
    except CheckFailed as failure:
        raise CheckFailed(f"[{name}] {failure}") from None


def grade_get_angles(get_angles) -> None:
    # Some mistakes overflow (10000 ** large); NumPy would warn on stderr.
    with quiet(), np.errstate(all="ignore"):
        _grade_get_angles(get_angles)
    passed(f"get_angles matches the reference on {len(ANGLE_CASES)} shapes (k not starting at 0, odd d, no positions)")


def _grade_get_angles(get_angles) -> None:
    rng = draw(101)
    for case, (num_positions, first, num_dims, d) in enumerate(ANGLE_CASES):
        if case % 2:
            pos = rng.integers(0, 1000, size=(num_positions, 1))
        else:
            pos = np.arange(num_positions, dtype=np.float32)[:, np.newaxis]
        k = np.arange(first, first + num_dims)[np.newaxis, :]
        name = f"get_angles(pos of shape {pos.shape}, k = [[{first}, ..., {first + num_dims - 1}]], d={d})"
        result = _called(name, get_angles, pos, k, d)
        actual = to_array(result, name)
        if not isinstance(result, np.ndarray):
            raise CheckFailed(f"{name} should return a NumPy array, got {type(result).__name__}")
        if actual.shape != (num_positions, num_dims) and actual.shape == (num_dims, num_positions):
            raise CheckFailed(f"{name} has shape {actual.shape}, expected {(num_positions, num_dims)}: "
                              "one row per position, one column per dimension index")
        expect_close(actual, ref.get_angles(pos, k, d), name, rtol=1e-5, atol=1e-7,
                     mistakes=results(mistakes.GET_ANGLES, pos, k, d), hint=ANGLE_HINT)


def grade_positional_encoding(positional_encoding) -> None:
    # Graded on its own: if it calls get_angles, it gets the reference one.
    with quiet(), np.errstate(all="ignore"), \
            with_parts(positional_encoding, get_angles=ref.get_angles):
        for positions, d in ENCODING_CASES:
            name = f"positional_encoding({positions}, {d})"
            result = _called(name, positional_encoding, positions, d)
            expect_encoding(result, ref.positional_encoding(positions, d), name, atol=1e-4)
    passed(f"positional_encoding matches the reference on {len(ENCODING_CASES)} sizes (odd d, no positions)")
