"""Reference BERT input builder in plain NumPy (assignment 05).

Conventions match the notebook: a pair is laid out as ``[CLS] A [SEP] B [SEP] [PAD] ...``, with segment
id 0 for [CLS], A and the first [SEP], 1 for B and its [SEP], 0 for padding; the padding mask is 1 for
every real token (special ones included) and 0 for padding. Too long a pair is truncated one token at a
time from the end of the longer sequence, from B on a tie (BERT's ``_truncate_seq_pair``). The usual wrong
truncations are in autograde.mistakes.bert.inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def special_token_count(has_second: bool) -> int:
    """[CLS] A [SEP] needs 2 special tokens, [CLS] A [SEP] B [SEP] needs 3."""
    return 3 if has_second else 2


def truncate_pair(tokens_a: Sequence[int], tokens_b: Sequence[int] | None,
                  budget: int) -> tuple[list[int], list[int] | None]:
    """Shorten copies of A and B until together they hold at most `budget` tokens: one token at a time
    from the end of the longer sequence, from B when they are equally long."""
    a = [int(t) for t in tokens_a]
    b = None if tokens_b is None else [int(t) for t in tokens_b]
    while len(a) + (0 if b is None else len(b)) > budget:
        longer = a if b is None or len(a) > len(b) else b
        longer.pop()
    return a, b


def layout(tokens_a: Sequence[int], tokens_b: Sequence[int] | None, max_len: int, *, cls_id: int,
           sep_id: int, pad_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lay out already truncated A and B: [CLS] A [SEP] (B [SEP]), padded to max_len."""
    token_ids = [cls_id, *tokens_a, sep_id]
    segment_ids = [0] * len(token_ids)
    if tokens_b is not None:
        token_ids += [*tokens_b, sep_id]
        segment_ids += [1] * (len(tokens_b) + 1)
    if len(token_ids) > max_len:
        raise ValueError(f"{len(token_ids)} tokens do not fit in max_len={max_len}")
    padding = max_len - len(token_ids)
    mask = [1] * len(token_ids) + [0] * padding
    token_ids += [pad_id] * padding
    segment_ids += [0] * padding
    return (np.array(token_ids, dtype=np.int32), np.array(segment_ids, dtype=np.int32),
            np.array(mask, dtype=np.int32))


def build_bert_inputs(tokens_a, tokens_b, max_len: int, *, cls_id: int = 101, sep_id: int = 102,
                      pad_id: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(token_ids, segment_ids, padding_mask), three int32 arrays of shape (max_len,)."""
    needed = special_token_count(tokens_b is not None)
    if max_len < needed:
        raise ValueError(f"max_len={max_len} cannot hold the {needed} special tokens")
    a, b = truncate_pair(tokens_a, tokens_b, max_len - needed)
    return layout(a, b, max_len, cls_id=cls_id, sep_id=sep_id, pad_id=pad_id)
