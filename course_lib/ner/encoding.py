"""Assignment 06: sentences of words and tags to BERT's inputs and per-token labels, and raw text to BERT's inputs.

`encode_sentences` tokenizes pre-split words with the fast WordPiece tokenizer of `load_bert()` (which adds
[CLS] and [SEP]), aligns the word labels with the tokens through the learner's `align_labels_with_tokens`, and
pads everything to `max_length`; the fine-tuning loop (course_lib.finetuning) cuts each batch to its own
length. `encode_text` does the same for a raw text, keeping each token's character offsets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from course_lib.heads import INPUT_NAMES

IGNORE = -100  # the label of tokens that the loss skips: [CLS], [SEP], continuation pieces, padding


def _cut(ids: list, max_length: int) -> list:
    """At most `max_length` entries, the last one ([SEP], or None for its word id) kept at the end."""
    return ids if len(ids) <= max_length else ids[:max_length - 1] + ids[-1:]


def _checked_alignment(labels, word_ids: list, sentence: int) -> list[int]:
    """The learner's aligned labels as ints, one per token, or a clear error."""
    if labels is None:
        raise ValueError(f"align returned None for sentence {sentence}: did align_labels_with_tokens forget to "
                         "return its list?")
    labels = list(labels)
    if len(labels) != len(word_ids):
        raise ValueError(f"align returned {len(labels)} labels for the {len(word_ids)} tokens of sentence {sentence}: "
                         "one label per token (word_ids entry), -100 where the loss should not look")
    return [int(label) for label in labels]


def encode_sentences(tokenizer, sentences: Sequence, *, label_to_id: Mapping[str, int], align: Callable,
                     max_length: int = 128, verbose: bool = True) -> dict:
    """BERT inputs and token labels for sentences with `.tokens` (words) and `.tags` (one tag per word).

    Returns int32 arrays of shape (len(sentences), max_length): "token_ids" ([CLS] words [SEP], then 0),
    "segment_ids" (0), "padding_mask" (1 on real tokens) and "labels" (`align(word_label_ids, word_ids)`, -100 on
    padding), and "word_ids": a list with each sentence's word index per real token (None for [CLS] and [SEP]).
    A sentence of more than `max_length` tokens keeps its first max_length - 1 tokens and [SEP]; its last words
    then get no label. How many were cut is printed (`verbose`)."""
    if max_length < 2:
        raise ValueError(f"max_length={max_length} cannot hold [CLS] and [SEP]")
    words = [list(sentence.tokens) for sentence in sentences]
    n = len(words)
    arrays = {name: np.zeros((n, max_length), np.int32) for name in INPUT_NAMES}
    arrays["labels"] = np.full((n, max_length), IGNORE, np.int32)
    arrays["word_ids"] = []
    cut = 0
    for row, (sentence, encoding) in enumerate(zip(sentences, tokenizer.encode_batch(words, is_pretokenized=True)
                                                   if words else [], strict=True)):
        try:
            word_labels = [label_to_id[tag] for tag in sentence.tags]
        except KeyError as error:
            raise KeyError(f"sentence {row} has the tag {error.args[0]!r}, which label_to_id does not know "
                           f"(it knows {sorted(label_to_id)})") from None
        cut += len(encoding.ids) > max_length
        ids, word_ids = _cut(encoding.ids, max_length), _cut(list(encoding.word_ids), max_length)
        length = len(ids)
        arrays["token_ids"][row, :length] = ids
        arrays["segment_ids"][row, :length] = _cut(encoding.type_ids, max_length)
        arrays["padding_mask"][row, :length] = 1
        arrays["labels"][row, :length] = _checked_alignment(align(word_labels, word_ids), word_ids, row)
        arrays["word_ids"].append(word_ids)
    if cut and verbose:
        print(f"{cut} of {n:,} sentences are longer than max_length={max_length} tokens and were cut; "
              "their last words get no label")
    return arrays


def encode_text(tokenizer, text: str, max_length: int = 128) -> dict:
    """One raw text as a batch of one: int32 "token_ids", "segment_ids", "padding_mask" of shape (1, n) with n
    at most `max_length`, and the tokens' character "offsets" ((0, 0) for [CLS] and [SEP]) and "word_ids"
    (words as the tokenizer splits them), cut like encode_sentences; "truncated" says whether the text was cut."""
    encoding = tokenizer.encode(text)
    ids = _cut(encoding.ids, max_length)
    return {
        "token_ids": np.array([ids], np.int32),
        "segment_ids": np.array([_cut(encoding.type_ids, max_length)], np.int32),
        "padding_mask": np.ones((1, len(ids)), np.int32),
        "offsets": [tuple(offset) for offset in _cut(list(encoding.offsets), max_length)],
        "word_ids": _cut(list(encoding.word_ids), max_length),
        "truncated": len(encoding.ids) > max_length,
    }


def inputs_of(arrays: Mapping) -> dict[str, np.ndarray]:
    """The model's inputs (token_ids, segment_ids, padding_mask) of an encode_sentences result."""
    return {name: arrays[name] for name in INPUT_NAMES}
