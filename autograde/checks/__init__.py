"""The hidden checks: each compares a learner's function (running in the student's sandboxed kernel) with
the reference on random inputs of several shapes, in the grader's process, and says what is wrong.

Inputs come from `rng(n)` and `seed_of(n)`: the same `n` gives the same inputs within one grading run, and a
grading run draws them from its own seed (`use_seed`), chosen when grading starts, so a submission cannot
be tuned to known inputs.
"""

from __future__ import annotations

import numpy as np

_seed: list[int] = []


def use_seed(seed: int | None) -> None:
    """Draw every check's inputs from `seed` (None: the fixed inputs used by the unit tests)."""
    _seed[:] = [] if seed is None else [int(seed)]


def seed_of(n: int) -> int:
    """A 32-bit seed for the check's input number `n`, under the grading run's seed."""
    if not _seed:
        return n
    return int(np.random.SeedSequence([*_seed, n]).generate_state(1)[0])


def rng(n: int) -> np.random.Generator:
    return np.random.default_rng(seed_of(n))
