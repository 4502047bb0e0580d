"""Reference of char_span_to_token_span (assignment 07), written independently of course_lib.layers (which a test
keeps equal to it): the truth the checks grade against. Only plain Python and top-level functions, because the
grader sends `char_span_to_token_span` (with what it uses) into the student's kernel as a reference part: 07's
make_windows is graded with it in place of the learner's own.

A window is [CLS] question [SEP] context-piece [SEP] [PAD]...: `offsets[i]` is token i's characters (start, end),
end exclusive, `sequence_ids[i]` is 1 for the context's tokens. `context_tokens` and `touched` are also the
grader's helpers: which positions are context tokens, and which of them an answer's characters touch (the answer
cut by the window's edge included)."""

from __future__ import annotations


def context_tokens(sequence_ids) -> list[int]:
    """The window positions of the context tokens (sequence id 1), in order."""
    return [position for position, sequence in enumerate(sequence_ids) if sequence == 1]


def touched(offsets, sequence_ids, char_start, char_end) -> list[int]:
    """The context positions whose characters overlap [char_start, char_end), whether or not the window holds the
    whole span."""
    return [position for position in context_tokens(sequence_ids)
            if offsets[position][1] > char_start and offsets[position][0] < char_end]


def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):
    """(first, last) window positions, last included, of the context tokens (sequence id 1) that the characters
    [char_start, char_end) touch; None when the window's context does not hold the whole span."""
    context = context_tokens(sequence_ids)
    if not context:
        return None
    # The piece covers the characters from its first token's start to its last token's end; an answer that
    # sticks out on either side belongs to another window.
    held = offsets[context[0]][0] <= char_start and char_end <= offsets[context[-1]][1]
    inside = touched(offsets, sequence_ids, char_start, char_end) if held else []
    return (inside[0], inside[-1]) if inside else None
