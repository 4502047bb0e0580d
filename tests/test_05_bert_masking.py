"""Assignment 05, mask_tokens: the reference masks at the requested rates; the visible check
(course_lib.bert.masking) and the hidden check (autograde.checks.bert.masking) accept correct functions and name
the usual mistakes."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from test_05_bert_inputs import expect_checks_fail, expect_sound

from autograde.checks.bert import masking as hidden
from autograde.reference.bert import masking as ref
from course_lib.bert import masking as visible

BERT_SPECIAL = (0, 100, 101, 102, 103)


# ------------------------------------------------------------------------------------------------
# The reference


def test_reference_masking_rates_and_invariants():
    rng = np.random.default_rng(0)
    ids = visible.random_token_batch(rng, 3000, 128, unk_id=100)
    masked, selected = ref.mask_tokens(ids, np.random.default_rng(1))
    special = np.isin(ids, BERT_SPECIAL)
    assert not np.any(selected & special) and np.array_equal(masked[~selected], ids[~selected])
    rates = visible.masking_rates(ids, masked, selected, mask_id=103, special_ids=BERT_SPECIAL)
    assert abs(rates["selected"] - 0.15) < 0.005 and abs(rates["mask"] - 0.8) < 0.01
    assert abs(rates["random"] - 0.1) < 0.01 and abs(rates["unchanged"] - 0.1) < 0.01
    all_masked, chosen = ref.mask_tokens(ids[:2], rng, select_rate=1.0, mask_rate=1.0, random_rate=0.0)
    np.testing.assert_array_equal(all_masked, np.where(np.isin(ids[:2], BERT_SPECIAL), ids[:2], 103))
    np.testing.assert_array_equal(chosen, ~np.isin(ids[:2], BERT_SPECIAL))


# ------------------------------------------------------------------------------------------------
# mask_tokens as a learner would write it


def mask_vectorised(token_ids, rng, *, mask_id=103, vocab_size=30522, special_ids=BERT_SPECIAL, select_rate=0.15,
                    mask_rate=0.8, random_rate=0.1):
    """Correct: independent draws, one uniform number per selected token for the 80/10/10 decision."""
    ids = np.array(token_ids)
    candidates = ~np.isin(ids, list(special_ids))
    selected = candidates & (rng.random(ids.shape) < select_rate)
    u = rng.random(ids.shape)
    allowed = np.array([i for i in range(vocab_size) if i not in set(special_ids)])
    masked = ids.copy()
    masked[selected & (u < mask_rate)] = mask_id
    use_random = selected & (u >= mask_rate) & (u < mask_rate + random_rate)
    masked[use_random] = rng.choice(allowed, size=int(use_random.sum()))
    return masked.astype(np.int32), selected


def mask_exact_count(token_ids, rng, *, mask_id=103, vocab_size=30522, special_ids=BERT_SPECIAL, select_rate=0.15,
                     mask_rate=0.8, random_rate=0.1):
    """Correct, Google's way: round(select_rate * n) of the n non-special tokens of each sequence, one loop."""
    ids = np.array(token_ids)
    rows = ids.reshape(-1, ids.shape[-1])
    masked, selected = rows.astype(np.int32), np.zeros(rows.shape, bool)
    special = set(int(i) for i in special_ids)
    allowed = [i for i in range(vocab_size) if i not in special]
    for r, row in enumerate(rows):
        candidates = [i for i, t in enumerate(row) if int(t) not in special]
        count = int(round(select_rate * len(candidates)))
        for i in rng.permutation(candidates)[:count]:
            selected[r, i] = True
            u = rng.random()
            if u < mask_rate:
                masked[r, i] = mask_id
            elif u < mask_rate + random_rate:
                masked[r, i] = allowed[rng.integers(len(allowed))]
    return masked.reshape(ids.shape), selected.reshape(ids.shape)


def make_mask(**change):
    """mask_vectorised with one deliberate change."""

    def masker(token_ids, rng, *, mask_id=103, vocab_size=30522, special_ids=BERT_SPECIAL, select_rate=0.15,
               mask_rate=0.8, random_rate=0.1):
        ids = token_ids if change.get("in_place") else np.array(token_ids)
        special = list(special_ids)
        candidates = np.ones(ids.shape, bool) if change.get("select_special") else ~np.isin(ids, special)
        if change.get("google_count"):  # round(15% of the tokens, [CLS] and [SEP] included): Google's count
            selected = np.zeros(ids.shape, bool)
            rows = zip(np.atleast_2d(ids), np.atleast_2d(candidates), strict=True)
            for row, (row_ids, row_candidates) in enumerate(rows):
                count = int(round(select_rate * np.sum(row_ids != 0)))
                chosen = rng.permutation(np.flatnonzero(row_candidates))[:count]
                np.atleast_2d(selected)[row, chosen] = True
        else:
            draw = np.random.random(ids.shape) if change.get("global_numpy") else rng.random(ids.shape)
            if change.get("python_random"):
                draw = np.array([random.random() for _ in range(ids.size)]).reshape(ids.shape)
            if change.get("own_generator"):
                draw = np.random.default_rng(0).random(ids.shape)
            rate = 0.15 if change.get("hard_coded") else select_rate
            selected = candidates & (draw < rate)
        if change.get("all_tokens"):  # 80/10/10 over every real token, then 15% of them called "selected"
            targets = ~np.isin(ids, special)
        else:
            targets = selected
        u = rng.random(ids.shape)
        m, r = (random_rate, mask_rate) if change.get("swapped") else (mask_rate, random_rate)
        if change.get("hard_coded"):
            m, r = 0.8, 0.1
        if change.get("all_mask"):
            m, r = 1.0, 0.0
        to_mask = targets & (u < m)
        if change.get("sequential"):
            to_random = targets & ~to_mask & (rng.random(ids.shape) < r)
        else:
            to_random = targets & (u >= m) & (u < m + r)
        if change.get("random_any"):
            random_ids = rng.integers(0, vocab_size, size=ids.shape)
        else:
            allowed = np.setdiff1d(np.arange(vocab_size - (1 if change.get("off_by_one") else 0)), special)
            random_ids = rng.choice(allowed, size=ids.shape)
        masked = ids.copy() if not change.get("in_place") else ids
        masked[to_mask] = mask_id
        masked[to_random] = random_ids[to_random]
        if change.get("only_masked_selected"):
            selected = to_mask
        out = change.get("out")
        result = (masked.astype(np.int32), selected)
        return out(*result) if out else result

    return masker


def both_mask_checks():
    return (visible.check_mask_tokens, hidden.grade_mask_tokens)


def expect_mask_fails(fn, *fragments, checks=None):
    expect_checks_fail(fn, fragments, checks or both_mask_checks())


@pytest.mark.parametrize("fn", [mask_vectorised, mask_exact_count, ref.mask_tokens, make_mask()],
                         ids=["vectorised", "exact-count", "reference", "make_mask"])
def test_correct_masking_passes(fn, capsys):
    for check in both_mask_checks():
        check(fn)
    out = capsys.readouterr()
    assert out.out.count("\N{CHECK MARK}") == 2 and out.err == ""
    # The measured rates are printed: about 80% [MASK] (within 1 point on these batches, whatever the draws).
    assert len(re.findall(r"\[MASK\] (?:79|80)\.\d\d%", out.out)) == 2 and "random " in out.out


def test_masking_rates_are_printed(capsys):
    hidden.grade_mask_tokens(ref.mask_tokens)
    line = capsys.readouterr().out
    assert "2,000 x 128" in line and re.search(r"selected 1[45]\.\d\d%.*\[MASK\] (?:79|80)\.", line), line


# (the change to a correct masker, fragments that both checks' message must hold)
MASKING_MISTAKES = [
    ("select_special", ("special or padding positions", "never [CLS]")),
    ("all_tokens", ("not selected were changed", "only selected tokens")),
    ("only_masked_selected", ("not selected were changed", "whether it becomes [MASK], a random id or stays")),
    ("all_mask", ("every selected token became [MASK]",)),
    ("random_any", ("special id",)),
    ("swapped", ("[MASK] and random rates are swapped",)),
    ("sequential", ("random replacements are too rare",)),
    ("global_numpy", ("NumPy's global generator",)),
    ("python_random", ("Python's random module",)),
    ("own_generator", ("gave the same selection",)),
    ("in_place", ("changed token_ids in place",)),
    ("hard_coded", ("rates are written into the code",)),
    ("google_count", ("counting [CLS] and [SEP]",)),
]


@pytest.mark.parametrize(("change", "fragments"), MASKING_MISTAKES, ids=[change for change, _ in MASKING_MISTAKES])
def test_masking_mistakes_are_named(change, fragments):
    expect_mask_fails(make_mask(**{change: True}), *fragments)


def test_masking_random_ids_miss_the_last_id():
    expect_mask_fails(make_mask(off_by_one=True), "not uniform", "id 19 was drawn 0 times",
                      checks=[hidden.grade_mask_tokens])


@pytest.mark.parametrize(("out", "fragment"), [
    (lambda m, s: (m.astype(np.int64), s), "masked_ids has dtype int64, expected int32"),
    (lambda m, s: (m, s.astype(np.int32)), "selected has dtype int32, expected bool"),
    (lambda m, s: (m.tolist(), s), "should be a NumPy array"),
    (lambda m, s: (m.reshape(-1), s), "expected"),
    (lambda m, s: m, "should return a pair"),
])
def test_masking_wrong_types(out, fragment):
    expect_mask_fails(make_mask(out=out), fragment)


# ------------------------------------------------------------------------------------------------
# Every check: no always-equal object passes, NotImplementedError passes through


@pytest.mark.parametrize("check", both_mask_checks(), ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_always_equal_objects_fail_and_not_implemented_passes_through(check):
    expect_sound(check)
