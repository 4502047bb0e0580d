"""Named mistakes of best_span (assignment 07).

SPANS: each takes best_span's arguments (start_logits, end_logits, context_mask, max_answer_length, n_best) and gives
the list of dicts {window, start, end, score} that an implementation with that mistake returns. They are written
with one search (`_search`) whose rules each mistake bends: which positions may start or end a span, which lengths
fit, which windows are searched, how spans are scored and ranked, how positions are reported.
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake


def _inputs(start_logits, end_logits, context_mask):
    start = np.atleast_2d(np.asarray(start_logits, dtype=np.float64))
    end = np.atleast_2d(np.asarray(end_logits, dtype=np.float64))
    return start, end, np.atleast_2d(np.asarray(context_mask)).astype(bool)


def _softmax(rows: np.ndarray) -> np.ndarray:
    shifted = np.exp(rows - rows.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _search(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20, *, positions=None, fits=None,
            windows=None, score=None, order="best first", reported=None):
    """best_span with one or more of its rules replaced:
    positions(mask_row) -> the positions a span may use; fits(start, end, max_answer_length) -> bool;
    windows(count) -> the windows searched; score(start, end) -> (start_scores, end_scores, combine) arrays and how
    to combine them; order: "best first", "worst first", "best last" or "ties to the later"; reported(window, start,
    end, seq, mask) -> the (start, end) returned."""
    start, end, mask = _inputs(start_logits, end_logits, context_mask)
    positions = positions or np.flatnonzero
    fits = fits or (lambda first, last, longest: first <= last < first + longest)
    start_scores, end_scores, combine = score(start, end) if score else (start, end, float.__add__)
    spans = []
    for window in (windows or range)(start.shape[0]):
        allowed = positions(mask[window])
        for first in allowed:
            for last in allowed:
                if fits(int(first), int(last), max_answer_length):
                    value = combine(float(start_scores[window, first]), float(end_scores[window, last]))
                    spans.append((value, window, int(first), int(last)))
    if order == "ties to the later":
        spans.sort(key=lambda span: (-span[0], -span[1], -span[2], -span[3]))
    else:
        spans.sort(key=lambda span: (-span[0], span[1], span[2], span[3]))
    if order == "worst first":
        spans = spans[::-1][:n_best]
    elif order == "best last":
        spans = spans[:n_best][::-1]
    elif n_best is not None:
        spans = spans[:n_best]
    report = reported or (lambda window, first, last, seq, row: (first, last))
    return [dict(zip(("window", "start", "end"), (window, *report(window, first, last, start.shape[1], mask[window])),
                     strict=True), score=value) for value, window, first, last in spans]


def _independent_argmax(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20):
    """Per window, the best start and the best end in the context, each on its own."""
    start, end, mask = _inputs(start_logits, end_logits, context_mask)
    spans = []
    for window in range(start.shape[0]):
        inside = np.flatnonzero(mask[window])
        if inside.size:
            first = int(inside[np.argmax(start[window, inside])])
            last = int(inside[np.argmax(end[window, inside])])
            spans.append((float(start[window, first] + end[window, last]), window, first, last))
    spans.sort(key=lambda span: (-span[0], span[1]))
    return [{"window": w, "start": s, "end": e, "score": value} for value, w, s, e in spans[:n_best]]


def _softmax_scores(start, end):
    return _softmax(start), _softmax(end), float.__mul__


def _context_relative(window, first, last, seq, row):
    offset = int(np.flatnonzero(row)[0])
    return first - offset, last - offset


SPANS = (
    Mistake("end_before_start", "spans that end before they start are among the results: a valid span has "
            "start <= end (and at most max_answer_length tokens, end - start + 1)",
            lambda *args: _search(*args, fits=lambda first, last, longest: last - first < longest)),
    Mistake("one_token_too_many", "spans of max_answer_length + 1 tokens are allowed: a span from start to end "
            "(both included) has end - start + 1 tokens, at most max_answer_length",
            lambda *args: _search(*args, fits=lambda first, last, longest: first <= last <= first + longest)),
    Mistake("one_token_too_few", "spans of exactly max_answer_length tokens are left out: a span from start to end "
            "(both included) has end - start + 1 tokens, and max_answer_length of them are allowed",
            lambda *args: _search(*args, fits=lambda first, last, longest: first <= last < first + longest - 1)),
    Mistake("context_mask_ignored", "spans outside the context are among the results ([CLS], the question, [SEP] or "
            "padding): the context mask is ignored. Both ends must be context tokens (context_mask 1)",
            lambda *args: _search(*args, positions=lambda row: np.arange(row.size))),
    Mistake("cls_allowed", "the [CLS] token (position 0) may start or end a span: keep only context tokens "
            "(context_mask 1), [CLS] is not one of them",
            lambda *args: _search(*args, positions=lambda row: np.union1d([0], np.flatnonzero(row)))),
    Mistake("independent_argmax", "the best start and the best end are chosen each on its own (two argmax): their "
            "span may end before it starts or be too long. Score every valid (start, end) pair, start + end, and "
            "rank the pairs", _independent_argmax),
    Mistake("first_window_only", "only the first window is searched: the answer may be in any window. Loop over "
            "every row of the logits", lambda *args: _search(*args, windows=lambda count: range(min(count, 1)))),
    Mistake("softmax_product", "the scores are products of softmax probabilities (of each window's start and end "
            "logits): the score is the sum of the two logits, start_logits + end_logits, which also ranks spans of "
            "different windows on one scale", lambda *args: _search(*args, score=_softmax_scores)),
    Mistake("n_best_ignored", "every valid span is returned: keep only the n_best best",
            lambda *args: _search(*args[:4], n_best=None)),
    Mistake("flattened_positions", "start and end count over all windows laid end to end (window * seq + position): "
            "give each span's window and its positions inside that window",
            lambda *args: _search(*args, reported=lambda w, first, last, seq, row: (w * seq + first, w * seq + last))),
    Mistake("context_relative_positions", "start and end count from the window's first context token: they are "
            "positions in the window, the index into its row of logits", lambda *args: _search(
                *args, reported=lambda w, first, last, seq, row: _context_relative(w, first, last, seq, row))),
    Mistake("worst_first", "these are the n_best worst spans, worst first: rank the spans from the highest score "
            "down, then keep the first n_best", lambda *args: _search(*args, order="worst first")),
    Mistake("best_last", "the right spans, in the wrong order: the best comes first (sort by score, highest first)",
            lambda *args: _search(*args, order="best last")),
    Mistake("ties_to_the_later", "spans of equal score are in the wrong order: ties go to the earlier window, then "
            "the earlier start, then the earlier end", lambda *args: _search(*args, order="ties to the later")),
)
