"""Reference span decoding of assignment 07, written independently of course_lib.layers (which a test keeps equal
to it; assignment 08 decodes with that one): the truth the checks grade against.

Over all windows `best_span` returns the n_best valid spans, best first, as dicts {window, start, end, score}: both
ends in the context, start <= end, at most max_answer_length tokens, the score the sum of the start and the end
logit (in float64); ties go to the earlier window, start and end. 1-D inputs are one window."""

from __future__ import annotations

import numpy as np

__all__ = ["best_span"]


def best_span(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20):
    """The n_best valid spans over all windows, best first: dicts with window, start, end (inclusive), score."""
    start = np.atleast_2d(np.array(start_logits, dtype=np.float64))
    end = np.atleast_2d(np.array(end_logits, dtype=np.float64))
    mask = np.atleast_2d(np.array(context_mask, dtype=bool))
    # Every (window, start, end) at once: the score of a pair is start[w, s] + end[w, e], (windows, seq, seq).
    scores = start[:, :, None] + end[:, None, :]
    s, e = np.indices(scores.shape[1:])
    valid = mask[:, :, None] & mask[:, None, :] & (s <= e) & (e - s < max_answer_length)
    windows, starts, ends = np.nonzero(valid)
    kept = scores[windows, starts, ends]
    order = np.lexsort((ends, starts, windows, -kept))  # the last key sorts first
    spans = [{"window": int(windows[i]), "start": int(starts[i]), "end": int(ends[i]), "score": float(kept[i])}
             for i in order]
    return spans[:n_best]
