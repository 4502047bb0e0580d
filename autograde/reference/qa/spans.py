"""Reference of char_span_to_token_span (assignment 07): the answer in course_lib.layers, the one source of truth,
named here for the registry and defined as a function of this module so that the grader can send it into the
student's kernel as a reference part (make_windows is graded with it in place of the learner's own).

`context_tokens` and `touched` are the grader's helpers: which window positions are context tokens, and which of
them an answer's characters touch (the answer cut by the window's edge included)."""

from __future__ import annotations

from course_lib.layers import char_span_to_token_span as answer


def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):
    """(first, last) window positions, last included, of the context tokens (sequence id 1) that the characters
    [char_start, char_end) touch; None when the window's context does not hold the whole span."""
    return answer(offsets, sequence_ids, char_start, char_end)


def context_tokens(sequence_ids) -> list[int]:
    """The window positions of the context tokens (sequence id 1), in order."""
    return [position for position, sequence in enumerate(sequence_ids) if sequence == 1]


def touched(offsets, sequence_ids, char_start, char_end) -> list[int]:
    """The context positions whose characters overlap [char_start, char_end), whether or not the window holds the
    whole span."""
    return [position for position in context_tokens(sequence_ids)
            if offsets[position][1] > char_start and offsets[position][0] < char_end]
