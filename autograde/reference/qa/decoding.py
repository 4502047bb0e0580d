"""Reference span decoding of assignment 07: `best_span` is the answer kept in course_lib.layers (one source of
truth; assignment 08 decodes with it). Over all windows it returns the n_best valid spans, best first, as dicts
{window, start, end, score}: both ends in the context, start <= end, at most max_answer_length tokens, the score the
sum of the start and the end logit; ties go to the earlier window, start and end. 1-D inputs are one window."""

from course_lib.layers import best_span

__all__ = ["best_span"]
