"""Assignment 05, build_bert_inputs: the reference lays out the lecture's "Be alert! BERT will hurt!" example
exactly as the real BERT tokenizer does and truncates as BERT's _truncate_seq_pair does (and as the tokenizers
library's LongestFirst does, except in the one case where the two differ); the catalogue of truncation mistakes;
the visible check (course_lib.bert.inputs) and the hidden check (autograde.checks.bert.inputs) accept correct
functions and name the usual mistakes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from autograde.checks.bert import inputs as hidden
from autograde.mistakes.bert import inputs as mistakes
from autograde.reference.bert import inputs as ref
from course_lib.bert import inputs as visible
from course_lib.checking import CheckFailed

from conftest import AlwaysEqual


@pytest.fixture(scope="module")
def tokenizer():
    """The shipped BERT's tokenizer, with truncation and padding set per test (a fresh load: no sharing)."""
    from course_lib.pretrained import load_bert

    return load_bert().tokenizer


# ------------------------------------------------------------------------------------------------
# The reference against the real tokenizer and against numbers written out by hand


@pytest.mark.thorough
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
    assert mistakes.truncate_like_tokenizers(range(6), range(10, 19), 9) == ([0, 1, 2, 3], [10, 11, 12, 13, 14])
    np.testing.assert_array_equal(ref.build_bert_inputs([11], [21], 3)[0], [101, 102, 102])
    with pytest.raises(ValueError, match="max_len"):
        ref.build_bert_inputs([11], [21], 2)


def _encode_ids(tokenizer, text):
    return tokenizer.encode(text, add_special_tokens=False).ids


WORDS = ("the cat sat on a mat while it rained outside and nobody knew why transformers attend to every "
         "word of sentence at once").split()


def test_truncation_agrees_with_the_tokenizers_library(tokenizer):
    """LongestFirst in tokenizers equals BERT's rule except when both inputs are cut, the room is odd and A
    is not longer than B (then B keeps the odd token); `truncate_like_tokenizers` models it in every case."""
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
        kept_a, kept_b = mistakes.truncate_like_tokenizers(a, b, budget)
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
            a, b = mistakes.truncate_like_tokenizers(a, b, budget)
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


def expect_checks_fail(fn, fragments, checks):
    """Each of `checks` fails on `fn` with a message holding every fragment (also used by test_05_bert_masking)."""
    for check in checks:
        with pytest.raises(CheckFailed) as failure:
            check(fn)
        message = str(failure.value)
        for fragment in fragments:
            assert fragment in message, f"{check.__module__}.{check.__name__}: {message}"


def expect_build_fails(fn, *fragments, checks=None):
    expect_checks_fail(fn, fragments, checks or both_build_checks())


# The reference passes both checks in tests/test_exercises.py.
@pytest.mark.parametrize("fn", [make_build(), build_with_numpy], ids=["lists", "numpy"])
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
    import tensorflow as tf
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
# The catalogue of truncation mistakes


def _kept(mistake, tokens_a, tokens_b, max_len):
    return mistake.produce(tokens_a, tokens_b, max_len, cls_id=1, sep_id=2, pad_id=0).tolist()


NAMED = {mistake.name: mistake for mistake in mistakes.TRUNCATION}


def test_truncation_mistakes_by_hand():
    # A of 5 and B of 3 with room for 5 (max_len 8): BERT's rule cuts A twice, then B on the tie at 3 and 3.
    a, b = [11, 12, 13, 14, 15], [21, 22, 23]
    assert ref.build_bert_inputs(a, b, 8, cls_id=1, sep_id=2, pad_id=0)[0].tolist() == [1, 11, 12, 13, 2, 21, 22, 2]
    assert _kept(NAMED["tie_from_a"], a, b, 8) == [1, 11, 12, 2, 21, 22, 23, 2]
    assert _kept(NAMED["from_the_start"], a, b, 8) == [1, 13, 14, 15, 2, 22, 23, 2]
    assert _kept(NAMED["b_emptied_first"], a, b, 8) == [1, 11, 12, 13, 14, 15, 2, 2]
    assert _kept(NAMED["a_emptied_first"], a, b, 8) == [1, 11, 12, 2, 21, 22, 23, 2]
    # 6 + 9 tokens with room for 9: the tokenizers library gives the odd token to B.
    assert _kept(NAMED["tokenizers_library"], range(6), range(10, 19), 12) == [1, 0, 1, 2, 3, 2, 10, 11, 12, 13, 14, 2]


def test_one_sided_truncations_need_a_pair():
    for name in ("b_emptied_first", "a_emptied_first"):
        with pytest.raises(ValueError):
            _kept(NAMED[name], [11, 12], None, 3)


@pytest.mark.parametrize("mistake", mistakes.TRUNCATION, ids=lambda mistake: mistake.name)
def test_the_hidden_check_names_each_truncation_mistake(mistake):
    def learner(tokens_a, tokens_b, max_len, **ids):
        right = ref.build_bert_inputs(tokens_a, tokens_b, max_len, **ids)
        return (np.asarray(mistake.produce(tokens_a, tokens_b, max_len, **ids), dtype=np.int32), *right[1:])

    # Wherever the tokenizers library's rule differs from BERT's, it keeps what a tie cut from A keeps: the
    # catalogue's first message for that result is given.
    message = NAMED["tie_from_a"].message if mistake.name == "tokenizers_library" else mistake.message
    with pytest.raises(CheckFailed, match=re.escape(message)):
        hidden.grade_build_bert_inputs(learner)


# ------------------------------------------------------------------------------------------------
# Every check: no always-equal object passes, NotImplementedError passes through


def expect_sound(check):
    """No always-equal object passes `check`, and an unfinished exercise stays unfinished (also used by
    test_05_bert_masking)."""
    for fn in (lambda *args, **kwargs: AlwaysEqual(),
               lambda *args, **kwargs: (AlwaysEqual(),) * 3,
               lambda *args, **kwargs: (AlwaysEqual(),) * 2):
        with pytest.raises(CheckFailed):
            check(fn)

    def stub(*args, **kwargs):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        check(stub)


@pytest.mark.parametrize("check", both_build_checks(), ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_always_equal_objects_fail_and_not_implemented_passes_through(check):
    expect_sound(check)
