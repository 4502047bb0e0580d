"""Assignment 06, align_labels_with_tokens: the reference labels each word's first WordPiece token as the
course's tokenizer splits it; the visible check (course_lib.ner.alignment) and the hidden check
(autograde.checks.ner.alignment) refuse always-equal objects and leave an unfinished exercise unfinished.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import numpy as np
import pytest
from test_06_ner_evaluation import (
    expect_named,
    expect_sound,
    run_quietly,
)

from autograde.checks.ner import alignment as hidden
from autograde.expected.ner.alignment import encode_words
from autograde.expected.tokenizer import course_tokenizer
from autograde.mistakes.ner import alignment as mistakes
from autograde.reference.ner import alignment as ref
from course_lib.checking import CheckFailed
from course_lib.ner import LABELS
from course_lib.ner import alignment as visible

from conftest import AlwaysEqual

CHECKS = (visible.check_align_labels_with_tokens, hidden.grade_align_labels_with_tokens)


# ------------------------------------------------------------------------------------------------
# The reference


def test_reference_on_the_notebooks_sentence():
    """Each word's label on its first piece, as the course's tokenizer splits the words; the rest -100."""
    words = ["Nkechi", "Adeyemi", "joined", "Rheinmetall", "in", "Düsseldorf", "."]
    tags = ["B-PER", "I-PER", "O", "B-ORG", "O", "B-LOC", "O"]
    encoding = encode_words(course_tokenizer(), words)
    labels = ref.align_labels_with_tokens([LABELS.index(t) for t in tags], encoding.word_ids)
    labelled = [(token, LABELS[label]) for token, label in zip(encoding.tokens, labels, strict=True) if label != -100]
    assert [token for token, _ in labelled] == [encoding.tokens[encoding.word_ids.index(w)] for w in range(7)]
    assert [tag for _, tag in labelled] == tags
    assert labels[0] == labels[-1] == -100 and len(labels) == len(encoding.ids) > len(words) + 2


def test_reference_by_hand():
    assert ref.align_labels_with_tokens([3, 4, 0], [None, 0, 0, 1, 2, 2, 2, None, None]) == \
        [-100, 3, -100, 4, 0, -100, -100, -100, -100]
    assert ref.align_labels_with_tokens(np.array([1, 2, 0]), (None, 0, 1, 1, None)) == [-100, 1, 2, -100, -100]
    assert ref.align_labels_with_tokens([], [None, None]) == [-100, -100]


def test_truncation_leaves_the_cut_words_out():
    encoding = encode_words(course_tokenizer(), ["Schwarzenegger", "visited", "Wrocław", "and", "Reykjavík"],
                            max_length=6)
    labels = ref.align_labels_with_tokens([3, 0, 5, 0, 5], encoding.word_ids)
    assert len(labels) == 6 and labels[-1] == -100 and 5 not in labels[-3:-1]


def test_every_named_mistake_is_seen_by_the_visible_check():
    from course_lib.expected import load

    cases = load("06_ner", "alignment", "align_labels_with_tokens").values()
    assert {name for case in cases for name in case["mistakes"]} == {mistake.name for mistake in mistakes.ALIGNMENT}


# ------------------------------------------------------------------------------------------------
# align_labels_with_tokens as learners write it

# (The solution, the reference and the variants against both checks: tests/test_exercises.py)


class TensorLike:
    """What TensorFlow and PyTorch tensors have in common for the checks: `.numpy()`."""

    def __init__(self, values):
        self.values = values

    def numpy(self):
        return np.asarray(self.values, dtype=np.int32)


def test_tensors_and_arrays_are_accepted(capsys):
    for convert in (np.array, TensorLike, lambda labels: np.array(labels, dtype=np.float32)):
        def fn(word_labels, word_ids, convert=convert):
            return convert(ref.align_labels_with_tokens(word_labels, word_ids))

        for check in CHECKS:
            run_quietly(check, fn, capsys)


def test_wrong_lengths_and_values_are_explained():
    def per_word(word_labels, word_ids):
        return list(word_labels)

    def without_specials(word_labels, word_ids):
        return [label for label, word in zip(ref.align_labels_with_tokens(word_labels, word_ids), word_ids,
                                             strict=True) if word is not None]

    def with_none(word_labels, word_ids):
        return [None if word is None else label
                for label, word in zip(ref.align_labels_with_tokens(word_labels, word_ids), word_ids, strict=True)]

    def continuation_zero(word_labels, word_ids):
        right = ref.align_labels_with_tokens(word_labels, word_ids)
        return [0 if label == -100 and word is not None else label for label, word in zip(right, word_ids, strict=True)]

    for check in CHECKS:
        expect_named(check, per_word, "one label per word; the model needs one per token")
        expect_named(check, without_specials, "the special tokens are left out")
        expect_named(check, with_none, "holds None at position 0")
        expect_named(check, continuation_zero, "continues word")


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_checks_are_sound(check):
    expect_sound(check, [AlwaysEqual(), [AlwaysEqual()] * 16, None, "labels", [[-100, 1]]])


def test_hidden_random_word_ids_look_like_the_tokenizers():
    rng = np.random.default_rng(0)
    word_ids = hidden.random_word_ids(rng, 12, 4, 3, 3)
    words = [w for w in word_ids if w is not None]
    assert word_ids[0] is None and word_ids[-4:] == [None] * 4
    assert words == sorted(words) and max(words) in (8, 9) and set(words) == set(range(max(words) + 1))
    with pytest.raises(CheckFailed):
        visible.expect_aligned([0], [-100], [1], [None])
