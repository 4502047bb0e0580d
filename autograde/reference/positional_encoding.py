"""NumPy reference for assignment 01: the sinusoidal positional encoding of Vaswani et al. (2017),
section 3.5: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))."""

from __future__ import annotations

import numpy as np


def angle_rates(k, d: int) -> np.ndarray:
    """1 / 10000^(2*(k//2)/d): dimensions 2i and 2i+1 share the frequency of pair i."""
    pair = np.floor_divide(np.asarray(k, dtype=np.int64), 2)
    return np.power(10000.0, -2.0 * pair / d)


def get_angles(pos, k, d: int) -> np.ndarray:
    """Angles (P, D) for positions `pos` (P, 1) and dimension indices `k` (1, D)."""
    return np.asarray(pos, dtype=np.float64) * angle_rates(k, d)


def positional_encoding(positions: int, d: int) -> np.ndarray:
    """Encoding of shape (1, positions, d): sine on even dimensions, cosine on odd ones."""
    dims = np.arange(d)[np.newaxis, :]
    angles = get_angles(np.arange(positions)[:, np.newaxis], dims, d)
    encoding = np.where(dims % 2 == 0, np.sin(angles), np.cos(angles))
    return encoding[np.newaxis, :, :]
