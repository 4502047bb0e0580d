"""Assignment 05, masked language modelling: the visible check of `mask_tokens` and its diagnostics.

The check runs the learner's function on random batches (its rules exactly, its rates statistically) and on
two short sequences with rates of 0 and 1, whose answers are generated from the reference
(`course_lib/expected/05_bert.json`). The diagnostics (`run_masking`, `inspect_masking`,
`check_masking_statistics`, `expect_reproducible`) are shared with the hidden check in
autograde.checks.bert.masking; `masking_rates`, `format_rates` and `random_token_batch` also serve the notebook.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from course_lib.bert.inputs import BERT_CLS, BERT_MASK, BERT_PAD, BERT_SEP
from course_lib.checking import CheckFailed, call_learner, passed
from course_lib.expected import load as load_expected

STEM = "05_bert"
SIGMAS = 6.0  # a correct function misses a rate by more than this many standard deviations ~1e-9 of the time

# ----------------------------------------------------------------------------------------------
# mask_tokens: shared diagnostics


def random_token_batch(rng: np.random.Generator, batch: int, length: int, *, vocab_size: int = 30522,
                       cls_id: int = BERT_CLS, sep_id: int = BERT_SEP, pad_id: int = BERT_PAD,
                       word_ids: Sequence[int] | None = None, unk_id: int | None = None,
                       min_real: int = 8) -> np.ndarray:
    """Random int64 ids (batch, length) shaped like BERT input: [CLS] first, a [SEP] somewhere inside and one
    closing the real tokens, padding after them, a few `unk_id`s, and words drawn from `word_ids`
    (default: ids 1000 .. vocab_size - 1, clear of BERT's special and unused ids)."""
    words = np.arange(1000, vocab_size) if word_ids is None else np.asarray(word_ids)
    ids = rng.choice(words, size=(batch, length))
    real = rng.integers(min_real, length + 1, size=batch)  # tokens before the padding
    rows = np.arange(batch)
    ids[:, 0] = cls_id
    ids[rows, rng.integers(2, real - 1)] = sep_id
    ids[rows, real - 1] = sep_id
    if unk_id is not None:
        ids[(rng.random(ids.shape) < 0.01) & (np.arange(length) > 0) & (ids != sep_id)] = unk_id
    ids[np.arange(length)[None, :] >= real[:, None]] = pad_id
    return ids


def _generator_states():
    return np.random.get_state(), random.getstate()


def run_masking(mask_tokens, token_ids: np.ndarray, seed: int, **kwargs):
    """Call the learner's mask_tokens with a fresh np.random.default_rng(seed).

    Fails if it changes token_ids in place or touches the global generators (np.random, random).
    """
    original = np.array(token_ids, copy=True)
    (np_state, py_state) = _generator_states()
    try:
        result = call_learner(mask_tokens, token_ids, np.random.default_rng(seed), **kwargs)
        np_after, py_after = _generator_states()
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)
    if not np.array_equal(token_ids, original):
        raise CheckFailed("mask_tokens changed token_ids in place: work on a copy (np.array(token_ids) or "
                          "token_ids.copy()); the original ids are the labels of the prediction")
    same_np = np_after[0] == np_state[0] and np.array_equal(np_after[1], np_state[1]) and all(
        a == b for a, b in zip(np_after[2:], np_state[2:], strict=True))
    if not same_np:
        raise CheckFailed("mask_tokens used NumPy's global generator (np.random.rand, np.random.choice, "
                          "np.random.seed, ...): draw every random number from the rng argument (rng.random, "
                          "rng.integers, rng.choice), so that the same generator gives the same masking")
    if py_after != py_state:
        raise CheckFailed("mask_tokens used Python's random module: draw every random number from the rng "
                          "argument (rng.random, rng.integers, rng.choice)")
    return result


def _output_array(value, name: str, shape: tuple[int, ...], dtype, how: str) -> np.ndarray:
    if value is None:
        raise CheckFailed(f"{name} is None: did you forget to return it?")
    if not isinstance(value, np.ndarray):
        kind = "a TensorFlow tensor" if hasattr(value, "numpy") else f"a {type(value).__name__}"
        raise CheckFailed(f"{name} should be a NumPy array, got {kind}")
    if value.dtype != dtype:
        raise CheckFailed(f"{name} has dtype {value.dtype}, expected {np.dtype(dtype)}: {how}")
    if value.shape != shape:
        raise CheckFailed(f"{name} has shape {value.shape}, expected {shape}, the shape of token_ids")
    return value


def _position(index) -> str:
    return str(tuple(int(i) for i in index)) if len(index) > 1 else str(int(index[0]))


def inspect_masking(result, original, *, mask_id: int, vocab_size: int,
                    special_ids: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """The invariants, exactly: types and shapes; special ids and padding never selected nor changed;
    positions not selected unchanged; selected ones [MASK], a non-special id in range, or unchanged."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise CheckFailed(f"mask_tokens should return a pair (masked_ids, selected), got {type(result).__name__}")
    original = np.asarray(original)
    masked = _output_array(result[0], "masked_ids", original.shape, np.int32, "convert with .astype(np.int32)")
    selected = _output_array(result[1], "selected", original.shape, np.bool_,
                             "a boolean array, True where a token was chosen for prediction")
    special = np.isin(original, list(special_ids))

    wrong = selected & special
    if wrong.any():
        first = np.argwhere(wrong)[0]
        raise CheckFailed(
            f"selected is True at {int(wrong.sum())} special or padding positions (e.g. id {original[tuple(first)]} "
            f"at position {_position(first)}): only tokens whose id is not in special_ids may be chosen, "
            "select_rate of the other tokens, never [CLS], [SEP] or [PAD]")
    changed = masked != original
    wrong = changed & ~selected
    if wrong.any():
        first = tuple(np.argwhere(wrong)[0])
        what = "special or padding" if special[first] else "word"
        raise CheckFailed(
            f"{int(wrong.sum())} positions that are not selected were changed (e.g. the {what} id {original[first]} "
            f"at position {_position(first)} became {masked[first]}): replace only selected tokens, and mark "
            "every token chosen for prediction as selected, whether it becomes [MASK], a random id or stays "
            "unchanged")
    random_ids = masked[selected & changed & (masked != mask_id)]
    outside = random_ids[(random_ids < 0) | (random_ids >= vocab_size)]
    if outside.size:
        raise CheckFailed(f"a random replacement is {outside[0]}, outside range(vocab_size={vocab_size})")
    drawn_special = random_ids[np.isin(random_ids, list(special_ids))]
    if drawn_special.size:
        raise CheckFailed(
            f"{drawn_special.size} random replacement{'s are' if drawn_special.size > 1 else ' is a'} special "
            f"id{'s' if drawn_special.size > 1 else ''} (e.g. {drawn_special[0]}): draw random ids from the "
            "non-special ids of range(vocab_size) only")
    return masked, selected


def expect_reproducible(mask_tokens, token_ids, seed: int, **kwargs) -> None:
    """The same seed gives the same result; another seed a different one (the rng is really used)."""
    first, second, other = (run_masking(mask_tokens, token_ids, s, **kwargs) for s in (seed, seed, seed + 1))
    if not all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(first, second, strict=True)):
        raise CheckFailed(f"two calls with np.random.default_rng({seed}) gave different results: draw every random "
                          "number from the rng argument, so that the masking can be reproduced")
    if np.array_equal(np.asarray(first[1]), np.asarray(other[1])):
        raise CheckFailed(f"np.random.default_rng({seed}) and np.random.default_rng({seed + 1}) gave the same "
                          "selection: draw the random numbers from the rng argument, not from a generator of your own")


def masking_rates(original, masked, selected, *, mask_id: int, special_ids: Iterable[int]) -> dict[str, float]:
    """Measured rates: "selected" among the non-special tokens; "mask", "random" and "unchanged" among the
    selected ones. A token replaced at random by its own id cannot be told apart, so it counts as unchanged."""
    original, masked = np.asarray(original), np.asarray(masked)
    selected = np.asarray(selected, dtype=bool)
    candidates = int((~np.isin(original, list(special_ids))).sum())
    chosen = int(selected.sum())
    became_mask = int((selected & (masked == mask_id)).sum())
    unchanged = int((selected & (masked == original)).sum())
    return {
        "selected": chosen / max(candidates, 1),
        "mask": became_mask / max(chosen, 1),
        "random": (chosen - became_mask - unchanged) / max(chosen, 1),
        "unchanged": unchanged / max(chosen, 1),
    }


def non_special_count(vocab_size: int, special_ids: Iterable[int]) -> int:
    """How many ids a random replacement may take."""
    return vocab_size - len({int(i) for i in special_ids if 0 <= int(i) < vocab_size})


def expected_rates(select_rate: float, mask_rate: float, random_rate: float, choices: int) -> dict[str, float]:
    """What `masking_rates` measures on average: a random draw equals the original id 1 time in `choices`."""
    random_visible = random_rate * (1 - 1 / choices)
    return {"selected": select_rate, "mask": mask_rate, "random": random_visible,
            "unchanged": 1.0 - mask_rate - random_visible}


def format_rates(rates: Mapping[str, float]) -> str:
    """One line: the selection rate, then what became of the selected tokens."""
    return (f"selected {100 * rates['selected']:.2f}% of the non-special tokens; of those "
            f"[MASK] {100 * rates['mask']:.2f}%, random {100 * rates['random']:.2f}%, "
            f"unchanged {100 * rates['unchanged']:.2f}%")


def _tolerance(p: float, n: int) -> float:
    return SIGMAS * math.sqrt(max(p * (1 - p), 0.0) / max(n, 1)) + 1e-9


def _within(measured: Mapping[str, float], target: Mapping[str, float], counts: Mapping[str, int]) -> bool:
    for name, p in target.items():
        n = counts["candidates"] if name == "selected" else counts["selected"]
        if abs(measured[name] - p) > max(_tolerance(p, n), _tolerance(measured[name], n)):
            return False
    return True


def rate_mistakes(select_rate: float, mask_rate: float, random_rate: float, choices: int,
                  counts: Mapping[str, int]) -> list[tuple[dict[str, float], str]]:
    """Rates that the usual mistakes produce, each with its explanation; rates left out keep their
    expected values."""

    def outcome(mask: float, random_share: float) -> dict[str, float]:  # of the selected tokens
        visible = random_share * (1 - 1 / choices)
        return {"mask": mask, "random": visible, "unchanged": 1.0 - mask - visible}

    per_selected = f"{mask_rate:.0%} [MASK], {random_rate:.0%} random, {1 - mask_rate - random_rate:.0%} unchanged"
    one_draw = ("draw one number u per selected token: u < mask_rate gives [MASK], "
                "mask_rate <= u < mask_rate + random_rate a random id, anything else leaves the token")
    mistakes = [
        ({"selected": select_rate * counts["positions"] / counts["candidates"]},
         f"it selects {select_rate:.0%} of all positions, special tokens and padding included; select each "
         "token that is not special with probability select_rate (or round(select_rate * n) of the n non-special "
         "tokens of each sequence)"),
        ({"selected": select_rate * counts["real_positions"] / counts["candidates"]},
         f"it selects {select_rate:.0%} of the tokens counting [CLS] and [SEP]; the rate is of the non-special "
         "tokens (n is the number of tokens that can be selected)"),
        ({"selected": 1.0}, f"every real token was selected: first select {select_rate:.0%} of them, then "
                            f"apply {per_selected} to the selected ones only"),
        (outcome(1.0, 0.0), f"every selected token became [MASK]: of the selected, {per_selected}"),
        (outcome(random_rate, mask_rate), f"the [MASK] and random rates are swapped: of the selected, {per_selected}"),
        (outcome(mask_rate, (1 - mask_rate) * random_rate),
         f"random replacements are too rare: random_rate applies to all selected tokens, not only to those "
         f"left after masking; {one_draw}"),
        (outcome(mask_rate, 0.0), f"no token was replaced by a random id: {one_draw}"),
    ]
    defaults = (0.15, 0.8, 0.1)
    if (select_rate, mask_rate, random_rate) != defaults:
        mistakes += [
            ({"selected": 0.15, **outcome(0.8, 0.1)}, f"the rates are written into the code: use the arguments "
             f"select_rate={select_rate}, mask_rate={mask_rate} and random_rate={random_rate}, not 0.15, 0.8, 0.1"),
            ({"selected": 0.15}, f"select_rate is ignored: it is {select_rate} here, not 0.15"),
            (outcome(0.8, 0.1), f"mask_rate and random_rate are ignored: they are {mask_rate} and {random_rate} "
                                "here, not 0.8 and 0.1"),
        ]
    return mistakes


def expect_masking_rates(measured: Mapping[str, float], counts: Mapping[str, int], *, select_rate: float,
                         mask_rate: float, random_rate: float, choices: int, label: str) -> None:
    """The measured rates agree with the requested ones within 6 binomial standard deviations.

    `counts`: "candidates" (non-special tokens), "selected", "positions" (all, padding included) and
    "real_positions" (all but padding).
    """
    if counts["selected"] == 0 and select_rate > 0:
        raise CheckFailed(f"[{label}] no token was selected out of {counts['candidates']}: select each non-special "
                          f"token with probability select_rate={select_rate}")
    expected = expected_rates(select_rate, mask_rate, random_rate, choices)
    if _within(measured, expected, counts):
        return
    for target, explanation in rate_mistakes(select_rate, mask_rate, random_rate, choices, counts):
        if _within(measured, {**expected, **target}, counts):
            raise CheckFailed(f"[{label}] {explanation} (measured: {format_rates(measured)})")
    raise CheckFailed(
        f"[{label}] the rates are off: measured {format_rates(measured)}; expected {format_rates(expected)} "
        f"(within {SIGMAS:g} standard deviations; with {counts['candidates']} tokens that is ±"
        f"{100 * _tolerance(select_rate, counts['candidates']):.2f} points for the selection)")


def masking_counts(original, selected, *, special_ids: Iterable[int], pad_id: int) -> dict[str, int]:
    """What the rates are measured on: non-special tokens, selected tokens, all positions, non-padding ones."""
    original = np.asarray(original)
    return {"candidates": int((~np.isin(original, list(special_ids))).sum()), "selected": int(np.sum(selected)),
            "positions": int(original.size), "real_positions": int((original != pad_id).sum())}


def check_masking_statistics(mask_tokens, token_ids, seed: int, *, label: str, mask_id: int, vocab_size: int,
                             special_ids: Sequence[int], pad_id: int, select_rate: float = 0.15,
                             mask_rate: float = 0.8, random_rate: float = 0.1) -> dict[str, float]:
    """Run the learner's function once: invariants exactly, then the rates statistically; return the rates."""
    rates = {"select_rate": select_rate, "mask_rate": mask_rate, "random_rate": random_rate}
    try:
        result = run_masking(mask_tokens, token_ids, seed, mask_id=mask_id, vocab_size=vocab_size,
                             special_ids=special_ids, **rates)
        masked, selected = inspect_masking(result, token_ids, mask_id=mask_id, vocab_size=vocab_size,
                                           special_ids=special_ids)
    except CheckFailed as failure:
        raise CheckFailed(f"[{label}] {failure}") from None
    measured = masking_rates(token_ids, masked, selected, mask_id=mask_id, special_ids=special_ids)
    counts = masking_counts(token_ids, selected, special_ids=special_ids, pad_id=pad_id)
    expect_masking_rates(measured, counts, choices=non_special_count(vocab_size, special_ids), label=label, **rates)
    return measured


# ----------------------------------------------------------------------------------------------
# mask_tokens: the visible check

# BERT's vocabulary: [MASK], its size, and the special ids [PAD], [UNK], [CLS], [SEP], [MASK].
BERT_MASKING = {"mask_id": BERT_MASK, "vocab_size": 30522,
                "special_ids": (BERT_PAD, 100, BERT_CLS, BERT_SEP, BERT_MASK)}
# "[CLS] be alert ! [SEP] bert will hurt ! [SEP]" and "[CLS] hello world [SEP] yes [SEP]" in BERT's vocabulary.
TWO_SENTENCES = [[101, 2022, 9499, 999, 102, 14324, 2097, 3480, 999, 102],
                 [101, 7592, 2088, 102, 2748, 102, 0, 0, 0, 0]]
# Rates whose answer on TWO_SENTENCES is certain (select_rate, mask_rate, random_rate); the answers are generated
# by the reference (autograde/expected/bert/masking.py).
CERTAIN_RATES = {"select_rate=1, mask_rate=1, random_rate=0": (1.0, 1.0, 0.0),
                 "select_rate=1, mask_rate=0, random_rate=0": (1.0, 0.0, 0.0)}


def check_mask_tokens(mask_tokens) -> None:
    """Invariants and rates on 1,000 random sequences and on a 10-id vocabulary, then rates of 0 and 1 with
    known answers."""
    ids = random_token_batch(np.random.default_rng(2), 1000, 24)
    rates = check_masking_statistics(mask_tokens, ids, 2, label="1,000 random sequences of 24 ids, default rates",
                                     pad_id=BERT_PAD, **BERT_MASKING)
    expect_reproducible(mask_tokens, ids, 2, **BERT_MASKING)

    small = {"mask_id": 3, "vocab_size": 10, "special_ids": (0, 1, 2, 3), "pad_id": 0}
    words = random_token_batch(np.random.default_rng(1), 100, 12, vocab_size=10, cls_id=1, sep_id=2, pad_id=0,
                               word_ids=range(4, 10))
    check_masking_statistics(mask_tokens, words, 1, label="vocab_size=10 (special ids 0-3), every word replaced at "
                             "random", select_rate=1.0, mask_rate=0.0, random_rate=1.0, **small)

    for label, rates_given in CERTAIN_RATES.items():
        rates_given = dict(zip(("select_rate", "mask_rate", "random_rate"), rates_given, strict=True))
        expected = load_expected(STEM, "masking", label)
        token_ids = np.array(TWO_SENTENCES)
        result = run_masking(mask_tokens, token_ids, 0, **rates_given, **BERT_MASKING)
        masked, selected = inspect_masking(result, token_ids, **BERT_MASKING)
        if not np.array_equal(selected, expected["selected"].astype(bool)):
            raise CheckFailed(f"[{label} on two short sequences] every word must be selected, and no special "
                              f"token; got selected =\n{selected.astype(int)}")
        if not np.array_equal(masked, expected["masked_ids"]):
            raise CheckFailed(f"[{label} on two short sequences] expected masked_ids =\n"
                              f"{expected['masked_ids'].astype(np.int64)}\ngot\n{masked}")
    passed(f"mask_tokens keeps special tokens and padding, and on 1,000 x 24 ids {format_rates(rates)}")
