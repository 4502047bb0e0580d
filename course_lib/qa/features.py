"""Assignment 07: questions and contexts to BERT's inputs, window by window.

`encode_examples` tokenizes each question and context with the course's WordPiece tokenizer (without special
tokens: the windows add them), cuts the context into overlapping windows with the learner's `make_windows`, and
stacks every window into int32 arrays. Each window remembers its example, its token-to-character offsets and
which tokens are context, so that predicted token positions can be mapped back to the text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

WINDOW_KEYS = ("input_ids", "token_type_ids", "attention_mask", "sequence_ids", "offsets", "context_start")


@dataclass
class Windows:
    """The windows of a list of examples: model inputs and, per window, what maps it back to its example."""

    arrays: dict  # token_ids, segment_ids, padding_mask: int32 (windows, max_length); labels (windows, 2) if known
    example: np.ndarray  # the index, in the examples given, of each window's example
    offsets: list = field(repr=False)  # per window: (start, end) characters of each context token, None elsewhere
    context_mask: np.ndarray = field(repr=False)  # (windows, max_length) bool: the window's context tokens

    def __len__(self) -> int:
        return len(self.example)

    def of_example(self, index: int) -> np.ndarray:
        """The rows of the windows of example `index`."""
        return np.flatnonzero(self.example == index)


def _checked(windows, where: str, max_length: int, answered: bool) -> list[dict]:
    """The learner's windows, or an error naming what is wrong with their form."""
    if windows is None:
        raise ValueError(f"make_windows returned None for {where}: did it forget to return its list of windows?")
    windows = list(windows)
    if not windows:
        raise ValueError(f"make_windows returned no window for {where}: every context gives at least one")
    needed = WINDOW_KEYS + (("start_position", "end_position") if answered else ())
    for number, window in enumerate(windows):
        missing = [key for key in needed if key not in window]
        if missing:
            raise ValueError(f"window {number} of {where} has no {', '.join(missing)}")
        lengths = {key: len(window[key]) for key in WINDOW_KEYS[:5]}
        if set(lengths.values()) != {max_length}:
            raise ValueError(f"window {number} of {where} should hold {max_length} positions in each list, has "
                             f"{lengths}")
    return windows


def encode_examples(tokenizer, examples: Sequence, make_windows: Callable, *, max_length: int = 256,
                    stride: int = 64, max_question_tokens: int = 64, with_answers: bool = True,
                    verbose: bool = False) -> Windows:
    """Every window of every example (objects with .question, .context and, for training, .answers[0] with
    .text and .start). Questions longer than `max_question_tokens` are cut. With `with_answers`, each window's
    labels are the answer's (start, end) token positions in it, (0, 0) when it does not hold the answer."""
    ids = {name: tokenizer.token_to_id(name) for name in ("[CLS]", "[SEP]", "[PAD]")}
    rows, owners, offsets, masks, labels = [], [], [], [], []
    for index, example in enumerate(examples):
        question = tokenizer.encode(example.question, add_special_tokens=False).ids[:max_question_tokens]
        context = tokenizer.encode(example.context, add_special_tokens=False)
        answer = None
        if with_answers:
            if not example.answers:
                raise ValueError(f"example {getattr(example, 'id', index)} has no answer to train on")
            first = example.answers[0]
            answer = (first.start, first.start + len(first.text))
        windows = make_windows(question, context.ids, context.offsets, max_length, stride, answer=answer,
                               cls_id=ids["[CLS]"], sep_id=ids["[SEP]"], pad_id=ids["[PAD]"])
        for window in _checked(windows, f"example {getattr(example, 'id', index)}", max_length, with_answers):
            rows.append((window["input_ids"], window["token_type_ids"], window["attention_mask"]))
            owners.append(index)
            offsets.append(list(window["offsets"]))
            masks.append([sequence == 1 for sequence in window["sequence_ids"]])
            if with_answers:
                labels.append((int(window["start_position"]), int(window["end_position"])))
    stacked = np.asarray(rows, dtype=np.int32).reshape(len(rows), 3, max_length)
    arrays = {"token_ids": stacked[:, 0], "segment_ids": stacked[:, 1], "padding_mask": stacked[:, 2]}
    if with_answers:
        arrays["labels"] = np.asarray(labels, dtype=np.int32).reshape(len(labels), 2)
    result = Windows(arrays, np.asarray(owners, dtype=np.int64), offsets, np.asarray(masks, dtype=bool))
    if verbose:
        several = np.bincount(result.example, minlength=len(examples)) > 1
        print(f"{len(examples)} questions -> {len(result)} windows of {max_length} tokens "
              f"({int(several.sum())} contexts need more than one window)")
    return result


def thin_unanswered(arrays: dict, keep: float, *, seed: int = 0) -> dict:
    """The training windows with every window that holds its answer and a share `keep` (0 to 1) of those that
    do not (labels (0, 0)), drawn with a seeded generator. A long context gives several windows without the
    answer for one with it; they teach the reader little that the others do not, and each costs a full step's
    share of time on a CPU."""
    if not 0.0 <= keep <= 1.0:
        raise ValueError(f"keep is a share of the windows without the answer, between 0 and 1; got {keep}")
    if "labels" not in arrays:
        raise ValueError("thin_unanswered needs the training windows' labels (encode_examples with_answers=True)")
    unanswered = (np.asarray(arrays["labels"]) == 0).all(axis=1)
    chosen = ~unanswered | (np.random.default_rng(seed).random(len(unanswered)) < keep)
    return {name: np.asarray(values)[chosen] for name, values in arrays.items()}
