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


def _greedy_with(start=None, end=None):
    """Greedy decoding with the start or end id written as the toy model's number instead of the argument."""
    def produce(predict_next, encoder_ids, start_id, end_id, max_length):
        return ref.greedy_decode(predict_next, encoder_ids, start_id if start is None else start,
                                 end_id if end is None else end, max_length)
    return produce


def _beam_with(start=None, end=None):
    """Beam search with the start or end id written as the toy model's number instead of the argument."""
    def produce(predict_next, encoder_ids, start_id, end_id, max_length, beam_width, alpha):
        return ref.beam_search(predict_next, encoder_ids, start_id if start is None else start,
                               end_id if end is None else end, max_length, beam_width, alpha)
    return produce


IDS_WRITTEN_IN = {  # mistake name -> (start id, end id) written into the code; None: the argument is used
    "end_id_written_in": (None, 2),
    "start_id_written_in": (1, None),
    "both_ids_written_in": (1, 2),
}
IDS_MESSAGES = {
    "end_id_written_in": "the result is what end_id = 2 gives: use the argument end_id, never the number 2",
    "start_id_written_in": "the result is what start_id = 1 gives: start every row with the argument start_id, never "
                           "the number 1",
    "both_ids_written_in": "the result is what start_id = 1 and end_id = 2 give: use the arguments start_id and "
                           "end_id, never the numbers 1 and 2",
}
# Compared with a result before its shape and padding are (only where the check's ids are not 1 and 2).
GREEDY_IDS = tuple(Mistake(name, IDS_MESSAGES[name], _greedy_with(*ids)) for name, ids in IDS_WRITTEN_IN.items())
BEAM_IDS = tuple(Mistake(name, IDS_MESSAGES[name], _beam_with(*ids)) for name, ids in IDS_WRITTEN_IN.items())
