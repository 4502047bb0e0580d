"""Hidden check of `build_bert_inputs` (assignment 05): the learner's function against the reference on seeded
random pairs (every truncation case, empty sentences, other special ids, lists and arrays).
`grade_build_bert_inputs(fn)` raises `CheckFailed` with a diagnosis or prints one success line (stdout only).

When grading, the function runs in the student's kernel, where the grader's lists arrive as copies; the call is
therefore made there (`call_with_arguments_after`), which sends back the sequences as the call left them, so a
function that truncates the caller's lists in place is seen doing it."""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.mistakes import results
from autograde.mistakes.bert import inputs as mistakes
from autograde.reference.bert import inputs as ref
from autograde.remote import run_there
from course_lib.bert.inputs import (
    call_with_arguments_after,
    expect_bert_inputs,
    expect_inputs_unchanged,
    expect_value_error,
)
from course_lib.checking import CheckFailed, passed, quiet

SPECIAL_ID_SETS = [
    {"cls_id": 101, "sep_id": 102, "pad_id": 0},
    {"cls_id": 7, "sep_id": 8, "pad_id": 9},  # a hard-coded 101, 102 or 0 cannot pass
    {"cls_id": 2, "sep_id": 3, "pad_id": 1},
]

# (length of A, length of B or None, max_len): every way truncation can go.
PAIR_CASES = [
    (5, 7, 16),  # room to spare: padding
    (4, 6, 13),  # an exact fit
    (10, 3, 12),  # only A is cut
    (2, 12, 9),  # only B is cut
    (8, 8, 13),  # both cut to 5 and 5
    (6, 9, 12),  # both cut, 9 places: A, the shorter, keeps 5 (the tokenizers library gives B the 5)
    (7, 7, 10),  # a tie with 7 places: A keeps 4
    (9, 6, 10),  # both cut, A the longer: A keeps 4
    (3, 4, 3),  # no room for any word: [CLS] [SEP] [SEP]
    (1, 1, 40),  # mostly padding
    (6, None, 12),  # one sentence with padding
    (20, None, 10),  # one sentence, cut
    (4, None, 2),  # one sentence, no room for any word: [CLS] [SEP]
    (4, 0, 9),  # an empty B is a pair: [CLS] A [SEP] [SEP]
    (0, 3, 8),  # an empty A: [CLS] [SEP] B [SEP]
]

ARRAY_HINT = (
    " (the same case with Python lists passes: tokens_a and tokens_b may also be 1-D NumPy arrays, on which "
    "+ adds numbers instead of joining sequences; convert them with list(...) first)"
)


def _pair(rng, length_a, length_b):
    tokens_a = rng.integers(1000, 30522, size=length_a).tolist()
    tokens_b = None if length_b is None else rng.integers(1000, 30522, size=length_b).tolist()
    return tokens_a, tokens_b


def _run_case(build_bert_inputs, tokens_a, tokens_b, max_len, ids, label):
    before = [None if t is None else list(t) for t in (tokens_a, tokens_b)]
    result, *after = run_there(build_bert_inputs, call_with_arguments_after, build_bert_inputs, tokens_a, tokens_b,
                               max_len, **ids)
    expect_inputs_unchanged(before, after, label)
    budget = max_len - ref.special_token_count(tokens_b is not None)
    truncated = len(before[0]) + (0 if before[1] is None else len(before[1])) > budget
    wrong = [(0, token_ids, message) for token_ids, message in results(mistakes.TRUNCATION, *before, max_len, **ids)]
    expect_bert_inputs(result, ref.build_bert_inputs(before[0], before[1], max_len, **ids), label,
                       truncated=truncated, mistakes=wrong, **ids)


def grade_build_bert_inputs(build_bert_inputs) -> None:
    rng = draw(51)
    with quiet():
        for number, (length_a, length_b, max_len) in enumerate(PAIR_CASES):
            ids = SPECIAL_ID_SETS[number % len(SPECIAL_ID_SETS)]
            tokens_a, tokens_b = _pair(rng, length_a, length_b)
            shape = f"A of {length_a}" + ("" if length_b is None else f", B of {length_b}")
            label = f"{shape} tokens, max_len {max_len}, cls_id={ids['cls_id']}, sep_id={ids['sep_id']}, " \
                    f"pad_id={ids['pad_id']}"
            _run_case(build_bert_inputs, tokens_a, tokens_b, max_len, ids, label)
            dtype = (np.int64, np.int32)[number % 2]
            arrays = [None if t is None else np.array(t, dtype=dtype) for t in (tokens_a, tokens_b)]
            try:
                _run_case(build_bert_inputs, *arrays, max_len, ids, f"{label}, as {np.dtype(dtype)} arrays")
            except CheckFailed as failure:
                raise CheckFailed(f"{failure}{ARRAY_HINT}") from None
        for tokens_b, max_len in [([5000], 2), ([5000, 5001], 1), ([5000], 0), (None, 1), (None, 0)]:
            what = "a pair" if tokens_b is not None else "one sentence"
            expect_value_error(build_bert_inputs, f"{what} with max_len {max_len}", [4000, 4001], tokens_b,
                               max_len, **SPECIAL_ID_SETS[0])
    passed(f"build_bert_inputs matches the reference in {2 * len(PAIR_CASES)} cases (every truncation case, empty "
           "sentences, other special ids, lists and arrays) and rejects 5 too small max_len")
