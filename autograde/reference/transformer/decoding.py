"""Reference greedy decoding and beam search (assignment 04), exactly as the notebook specifies them.

`predict_next(encoder_ids, decoder_ids)` returns next-token log-probabilities (batch, vocab) after
the last position of `decoder_ids` (batch, t). Token id 0 is padding.

The keyword flags of `beam_search` reproduce common mistakes; the hidden checks use them to say
what is wrong. They are off by default.
"""

from __future__ import annotations

import numpy as np

PAD = 0


def _log_probs(predict_next, encoder_ids, decoder_ids) -> np.ndarray:
    value = predict_next(encoder_ids, decoder_ids)
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=np.float64)


def greedy_decode(predict_next, encoder_ids, start_id: int, end_id: int, max_length: int,
                  *, pad_after_end: bool = True) -> np.ndarray:
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
        if pad_after_end:
            next_ids = np.where(finished, PAD, next_ids)
        decoder_ids = np.concatenate([decoder_ids, next_ids[:, None]], axis=1)
        finished |= next_ids == end_id
        if pad_after_end and finished.all():
            break
    result = np.full((batch, max_length), PAD, dtype=np.int32)
    result[:, :decoder_ids.shape[1] - 1] = decoder_ids[:, 1:]
    return result


def beam_search(predict_next, encoder_ids, start_id: int, end_id: int, max_length: int, beam_width: int,
                alpha: float, *, set_aside_finished: bool = True, length_offset: int = 0,
                normalise_ranking: bool = True, normalise_scores: bool = True) -> list[tuple[list[int], float]]:
    """The `beam_width` best hypotheses for one sentence (`encoder_ids` of shape (1, src_len)), best first.

    Each hypothesis is (tokens, score): tokens are the generated ids without the start token, ending
    with `end_id` if it finished; score = log P(tokens) / len(tokens) ** alpha.

    During the search live hypotheses (all of the same length) are ranked by summed log-probability;
    at every step all of their one-token extensions are sorted (stable, so ties keep the order
    beam by beam, token by token) and the best `beam_width` kept; those that end with `end_id` are
    set aside as finished, the others stay live. The search stops when no hypothesis is live or
    after `max_length` steps; finished and still-live hypotheses are then ranked together by the
    normalised score.
    """
    encoder_ids = np.asarray(encoder_ids)
    live: list[tuple[list[int], float]] = [([], 0.0)]
    finished: list[tuple[list[int], float]] = []
    for _ in range(max_length):
        prefixes = np.array([[start_id] + tokens for tokens, _ in live], dtype=np.int32)
        log_probs = _log_probs(predict_next, np.repeat(encoder_ids, len(live), axis=0), prefixes)
        candidates = [(tokens + [token], score + float(log_probs[row, token]))
                      for row, (tokens, score) in enumerate(live) for token in range(log_probs.shape[1])]
        # (with set_aside_finished=False, the mistake: a finished hypothesis stays live and keeps growing)
        order = np.argsort([-score for _, score in candidates], kind="stable")
        live = []
        for index in order[:beam_width]:
            tokens, score = candidates[index]
            if set_aside_finished and tokens[-1] == end_id:
                finished.append((tokens, score))
            else:
                live.append((tokens, score))
        if not live:
            break
    hypotheses = finished + live

    def normalised(tokens, score):
        return score / (len(tokens) + length_offset) ** alpha

    key = (lambda h: -normalised(*h)) if normalise_ranking else (lambda h: -h[1])
    ranked = sorted(hypotheses, key=key)[:beam_width]
    return [(tokens, normalised(tokens, score) if normalise_scores else score) for tokens, score in ranked]


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
