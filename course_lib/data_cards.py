"""Data cards' generated blocks: text between `<!-- name: begin -->` and `<!-- name: end -->` markers, which a
generator rewrites and a test compares with a fresh run (the QA sets' cards, SQuAD's, the real-text NER corpus's)."""

from __future__ import annotations


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}: begin -->", f"<!-- {name}: end -->"


def card_block(text: str, name: str) -> str | None:
    """The generated text between the card's `<!-- name: begin -->` and `<!-- name: end -->` markers."""
    begin, end = _markers(name)
    if begin not in text or end not in text:
        return None
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def update_card(text: str, blocks: dict[str, str]) -> str:
    """The card with each named block replaced (a block without markers is appended with them)."""
    for name, block in blocks.items():
        begin, end = _markers(name)
        wrapped = f"{begin}\n{block}\n{end}"
        if begin in text and end in text:
            before, rest = text.split(begin, 1)
            text = before + wrapped + rest.split(end, 1)[1]
        else:
            text = text.rstrip("\n") + "\n\n" + wrapped + "\n"
    return text
