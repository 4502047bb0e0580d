"""Reference BERT input builder and masked-language-model masking in plain NumPy.

Conventions match assignment 05: a pair is laid out as ``[CLS] A [SEP] B [SEP] [PAD] ...``, with segment
id 0 for [CLS], A and the first [SEP], 1 for B and its [SEP], 0 for padding; the padding mask is 1 for
every real token (special ones included) and 0 for padding. Too long a pair is truncated one token at a
time from the end of the longer sequence, from B on a tie (BERT's ``_truncate_seq_pair``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


def special_token_count(has_second: bool) -> int:
    """[CLS] A [SEP] needs 2 special tokens, [CLS] A [SEP] B [SEP] needs 3."""
    return 3 if has_second else 2


def truncate_pair(tokens_a: Sequence[int], tokens_b: Sequence[int] | None, budget: int,
                  *, tie: str = "b", side: str = "end") -> tuple[list[int], list[int] | None]:
    """Shorten copies of A and B until together they hold at most `budget` tokens.

    One token at a time from the longer sequence (from B when they are equally long). `tie="a"` and
    `side="start"` give the usual wrong variants, for the checks' diagnoses.
    """
    a = [int(t) for t in tokens_a]
    b = None if tokens_b is None else [int(t) for t in tokens_b]
    while len(a) + (0 if b is None else len(b)) > budget:
        if b is None:
            longer = a
        elif len(a) > len(b) or (len(a) == len(b) and tie == "a"):
            longer = a
        else:
            longer = b
        longer.pop(0 if side == "start" else -1)
    return a, b


def truncate_pair_direct(tokens_a: Sequence[int], tokens_b: Sequence[int] | None,
                         budget: int) -> tuple[list[int], list[int] | None]:
    """The tokenizers library's LongestFirst: lengths computed at once, the odd token to the longer input.

    It agrees with `truncate_pair` except when both inputs must be cut, the budget is odd and A is not
    longer than B: then B keeps the extra token (BERT's rule gives it to A).
    """
    a = [int(t) for t in tokens_a]
    if tokens_b is None:
        return a[:budget], None
    b = [int(t) for t in tokens_b]
    if len(a) + len(b) <= budget:
        return a, b
    n1, n2, swapped = len(a), len(b), len(a) > len(b)
    if swapped:
        n1, n2 = n2, n1
    n2 = n1 if n1 > budget else max(n1, budget - n1)
    if n1 + n2 > budget:
        n1 = budget // 2
        n2 = n1 + budget % 2
    if swapped:
        n1, n2 = n2, n1
    return a[:n1], b[:n2]


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


def non_special_ids(vocab_size: int, special_ids: Iterable[int]) -> np.ndarray:
    """The ids a random replacement may take: range(vocab_size) without the special ids."""
    return np.setdiff1d(np.arange(vocab_size), np.fromiter(special_ids, dtype=np.int64))


def mask_tokens(token_ids, rng: np.random.Generator, *, mask_id: int = 103, vocab_size: int = 30522,
                special_ids: Iterable[int] = (0, 100, 101, 102, 103), select_rate: float = 0.15,
                mask_rate: float = 0.8, random_rate: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """BERT's masking: (masked_ids int32, selected bool), both of the shape of `token_ids`.

    Every non-special token is selected with probability `select_rate`; a selected token becomes
    `mask_id` with probability `mask_rate`, a uniformly drawn non-special id with probability
    `random_rate`, and stays as it is otherwise.
    """
    ids = np.asarray(token_ids)
    special = list(special_ids)
    selected = ~np.isin(ids, special) & (rng.random(ids.shape) < select_rate)
    action = rng.random(ids.shape)
    replace_by_mask = selected & (action < mask_rate)
    replace_by_random = selected & (action >= mask_rate) & (action < mask_rate + random_rate)
    random_ids = rng.choice(non_special_ids(vocab_size, special), size=ids.shape)
    masked = np.where(replace_by_mask, mask_id, np.where(replace_by_random, random_ids, ids))
    return masked.astype(np.int32), selected

