"""Assignment 01: the reference, the visible checks and the hidden checks of positional encoding."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from autograde.checks.positional_encoding import ENCODING_CASES, grade_get_angles, grade_positional_encoding
from autograde.reference import positional_encoding as ref
from course_lib.checking import CheckFailed
from course_lib.positional_encoding import (
    binary_position_codes,
    check_get_angles,
    check_positional_encoding,
    expect_encoding,
)

from conftest import AlwaysEqual

# ---------------------------------------------------------------------------------------------
# The reference


def test_reference_values_by_hand():
    encoding = ref.positional_encoding(3, 4)[0]
    # d = 4: pair 0 has rate 1, pair 1 has rate 10000^(-2/4) = 0.01.
    np.testing.assert_allclose(encoding[1], [np.sin(1), np.cos(1), np.sin(0.01), np.cos(0.01)])
    np.testing.assert_allclose(encoding[0], [0, 1, 0, 1])
    np.testing.assert_allclose(ref.get_angles([[2]], [[0, 1, 2, 3]], 8), [[2, 2, 0.2, 0.2]])


def test_reference_shape_and_range():
    encoding = ref.positional_encoding(50, 512)
    assert encoding.shape == (1, 50, 512)
    assert np.abs(encoding).max() <= 1.0
    # every pair (sin, cos) lies on the unit circle, so each row has norm sqrt(d / 2)
    np.testing.assert_allclose(np.linalg.norm(encoding[0], axis=-1), np.sqrt(256))


def test_dot_product_depends_only_on_the_offset():
    d = 64
    encoding = ref.positional_encoding(120, d)[0]
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    for delta in [0, 1, 5, 17]:
        products = [encoding[p] @ encoding[p + delta] for p in range(0, 100, 7)]
        np.testing.assert_allclose(products, np.cos(omega * delta).sum(), atol=1e-9)


def test_binary_position_codes_match_the_lecture_table():
    codes = binary_position_codes(16, 4)
    assert codes.shape == (16, 4)
    np.testing.assert_array_equal(codes[5], [0, 1, 0, 1])
    np.testing.assert_array_equal(codes[12], [1, 1, 0, 0])


# ---------------------------------------------------------------------------------------------
# Learner implementations: one right, several wrong in the ways learners get them wrong


def good_get_angles(pos, k, d):
    return pos / np.power(10000.0, 2 * (k // 2) / d)


def good_positional_encoding(positions, d):
    angles = good_get_angles(np.arange(positions)[:, None], np.arange(d)[None, :], d)
    angles[:, 0::2] = np.sin(angles[:, 0::2])
    angles[:, 1::2] = np.cos(angles[:, 1::2])
    return tf.constant(angles[None], dtype=tf.float32)


def encoding_from(make):
    """positional_encoding built from `make(angles) -> (positions, d)` array."""

    def positional_encoding(positions, d):
        angles = good_get_angles(np.arange(positions)[:, None], np.arange(d)[None, :], d)
        return tf.constant(make(angles)[None], dtype=tf.float32)

    return positional_encoding


def swapped(angles):
    out = angles.copy()
    out[:, 0::2], out[:, 1::2] = np.cos(angles[:, 0::2]), np.sin(angles[:, 1::2])
    return out


def concatenated(angles):
    return np.concatenate([np.sin(angles[:, 0::2]), np.cos(angles[:, 1::2])], axis=-1)


WRONG_ANGLES = {
    "no pairing": (lambda pos, k, d: pos / np.power(10000.0, k / d), "share one angle rate"),
    "no floor": (lambda pos, k, d: pos / np.power(10000.0, 2 * k / d), "integer division"),
    "multiplied": (lambda pos, k, d: pos * np.power(10000.0, 2 * (k // 2) / d), "you multiplied"),
    "d forgotten": (lambda pos, k, d: pos / np.power(10000.0, 2 * (k // 2)), "divide by d"),
    "d from k": (lambda pos, k, d: pos / np.power(10000.0, 2 * (k // 2) / k.shape[-1]), "argument d"),
    "column numbers": (lambda pos, k, d: pos / np.power(10000.0, 2 * (np.arange(k.shape[-1])[None] // 2) / d),
                       "not the column numbers"),
    "odd d": (lambda pos, k, d: pos * np.repeat(np.power(10000.0, -2 * np.arange(d // 2) / d), 2)[k], "IndexError"),
    "transposed": (lambda pos, k, d: good_get_angles(pos, k, d).T, "one row per position"),
    "tensor": (lambda pos, k, d: tf.constant(good_get_angles(pos, k, d)), "NumPy array"),
    "always equal": (lambda pos, k, d: AlwaysEqual(), "could not be read as an array"),
    "no return": (lambda pos, k, d: None, "forget a `return`"),
    "blank (zeros)": (lambda pos, k, d: np.zeros((len(pos), np.shape(k)[-1])), "has wrong values"),
}

WRONG_ENCODINGS = {
    "sine and cosine swapped": (encoding_from(swapped), "look swapped"),
    "only sines": (encoding_from(np.sin), "should take the cosine"),
    "only cosines": (encoding_from(np.cos), "should take the sine"),
    "halves": (encoding_from(concatenated), "must interleave"),
    "no batch axis": (lambda positions, d: good_positional_encoding(positions, d)[0], "batch axis"),
    "float64": (lambda positions, d: tf.cast(good_positional_encoding(positions, d), tf.float64), "float32"),
    "numpy": (lambda positions, d: good_positional_encoding(positions, d).numpy(), "tf.Tensor"),
    "always equal": (lambda positions, d: AlwaysEqual(), "tf.Tensor"),
    "blank (zeros)": (encoding_from(np.zeros_like), "has wrong values"),
    "pairs stacked (odd d)": (encoding_from(lambda a: np.stack([np.sin(a[:, 0::2]), np.cos(a[:, 1::2])], -1)
                                            .reshape(len(a), -1)), "raised ValueError"),
}


def test_checks_pass_a_correct_implementation(capsys):
    check_get_angles(good_get_angles)
    grade_get_angles(good_get_angles)
    check_positional_encoding(good_positional_encoding)
    grade_positional_encoding(good_positional_encoding)
    output = capsys.readouterr()
    assert output.out.count("\N{CHECK MARK}") == 4 and output.err == ""


@pytest.mark.parametrize("check", [check_get_angles, grade_get_angles])
@pytest.mark.parametrize("mistake", sorted(WRONG_ANGLES))
def test_get_angles_mistakes_are_diagnosed(check, mistake, capsys):
    wrong, diagnosis = WRONG_ANGLES[mistake]
    if mistake == "d from k" and check is grade_get_angles:
        diagnosis = "has wrong values"  # the hidden check compares values; d != D in one case
    with np.errstate(all="ignore"), pytest.raises(CheckFailed, match=diagnosis):
        check(wrong)
    assert capsys.readouterr().err == "", "checks must not write to stderr"


@pytest.mark.parametrize("check", [check_positional_encoding, grade_positional_encoding])
@pytest.mark.parametrize("mistake", sorted(WRONG_ENCODINGS))
def test_encoding_mistakes_are_diagnosed(check, mistake, capsys):
    wrong, diagnosis = WRONG_ENCODINGS[mistake]
    with pytest.raises(CheckFailed, match=diagnosis):
        check(wrong)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("positions, d", [case for case in ENCODING_CASES if case[0]])
def test_a_blank_encoding_is_never_a_named_mistake(positions, d):
    """At (1, 2) "only sines" gives zeros, sin 0, where it differs from the right answer: zeros fit it by
    coincidence, so no mistake is named there."""
    expected = ref.positional_encoding(positions, d)
    with pytest.raises(CheckFailed, match=r"has wrong values: \d+ of \d+ entries differ"):
        expect_encoding(tf.zeros(expected.shape, tf.float32), expected, f"positional_encoding({positions}, {d})")


def test_unfinished_exercise_raises_not_implemented():
    def unfinished(*args):
        raise NotImplementedError()

    for check in (check_get_angles, grade_get_angles, check_positional_encoding, grade_positional_encoding):
        with pytest.raises(NotImplementedError):
            check(unfinished)


def test_hidden_check_grades_the_encoding_with_the_reference_angles():
    """A wrong get_angles in the notebook must not cost the positional_encoding points."""
    namespace = {"np": np, "tf": tf}
    exec(
        "def get_angles(pos, k, d):\n"
        "    return pos / np.power(10000.0, k / d)  # wrong: no pairing\n"
        "def positional_encoding(positions, d):\n"
        "    angles = get_angles(np.arange(positions)[:, None], np.arange(d)[None, :], d)\n"
        "    angles[:, 0::2] = np.sin(angles[:, 0::2])\n"
        "    angles[:, 1::2] = np.cos(angles[:, 1::2])\n"
        "    return tf.constant(angles[None], dtype=tf.float32)\n",
        namespace,
    )
    grade_positional_encoding(namespace["positional_encoding"])
    assert namespace["get_angles"](np.array([[1]]), np.array([[1]]), 2)[0, 0] != 1.0, "restored afterwards"
    # the visible check, which runs the learner's own get_angles, points at the real culprit
    with pytest.raises(CheckFailed, match="fix get_angles first"):
        check_positional_encoding(namespace["positional_encoding"])


def test_a_failing_encoding_check_prints_no_tick_for_get_angles(capsys):
    """The check looks at the notebook's get_angles to explain a failure; its ✓ must not appear in a failing cell."""
    notebook = {"np": np, "tf": tf, "get_angles": good_get_angles}
    exec(  # a notebook whose get_angles is right and whose positional_encoding swaps sine and cosine
        "def positional_encoding(positions, d):\n"
        "    angles = get_angles(np.arange(positions)[:, None], np.arange(d)[None, :], d)\n"
        "    angles[:, 0::2], angles[:, 1::2] = np.cos(angles[:, 0::2]), np.sin(angles[:, 1::2])\n"
        "    return tf.constant(angles[None], dtype=tf.float32)\n", notebook)
    with pytest.raises(CheckFailed, match="swapped"):
        check_positional_encoding(notebook["positional_encoding"])
    assert "\N{CHECK MARK}" not in capsys.readouterr().out
