"""Assignment 05, input side: the reference lays out the lecture's "Be alert! BERT will hurt!" example
exactly as the real BERT tokenizer does, truncates as BERT's _truncate_seq_pair does (and as the
tokenizers library's LongestFirst does, except in the one case where the two differ), and masks at the
requested rates; the visible checks (course_lib.bert.inputs) and hidden checks (autograde.checks.bert.inputs)
accept correct functions and name the usual mistakes."""

from __future__ import annotations

import random

import numpy as np
import pytest

from autograde.checks.bert import inputs as hidden
from autograde.reference.bert import inputs as ref
from course_lib.bert import inputs as visible
from course_lib.checking import CheckFailed

from conftest import AlwaysEqual

BERT_SPECIAL = (0, 100, 101, 102, 103)


@pytest.fixture(scope="module")
def tokenizer():
    """The shipped BERT's tokenizer, with truncation and padding set per test (a fresh load: no sharing)."""
    from course_lib.pretrained import load_bert

    return load_bert().tokenizer


# ------------------------------------------------------------------------------------------------
# The reference against the real tokenizer and against numbers written out by hand


def test_lecture_example_matches_the_tokenizer(tokenizer):
    tokenizer.no_truncation()
    tokenizer.no_padding()
    encoding = tokenizer.encode("Be alert!", "BERT will hurt!")
    # The slide drops the "!"; the real tokenizer keeps it.
    assert encoding.tokens == ["[CLS]", "be", "alert", "!", "[SEP]", "bert", "will", "hurt", "!", "[SEP]"]
    a = tokenizer.encode("Be alert!", add_special_tokens=False).ids
    b = tokenizer.encode("BERT will hurt!", add_special_tokens=False).ids
    token_ids, segment_ids, mask = ref.build_bert_inputs(a, b, 12)
    np.testing.assert_array_equal(token_ids, encoding.ids + [0, 0])
    np.testing.assert_array_equal(segment_ids, encoding.type_ids + [0, 0])
    np.testing.assert_array_equal(mask, [1] * 10 + [0, 0])
    assert token_ids.dtype == segment_ids.dtype == mask.dtype == np.int32


def test_reference_by_hand():
    token_ids, segment_ids, mask = ref.build_bert_inputs([11, 12], None, 5, cls_id=1, sep_id=2, pad_id=3)
    np.testing.assert_array_equal(token_ids, [1, 11, 12, 2, 3])
    np.testing.assert_array_equal(segment_ids, [0, 0, 0, 0, 0])
    np.testing.assert_array_equal(mask, [1, 1, 1, 1, 0])
    # BERT's rule on 6 + 9 tokens with room for 9: cut B to 6, then alternate, B first: A 5, B 4.
    assert ref.truncate_pair(range(6), range(10, 19), 9) == ([0, 1, 2, 3, 4], [10, 11, 12, 13])
    assert ref.truncate_pair_direct(range(6), range(10, 19), 9) == ([0, 1, 2, 3], [10, 11, 12, 13, 14])
    np.testing.assert_array_equal(ref.build_bert_inputs([11], [21], 3)[0], [101, 102, 102])
    with pytest.raises(ValueError, match="max_len"):
        ref.build_bert_inputs([11], [21], 2)


def _encode_ids(tokenizer, text):
    return tokenizer.encode(text, add_special_tokens=False).ids


WORDS = ("the cat sat on a mat while it rained outside and nobody knew why transformers attend to every "
         "word of sentence at once").split()


def test_truncation_agrees_with_the_tokenizers_library(tokenizer):
    """LongestFirst in tokenizers equals BERT's rule except when both inputs are cut, the room is odd and A
    is not longer than B (then B keeps the odd token); `truncate_pair_direct` models it in every case."""
    rng = np.random.default_rng(0)
    agreed = differed = 0
    for _ in range(300):
        text_a = " ".join(rng.choice(WORDS, size=rng.integers(1, 12)))
        text_b = " ".join(rng.choice(WORDS, size=rng.integers(1, 12)))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        a, b = _encode_ids(tokenizer, text_a), _encode_ids(tokenizer, text_b)
        max_len = int(rng.integers(3, 28))
        tokenizer.enable_truncation(max_length=max_len, strategy="longest_first")
        tokenizer.enable_padding(length=max_len, pad_id=0, pad_token="[PAD]")
        encoding = tokenizer.encode(text_a, text_b)
        budget = max_len - 3
        kept_a, kept_b = ref.truncate_pair_direct(a, b, budget)
        np.testing.assert_array_equal(ref.layout(kept_a, kept_b, max_len, cls_id=101, sep_id=102, pad_id=0)[0],
                                      encoding.ids)
        token_ids, segment_ids, mask = ref.build_bert_inputs(a, b, max_len)
        both_cut_odd = min(len(a), len(b)) > budget - min(len(a), len(b)) and budget % 2 == 1
        if both_cut_odd and len(a) <= len(b):
            differed += 1
            assert len(ref.truncate_pair(a, b, budget)[0]) == len(kept_a) + 1
        else:
            agreed += 1
            np.testing.assert_array_equal(token_ids, encoding.ids)
            np.testing.assert_array_equal(segment_ids, encoding.type_ids)
            np.testing.assert_array_equal(mask, encoding.attention_mask)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    assert agreed > 150 and differed > 10, (agreed, differed)


def test_single_sentence_truncation_agrees_with_the_tokenizer(tokenizer):
    text = " ".join(WORDS)
    tokenizer.enable_truncation(max_length=9, strategy="longest_first")
    encoding = tokenizer.encode(text)
    tokenizer.no_truncation()
    np.testing.assert_array_equal(ref.build_bert_inputs(_encode_ids(tokenizer, text), None, 9)[0], encoding.ids)


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
# build_bert_inputs as a learner would write it: correct versions, and one mistake at a time


def make_build(*, cls_first=True, second_sep_segment=1, first_sep_segment=0, segment_offset=0, invert_mask=False,
               special_mask=1, pad_front=False, side="end", tie="b", budget_extra=0, truncate="longest",
               out=None, fixed_ids=None, in_place=False, check_length=True, join="list"):
    """A build_bert_inputs with one deliberate change (the defaults give a correct one)."""

    def build(tokens_a, tokens_b, max_len, *, cls_id=101, sep_id=102, pad_id=0):
        if fixed_ids:  # numbers written into the code instead of the arguments
            cls_id, sep_id, pad_id = (fixed if fixed is not None else given
                                      for fixed, given in zip(fixed_ids, (cls_id, sep_id, pad_id), strict=True))
        needed = 2 if tokens_b is None else 3
        if check_length and max_len < needed:
            raise ValueError(f"max_len={max_len} is too small for {needed} special tokens")
        a = tokens_a if in_place and isinstance(tokens_a, list) else list(tokens_a)
        b = None if tokens_b is None else (tokens_b if in_place and isinstance(tokens_b, list) else list(tokens_b))
        budget = max_len - needed + budget_extra
        if truncate == "tokenizers":
            a, b = ref.truncate_pair_direct(a, b, budget)
        elif truncate == "longest":
            while len(a) + (len(b) if b is not None else 0) > budget:
                longer = a if b is None or len(a) > len(b) or (len(a) == len(b) and tie == "a") else b
                longer.pop(0 if side == "start" else -1)
        elif truncate == "b_first":
            while len(a) + (0 if b is None else len(b)) > budget:
                (b if b else a).pop()
        if join == "plus" and isinstance(tokens_a, np.ndarray):  # forgets that the tokens may be NumPy arrays
            tokens = [cls_id] + (tokens_a[:len(a)] + [sep_id]).tolist() + [sep_id]
        else:
            tokens = ([cls_id] if cls_first else []) + list(a) + [sep_id]
        segments = [0] * (len(tokens) - 1) + [first_sep_segment]
        if b is not None:
            tokens += list(b) + [sep_id]
            segments += [1] * len(b) + [second_sep_segment]
        segments = [s + segment_offset for s in segments]
        padding = max_len - len(tokens)
        mask = [0 if special_mask == 0 and t in (cls_id, sep_id) else 1 for t in tokens]
        if pad_front:
            tokens, segments, mask = [pad_id] * padding + tokens, [0] * padding + segments, [0] * padding + mask
        else:
            tokens, segments, mask = tokens + [pad_id] * padding, segments + [0] * padding, mask + [0] * padding
        if invert_mask:
            mask = [1 - m for m in mask]
        result = (np.array(tokens, np.int32), np.array(segments, np.int32), np.array(mask, np.int32))
        return out(*result) if out else result

    return build


def build_with_numpy(tokens_a, tokens_b, max_len, *, cls_id=101, sep_id=102, pad_id=0):
    """Another correct version: NumPy throughout, truncation by computing how much to keep."""
    a, b = np.asarray(tokens_a), None if tokens_b is None else np.asarray(tokens_b)
    specials = 2 if b is None else 3
    if max_len < specials:
        raise ValueError("max_len too small")
    room = max_len - specials
    if b is None:
        a = a[:room]
    else:
        keep_a, keep_b = len(a), len(b)
        while keep_a + keep_b > room:
            if keep_a > keep_b:
                keep_a -= 1
            else:
                keep_b -= 1
        a, b = a[:keep_a], b[:keep_b]
    parts = [[cls_id], a, [sep_id]] + ([] if b is None else [b, [sep_id]])
    tokens = np.concatenate([np.asarray(p, dtype=np.int32) for p in parts])
    segments = np.zeros(max_len, np.int32)
    if b is not None:
        segments[len(a) + 2:len(tokens)] = 1
    result = np.full(max_len, pad_id, np.int32)
    result[:len(tokens)] = tokens
    return result, segments, (np.arange(max_len) < len(tokens)).astype(np.int32)


def both_build_checks():
    return (visible.check_build_bert_inputs, hidden.grade_build_bert_inputs)


def expect_build_fails(fn, *fragments, checks=None):
    for check in checks or both_build_checks():
        with pytest.raises(CheckFailed) as failure:
            check(fn)
        message = str(failure.value)
        for fragment in fragments:
            assert fragment in message, f"{check.__module__}.{check.__name__}: {message}"


@pytest.mark.parametrize("fn", [make_build(), build_with_numpy, ref.build_bert_inputs],
                         ids=["lists", "numpy", "reference"])
def test_correct_build_passes(fn, capsys):
    for check in both_build_checks():
        check(fn)
    out = capsys.readouterr()
    assert out.out.count("\N{CHECK MARK}") == 2 and out.err == ""


def test_build_without_cls():
    expect_build_fails(make_build(cls_first=False), "token_ids is wrong", "should start with [CLS]")


def test_build_second_sep_in_segment_0():
    expect_build_fails(make_build(second_sep_segment=0), "the [SEP] that closes B belongs to segment 1")


def test_build_first_sep_in_segment_1():
    expect_build_fails(make_build(first_sep_segment=1), "the [SEP] after A closes sentence A")


def test_build_segments_counted_from_1():
    expect_build_fails(make_build(segment_offset=1), "numbers the segments 0 (A) and 1 (B)")


def test_build_padding_mask_inverted():
    expect_build_fails(make_build(invert_mask=True), "padding_mask is wrong: it looks inverted")


def test_build_special_tokens_masked_out():
    expect_build_fails(make_build(special_mask=0), "[CLS] and [SEP] are real tokens")


def test_build_padding_in_front():
    expect_build_fails(make_build(pad_front=True), "the padding must come at the end")


def test_build_truncates_from_the_start():
    expect_build_fails(make_build(side="start"), "removed from the start")


def test_build_truncates_b_first():
    expect_build_fails(make_build(truncate="b_first"), "B was emptied first", checks=[visible.check_build_bert_inputs])
    expect_build_fails(make_build(truncate="b_first"), "all taken from B", checks=[hidden.grade_build_bert_inputs])


def test_build_tie_from_a():
    expect_build_fails(make_build(tie="a"), "equally long", "from tokens_b")


def test_build_truncation_of_the_tokenizers_library():
    expect_build_fails(make_build(truncate="tokenizers"), "from tokens_b")


def test_build_without_truncation():
    expect_build_fails(make_build(truncate=None), "longer than max_len", "special tokens count towards max_len")


def test_build_budget_forgets_a_special_token():
    expect_build_fails(make_build(budget_extra=1), "longer than max_len")


@pytest.mark.parametrize(("out", "fragment"), [
    (lambda t, s, m: (t.astype(np.int64), s, m), "dtype int64, expected int32"),
    (lambda t, s, m: (t, s, m.astype(bool)), "not True and False"),
    (lambda t, s, m: (t.tolist(), s, m), "should be a NumPy array, got a list"),
    (lambda t, s, m: (t[None], s, m), "one 1-D array per sequence"),
    (lambda t, s, m: (t, s), "should return a triple"),
    (lambda t, s, m: None, "should return a triple"),
])
def test_build_wrong_types(out, fragment):
    expect_build_fails(make_build(out=out), fragment)


def test_build_returns_tensors():
    tf = pytest.importorskip("tensorflow")
    expect_build_fails(make_build(out=lambda *arrays: tuple(tf.constant(a) for a in arrays)),
                       "got a TensorFlow tensor")


def test_build_hard_coded_ids():
    expect_build_fails(make_build(fixed_ids=(101, 102, 0)), "use the argument cls_id")
    expect_build_fails(make_build(fixed_ids=(None, 102, None)), "use the argument sep_id", checks=[
        hidden.grade_build_bert_inputs])


def test_build_hard_coded_pad():
    def pads_with_zero(tokens_a, tokens_b, max_len, *, cls_id=101, sep_id=102, pad_id=0):
        return make_build()(tokens_a, tokens_b, max_len, cls_id=cls_id, sep_id=sep_id, pad_id=0)

    expect_build_fails(pads_with_zero, "use the argument pad_id")


def test_build_changes_its_input():
    expect_build_fails(make_build(in_place=True), "changed its argument tokens_")


def test_build_without_value_error():
    expect_build_fails(make_build(check_length=False), "ValueError")


def test_build_with_the_wrong_exception():
    def asserts(tokens_a, tokens_b, max_len, **ids):
        assert max_len >= (2 if tokens_b is None else 3), "too short"
        return make_build()(tokens_a, tokens_b, max_len, **ids)

    expect_build_fails(asserts, "raised AssertionError", "raise a ValueError")


def test_build_adding_to_arrays():
    expect_build_fails(make_build(join="plus"), "+ adds numbers", checks=[hidden.grade_build_bert_inputs])


def test_build_crash_becomes_check_failure():
    def crashes(tokens_a, tokens_b, max_len, **ids):
        return {}["missing"]

    expect_build_fails(crashes, "raised KeyError")


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
    for check in checks or both_mask_checks():
        with pytest.raises(CheckFailed) as failure:
            check(fn)
        message = str(failure.value)
        for fragment in fragments:
            assert fragment in message, f"{check.__module__}.{check.__name__}: {message}"


@pytest.mark.parametrize("fn", [mask_vectorised, mask_exact_count, ref.mask_tokens, make_mask()],
                         ids=["vectorised", "exact-count", "reference", "make_mask"])
def test_correct_masking_passes(fn, capsys):
    for check in both_mask_checks():
        check(fn)
    out = capsys.readouterr()
    assert out.out.count("\N{CHECK MARK}") == 2 and out.err == ""
    assert "[MASK] 8" in out.out and "random " in out.out  # the measured rates are printed


def test_masking_rates_are_printed(capsys):
    hidden.grade_mask_tokens(ref.mask_tokens)
    line = capsys.readouterr().out
    assert "2,000 x 128" in line and "selected 15." in line and "[MASK] 80." in line, line


def test_masking_selects_special_tokens():
    expect_mask_fails(make_mask(select_special=True), "special or padding positions", "never [CLS]")


def test_masking_applied_to_all_tokens():
    expect_mask_fails(make_mask(all_tokens=True), "not selected were changed", "only selected tokens")


def test_masking_only_masked_marked_selected():
    expect_mask_fails(make_mask(only_masked_selected=True), "not selected were changed",
                      "whether it becomes [MASK], a random id or stays")


def test_masking_all_mask():
    expect_mask_fails(make_mask(all_mask=True), "every selected token became [MASK]")


def test_masking_random_ids_may_be_special():
    expect_mask_fails(make_mask(random_any=True), "special id")


def test_masking_rates_swapped():
    expect_mask_fails(make_mask(swapped=True), "[MASK] and random rates are swapped")


def test_masking_random_after_mask_draw():
    expect_mask_fails(make_mask(sequential=True), "random replacements are too rare")


def test_masking_global_numpy_generator():
    expect_mask_fails(make_mask(global_numpy=True), "NumPy's global generator")


def test_masking_python_random():
    expect_mask_fails(make_mask(python_random=True), "Python's random module")


def test_masking_own_generator():
    expect_mask_fails(make_mask(own_generator=True), "gave the same selection")


def test_masking_in_place():
    expect_mask_fails(make_mask(in_place=True), "changed token_ids in place")


def test_masking_hard_coded_rates():
    expect_mask_fails(make_mask(hard_coded=True), "rates are written into the code")


def test_masking_counts_cls_and_sep_like_google():
    expect_mask_fails(make_mask(google_count=True), "counting [CLS] and [SEP]")


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
# Every check: no always-equal object, NotImplementedError passes through


ALL_CHECKS = [visible.check_build_bert_inputs, hidden.grade_build_bert_inputs, visible.check_mask_tokens,
              hidden.grade_mask_tokens]


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_always_equal_objects_fail(check):
    for fn in (lambda *args, **kwargs: AlwaysEqual(),
               lambda *args, **kwargs: (AlwaysEqual(),) * 3,
               lambda *args, **kwargs: (AlwaysEqual(),) * 2):
        with pytest.raises(CheckFailed):
            check(fn)


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_not_implemented_passes_through(check):
    def stub(*args, **kwargs):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        check(stub)
