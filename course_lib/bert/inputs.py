"""Assignment 05, BERT's input format: the visible check of `build_bert_inputs` and its diagnostics.

The check runs the learner's function on small hand-made inputs (the lecture's sentences among them) and
compares with values generated from the reference (`course_lib/expected/05_bert.json`), so this module holds
no solution code. The diagnostics (`expect_bert_inputs`, `expect_value_error`, `expect_inputs_unchanged`) are
shared with the hidden check in autograde.checks.bert.inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from course_lib.checking import CheckFailed, call_learner, passed, stored_mistakes
from course_lib.expected import load as load_expected

STEM = "05_bert"
OUTPUT_NAMES = ("token_ids", "segment_ids", "padding_mask")
BERT_CLS, BERT_SEP, BERT_PAD, BERT_MASK = 101, 102, 0, 103  # in the uncased BERT vocabularies

TRUNCATION_RULE = (
    "when A and B do not fit, remove one token at a time from the end of the longer sequence, from "
    "tokens_b when both are equally long (BERT's _truncate_seq_pair)"
)

# ----------------------------------------------------------------------------------------------
# build_bert_inputs: shared diagnostics


def _int32_vector(value, name: str, max_len: int) -> np.ndarray:
    """Fail unless `value` is a 1-D int32 NumPy array of length max_len."""
    if value is None:
        raise CheckFailed(f"{name} is None: did you forget to return it?")
    if not isinstance(value, np.ndarray):
        kind = "a TensorFlow tensor" if hasattr(value, "numpy") else f"a {type(value).__name__}"
        raise CheckFailed(f"{name} should be a NumPy array, got {kind}: build it with "
                          "np.array(values, dtype=np.int32)")
    if value.dtype != np.int32:
        extra = " (1 and 0, not True and False)" if value.dtype == np.bool_ else ""
        raise CheckFailed(f"{name} has dtype {value.dtype}, expected int32{extra}: "
                          "np.array(values, dtype=np.int32) or .astype(np.int32)")
    if value.ndim != 1:
        raise CheckFailed(f"{name} has shape {value.shape}, expected ({max_len},): one 1-D array per sequence")
    if len(value) > max_len:
        raise CheckFailed(f"{name} has length {len(value)}, longer than max_len={max_len}: the special tokens "
                          f"count towards max_len too; {TRUNCATION_RULE}")
    if len(value) < max_len:
        raise CheckFailed(f"{name} has length {len(value)}, expected max_len={max_len}: pad the sequence up to "
                          "max_len (pad_id in token_ids, 0 in segment_ids and padding_mask)")
    return value


def inspect_bert_inputs(result, max_len: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Structure of the result: a triple of 1-D int32 arrays of length max_len."""
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        got = f"{type(result).__name__} of length {len(result)}" if isinstance(result, (tuple, list)) else (
            type(result).__name__)
        raise CheckFailed(f"build_bert_inputs should return a triple (token_ids, segment_ids, padding_mask), "
                          f"got a {got}")
    return tuple(_int32_vector(value, name, max_len) for value, name in zip(result, OUTPUT_NAMES, strict=True))


def _first_difference(actual: np.ndarray, expected: np.ndarray) -> str:
    i = int(np.flatnonzero(actual != expected)[0])
    return f"the first difference is at position {i}: got {actual[i]}, expected {expected[i]}"


def _diagnose_token_ids(actual, expected, *, cls_id, sep_id, pad_id, real, truncated) -> str:
    n_sep = int(np.sum(expected == sep_id))
    padded = real < len(expected)
    if padded and actual[-1] != pad_id and np.sum(actual == pad_id) == np.sum(expected == pad_id):
        return "the padding must come at the end: [CLS] A [SEP] B [SEP], then pad_id up to max_len"
    if actual[0] != cls_id:
        if actual[0] == BERT_CLS != cls_id:
            return (f"it starts with {BERT_CLS}, but cls_id is {cls_id} here: use the argument cls_id, "
                    f"not the number {BERT_CLS}")
        return f"it should start with [CLS] (cls_id={cls_id}), but starts with {actual[0]}"
    if int(np.sum(actual == sep_id)) != n_sep:
        if sep_id != BERT_SEP and np.any(actual == BERT_SEP):
            return f"it contains {BERT_SEP}, but sep_id is {sep_id} here: use the argument sep_id"
        where = "one after A" + (" and one after B" if n_sep == 2 else "")
        return f"it holds {int(np.sum(actual == sep_id))} [SEP] tokens (sep_id={sep_id}), expected {n_sep}: {where}"
    if not np.array_equal(actual[real:], expected[real:]):
        if pad_id != BERT_PAD and np.all(actual[real:] == BERT_PAD):
            return f"it pads with {BERT_PAD}, but pad_id is {pad_id} here: use the argument pad_id"
    message = _first_difference(actual, expected)
    if truncated:
        message += f". The tokens do not all fit here: {TRUNCATION_RULE}"
    return message + ". The layout is [CLS] A [SEP] B [SEP] [PAD] ..."


def _diagnose_segment_ids(actual, expected, *, expected_tokens, sep_id, real) -> str:
    seps = np.flatnonzero(expected_tokens[:real] == sep_id)
    if np.array_equal(actual[:real], expected[:real] + 1):
        return "BERT numbers the segments 0 (A) and 1 (B); the lecture's slide counts sentences from 1"
    if np.any(actual[real:] != 0):
        return "padding positions get segment id 0"
    if len(seps) == 1 and np.any(actual != 0):
        return "a single sentence (tokens_b None) is all segment 0"
    if actual[0] != 0:
        return "[CLS] belongs to segment 0, with sentence A"
    if len(seps) == 2:
        if actual[seps[0]] != 0:
            return "the [SEP] after A closes sentence A: it belongs to segment 0"
        if actual[seps[1]] != 1:
            return "the [SEP] that closes B belongs to segment 1, like the tokens of B"
    return _first_difference(actual, expected) + "; segment 0 is [CLS] A [SEP], segment 1 is B [SEP]"


def _diagnose_padding_mask(actual, expected, *, expected_tokens, cls_id, sep_id) -> str:
    if np.array_equal(actual, 1 - expected):
        return "it looks inverted: 1 marks the real tokens ([CLS] and [SEP] included), 0 the padding"
    special = np.isin(expected_tokens, [cls_id, sep_id])
    if np.array_equal(actual[~special], expected[~special]) and np.all(actual[special] == 0):
        return "[CLS] and [SEP] are real tokens, attended to like words: their mask value is 1"
    return _first_difference(actual, expected) + "; the mask is 1 for every real token and 0 for padding"


def expect_bert_inputs(result, expected, label: str, *, cls_id: int, sep_id: int, pad_id: int,
                       truncated: bool = False, mistakes: Sequence[tuple[int, object, str]] = ()) -> None:
    """Compare (token_ids, segment_ids, padding_mask) with `expected`, one array at a time.

    `mistakes` lists (index of the array, wrong array, explanation): a result equal to a wrong array
    is reported with its explanation; otherwise the message says what looks wrong.
    """
    expected = [np.asarray(e, dtype=np.int64) for e in expected]
    try:
        actual = inspect_bert_inputs(result, len(expected[0]))
        real = int(expected[2].sum())
        for index, name in enumerate(OUTPUT_NAMES):
            if np.array_equal(actual[index], expected[index]):
                continue
            for mistake_index, candidate, explanation in mistakes:
                if mistake_index == index and np.array_equal(actual[index], np.asarray(candidate)):
                    raise CheckFailed(f"{name} is wrong: {explanation}")
            if index == 0:
                why = _diagnose_token_ids(actual[0], expected[0], cls_id=cls_id, sep_id=sep_id, pad_id=pad_id,
                                          real=real, truncated=truncated)
            elif index == 1:
                why = _diagnose_segment_ids(actual[1], expected[1], expected_tokens=expected[0], sep_id=sep_id,
                                            real=real)
            else:
                why = _diagnose_padding_mask(actual[2], expected[2], expected_tokens=expected[0], cls_id=cls_id,
                                             sep_id=sep_id)
            raise CheckFailed(f"{name} is wrong: {why}")
    except CheckFailed as failure:
        raise CheckFailed(f"[{label}] {failure}") from None


def expect_value_error(fn, label: str, *args, **kwargs) -> None:
    """The call must raise ValueError (NotImplementedError passes through)."""
    try:
        fn(*args, **kwargs)
    except NotImplementedError:
        raise
    except ValueError:
        return
    except Exception as error:
        raise CheckFailed(f"[{label}] raised {type(error).__name__}: {error}; raise a ValueError with a message "
                          "saying that max_len is too small for the special tokens") from None
    raise CheckFailed(f"[{label}] returned a result, but max_len cannot even hold the special tokens: raise "
                      "ValueError('max_len=... is too small for [CLS] and [SEP]') instead")


def call_with_arguments_after(build_bert_inputs, tokens_a, tokens_b, max_len: int, **ids):
    """(result, tokens_a, tokens_b): the learner's call, and its two sequences as the call left them.

    The grader runs this where the learner's code runs, so a function that truncates the caller's lists in
    place is seen doing it even though the grader's own lists cross to the kernel by value."""
    return call_learner(build_bert_inputs, tokens_a, tokens_b, max_len, **ids), tokens_a, tokens_b


def expect_inputs_unchanged(before: Sequence, after: Sequence, label: str) -> None:
    """Fail if the learner's function changed the token lists it was given."""
    for name, old, new in zip(("tokens_a", "tokens_b"), before, after, strict=True):
        if old is not None and list(np.asarray(old).tolist()) != list(np.asarray(new).tolist()):
            raise CheckFailed(f"[{label}] build_bert_inputs changed its argument {name} (from {len(old)} to "
                              f"{len(new)} tokens): truncate a copy (list({name})), never the caller's list")


# ----------------------------------------------------------------------------------------------
# build_bert_inputs: the visible check, on hand-made cases

# "be alert !" and "bert will hurt !" in the uncased WordPiece vocabulary of BERT.
_ALERT = [2022, 9499, 999]
_HURT = [14324, 2097, 3480, 999]
_BERT_IDS = {"cls_id": BERT_CLS, "sep_id": BERT_SEP, "pad_id": BERT_PAD}

# label, tokens_a, tokens_b, max_len, special ids, whether the words must be cut. The expected results and the
# results of the named truncation mistakes are generated by the reference (autograde/expected/bert/inputs.py).
BUILD_CASES = [
    ("'Be alert!' + 'BERT will hurt!', max_len 12", _ALERT, _HURT, 12, _BERT_IDS, False),
    ("one sentence 'Be alert!', max_len 6", _ALERT, None, 6, _BERT_IDS, False),
    ("A of 5 tokens and B of 2 as NumPy arrays, max_len 8", np.array([11, 12, 13, 14, 15]), np.array([21, 22]), 8,
     _BERT_IDS, True),
    ("A and B of 3 tokens each, max_len 8", [11, 12, 13], [21, 22, 23], 8, _BERT_IDS, True),
    ("cls_id=1, sep_id=2, pad_id=3, max_len 7", [11], [21, 22], 7, {"cls_id": 1, "sep_id": 2, "pad_id": 3}, False),
    ("A of 2 tokens and an empty B (a pair, not one sentence), max_len 6", [11, 12], [], 6, _BERT_IDS, False),
]


def check_build_bert_inputs(build_bert_inputs) -> None:
    """A pair with padding, one sentence, truncation (longest first, ties from B), other special ids, an empty B."""
    expected = load_expected(STEM, "inputs", "build_bert_inputs")
    for label, tokens_a, tokens_b, max_len, ids, truncated in BUILD_CASES:
        tokens_a, tokens_b = (None if t is None else t.copy() for t in (tokens_a, tokens_b))  # the learner's own
        before = [None if t is None else np.array(t).copy() for t in (tokens_a, tokens_b)]
        result = call_learner(build_bert_inputs, tokens_a, tokens_b, max_len, **ids)
        expect_inputs_unchanged(before, (tokens_a, tokens_b), label)
        mistakes = [(0, token_ids, message) for token_ids, message in stored_mistakes(expected[label]["mistakes"])]
        expect_bert_inputs(result, expected[label]["expected"], label, truncated=truncated, mistakes=mistakes, **ids)
    expect_value_error(build_bert_inputs, "a pair with max_len 2", [11], [21], 2, **_BERT_IDS)
    expect_value_error(build_bert_inputs, "one sentence with max_len 1", [11], None, 1, **_BERT_IDS)
    passed(f"build_bert_inputs lays out, pads and truncates {len(BUILD_CASES)} hand-made cases and rejects a too small "
           "max_len")
