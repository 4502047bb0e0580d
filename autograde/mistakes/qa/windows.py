"""Named mistakes of make_windows (assignment 07). Each takes make_windows' arguments (question_ids, context_ids,
context_offsets, max_length, stride, answer=..., cls_id=..., sep_id=..., pad_id=...) and gives the windows that
mistake produces; one that needs an answer, or another stride, raises ValueError where there is none (the checks then
leave it out). The right answer is in autograde.reference.qa.windows."""

from __future__ import annotations

from autograde.mistakes import Mistake
from autograde.reference.qa import spans as spans_ref
from autograde.reference.qa import windows as ref
from course_lib.qa.windows import PIECES

LISTS = ("input_ids", "token_type_ids", "attention_mask", "sequence_ids", "offsets")
POSITIONS = "the answer's positions are those of the window: [CLS] question [SEP] come before the piece"
ABSENT = "a window whose piece does not hold the whole answer gets (0, 0), the position of [CLS]"


def _with_stride(stride_of):
    """The reference with another stride: `stride_of(room, stride)`."""
    def produce(question_ids, context_ids, context_offsets, max_length, stride, **options):
        other = stride_of(ref.room(question_ids, max_length), stride)
        return ref.make_windows(question_ids, context_ids, context_offsets, max_length, other, **options)
    return produce


def _each(change, *, needs_answer: bool = False):
    """The reference's windows, each changed by `change(window, question_ids, answer, pad_id)` (a copy)."""
    def produce(question_ids, context_ids, context_offsets, max_length, stride, **options):
        if needs_answer and options.get("answer") is None:
            raise ValueError("no answer: this mistake changes only the answer's positions")
        windows = ref.make_windows(question_ids, context_ids, context_offsets, max_length, stride, **options)
        return [change({key: list(value) if isinstance(value, list) else value for key, value in window.items()},
                       question_ids, options.get("answer"), options.get("pad_id", 0)) for window in windows]
    return produce


def _no_final_sep(window, question_ids, answer, pad_id):
    at = len(question_ids) + 2 + window["sequence_ids"].count(1)
    for key, padding in zip(LISTS, (pad_id, 0, 0, None, None), strict=True):
        window[key] = window[key][:at] + window[key][at + 1:] + [padding]
    return window


def _no_padding(window, question_ids, answer, pad_id):
    real = sum(window["attention_mask"])
    for key in LISTS:
        window[key] = window[key][:real]
    return window


def _type_ids(rule):
    """The reference's windows with the token type ids `rule(window, position, head)` (head: the positions of [CLS]
    question [SEP])."""
    def change(window, question_ids, answer, pad_id):
        head = len(question_ids) + 2
        window["token_type_ids"] = [rule(window, position, head) for position in range(len(window["input_ids"]))]
        return window
    return change


def _positions(rule):
    """Where the reference has the answer, (start_position, end_position) replaced by `rule(window, head, span)`
    (head: the positions of [CLS] question [SEP]); elsewhere `rule(window, head, None)`, if it gives anything."""
    def change(window, question_ids, answer, pad_id):
        span = (window["start_position"], window["end_position"])
        made = rule(window, len(question_ids) + 2, None if span == (0, 0) else span, answer)
        window["start_position"], window["end_position"] = made or span
        return window
    return change


def _clipped(window, head, span, answer):
    inside = spans_ref.touched(window["offsets"], window["sequence_ids"], *answer)
    return (inside[0], inside[-1]) if inside and span is None else span


def _moved(by):
    """Positions of the answer moved by `by(window, head)` where the window holds it."""
    def rule(window, head, span, answer):
        return None if span is None else (span[0] + by(window, head), span[1] + by(window, head))
    return rule


def _last_dropped(*args, **options):
    windows = ref.make_windows(*args, **options)
    if len(windows) == 1:
        raise ValueError("one window: dropping the last leaves none, which is not this mistake's sign")
    return windows[:-1]


TYPE_IDS = "token type ids are 0 on [CLS] question [SEP], 1 on the piece and on the [SEP] after it, 0 on the padding"

WINDOWS = (
    Mistake("stride_as_step", "the next piece starts `stride` tokens after the previous one: stride is the number "
            f"of tokens consecutive pieces share, so the step is room - stride; {PIECES}",
            _with_stride(lambda room, stride: room - stride if stride > 0 else room)),
    Mistake("no_overlap", f"consecutive pieces share no token: an answer cut at a piece's end is whole in no window; "
            f"{PIECES}", _with_stride(lambda room, stride: 0)),
    Mistake("last_dropped", "the last piece of the context is missing (does the loop stop before the piece that "
            f"reaches the context's end?); {PIECES}", _last_dropped),
    Mistake("no_final_sep", "the [SEP] after the piece is missing: a window is [CLS] question [SEP] piece [SEP], "
            "then padding", _each(_no_final_sep)),
    Mistake("no_padding", "a window shorter than max_length is not padded: pad every list up to max_length (pad_id "
            "in input_ids, 0 in the token type ids and the attention mask, None in sequence_ids and offsets)",
            _each(_no_padding)),
    Mistake("type_ids_zero", f"the token type ids are all 0: {TYPE_IDS}",
            _each(_type_ids(lambda window, position, head: 0))),
    Mistake("type_ids_final_sep", f"the [SEP] after the piece has token type 0: {TYPE_IDS}",
            _each(_type_ids(lambda window, position, head: int(window["sequence_ids"][position] == 1)))),
    Mistake("type_ids_padding", f"the padding has token type 1: {TYPE_IDS}",
            _each(_type_ids(lambda window, position, head: int(position >= head)))),
    Mistake("answer_clipped", "a window that holds only part of the answer got the positions of that part: when the "
            f"piece does not hold the whole answer (cut by the window's edge), {ABSENT}",
            _each(_positions(_clipped), needs_answer=True)),
    Mistake("not_shifted", f"the positions are counted from the piece's first token; {POSITIONS}, so add "
            "len(question_ids) + 2", _each(_positions(_moved(lambda window, head: -head)), needs_answer=True)),
    Mistake("whole_context", "the positions are counted over the whole context, not the window: subtract the "
            f"piece's first token (context_start), and {POSITIONS}",
            _each(_positions(_moved(lambda window, head: window["context_start"])), needs_answer=True)),
    Mistake("context_indices", "the positions are the answer's token indices in context_ids: count them in the "
            f"window instead, from its piece's first token, and {POSITIONS}",
            _each(_positions(_moved(lambda window, head: window["context_start"] - head)), needs_answer=True)),
    Mistake("absent_minus_one", f"a window without the whole answer got (-1, -1); {ABSENT}, so that the model "
            "learns to point there", _each(_positions(lambda window, head, span, answer: span or (-1, -1)),
                                          needs_answer=True)),
)
