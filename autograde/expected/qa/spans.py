"""Expected values of the char_span_to_token_span check of assignment 07 (`course_lib.qa.spans`): each case's
question and paragraph tokenized by the course's tokenizer, whole or cut into windows (by the tokenizers library or
by make_windows), the window's offsets and sequence ids (-1 for None), tokens, the answer's characters, the
reference's answer ([] for None) and the answers of the named mistakes that differ from it."""

from __future__ import annotations

from autograde.expected.tokenizer import course_tokenizer
from autograde.mistakes import stored
from autograde.mistakes.qa import spans as mistakes
from autograde.reference.qa import spans as ref
from autograde.reference.qa.windows import make_windows
from course_lib.qa.spans import ORESUND, SPAN_CASES


def answer_span(context: str, text: str, occurrence: int = 1) -> tuple[int, int]:
    """(char_start, char_end) of the `occurrence`-th (from 1) occurrence of `text` in `context`."""
    start = -1
    for _ in range(occurrence):
        start = context.find(text, start + 1)
        if start < 0:
            raise ValueError(f"{text!r} does not occur {occurrence} times in the context")
    return start, start + len(text)


def encode_pair(tokenizer, question: str, context: str, *, max_length: int | None = None, stride: int = 0):
    """The tokenizers library's windows of a question and context pair: the encoding and its overflowing ones,
    padded to `max_length` (one encoding, not cut, without it)."""
    tokenizer.no_truncation()
    tokenizer.no_padding()
    if max_length:
        tokenizer.enable_truncation(max_length=max_length, stride=stride, strategy="only_second")
        tokenizer.enable_padding(length=max_length, pad_id=0, pad_token="[PAD]")
    try:
        encoding = tokenizer.encode(question, context)
        return [encoding, *encoding.overflowing]
    finally:
        tokenizer.no_truncation()
        tokenizer.no_padding()


def split_pair(encoding):
    """(question_ids, context_ids, context_offsets) of an encoded pair that is not cut."""
    sequences = list(encoding.sequence_ids)
    question = [i for i, s in enumerate(sequences) if s == 0]
    context = [i for i, s in enumerate(sequences) if s == 1]
    return ([encoding.ids[i] for i in question], [encoding.ids[i] for i in context],
            [tuple(encoding.offsets[i]) for i in context])


def window_of(tokenizer, question: str, context: str, options) -> dict:
    """offsets, sequence_ids and tokens of the case's window (of the text `options["context"]` instead of `context`
    where a case gives one, and of make_windows' windows of `options["room"]` context tokens where it says so)."""
    context = options.get("context", context)
    if options["style"] == "tokenizer":
        cut = options["window"] != "whole"
        encodings = encode_pair(tokenizer, question, context, max_length=options.get("max_length") if cut else None,
                                stride=options.get("stride", 0))
        encoding = encodings[0 if not cut else options["window"]]
        return {"offsets": [tuple(o) for o in encoding.offsets], "sequence_ids": list(encoding.sequence_ids),
                "tokens": list(encoding.tokens)}
    question_ids, context_ids, context_offsets = split_pair(encode_pair(tokenizer, question, context)[0])
    max_length = options["max_length"] if "room" not in options else len(question_ids) + 3 + options["room"]
    window = make_windows(question_ids, context_ids, context_offsets, max_length, options["stride"])[options["window"]]
    return {"offsets": window["offsets"], "sequence_ids": window["sequence_ids"],
            "tokens": [tokenizer.id_to_token(i) for i in window["input_ids"]]}


def _plain(span) -> list[int]:
    return [] if span is None else [int(span[0]), int(span[1])]


def _case(tokenizer, question, answer, occurrence, options) -> dict:
    window = window_of(tokenizer, question, ORESUND, options)
    char_start, char_end = answer_span(ORESUND, answer, occurrence)
    args = (window["offsets"], window["sequence_ids"], char_start, char_end)
    right = _plain(ref.char_span_to_token_span(*args))
    wrong = {name: {"value": _plain(entry["value"]), "message": entry["message"]}
             for name, entry in stored(mistakes.SPANS, *args).items()}
    return {"offsets": [[-1, -1] if o is None else [int(o[0]), int(o[1])] for o in window["offsets"]],
            "sequence_ids": [-1 if s is None else s for s in window["sequence_ids"]], "tokens": window["tokens"],
            "char_start": char_start, "char_end": char_end, "expected": right,
            "mistakes": {name: entry for name, entry in wrong.items() if entry["value"] != right}}


def generate() -> dict:
    tokenizer = course_tokenizer()
    return {"spans": {"char_span_to_token_span": {
        label: _case(tokenizer, question, answer, occurrence, options)
        for label, question, answer, occurrence, options in SPAN_CASES}}}
