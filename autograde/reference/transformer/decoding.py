"""Reference greedy decoding and beam search (assignment 04), exactly as the notebook specifies them.

`predict_next(encoder_ids, decoder_ids)` returns next-token log-probabilities (batch, vocab) after
the last position of `decoder_ids` (batch, t). Token id 0 is padding. The usual mistakes are built
from `search`, `best` and `normalised_score` in autograde.mistakes.transformer.decoding.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

PAD = 0

Hypothesis = tuple[list[int], float]  # generated tokens (start token excluded), a score


def _log_probs(predict_next, encoder_ids, decoder_ids) -> np.ndarray:
    value = predict_next(encoder_ids, decoder_ids)
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=np.float64)


def greedy_decode(predict_next, encoder_ids, start_id: int, end_id: int, max_length: int) -> np.ndarray:
    """(batch, max_length) int32: the most probable token at each step, start token excluded.

    A row that has produced `end_id` keeps it and gets `PAD` afterwards; the loop stops after
    `max_length` tokens or as soon as every row has ended (the rest is padding).
    """
    encoder_ids = np.asarray(encoder_ids)
    batch = encoder_ids.shape[0]
    decoder_ids = np.full((batch, 1), start_id, dtype=np.int32)
    finished = np.zeros(batch, dtype=bool)
    for _ in range(max_length):
        next_ids = _log_probs(predict_next, encoder_ids, decoder_ids).argmax(axis=-1).astype(np.int32)
        next_ids = np.where(finished, PAD, next_ids)
        decoder_ids = np.concatenate([decoder_ids, next_ids[:, None]], axis=1)
        finished |= next_ids == end_id
        if finished.all():
            break
    result = np.full((batch, max_length), PAD, dtype=np.int32)
    result[:, :decoder_ids.shape[1] - 1] = decoder_ids[:, 1:]
    return result


def search(predict_next, encoder_ids, start_id: int, end_id: int, max_length: int,
           beam_width: int) -> list[Hypothesis]:
    """The hypotheses a beam search ends with, finished ones first, each with its summed log-probability.

    Live hypotheses (all of the same length) are ranked by summed log-probability; at every step all of
    their one-token extensions are sorted (stable, so ties keep the order beam by beam, token by token)
    and the best `beam_width` kept; those that end with `end_id` are set aside as finished, the others
    stay live. The search stops when no hypothesis is live or after `max_length` steps.
    """
    encoder_ids = np.asarray(encoder_ids)
    live: list[Hypothesis] = [([], 0.0)]
    finished: list[Hypothesis] = []
    for _ in range(max_length):
        prefixes = np.array([[start_id] + tokens for tokens, _ in live], dtype=np.int32)
        log_probs = _log_probs(predict_next, np.repeat(encoder_ids, len(live), axis=0), prefixes)
        candidates = [(tokens + [token], score + float(log_probs[row, token]))
                      for row, (tokens, score) in enumerate(live) for token in range(log_probs.shape[1])]
        order = np.argsort([-score for _, score in candidates], kind="stable")
        live = []
        for index in order[:beam_width]:
            tokens, score = candidates[index]
            (finished if tokens[-1] == end_id else live).append((tokens, score))
        if not live:
            break
    return finished + live


def normalised_score(tokens: list[int], score: float, alpha: float) -> float:
    """log P(tokens) / len(tokens) ** alpha: the length counts every generated token, end token included."""
    return score / len(tokens) ** alpha


def best(hypotheses: list[Hypothesis], beam_width: int,
         rank_by: Callable[[list[int], float], float]) -> list[Hypothesis]:
    """The `beam_width` hypotheses with the highest `rank_by(tokens, score)`, best first (stable on ties)."""
    return sorted(hypotheses, key=lambda hypothesis: -rank_by(*hypothesis))[:beam_width]


def beam_search(predict_next, encoder_ids, start_id: int, end_id: int, max_length: int, beam_width: int,
                alpha: float) -> list[Hypothesis]:
    """The `beam_width` best hypotheses for one sentence (`encoder_ids` of shape (1, src_len)), best first.

    Each hypothesis is (tokens, score): tokens are the generated ids without the start token, ending
    with `end_id` if it finished; score = log P(tokens) / len(tokens) ** alpha. Finished and still-live
    hypotheses of `search` are ranked together by that normalised score.
    """
    def normalised(tokens, score):
        return normalised_score(tokens, score, alpha)

    hypotheses = search(predict_next, encoder_ids, start_id, end_id, max_length, beam_width)
    return [(tokens, normalised(tokens, score)) for tokens, score in best(hypotheses, beam_width, normalised)]


def toy_predict_next(seed: int, vocab_size: int, start_id: int, end_id: int, *, end_bias: float = 0.6,
                     scale: float = 2.0):
    """A seeded toy model: log-probabilities that depend on the whole encoder row and decoder prefix.

    The padding and start ids get about -30 (never chosen); the end token becomes more likely as the
    prefix grows, so hypotheses end at different lengths. Values are continuous, so no ties.
    """

    def predict_next(encoder_ids, decoder_ids):
        encoder_ids = np.asarray(encoder_ids.numpy() if hasattr(encoder_ids, "numpy") else encoder_ids)
        decoder_ids = np.asarray(decoder_ids.numpy() if hasattr(decoder_ids, "numpy") else decoder_ids)
        rows = []
        for source, prefix in zip(encoder_ids, decoder_ids, strict=True):
            entropy = [seed, *(int(i) for i in source), 10**6, *(int(i) for i in prefix)]
            logits = scale * np.random.default_rng(np.random.SeedSequence(entropy)).standard_normal(vocab_size)
            logits[end_id] += end_bias * (len(prefix) - 1)
            logits[PAD] = logits[start_id] = -30.0
            rows.append(logits - np.logaddexp.reduce(logits))
        return np.array(rows)

    return predict_next
