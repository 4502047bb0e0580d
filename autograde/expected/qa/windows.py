"""Expected values of the make_windows check of assignment 07 (`course_lib.qa.windows`): each case's question and
paragraph tokenized by the course's tokenizer (question ids, context ids and offsets), the answer's characters, the
reference's windows with their tokens, the windows of the named mistakes that differ from them, and the reference's
char_span_to_token_span on every window of those (for the check's stand-in)."""

from __future__ import annotations

from autograde.expected.qa.spans import answer_span, encode_pair, split_pair
from autograde.expected.tokenizer import course_tokenizer
from autograde.mistakes import stored
from autograde.mistakes.qa import windows as mistakes
from autograde.reference.qa import spans as spans_ref
from autograde.reference.qa import windows as ref
from course_lib.qa.windows import WINDOW_CASES, stored_like, stored_window, window_key


def spans_table(windows_lists, answer) -> list[list]:
    """[char_start, char_end, [[position, start, end], ...], [first, last] or []] for every window of the lists."""
    entries = {}
    for windows in windows_lists:
        for window in windows:
            key = window_key(window["offsets"], window["sequence_ids"], *answer)
            span = spans_ref.char_span_to_token_span(window["offsets"], window["sequence_ids"], *answer)
            entries[key] = [key[0], key[1], [list(token) for token in key[2]], [] if span is None else list(span)]
    return list(entries.values())


def _case(tokenizer, question, context, answer, max_length, stride) -> dict:
    question_ids, context_ids, context_offsets = split_pair(encode_pair(tokenizer, question, context)[0])
    options = {} if answer is None else {"answer": answer_span(context, answer)}
    args = (question_ids, context_ids, context_offsets, max_length, stride)
    right = [ref.plain_window(window) for window in ref.make_windows(*args, **options)]
    wrong = {name: {"value": [ref.plain_window(window) for window in entry["value"]], "message": entry["message"]}
             for name, entry in stored(mistakes.WINDOWS, *args, **options).items()}
    wrong = {name: entry for name, entry in wrong.items() if entry["value"] != right}
    table = spans_table([right, *(entry["value"] for entry in wrong.values())], options["answer"]) if answer else []
    return {"question_ids": question_ids, "context_ids": context_ids,
            "context_offsets": [list(pair) for pair in context_offsets],
            "answer": list(options.get("answer", ())), "expected": [stored_window(window) for window in right],
            "tokens": [[tokenizer.id_to_token(i) for i in window["input_ids"]] for window in right],
            "mistakes": {name: {"value": stored_like(entry["value"], right), "message": entry["message"]}
                         for name, entry in wrong.items()},
            "spans": table}


def generate() -> dict:
    tokenizer = course_tokenizer()
    return {"windows": {"make_windows": {
        label: _case(tokenizer, question, context, answer, max_length, stride)
        for label, question, context, answer, max_length, stride, _ in WINDOW_CASES}}}
