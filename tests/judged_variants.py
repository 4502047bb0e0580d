"""Each assignment's variants judged once per pytest process, in one sandboxed kernel as grading judges them
(autograde.variants.judge_variants, at a grading-time seed).

tests/test_variants.py checks every verdict; tests/test_exercises.py takes each wrong variant's hidden-check message
from here instead of running that check a second time in its own process. Both put an assignment's tests in the
xdist group `group(stem)`, so one worker judges its variants once.
"""

from __future__ import annotations

import functools

import pytest
from graded_batches import SEED

from autograde.judge import CellResult
from autograde.variants import judge_variants


def group(stem: str):
    return pytest.mark.xdist_group(f"variants-{stem}")


def key(variant) -> tuple[str, str]:
    return variant.name, variant.what


@functools.cache
def judged(stem: str) -> dict[tuple[str, str], tuple[object, CellResult]]:
    """(variant, its hidden check's result) by `key`, for every variant of `stem`."""
    outcomes = judge_variants(stem, seed=SEED)
    by_key = {key(variant): (variant, result) for variant, result in outcomes}
    assert len(by_key) == len(outcomes), f"{stem}: two variants of one exercise say the same `what`"
    return by_key


def hidden_message(variant, stem: str) -> str:
    """What the hidden check said of `variant` when graded: "" for full points."""
    _, result = judged(stem)[key(variant)]
    return "" if result.score == result.max_score else result.message
