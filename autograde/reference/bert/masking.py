"""Reference masked-language-model masking in plain NumPy (assignment 05): BERT's 80/10/10 rule."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


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

