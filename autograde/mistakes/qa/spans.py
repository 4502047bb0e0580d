"""Named mistakes of char_span_to_token_span (assignment 07). Each takes (offsets, sequence_ids, char_start,
char_end) and gives the (first, last) or None that mistake produces; the right answer is in
autograde.reference.qa.spans."""

from __future__ import annotations

from autograde.mistakes import Mistake
from autograde.reference.qa import spans as ref
from course_lib.qa.spans import CUT


def _searching(offsets, sequence_ids, char_start, char_end, searched):
    """The reference's rule, the first and last token looked for among the positions `searched`."""
    context = ref.context_tokens(sequence_ids)
    if not context or char_start < offsets[context[0]][0] or char_end > offsets[context[-1]][1]:
        return None
    first = next((i for i in searched if offsets[i][1] > char_start), None)
    last = next((i for i in reversed(searched) if offsets[i][0] < char_end), None)
    return None if first is None or last is None or first > last else (first, last)


def _question_searched(offsets, sequence_ids, char_start, char_end):
    searched = [i for i, sequence in enumerate(sequence_ids) if sequence in (0, 1)]
    if any(offsets[i] is None for i in searched):
        raise ValueError("the question's tokens have no offsets here: this mistake would crash")
    return _searching(offsets, sequence_ids, char_start, char_end, searched)


def _edited(change):
    """The reference's answer changed by `change(span, offsets, sequence_ids, char_start, char_end)` where there is
    one."""
    def produce(offsets, sequence_ids, char_start, char_end):
        span = ref.char_span_to_token_span(offsets, sequence_ids, char_start, char_end)
        return None if span is None else change(span, offsets, sequence_ids, char_start, char_end)
    return produce


def _partial(offsets, sequence_ids, char_start, char_end):
    inside = ref.touched(offsets, sequence_ids, char_start, char_end)
    return (inside[0], inside[-1]) if inside else None


def _exact(span, offsets, sequence_ids, char_start, char_end, *, ends: bool):
    context = ref.context_tokens(sequence_ids)
    cut = [character for character in ((char_start, char_end) if ends else (char_start,))
           if any(offsets[i][0] < character < offsets[i][1] for i in context)]
    spaces = [not any(offsets[i][0] <= c < offsets[i][1] for i in context) for c in (char_start, char_end - 1)]
    if not cut or any(spaces):  # what this mistake's message says of the answer is not so here
        raise ValueError("the answer neither starts nor ends inside a token, or it starts or ends on whitespace")
    first = next((i for i in context if offsets[i][0] == char_start), None)
    last = next((i for i in context if offsets[i][1] == char_end), None) if ends else span[1]
    return None if first is None or last is None else (first, last)


def _one_past(span, offsets, sequence_ids, char_start, char_end):
    context = ref.context_tokens(sequence_ids)
    if not any(offsets[i][0] < char_end <= offsets[i][1] for i in context):
        # one past the last token is then also the token after the whitespace: the check cannot tell which it was
        raise ValueError("the answer ends on whitespace")
    return span[0], span[1] + 1


def _last_missed(span, offsets, sequence_ids, char_start, char_end):
    context = ref.context_tokens(sequence_ids)
    if not all(any(offsets[i][0] <= c < offsets[i][1] for i in context) for c in (char_start, char_end - 1)):
        raise ValueError("the answer starts or ends on whitespace, which may be why None was returned")
    return None if span[1] == context[-1] else span


ONLY_TOKENS = "return token positions in the window (indices into offsets), not characters"

SPANS = (
    Mistake("question_searched", "a question token was taken for the answer: the question's tokens have offsets "
            "too, into the question's own text, so look for the answer among the context tokens only (sequence id "
            "1)", _question_searched),
    Mistake("end_exclusive", "last is one past the answer's last token: last is the position of the answer's last "
            "token, included (a one-token answer at position 12 is (12, 12))",
            _edited(_one_past)),
    Mistake("partial_span", "the window holds only part of the answer, and that part was returned: when the "
            f"window's context does not hold the whole answer, return None ({CUT}; the model learns to point at "
            "[CLS] there)", _partial),
    Mistake("start_exact", "the answer starts inside a token, where no token starts exactly at char_start: the first "
            "token is the one whose characters hold char_start (start <= char_start < end), not only one that "
            "starts there", _edited(lambda *args: _exact(*args, ends=False))),
    Mistake("bounds_exact", "the answer starts or ends inside a token, where no token starts or ends exactly at its "
            "characters: the first token is the one whose characters hold char_start, the last the one that holds "
            "the character before char_end", _edited(lambda *args: _exact(*args, ends=True))),
    Mistake("characters", f"these are the answer's character positions (char_start, char_end): {ONLY_TOKENS}",
            _edited(lambda span, offsets, sequence_ids, char_start, char_end: (char_start, char_end))),
    Mistake("token_characters", f"these are the characters of the answer's tokens, where the first starts and the "
            f"last ends: {ONLY_TOKENS}",
            _edited(lambda span, offsets, *rest: (int(offsets[span[0]][0]), int(offsets[span[1]][1])))),
    Mistake("last_token_missed", "the answer ends in the window's last context token, and None was returned: that "
            "token is part of the context too (is a range one short, or a bound compared with >= instead of >?)",
            _edited(_last_missed)),
)
