"""The inputs assignment 07's graded functions must handle (autograde/input_classes/__init__.py), in notebook order."""

from __future__ import annotations

import re
import string
import unicodedata

import numpy as np

from autograde.input_classes import InputClass
from autograde.reference.qa import metrics as metric_ref
from autograde.reference.qa import spans as span_ref
from autograde.reference.qa import windows as window_ref
from autograde.reference.qa.decoding import best_span

# ------------------------------------------------------------------------------------------------
# char_span_to_token_span(offsets, sequence_ids, char_start, char_end)


def _context(a) -> list[int]:
    return span_ref.context_tokens(a["sequence_ids"])


def _pairs(a) -> list:
    """The offsets as (start, end) or None, whatever their container."""
    return [None if pair is None else (int(pair[0]), int(pair[1])) for pair in a["offsets"]]


def _span(a):
    return span_ref.char_span_to_token_span(_pairs(a), a["sequence_ids"], a["char_start"], a["char_end"])


def _held(a) -> bool:
    return _span(a) is not None


def _covering(a, character: int) -> list[int]:
    """The context positions whose characters hold `character`."""
    pairs = _pairs(a)
    return [p for p in _context(a) if pairs[p][0] <= character < pairs[p][1]]


def _in_a_gap(a, character: int) -> bool:
    """`character` lies between two context tokens of the window (whitespace), not inside one."""
    pairs, context = _pairs(a), _context(a)
    return pairs[context[0]][0] < character < pairs[context[-1]][1] and not _covering(a, character)


def _cut(a, side: str) -> bool:
    pairs, context = _pairs(a), _context(a)
    low, high = pairs[context[0]][0], pairs[context[-1]][1]
    touched = span_ref.touched(pairs, a["sequence_ids"], a["char_start"], a["char_end"])
    before, after = a["char_start"] < low, a["char_end"] > high
    sides = {"start": before and not after, "end": after and not before, "both": before and after}
    return bool(touched) and sides[side]


def _inside_token(a, character: int) -> bool:
    pairs = _pairs(a)
    return any(pairs[p][0] < character < pairs[p][1] for p in _context(a))


def _question_overlaps(a) -> bool:
    pairs = _pairs(a)
    return any(s == 0 and pairs[p] is not None and pairs[p][1] > a["char_start"] and pairs[p][0] < a["char_end"]
               for p, s in enumerate(a["sequence_ids"]))


SPAN_CLASSES = (
    InputClass("inside", "an answer held by the window, away from its first and last context token",
               lambda a: _held(a) and _context(a)[0] < _span(a)[0] and _span(a)[1] < _context(a)[-1]),
    InputClass("at_context_start", "an answer that starts at the context's first character (char_start 0)",
               lambda a: a["char_start"] == 0 and _held(a)),
    InputClass("on_first_context_token", "an answer on the window's first context token",
               lambda a: _held(a) and _span(a)[0] == _context(a)[0]),
    InputClass("on_last_context_token", "an answer on the window's last context token",
               lambda a: _held(a) and _span(a)[1] == _context(a)[-1]),
    InputClass("whole_piece", "an answer that is the window's whole context", lambda a: _span(a) == (
        _context(a)[0], _context(a)[-1])),
    InputClass("one_token", "an answer of one token", lambda a: _held(a) and _span(a)[0] == _span(a)[1]),
    InputClass("starts_inside_a_token", "an answer that starts inside a token (a word cut into pieces)",
               lambda a: _held(a) and _inside_token(a, a["char_start"])),
    InputClass("ends_inside_a_token", "an answer that ends inside a token",
               lambda a: _held(a) and _inside_token(a, a["char_end"])),
    InputClass("inside_one_token", "an answer inside one token, starting after it starts and ending before it ends",
               lambda a: _held(a) and _span(a)[0] == _span(a)[1] and _inside_token(a, a["char_start"])
               and _inside_token(a, a["char_end"])),
    InputClass("starts_between_tokens", "an answer whose first character is whitespace between two tokens",
               lambda a: _held(a) and _in_a_gap(a, a["char_start"])),
    InputClass("ends_between_tokens", "an answer whose last character is whitespace between two tokens",
               lambda a: _held(a) and _in_a_gap(a, a["char_end"] - 1)),
    InputClass("shared_offsets", "an answer that starts or ends on a character cut into several tokens of the same "
               "offsets (a Hangul syllable is cut into its letters)",
               lambda a: _held(a) and (len(_covering(a, a["char_start"])) > 1
                                       or len(_covering(a, a["char_end"] - 1)) > 1)),
    InputClass("cut_at_the_start", "an answer cut by the window's start", lambda a: _cut(a, "start")),
    InputClass("cut_at_the_end", "an answer cut by the window's end", lambda a: _cut(a, "end")),
    InputClass("over_both_edges", "an answer longer than the window's context on both sides",
               lambda a: _cut(a, "both")),
    InputClass("before_the_window", "an answer wholly before the window's context",
               lambda a: a["char_end"] <= _pairs(a)[_context(a)[0]][0]),
    InputClass("after_the_window", "an answer wholly after the window's context",
               lambda a: a["char_start"] >= _pairs(a)[_context(a)[-1]][1]),
    InputClass("no_context_token", "a window without context tokens (of an empty context, or one the question fills)",
               lambda a: not _context(a)),
    InputClass("one_context_token", "a window of one context token", lambda a: len(_context(a)) == 1),
    InputClass("no_question_token", "a window of an empty question: [CLS] [SEP] context [SEP]",
               lambda a: 0 not in list(a["sequence_ids"])),
    InputClass("question_offsets_overlap", "question tokens whose offsets (into the question) overlap the answer's "
               "characters: only sequence_ids tells them from the context's", _question_overlaps),
    InputClass("special_offsets_zero", "special tokens at offsets (0, 0), as the tokenizers library gives them",
               lambda a: any(s is None and p == (0, 0) for p, s in zip(_pairs(a), a["sequence_ids"], strict=True))),
    InputClass("offsets_none", "None as the offsets of every position but the context's, as make_windows gives them",
               lambda a: any(pair is None for pair in a["offsets"])),
    InputClass("padding", "padding tokens after the last [SEP]",
               lambda a: list(a["sequence_ids"])[-2:] == [None, None] and 1 in list(a["sequence_ids"])),
    InputClass("offsets_tuples", "the offsets as a list of tuples",
               lambda a: isinstance(a["offsets"], list) and any(isinstance(p, tuple) for p in a["offsets"])),
    InputClass("offsets_lists", "the offsets as a list of lists",
               lambda a: isinstance(a["offsets"], list) and any(isinstance(p, list) for p in a["offsets"])),
    InputClass("offsets_array", "the offsets as an int array of shape (tokens, 2)",
               lambda a: isinstance(a["offsets"], np.ndarray)),
)

# ------------------------------------------------------------------------------------------------
# make_windows(question_ids, context_ids, context_offsets, max_length, stride, *, answer=None, cls_id=101,
#              sep_id=102, pad_id=0)


def _room(a) -> int:
    return int(a["max_length"]) - len(a["question_ids"]) - 3


def _valid(a) -> bool:
    return 0 <= a["stride"] < _room(a)


def _windows(a) -> list[dict]:
    return window_ref.make_windows(a["question_ids"], a["context_ids"], a["context_offsets"], a["max_length"],
                                   a["stride"], answer=a["answer"])


def _holding(a) -> list[tuple[dict, int]]:
    """(window, its number) of the windows that hold the whole answer."""
    return [(w, n) for n, w in enumerate(_windows(a)) if (w["start_position"], w["end_position"]) != (0, 0)]


def _answer_tokens(a) -> list[int]:
    """The context indices whose characters the answer touches."""
    start, end = a["answer"]
    return [i for i, pair in enumerate(a["context_offsets"]) if pair[1] > start and pair[0] < end]


def _touching_windows(a) -> int:
    """How many windows hold some of the answer's tokens."""
    tokens = set(_answer_tokens(a))
    return sum(1 for w in _windows(a) if tokens & set(range(w["context_start"], w["context_start"] + _room(a))))


def _on_an_edge(a) -> bool:
    """A window holds the answer whole, starting on its piece's first token after the context's first or ending on
    its piece's last token before the context's last."""
    head = len(a["question_ids"]) + 2
    for window, _ in _holding(a):
        pieces = sum(1 for s in window["sequence_ids"] if s == 1)
        at_start = window["start_position"] == head and window["context_start"] > 0
        at_end = window["end_position"] == head + pieces - 1 and window["context_start"] + pieces < len(
            a["context_ids"])
        if at_start or at_end:
            return True
    return False


def _offsets_kind(a, kind) -> bool:
    offsets = a["context_offsets"]
    return isinstance(offsets, (list, tuple)) and len(offsets) > 0 and isinstance(offsets[0], kind)


WINDOW_CLASSES = (
    InputClass("one_window_padded", "a context shorter than the room: one window, padded",
               lambda a: _valid(a) and 0 < len(a["context_ids"]) < _room(a)),
    InputClass("one_window_full", "a context that fills one window exactly",
               lambda a: _valid(a) and len(a["context_ids"]) == _room(a)),
    InputClass("one_token_too_long", "a context one token longer than the room",
               lambda a: _valid(a) and len(a["context_ids"]) == _room(a) + 1),
    InputClass("many_windows", "a context of many windows", lambda a: _valid(a) and len(_windows(a)) > 2),
    InputClass("last_piece_full", "several windows whose last piece ends exactly at a window's end (no padding)",
               lambda a: _valid(a) and len(a["context_ids"]) > _room(a)
               and (len(a["context_ids"]) - _room(a)) % (_room(a) - a["stride"]) == 0),
    InputClass("stride_zero", "stride 0: pieces that share no token", lambda a: _valid(a) and a["stride"] == 0
               and len(a["context_ids"]) > _room(a)),
    InputClass("stride_largest", "the largest stride, room - 1: each piece one token after the previous",
               lambda a: _valid(a) and a["stride"] == _room(a) - 1 and len(a["context_ids"]) > _room(a)),
    InputClass("room_one", "room for one context token (max_length = len(question_ids) + 4, stride 0)",
               lambda a: _room(a) == 1 and a["stride"] == 0 and len(a["context_ids"]) > 1),
    InputClass("empty_context", "an empty context: one window, its piece empty",
               lambda a: _valid(a) and len(a["context_ids"]) == 0),
    InputClass("one_context_token", "a context of one token", lambda a: _valid(a) and len(a["context_ids"]) == 1),
    InputClass("context_within_stride", "a context no longer than the stride: one window",
               lambda a: _valid(a) and 0 < len(a["context_ids"]) <= a["stride"]),
    InputClass("empty_question", "an empty question: [CLS] [SEP] piece [SEP]",
               lambda a: _valid(a) and len(a["question_ids"]) == 0),
    InputClass("no_answer", "no answer given (answer=None)", lambda a: _valid(a) and a["answer"] is None),
    InputClass("answer_on_first_token", "an answer on the context's first token",
               lambda a: _valid(a) and 0 in _answer_tokens(a)),
    InputClass("answer_on_last_token", "an answer on the context's last token",
               lambda a: _valid(a) and len(a["context_ids"]) - 1 in _answer_tokens(a)),
    InputClass("answer_in_an_overlap", "an answer whole in two windows", lambda a: _valid(a) and len(_holding(a)) > 1),
    InputClass("answer_on_a_window_edge", "an answer whole in a window, on the first or the last token of its piece "
               "(not the context's)", lambda a: _valid(a) and _on_an_edge(a)),
    InputClass("answer_cut", "an answer cut by a window's edge (whole in another window)",
               lambda a: _valid(a) and len(_holding(a)) >= 1 and _touching_windows(a) > len(_holding(a))),
    InputClass("answer_in_no_window", "an answer longer than a window: whole in no window",
               lambda a: _valid(a) and a["answer"] is not None and not _holding(a)),
    InputClass("answer_inside_tokens", "an answer that starts or ends inside a token",
               lambda a: _valid(a) and any(pair[0] < a["answer"][0] < pair[1] or pair[0] < a["answer"][1] < pair[1]
                                           for pair in a["context_offsets"])),
    InputClass("other_special_ids", "other special token ids than BERT's (cls_id, sep_id, pad_id given)",
               lambda a: _valid(a) and (a["cls_id"], a["sep_id"], a["pad_id"]) != (101, 102, 0)),
    InputClass("ids_arrays", "question_ids and context_ids as int arrays",
               lambda a: _valid(a) and isinstance(a["question_ids"], np.ndarray)
               and isinstance(a["context_ids"], np.ndarray)),
    InputClass("ids_tuples", "question_ids as a tuple", lambda a: _valid(a) and isinstance(a["question_ids"], tuple)),
    InputClass("offsets_tuples", "context_offsets as a list of tuples",
               lambda a: _valid(a) and _offsets_kind(a, tuple)),
    InputClass("offsets_lists", "context_offsets as a list of lists",
               lambda a: _valid(a) and _offsets_kind(a, list)),
    InputClass("offsets_array", "context_offsets as an int array of shape (tokens, 2)",
               lambda a: _valid(a) and isinstance(a["context_offsets"], np.ndarray)),
    InputClass("room_below_one", "a question that leaves no room (R < 1): a ValueError", lambda a: _room(a) < 1),
    InputClass("stride_negative", "a negative stride: a ValueError", lambda a: _room(a) >= 1 and a["stride"] < 0),
    InputClass("stride_room", "a stride of R or more: a ValueError", lambda a: 1 <= _room(a) <= a["stride"]),
)

# ------------------------------------------------------------------------------------------------
# best_span(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20)


def _mask(a) -> np.ndarray:
    return np.atleast_2d(np.asarray(a["context_mask"])).astype(bool)


def _valid_spans(a) -> int:
    total = 0
    for row in _mask(a):
        inside = np.flatnonzero(row)
        total += sum(int(np.sum((inside >= s) & (inside < s + a["max_answer_length"]))) for s in inside)
    return total


def _dtype(a, name: str) -> bool:
    return all(isinstance(a[key], np.ndarray) and a[key].dtype == name for key in ("start_logits", "end_logits"))


def _ties(a) -> bool:
    spans = _all_spans(a)
    scores = [span["score"] for span in spans]
    return len(scores) != len(set(scores))


def _all_spans(a) -> list[dict]:
    return best_span(a["start_logits"], a["end_logits"], a["context_mask"], a["max_answer_length"], 10 ** 6)


DECODING_CLASSES = (
    InputClass("one_window_1d", "one window as 1-D arrays", lambda a: np.ndim(a["start_logits"]) == 1),
    InputClass("one_window_2d", "one window as a (1, seq) array",
               lambda a: np.ndim(a["start_logits"]) == 2 and np.shape(a["start_logits"])[0] == 1),
    InputClass("several_windows", "several windows", lambda a: np.ndim(a["start_logits"]) == 2
               and np.shape(a["start_logits"])[0] > 1),
    InputClass("lists", "Python lists instead of arrays", lambda a: isinstance(a["start_logits"], list)),
    InputClass("float32", "float32 logits", lambda a: _dtype(a, "float32")),
    InputClass("float64", "float64 logits", lambda a: _dtype(a, "float64")),
    InputClass("float16", "float16 logits", lambda a: _dtype(a, "float16")),
    InputClass("mask_bool", "a boolean context_mask", lambda a: np.asarray(a["context_mask"]).dtype == bool),
    InputClass("mask_ints", "a context_mask of 0 and 1 ints", lambda a: np.asarray(a["context_mask"]).dtype.kind
               in "iu"),
    InputClass("max_answer_length_one", "max_answer_length 1: one-token spans only",
               lambda a: a["max_answer_length"] == 1),
    InputClass("max_answer_length_above_context", "a max_answer_length longer than every window's context",
               lambda a: a["max_answer_length"] > int(_mask(a).sum(axis=1).max())),
    InputClass("n_best_one", "n_best 1", lambda a: a["n_best"] == 1),
    InputClass("n_best_above_valid", "n_best above the number of valid spans",
               lambda a: 0 < _valid_spans(a) < a["n_best"]),
    InputClass("no_valid_span", "no context token at all: no valid span", lambda a: not _mask(a).any()),
    InputClass("window_without_context", "a window without context tokens among windows with some",
               lambda a: _mask(a).any() and not _mask(a).any(axis=1).all()),
    InputClass("context_at_window_edges", "context tokens at a window's first or last position",
               lambda a: bool(_mask(a)[:, 0].any() or _mask(a)[:, -1].any())),
    InputClass("ties", "valid spans of equal scores", _ties),
    InputClass("defaults", "max_answer_length and n_best at their defaults, 30 and 20",
               lambda a: (a["max_answer_length"], a["n_best"]) == (30, 20)),
)

# ------------------------------------------------------------------------------------------------
# squad_em_f1(prediction, gold_answers)

COMMON_MARKS = set(".,;:!?'\"()-")
WHITESPACE = set(" \t\n")


def _texts(a) -> list[str]:
    return [a["prediction"], *a["gold_answers"]]


def _scores(a) -> list[tuple[float, float]]:
    return [metric_ref.squad_em_f1(a["prediction"], [gold]) for gold in a["gold_answers"]]


def _articles_first(text: str) -> str:
    """The normalisation with the articles removed before the punctuation."""
    text = re.sub(r"\b(a|an|the)\b", " ", text.lower())
    return " ".join("".join(c for c in text if c not in string.punctuation).split())


def _reordered(a) -> bool:
    """One gold answer matches exactly and another holds the same words in another order (F1 1.0, no exact match)."""
    scores = _scores(a)
    return any(em == 1.0 for em, _ in scores) and any(em == 0.0 and f1 == 1.0 for em, f1 in scores)


def _repeated(text: str) -> bool:
    words = metric_ref.tokens(text)
    return len(words) != len(set(words))


METRIC_CLASSES = (
    InputClass("equal_once_normalised", "a prediction equal to a gold answer once normalised, not as written",
               lambda a: any(gold != a["prediction"] and em == 1.0 for gold, (em, _) in
                             zip(a["gold_answers"], _scores(a), strict=True))),
    InputClass("partial_overlap", "a prediction that shares some words with a gold answer",
               lambda a: any(0.0 < f1 < 1.0 for _, f1 in _scores(a))),
    InputClass("no_overlap", "a prediction that shares no word with a gold answer, both not empty",
               lambda a: any(f1 == 0.0 and metric_ref.tokens(a["prediction"]) and metric_ref.tokens(gold)
                             for gold, (_, f1) in zip(a["gold_answers"], _scores(a), strict=True))),
    InputClass("several_golds", "several gold answers", lambda a: len(a["gold_answers"]) > 1),
    InputClass("best_gold_not_first", "several gold answers, the best F1 not the first's",
               lambda a: len(a["gold_answers"]) > 1 and max(_scores(a))[1] > _scores(a)[0][1]),
    InputClass("reordered_gold", "a gold answer the prediction matches and another with its words in another order",
               _reordered),
    InputClass("no_gold", "no gold answer (an unanswerable question)", lambda a: len(a["gold_answers"]) == 0),
    InputClass("golds_tuple", "the gold answers in a tuple", lambda a: isinstance(a["gold_answers"], tuple)),
    InputClass("empty_prediction", "an empty prediction", lambda a: a["prediction"] == ""),
    InputClass("empty_gold", "an empty gold answer", lambda a: "" in list(a["gold_answers"])),
    InputClass("whitespace_only", "a text of whitespace only", lambda a: any(t and not t.strip() for t in _texts(a))),
    InputClass("normalised_away", "a text of punctuation and articles only, empty once normalised",
               lambda a: any(t.strip() and not metric_ref.normalize_answer(t) for t in _texts(a))),
    InputClass("articles_in_words", "articles inside words (another, theatre)",
               lambda a: any(re.search(r"(a|an|the)\w|\w(a|an|the)", t.lower()) for t in _texts(a))),
    InputClass("article_joined_by_punctuation", "an article joined to a word by punctuation (the-end, a.k.a.)",
               lambda a: any(_articles_first(t) != metric_ref.normalize_answer(t) for t in _texts(a))),
    InputClass("repeated_words", "a word repeated in a text", lambda a: any(_repeated(t) for t in _texts(a))),
    InputClass("case", "upper-case letters", lambda a: any(t != t.lower() for t in _texts(a))),
    InputClass("tabs_and_newlines", "tabs, newlines and runs of spaces",
               lambda a: any("\t" in t or "\n" in t or "  " in t for t in _texts(a))),
    InputClass("rare_ascii_punctuation", "ASCII punctuation beyond . , ; : ! ? ' \" ( ) - ($, %, /, _, & ...)",
               lambda a: any(c in string.punctuation and c not in COMMON_MARKS for t in _texts(a) for c in t)),
    InputClass("unicode_punctuation", "punctuation outside ASCII (’ — … « »), which SQuAD keeps",
               lambda a: any(unicodedata.category(c).startswith("P") and c not in string.punctuation
                             for t in _texts(a) for c in t)),
    InputClass("non_ascii_letters", "letters and symbols outside ASCII (accents, ß, CJK, emoji)",
               lambda a: any(not c.isascii() and not unicodedata.category(c).startswith(("P", "Z"))
                             for t in _texts(a) for c in t)),
    InputClass("unicode_spaces", "whitespace outside ASCII (a no-break space)",
               lambda a: any(c.isspace() and c not in WHITESPACE for t in _texts(a) for c in t)),
)

MODEL_CLASSES = (
    InputClass("second_size", "a second backbone size: one layer, hidden size 10",
               lambda a: a["backbone"].num_layers == 1 and a["backbone"].hidden_dim == 10),
    InputClass("two_layers", "the tiny two-layer backbone", lambda a: a["backbone"].num_layers == 2),
    InputClass("dropout_zero", "dropout=0.0: nothing dropped, even in training", lambda a: a["dropout"] == 0.0),
    InputClass("dropout_half", "dropout=0.5, not the default", lambda a: a["dropout"] == 0.5),
)

CLASSES = {
    "char_span_to_token_span": SPAN_CLASSES,
    "make_windows": WINDOW_CLASSES,
    "build_qa_model": MODEL_CLASSES,
    "best_span": DECODING_CLASSES,
    "squad_em_f1": METRIC_CLASSES,
}
