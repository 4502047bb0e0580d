"""Named mistakes of greedy_decode and beam_search (assignment 04), built from the reference's parts.

Greedy mistakes take (predict_next, encoder_ids, start_id, end_id, max_length); beam-search mistakes
take the same and beam_width, alpha. Wrong beam searches keep the reference's search and get the final
ranking or the reported score wrong.
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake
from autograde.reference.transformer import decoding as ref


def _least_probable(predict_next, encoder_ids, start_id, end_id, max_length):
    return ref.greedy_decode(lambda e, d: -np.asarray(predict_next(e, d)), encoder_ids, start_id, end_id, max_length)


def _beam_answer(predict_next, encoder_ids, start_id, end_id, max_length):
    """Each sentence's most probable hypothesis (summed log-probability) of a beam search of width 3, padded."""
    rows = np.zeros((len(encoder_ids), max_length), dtype=np.int32)
    for row, source in zip(rows, np.asarray(encoder_ids), strict=True):
        tokens, _ = ref.beam_search(predict_next, source[np.newaxis], start_id, end_id, max_length, 3, 0.0)[0]
        row[:len(tokens)] = tokens
    return rows


GREEDY = (
    Mistake("least_probable", "it picks the least probable token; take the argmax of the log-probabilities",
            _least_probable),
    Mistake("beam_answer", "that is the beam-search answer; greedy decoding takes the single most probable token "
            "at each step", _beam_answer),
)


def _summed(tokens, score, alpha):
    return score


def _length_plus(offset: int):
    """A normalisation whose length is off by `offset` tokens."""
    def normalised(tokens, score, alpha):
        return score / (len(tokens) + offset) ** alpha
    return normalised


def _beam_variant(rank_by, report):
    """The reference search, ranked by `rank_by(tokens, score, alpha)`, reporting `report(tokens, score, alpha)`."""
    def produce(predict_next, encoder_ids, start_id, end_id, max_length, beam_width, alpha):
        hypotheses = ref.search(predict_next, encoder_ids, start_id, end_id, max_length, beam_width)
        try:
            ranked = ref.best(hypotheses, beam_width, lambda tokens, score: rank_by(tokens, score, alpha))
            return [(tokens, report(tokens, score, alpha)) for tokens, score in ranked]
        except ZeroDivisionError as error:  # a hypothesis of length 0: that mistake crashes instead
            raise ValueError("a hypothesis of length 0") from error
    return produce


BEAM = (
    Mistake("not_normalised", "the scores are not length-normalised: divide the summed log-probability by "
            "length ** alpha", _beam_variant(_summed, _summed)),
    Mistake("ranking_not_normalised", "the final ranking uses summed log-probabilities; rank by the normalised "
            "score", _beam_variant(_summed, ref.normalised_score)),
    Mistake("scores_not_normalised", "the ranking is right but the scores returned are summed log-probabilities; "
            "return log P / length ** alpha", _beam_variant(ref.normalised_score, _summed)),
    Mistake("length_counts_start", "the length counts the start token; count only the generated tokens (end "
            "token included)", _beam_variant(_length_plus(1), _length_plus(1))),
    Mistake("length_without_end", "the length leaves out the end token; count every generated token, end token "
            "included", _beam_variant(_length_plus(-1), _length_plus(-1))),
)
