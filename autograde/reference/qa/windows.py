"""Reference of make_windows (assignment 07), written independently of course_lib.layers (which a test keeps equal
to it): the truth the checks grade against. It cuts a question and context pair as the tokenizers library does with
truncation "only_second", a stride and padding (tests/test_07_qa_windows.py compares the two), and places an answer
with the reference char_span_to_token_span. `room` and `plain_window` are the grader's helpers."""

from __future__ import annotations

from autograde.reference.qa.spans import char_span_to_token_span
from course_lib.qa.windows import plain_window, room

__all__ = ["make_windows", "plain_window", "room"]


def piece_starts(context_length: int, room: int, stride: int) -> list[int]:
    """Where each window's piece of the context begins: every `room - stride` tokens, until a piece reaches the
    end (one piece, possibly empty, for a context that fits)."""
    starts = [0]
    while starts[-1] + room < context_length:
        starts.append(starts[-1] + room - stride)
    return starts


def make_windows(question_ids, context_ids, context_offsets, max_length, stride, *, answer=None, cls_id=101,
                 sep_id=102, pad_id=0):
    """One dict per window: input_ids, token_type_ids, attention_mask, sequence_ids (None for special tokens and
    padding), offsets (None where sequence_ids is not 1), context_start and, with `answer` (char_start, char_end),
    start_position and end_position (0, 0 when the piece does not hold the whole answer)."""
    question = [int(token) for token in question_ids]
    space = room(question, max_length)
    if space < 1:
        raise ValueError(f"a question of {len(question)} tokens leaves no room for the context in {max_length} "
                         "tokens")
    if stride < 0 or stride >= space:
        raise ValueError(f"stride {stride} must be at least 0 and smaller than the room for the context ({space})")
    windows = []
    for start in piece_starts(len(context_ids), space, stride):
        end = min(start + space, len(context_ids))
        piece = [int(context_ids[i]) for i in range(start, end)]
        used = len(question) + len(piece) + 3
        padding = max_length - used
        # Segments: [CLS] question [SEP] is 0, piece [SEP] is 1, padding is 0 again (as BERT's tokenizers do).
        roles = ["special", *["question"] * len(question), "special", *["context"] * len(piece), "special",
                 *["padding"] * padding]
        window = {
            "input_ids": [cls_id, *question, sep_id, *piece, sep_id, *[pad_id] * padding],
            "token_type_ids": [int(role == "context" or i == used - 1) for i, role in enumerate(roles)],
            "attention_mask": [int(role != "padding") for role in roles],
            "sequence_ids": [{"question": 0, "context": 1}.get(role) for role in roles],
            "offsets": [None] * (len(question) + 2)
                       + [(int(context_offsets[i][0]), int(context_offsets[i][1])) for i in range(start, end)]
                       + [None] * (padding + 1),
            "context_start": start,
        }
        if answer is not None:
            span = char_span_to_token_span(window["offsets"], window["sequence_ids"], answer[0], answer[1])
            window["start_position"], window["end_position"] = (0, 0) if span is None else span
        windows.append(window)
    return windows
