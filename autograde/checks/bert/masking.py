"""Hidden check of `mask_tokens` (assignment 05) on large random batches: its invariants exactly, its rates
within 6 binomial standard deviations, and the spread of its random replacements over a small vocabulary.
`grade_mask_tokens(fn)` raises `CheckFailed` with a diagnosis or prints one success line (stdout only).

The learner's function is called where it lives (the student's kernel when grading) with a generator made
there, by `run_masking`, which also sees there whether it changed its input or used a global generator.
"""

from __future__ import annotations

import math

import numpy as np

from autograde.checks import rng as draw
from autograde.reference.bert import masking as ref
from autograde.remote import run_there
from course_lib.bert.masking import (
    BERT_MASKING,
    SIGMAS,
    check_masking_statistics,
    expect_reproducible,
    format_rates,
    inspect_masking,
    random_token_batch,
    run_masking,
)
from course_lib.checking import CheckFailed, passed, quiet

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


def _called_there(mask_tokens):
    """`mask_tokens` as the shared checks call it, with a generator of this process: the call runs where the
    function lives, with a generator made there from a seed drawn from ours (so the same seed gives the same
    masking, and another seed another one)."""
    def call(token_ids, rng, **kwargs):
        seed = int(rng.integers(2**63))
        return run_there(mask_tokens, run_masking, mask_tokens, token_ids, seed, **kwargs)

    call.__name__ = "mask_tokens"
    return call


def grade_mask_tokens(mask_tokens) -> None:
    mask_tokens = _called_there(mask_tokens)
    rng = draw(55)
    with quiet():
        large = random_token_batch(rng, 2000, 128, unk_id=100)
        label = "2,000 sequences of 128 ids, default rates"
        rates = check_masking_statistics(mask_tokens, large, 5, label=label, pad_id=0, **BERT_MASKING)
        candidates = int((~np.isin(large, BERT_MASKING["special_ids"])).sum())
        expect_reproducible(mask_tokens, large[:200], 6, **BERT_MASKING)

        one = random_token_batch(rng, 1, 300, unk_id=100)[0].astype(np.int32)
        try:
            inspect_masking(run_masking(mask_tokens, one, 7, **BERT_MASKING), one, **BERT_MASKING)
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
