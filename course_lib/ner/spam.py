"""Assignment 06, section 6.1: the text messages of the first fine-tune (spam or not), written for the course.

`data/spam.tsv` has a header `label<TAB>text` and one message per line, labelled `spam` or `ham`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

SPAM_FILE = Path(__file__).parent / "data" / "spam.tsv"
LABELS = {"ham": False, "spam": True}


@dataclass(frozen=True)
class Message:
    text: str
    is_spam: bool


def load_messages(path: str | Path = SPAM_FILE) -> list[Message]:
    """The messages of a `label<TAB>text` file; a malformed line is an error naming the file and line."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].split("\t") != ["label", "text"]:
        raise ValueError(f"{path}, line 1: expected the header 'label<TAB>text'")
    messages = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        label, tab, text = line.partition("\t")
        if not tab or label not in LABELS or not text.strip() or "\t" in text:
            raise ValueError(f"{path}, line {number}: expected 'spam' or 'ham', one TAB and the message, got {line!r}")
        messages.append(Message(text.strip(), LABELS[label]))
    return messages


def split(messages: list[Message], *, test_fraction: float, seed: int) -> tuple[list[Message], list[Message]]:
    """A seeded split with the same share of spam on both sides."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for kind in (False, True):
        group = [m for m in messages if m.is_spam == kind]
        order = rng.permutation(len(group))
        cut = round(len(group) * test_fraction)
        test += [group[i] for i in order[:cut]]
        train += [group[i] for i in order[cut:]]
    return [train[i] for i in rng.permutation(len(train))], [test[i] for i in rng.permutation(len(test))]


def encode(tokenizer, messages: list[Message], *, max_length: int) -> dict[str, np.ndarray]:
    """BERT inputs for single messages: `[CLS] message [SEP]`, cut to `max_length` and padded with 0."""
    token_ids = np.zeros((len(messages), max_length), np.int32)
    for row, encoding in enumerate(tokenizer.encode_batch([m.text for m in messages])):
        ids = encoding.ids if len(encoding.ids) <= max_length else encoding.ids[:max_length - 1] + encoding.ids[-1:]
        token_ids[row, :len(ids)] = ids
    return {"token_ids": token_ids, "segment_ids": np.zeros_like(token_ids),
            "padding_mask": (token_ids != 0).astype(np.int32)}


def labels(messages: list[Message]) -> np.ndarray:
    """1 for spam, 0 for not spam."""
    return np.array([int(m.is_spam) for m in messages], np.int32)
