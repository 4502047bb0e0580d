"""Assignment 01 (positional encoding): a picture helper and the visible checks.

The checks compare with values generated from the reference (`course_lib/expected/01_positional_encoding.json`,
written by `python -m autograde.expected`), so this module holds no solution code.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np

from course_lib.checking import (
    CheckFailed,
    call_learner,
    expect_close,
    expect_shape,
    expect_tensor,
    passed,
    stored_mistakes,
    to_array,
)
from course_lib.expected import load as load_expected


def binary_position_codes(num_positions: int, num_bits: int) -> np.ndarray:
    """Positions 0..num_positions-1 written in binary, most significant bit first: (positions, bits)."""
    positions = np.arange(num_positions)[:, np.newaxis]
    shifts = np.arange(num_bits - 1, -1, -1)[np.newaxis, :]
    return (positions >> shifts) & 1


ANGLE_HINT = "the angle is pos / 10000**(2*(k//2)/d)"
STEM = "01_positional_encoding"


def check_get_angles(get_angles) -> None:
    """Angles for positions 0, 1, 5 and d = 6, then one case where d is not the number of columns, one where k
    starts at 3 and d is odd, and one without positions."""
    case = load_expected(STEM, "get_angles")
    k = np.arange(6)[np.newaxis, :]
    result = call_learner(get_angles, case["positions"].astype(np.int64), k, 6)
    actual = to_array(result, "get_angles(pos, k, 6)")  # None or non-numbers: the clearest message
    if not isinstance(result, np.ndarray):
        raise CheckFailed(
            f"get_angles should return a NumPy array, got {type(result).__name__}; "
            "use NumPy operations (positional_encoding converts the result to a tensor later)"
        )
    if actual.shape == (6, 3):
        raise CheckFailed(
            "get_angles(pos, k, 6) has shape (6, 3), expected (3, 6): one row per position and one "
            "column per dimension index; pos (P, 1) combined with k (1, D) broadcasts to (P, D)"
        )
    expect_close(actual, case["expected"], "get_angles(pos, k, 6)", mistakes=stored_mistakes(case["mistakes"]),
                 hint=ANGLE_HINT)

    # With d = 8 the rates of k = 0..3 are 1, 1, 0.1, 0.1; k has only 4 columns here.
    actual = to_array(call_learner(get_angles, np.array([[2]]), np.arange(4)[np.newaxis, :], 8),
                      "get_angles([[2]], [[0, 1, 2, 3]], 8)")
    expect_close(actual, load_expected(STEM, "get_angles_d8", "expected"), "get_angles([[2]], [[0, 1, 2, 3]], 8)",
                 hint="use the argument d in the exponent, not the number of columns of k")

    # k need not start at 0, and d may be odd (its last index, d - 1, is even and has no partner).
    case = load_expected(STEM, "get_angles_later_k_odd_d")
    name = "get_angles([[1], [4]], [[3, 4, 5, 6]], 7)"
    actual = to_array(call_learner(get_angles, np.array([[1], [4]]), np.array([[3, 4, 5, 6]]), 7), name)
    expect_close(actual, case["expected"], name, mistakes=stored_mistakes(case["mistakes"]), hint=ANGLE_HINT)
    name = "get_angles for no positions, pos of shape (0, 1)"
    expect_shape(to_array(call_learner(get_angles, np.zeros((0, 1)), np.arange(4)[np.newaxis, :], 4), name), (0, 4),
                 name)
    passed("get_angles: the right angles, one rate per pair of dimensions")


def encoding_mistakes(expected: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """(wrong result, explanation) pairs derived from a correct encoding by moving its columns. With an odd d
    the last sine has no cosine to trade places with, so only the halves are derived."""
    d = expected.shape[-1]
    even, odd = np.arange(0, d, 2), np.arange(1, d, 2)
    halves = np.concatenate([expected[..., even], expected[..., odd]], axis=-1)
    found = [(halves, "sines and cosines must interleave (sine at 0, 2, 4, ..., cosine at 1, 3, 5, ...), "
                      "not fill the first and the second half")]
    if d % 2:
        return found
    swapped = np.empty_like(expected)
    swapped[..., even], swapped[..., odd] = expected[..., odd], expected[..., even]
    only_sines = expected.copy()
    only_sines[..., odd] = expected[..., even]
    only_cosines = expected.copy()
    only_cosines[..., even] = expected[..., odd]
    return [
        (swapped, "sine and cosine look swapped: even indices 0, 2, 4, ... take the sine and odd "
                  "indices 1, 3, 5, ... the cosine"),
        (only_sines, "the odd indices 1, 3, 5, ... should take the cosine, not the sine"),
        (only_cosines, "the even indices 0, 2, 4, ... should take the sine, not the cosine"),
        *found,
    ]


def expect_encoding(result, expected: np.ndarray, name: str, *, atol: float = 1e-5) -> None:
    """A float32 tensor of shape (1, positions, d) with the expected values."""
    expect_tensor(result, name)
    if result.dtype.name != "float32":
        raise CheckFailed(f"{name} should have dtype float32, got {result.dtype.name}: "
                          "finish with tf.cast(..., tf.float32)")
    actual = to_array(result, name)
    if actual.shape == expected.shape[1:]:
        raise CheckFailed(f"{name} has shape {actual.shape}, expected {expected.shape}: add the leading "
                          "batch axis, e.g. angles[np.newaxis, ...]")
    expect_close(actual, expected, name, atol=atol, mistakes=encoding_mistakes(expected))


def check_positional_encoding(positional_encoding) -> None:
    """positional_encoding(3, 4) against values written out by hand, then the shape of a larger one, an odd d and
    no positions."""
    try:
        expect_encoding(call_learner(positional_encoding, 3, 4), load_expected(STEM, "encoding_3_4"),
                        "positional_encoding(3, 4)")
    except CheckFailed as failure:
        get_angles = getattr(positional_encoding, "__globals__", {}).get("get_angles")
        if get_angles is not None:
            try:
                # For its verdict only: its ✓ line would read as a pass in a cell that fails.
                with contextlib.redirect_stdout(io.StringIO()):
                    check_get_angles(get_angles)
            except (CheckFailed, NotImplementedError):
                raise CheckFailed(f"{failure} (note: your get_angles does not pass its own check yet, "
                                  "and positional_encoding probably builds on it: fix get_angles first)") from None
        raise
    result = call_learner(positional_encoding, 50, 16)
    large = load_expected(STEM, "encoding_50_16")
    actual = to_array(result, "positional_encoding(50, 16)")
    if actual.shape != (1, 50, 16):
        raise CheckFailed(f"positional_encoding(50, 16) has shape {actual.shape}, expected (1, 50, 16)")
    expect_close(actual[0, 0], large["position_0"], "position 0 of positional_encoding(50, 16)",
                 hint="at position 0 every sine is 0 and every cosine is 1")
    expect_close(actual[0, 49, 0], large["entry_49_0"], "entry [0, 49, 0] (sin 49)", atol=1e-5)
    # An odd d ends with a sine that has no cosine beside it; no positions give an empty encoding.
    expect_encoding(call_learner(positional_encoding, 3, 5), load_expected(STEM, "encoding_3_5"),
                    "positional_encoding(3, 5)")
    expect_encoding(call_learner(positional_encoding, 0, 4), np.zeros((1, 0, 4)), "positional_encoding(0, 4)")
    passed("positional_encoding: float32, shape (1, positions, d), sine on even and cosine on odd indices")
