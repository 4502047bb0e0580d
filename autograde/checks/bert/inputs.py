"""Hidden checks of assignment 05's input side: `build_bert_inputs` against the reference on seeded random
pairs (every truncation case, other special ids, lists and arrays), and `mask_tokens` on large random
batches: its invariants exactly, its rates within 6 binomial standard deviations, and the spread of its
random replacements over a small vocabulary. Each `grade_<function>(fn)` raises `CheckFailed` with a
diagnosis or prints one success line (stdout only)."""

from __future__ import annotations

import math

import numpy as np

from autograde.reference.bert import inputs as ref
from course_lib.bert.inputs import (
    SIGMAS,
    TRUNCATION_RULE,
    check_masking_statistics,
    expect_bert_inputs,
    expect_inputs_unchanged,
    expect_reproducible,
    expect_value_error,
    format_rates,
    inspect_masking,
    random_token_batch,
    run_masking,
)
from course_lib.checking import CheckFailed, call_learner, passed, quiet

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
]

ARRAY_HINT = (
    " (the same case with Python lists passes: tokens_a and tokens_b may also be 1-D NumPy arrays, on which "
    "+ adds numbers instead of joining sequences; convert them with list(...) first)"
)


def _cut_one_side(tokens_a, tokens_b, budget, first):
    """Wrong truncation: empty one sequence (`first`, "a" or "b") before touching the other."""
    a, b = list(tokens_a), list(tokens_b)
    while len(a) + len(b) > budget:
        (a if (first == "a" and a) or not b else b).pop()
    return a, b


def _truncation_mistakes(tokens_a, tokens_b, max_len, ids):
    """(0, wrong token ids, explanation) for the usual truncation mistakes."""
    budget = max_len - ref.special_token_count(tokens_b is not None)
    variants = [
        (ref.truncate_pair(tokens_a, tokens_b, budget, tie="a"),
         "when A and B are equally long the token comes from tokens_b; " + TRUNCATION_RULE),
        (ref.truncate_pair_direct(tokens_a, tokens_b, budget),
         "when both sequences are cut and the room left for them is odd, A keeps the extra token; "
         + TRUNCATION_RULE),
        (ref.truncate_pair(tokens_a, tokens_b, budget, side="start"),
         "tokens were removed from the start of the longer sequence; remove them from the end"),
    ]
    if tokens_b is not None:
        variants += [(_cut_one_side(tokens_a, tokens_b, budget, "b"), "the tokens were all taken from B; "
                      + TRUNCATION_RULE),
                     (_cut_one_side(tokens_a, tokens_b, budget, "a"), "the tokens were all taken from A; "
                      + TRUNCATION_RULE)]
    return [(0, ref.layout(a, b, max_len, **ids)[0], explanation) for (a, b), explanation in variants]


def _pair(rng, length_a, length_b):
    tokens_a = rng.integers(1000, 30522, size=length_a).tolist()
    tokens_b = None if length_b is None else rng.integers(1000, 30522, size=length_b).tolist()
    return tokens_a, tokens_b


def _run_case(build_bert_inputs, tokens_a, tokens_b, max_len, ids, label):
    before = [None if t is None else list(t) for t in (tokens_a, tokens_b)]
    result = call_learner(build_bert_inputs, tokens_a, tokens_b, max_len, **ids)
    expect_inputs_unchanged(before, (tokens_a, tokens_b), label)
    budget = max_len - ref.special_token_count(tokens_b is not None)
    truncated = len(before[0]) + (0 if before[1] is None else len(before[1])) > budget
    expect_bert_inputs(result, ref.build_bert_inputs(before[0], before[1], max_len, **ids), label,
                       truncated=truncated, mistakes=_truncation_mistakes(before[0], before[1], max_len, ids), **ids)


def grade_build_bert_inputs(build_bert_inputs) -> None:
    rng = np.random.default_rng(51)
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
    passed(f"build_bert_inputs matches the reference in {2 * len(PAIR_CASES)} cases (every truncation case, other "
           "special ids, lists and arrays) and rejects 5 too small max_len")


# ----------------------------------------------------------------------------------------------
# mask_tokens

BERT = {"mask_id": 103, "vocab_size": 30522, "special_ids": (0, 100, 101, 102, 103)}
# A 20-id vocabulary: [PAD] 0, [UNK] 3, [CLS] 7, [MASK] 8, [SEP] 9; 15 ids left for random replacements.
SMALL = {"mask_id": 8, "vocab_size": 20, "special_ids": (0, 3, 7, 8, 9)}
SMALL_RATES = {"select_rate": 0.5, "mask_rate": 0.3, "random_rate": 0.5}


def _expect_uniform_replacements(original, masked, selected, *, mask_id, vocab_size, special_ids, label):
    """Random replacements cover the non-special ids evenly (each within 6 standard deviations)."""
    choices = ref.non_special_ids(vocab_size, special_ids)
    replaced = selected & (masked != original) & (masked != mask_id)
    drawn, originals = masked[replaced], original[replaced]
    total = drawn.size
    for choice in choices:
        # A draw equal to the original is invisible: id j shows up only where the original was not j.
        expected = (total - np.sum(originals == choice)) / (len(choices) - 1)
        count = int(np.sum(drawn == choice))
        spread = SIGMAS * math.sqrt(expected * (1 - 1 / (len(choices) - 1))) + 1e-9
        if abs(count - expected) > spread:
            raise CheckFailed(
                f"[{label}] random replacements are not uniform over the {len(choices)} non-special ids "
                f"{choices.tolist()}: id {choice} was drawn {count} times, expected about {expected:.0f}; draw "
                "each replacement uniformly from all the non-special ids of range(vocab_size), the last one "
                "included (e.g. rng.choice(non_special_ids))")


def grade_mask_tokens(mask_tokens) -> None:
    rng = np.random.default_rng(55)
    with quiet():
        large = random_token_batch(rng, 2000, 128, unk_id=100)
        label = "2,000 sequences of 128 ids, default rates"
        rates = check_masking_statistics(mask_tokens, large, 5, label=label, pad_id=0, **BERT)
        candidates = int((~np.isin(large, BERT["special_ids"])).sum())
        expect_reproducible(mask_tokens, large[:200], 6, **BERT)

        one = random_token_batch(rng, 1, 300, unk_id=100)[0].astype(np.int32)
        try:
            inspect_masking(run_masking(mask_tokens, one, 7, **BERT), one, **BERT)
        except CheckFailed as failure:
            raise CheckFailed(f"[one sequence of shape (300,), int32] {failure}") from None

        words = ref.non_special_ids(SMALL["vocab_size"], SMALL["special_ids"])
        small = random_token_batch(rng, 1000, 40, vocab_size=20, cls_id=7, sep_id=9, pad_id=0, unk_id=3,
                                   word_ids=words)
        label = ("vocab_size=20 with special ids 0, 3, 7, 8, 9, select_rate=0.5, mask_rate=0.3, "
                 "random_rate=0.5")
        check_masking_statistics(mask_tokens, small, 8, label=label, pad_id=0, **SMALL, **SMALL_RATES)
        masked, selected = run_masking(mask_tokens, small, 8, **SMALL, **SMALL_RATES)
        _expect_uniform_replacements(small, np.asarray(masked), np.asarray(selected, dtype=bool), label=label,
                                     **SMALL)
    passed(f"mask_tokens keeps every invariant, and on 2,000 x 128 ids ({candidates} non-special tokens): "
           f"{format_rates(rates)}; random ids are uniform over a 20-id vocabulary")
