"""Assignment 06, labels for WordPiece tokens: the visible check of `align_labels_with_tokens` and its diagnostics
(shared with the hidden check in autograde.checks.ner.alignment).

The check's sentences are tokenized by the course's tokenizer when the expected values are generated
(`course_lib/expected/06_ner.json`, from autograde/expected/ner/alignment.py): their word ids, the tokens (for the
messages), the right labels and those of the named mistakes.
"""

from __future__ import annotations

import numpy as np

from course_lib.calls import named
from course_lib.checking import CheckFailed, call_learner, passed
from course_lib.expected import load as load_expected

STEM = "06_ner"
RULE = ("one label per token: the word's label on the word's first token, -100 on its other tokens and on every "
        "token whose word id is None ([CLS], [SEP], padding)")


def read_labels(result, call: str) -> np.ndarray:
    """The learner's labels as a 1-D int64 array, or a failure saying what is wrong with their form."""
    if result is None:
        raise CheckFailed(f"{call} returned None: did you forget to return the labels?")
    if hasattr(result, "numpy") and not isinstance(result, np.ndarray):
        result = result.numpy()
    if isinstance(result, (str, bytes, dict, set)) or not hasattr(result, "__len__"):
        raise CheckFailed(f"{call} should return a list of int labels, one per token, got {type(result).__name__}")
    values = list(np.asarray(result, dtype=object).reshape(-1)) if np.ndim(result) <= 1 else None
    if values is None:
        raise CheckFailed(f"{call} has shape {np.shape(result)}: return a flat list, one label per token")
    for position, value in enumerate(values):
        if value is None:
            raise CheckFailed(f"{call} holds None at position {position}: tokens without a label (word id None, "
                              "continuation tokens) get -100")
        integral = isinstance(value, (int, np.integer)) or (isinstance(value, (float, np.floating))
                                                            and float(value).is_integer())
        if not integral or isinstance(value, (bool, np.bool_)):
            raise CheckFailed(f"{call} holds {value!r} at position {position}: labels are int ids (or -100)")
    return np.array([int(value) for value in values], dtype=np.int64)


def _window(values, position: int, width: int = 6) -> str:
    start = max(0, position - width)
    shown = ", ".join("None" if v is None else str(int(v)) for v in values[start:position + width + 1])
    return f"[{'..., ' if start else ''}{shown}{', ...' if position + width + 1 < len(values) else ''}]"


def expect_aligned(result, expected, word_labels, word_ids, *, mistakes=(), label: str = "",
                   tokens=None) -> None:
    """Compare the learner's per-token labels with `expected`; `mistakes` are (wrong labels, explanation)."""
    call = f"[{label}] align_labels_with_tokens(word_labels, word_ids)" if label else \
        "align_labels_with_tokens(word_labels, word_ids)"
    word_ids = list(word_ids)
    expected = np.asarray(expected, dtype=np.int64)
    got = read_labels(result, call)
    if len(got) != len(expected):
        words = len({w for w in word_ids if w is not None})
        pieces = sum(w is not None for w in word_ids)
        per_word, no_specials = len(got) in (words, len(word_labels)), len(got) == pieces
        why = {(True, False): f"one label per word; the model needs one per token, {len(word_ids)} here",
               (False, True): "the special tokens are left out; they stay, with the label -100",
               (True, True): "one label per token is needed: each piece of a word, and the special tokens (-100)"}
        raise named(f"{call} returned {len(got)} labels for {len(word_ids)} tokens: "
                    f"{why.get((per_word, no_specials), RULE)}", 2 if per_word and no_specials else 1)
    if np.array_equal(got, expected):
        return
    small = len(word_ids) <= 24
    detail = (f" (word_labels {[int(v) for v in word_labels]}, word_ids {word_ids}: expected {expected.tolist()}, "
              f"got {got.tolist()})") if small else ""
    matching = list(dict.fromkeys(explanation for wrong, explanation in mistakes
                                  if np.array_equal(got, np.asarray(wrong, dtype=np.int64))))
    if matching:
        raise named(f"{call} is wrong: {matching[0]}{detail}", len(matching))
    position = int(np.flatnonzero(got != expected)[0])
    word = word_ids[position]
    token = f" ({tokens[position]!r})" if tokens is not None else ""
    if word is None:
        what = f"token {position}{token} has word id None, so its label is -100"
    elif position > 0 and word_ids[position - 1] == word:
        what = f"token {position}{token} continues word {word}, so its label is -100"
    else:
        what = f"token {position}{token} is the first token of word {word}, so its label is word_labels[{word}] = " \
               f"{int(word_labels[word])}"
    context = "" if small else f" (word_ids around it {_window(word_ids, position)}, your labels " \
                               f"{_window(got.tolist(), position)})"
    raise CheckFailed(f"{call} is wrong at token {position}: {what}, got {int(got[position])}{context}{detail}. "
                      f"{RULE}")


# Sentences (words and their tags), how they are tokenized and in which container the labels are given. The
# word ids come from the course's tokenizer (`max_length` truncates, `pad_to` pads, `special_tokens` False leaves
# [CLS] and [SEP] out), in the expected values; `word_ids` "tuple" gives them in a tuple.
ALIGN_CASES = [
    ("the notebook's sentence", ["Nkechi", "Adeyemi", "joined", "Rheinmetall", "in", "Düsseldorf", "."],
     ["B-PER", "I-PER", "O", "B-ORG", "O", "B-LOC", "O"], {"container": "list"}),
    ("padded to 24 tokens, labels in a NumPy array", ["Ngozi", "Okonjo-Iweala", "left", "the", "U.S.", "."],
     ["B-PER", "I-PER", "O", "O", "B-LOC", "O"], {"container": "array", "pad_to": 24}),
    ("truncated to 8 tokens: the last words are cut off, labels in a tuple",
     ["Schwarzenegger", "visited", "Wrocław", "and", "Reykjavík", "in", "May", "."],
     ["B-PER", "O", "B-LOC", "O", "B-LOC", "O", "O", "O"], {"container": "tuple", "max_length": 8}),
    ("one piece per word", ["The", "UN", "met", "in", "New", "York"], ["O", "B-ORG", "O", "O", "B-LOC", "I-LOC"],
     {"container": "list"}),
    ("a word of a zero-width space, which gets no token: the word ids skip it",
     ["Ada", "Lovelace", "\u200b", "met", "Babbage", "."], ["B-PER", "I-PER", "O", "O", "B-PER", "O"],
     {"container": "list"}),
    ("encoded without [CLS] and [SEP], word ids in a tuple", ["Olaf", "Scholz", "visited", "Wrocław"],
     ["B-PER", "I-PER", "O", "B-LOC"], {"container": "list", "special_tokens": False, "word_ids": "tuple"}),
    ("no token at all: an empty sentence encoded without [CLS] and [SEP]", [], [],
     {"container": "list", "special_tokens": False}),
]


def case_labels(word_labels, container: str):
    """The word labels in the case's container."""
    labels = [int(label) for label in word_labels]
    return {"list": labels, "tuple": tuple(labels), "array": np.array(labels, dtype=np.int64)}[container]


def check_align_labels_with_tokens(align_labels_with_tokens) -> None:
    """align_labels_with_tokens on 7 tokenized sentences: many-piece words, padding, truncation, a word without a
    token, no special tokens, no token at all, containers."""
    expected = load_expected(STEM, "alignment", "align_labels_with_tokens")
    for label, _, _, options in ALIGN_CASES:
        case = expected[label]
        word_ids = [None if w < 0 else int(w) for w in case["word_ids"]]  # stored with -1 for None
        word_labels = case_labels(case["word_labels"], options["container"])
        given = tuple(word_ids) if options.get("word_ids") == "tuple" else list(word_ids)
        try:
            result = call_learner(align_labels_with_tokens, word_labels, given)
        except CheckFailed as failure:
            if failure.__cause__ is None:
                raise
            raise CheckFailed(f"[{label}] {failure}") from failure.__cause__  # a crash: on which sentence
        mistakes = [(entry["value"], entry["message"]) for entry in case["mistakes"].values()]
        expect_aligned(result, case["expected"], word_labels, word_ids, mistakes=mistakes, label=label,
                       tokens=case["tokens"])
    passed(f"align_labels_with_tokens labels the first token of each word in {len(ALIGN_CASES)} tokenized sentences")
