"""Expected values of the align_labels_with_tokens check of assignment 06 (`course_lib.ner.alignment`): each
case's sentence tokenized by the course's tokenizer, its word ids (-1 for None), tokens, the reference's labels and
the labels of the named mistakes that differ from them."""

from __future__ import annotations

from autograde.expected.tokenizer import course_tokenizer
from autograde.mistakes import stored
from autograde.mistakes.ner import alignment as mistakes
from autograde.reference.ner import alignment as ref
from course_lib.ner import LABELS
from course_lib.ner.alignment import ALIGN_CASES


def encode_words(tokenizer, words, *, max_length=None, pad_to=None, special_tokens=True):
    """The tokenizer's encoding of pretokenized words, truncated to `max_length` and padded to `pad_to` tokens, with
    [CLS] and [SEP] unless `special_tokens` is False."""
    tokenizer.no_truncation()
    tokenizer.no_padding()
    if max_length:
        tokenizer.enable_truncation(max_length=max_length)
    if pad_to:
        tokenizer.enable_padding(length=pad_to, pad_id=0, pad_token="[PAD]")
    try:
        return tokenizer.encode(words, is_pretokenized=True, add_special_tokens=special_tokens)
    finally:
        tokenizer.no_truncation()
        tokenizer.no_padding()


def _case(tokenizer, words, tags, options) -> dict:
    encoding = encode_words(tokenizer, words, max_length=options.get("max_length"), pad_to=options.get("pad_to"),
                            special_tokens=options.get("special_tokens", True))
    word_labels = [LABELS.index(tag) for tag in tags]
    word_ids = list(encoding.word_ids)
    right = ref.align_labels_with_tokens(word_labels, word_ids)
    wrong = stored(mistakes.ALIGNMENT, word_labels, word_ids)
    return {"word_ids": [-1 if w is None else w for w in word_ids], "tokens": list(encoding.tokens),
            "word_labels": word_labels, "expected": right,
            "mistakes": {name: entry for name, entry in wrong.items() if list(entry["value"]) != right}}


def generate() -> dict:
    tokenizer = course_tokenizer()
    return {"alignment": {"align_labels_with_tokens": {
        label: _case(tokenizer, words, tags, options) for label, words, tags, options in ALIGN_CASES}}}
