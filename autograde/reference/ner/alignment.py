"""Reference label alignment (assignment 06): one label per WordPiece token, the word's label on the word's first
token and -100, which the loss ignores, on its other tokens, on [CLS], [SEP] and padding (word id None)."""

from __future__ import annotations

IGNORED = -100


def align_labels_with_tokens(word_labels, word_ids) -> list[int]:
    """`word_labels[w]` on the first token of word `w`, IGNORED on every other token; words cut off by
    truncation have no token and so no label."""
    labels, previous = [], None
    for word in word_ids:
        first = word is not None and word != previous
        labels.append(int(word_labels[word]) if first else IGNORED)
        previous = word
    return labels
