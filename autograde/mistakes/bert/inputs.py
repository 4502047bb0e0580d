"""Named mistakes of build_bert_inputs (assignment 05): wrong truncations, each giving the token ids that the
reference's layout makes of what it keeps. A mistake takes (tokens_a, tokens_b, max_len, cls_id=, sep_id=,
pad_id=); the one-sided ones need a pair. The layout mistakes (segments, mask, padding) are diagnosed from
the right answer alone, in course_lib.bert.inputs."""

from __future__ import annotations

from collections.abc import Sequence

from autograde.mistakes import Mistake
from autograde.reference.bert import inputs as ref
from course_lib.bert.inputs import TRUNCATION_RULE

Pair = tuple[list[int], list[int] | None]


def truncate_like_tokenizers(tokens_a: Sequence[int], tokens_b: Sequence[int] | None, budget: int) -> Pair:
    """The tokenizers library's LongestFirst: lengths computed at once, the odd token to the longer input.

    It agrees with BERT's rule (`ref.truncate_pair`) except when both inputs must be cut, the budget is odd
    and A is not longer than B: then B keeps the extra token (BERT's rule gives it to A).
    """
    a = [int(t) for t in tokens_a]
    if tokens_b is None:
        return a[:budget], None
    b = [int(t) for t in tokens_b]
    if len(a) + len(b) <= budget:
        return a, b
    n1, n2, swapped = len(a), len(b), len(a) > len(b)
    if swapped:
        n1, n2 = n2, n1
    n2 = n1 if n1 > budget else max(n1, budget - n1)
    if n1 + n2 > budget:
        n1 = budget // 2
        n2 = n1 + budget % 2
    if swapped:
        n1, n2 = n2, n1
    return a[:n1], b[:n2]


def _tie_from_a(tokens_a, tokens_b, budget) -> Pair:
    if tokens_b is None:
        return ref.truncate_pair(tokens_a, None, budget)
    b, a = ref.truncate_pair(tokens_b, tokens_a, budget)  # with the roles swapped, a tie costs A
    return a, b


def _from_the_start(tokens_a, tokens_b, budget) -> Pair:
    """BERT's rule on the reversed sequences: the longer one loses its first tokens."""
    a, b = ref.truncate_pair(list(tokens_a)[::-1], None if tokens_b is None else list(tokens_b)[::-1], budget)
    return a[::-1], None if b is None else b[::-1]


def _emptied_first(side: str):
    """Take every token from one side (`side`, "a" or "b") as long as it has any, then from the other."""
    def truncate(tokens_a, tokens_b, budget) -> Pair:
        if tokens_b is None:
            raise ValueError("one sentence: there is no other side")
        a, b = [int(t) for t in tokens_a], [int(t) for t in tokens_b]
        first, second = (a, b) if side == "a" else (b, a)
        while len(a) + len(b) > budget:
            (first if first else second).pop()
        return a, b
    return truncate


def _token_ids(truncate):
    """The token ids of the reference's layout of what `truncate` keeps."""
    def produce(tokens_a, tokens_b, max_len, *, cls_id, sep_id, pad_id):
        budget = max_len - ref.special_token_count(tokens_b is not None)
        if budget < 0:
            raise ValueError(f"max_len={max_len} cannot hold the special tokens")
        a, b = truncate(tokens_a, tokens_b, budget)
        return ref.layout(a, b, max_len, cls_id=cls_id, sep_id=sep_id, pad_id=pad_id)[0]
    return produce


# Where two truncations keep the same tokens, the first message is given.
TRUNCATION = (
    Mistake("tie_from_a", "A and B were equally long and the token was taken from A; " + TRUNCATION_RULE,
            _token_ids(_tie_from_a)),
    Mistake("tokenizers_library", "when both sequences are cut and the room left for them is odd, A keeps the "
            "extra token; " + TRUNCATION_RULE, _token_ids(truncate_like_tokenizers)),
    Mistake("from_the_start", "tokens were removed from the start of the longer sequence; remove them from the end",
            _token_ids(_from_the_start)),
    Mistake("b_emptied_first", "the tokens were all taken from B as long as it had any: B was emptied first, "
            "before A was cut; " + TRUNCATION_RULE, _token_ids(_emptied_first("b"))),
    Mistake("a_emptied_first", "the tokens were all taken from A as long as it had any: A was emptied first, "
            "before B was cut; " + TRUNCATION_RULE, _token_ids(_emptied_first("a"))),
)
