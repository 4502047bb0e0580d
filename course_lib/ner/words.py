"""Assignment 06: the corpus's word tokenizer, CoNLL-2003-like. Every token is a substring of the text, in
order (`course_lib.ner.tagging.word_spans` relies on that), so nothing is rewritten: quotes stay as typed."""

from __future__ import annotations

import re

# Abbreviations that keep their dot, also in capitals (headlines). "No." only before a number (see below).
_ABBREVIATIONS = frozenset(
    "Mr. Mrs. Ms. Dr. Prof. St. Mt. Ft. Jr. Sr. Inc. Ltd. Co. Corp. Bros. Plc. vs. etc. Gen. Col. Lt. Capt. "
    "Sgt. Gov. Sen. Rep. Rev. Hon. Ave. Rd. Blvd. Dept. Univ. approx. Feb. Aug. Sept. Oct. Nov. Dec. Ph.D.".split())
_ABBREVIATIONS |= {word.upper() for word in _ABBREVIATIONS}
_LETTERS_AND_DOTS = re.compile(r"(?:[^\W\d_]\.){2,}")  # U.S., e.g., a.m.
_INITIAL = re.compile(r"[A-Z]\.")  # J. in "J. Smith"; "written in C." ends with "C" and "."
_OPENING = set("\"'([{“‘«„¿¡")
_CLOSING = set("\"')]},;:!?.…%”’»")
_POSSESSIVE = re.compile(r"(.+?)(['’][sS])")
_CURRENCY = re.compile(r"([A-Z]{0,3}[$€£¥₹])(?=[\d.,]*\d)")
_DASHES = re.compile(r"(—|--)")  # an em dash is never part of a word, even when written without spaces


def _is_abbreviation(word: str, next_word: str) -> bool:
    if word in ("No.", "NO.", "no."):  # "No. 3" but "the answer was no."
        return next_word[:1].isdigit()
    if _INITIAL.fullmatch(word):  # an initial comes before a name; at the end of a sentence it is a letter
        return next_word[:1].isupper()
    return word in _ABBREVIATIONS or bool(_LETTERS_AND_DOTS.fullmatch(word))


def _split_word(word: str, next_word: str) -> list[str]:
    front: list[str] = []
    while word and word[0] in _OPENING and word.lower() not in ("'s", "’s"):
        if word[0] in "'’" and re.fullmatch(r"['’]\d\ds", word):  # '90s
            break
        front.append(word[0])
        word = word[1:]
    currency = _CURRENCY.match(word)
    if currency and len(currency.group(1)) < len(word):
        front.append(currency.group(1))
        word = word[len(currency.group(1)):]
    back: list[str] = []
    while word and not _is_abbreviation(word, next_word):
        if word.endswith("..."):
            back.append("...")
            word = word[:-3]
        elif word[-1] in _CLOSING and word.lower() not in ("'s", "’s"):
            back.append(word[-1])
            word = word[:-1]
        else:
            break
    possessive = _POSSESSIVE.fullmatch(word)
    middle = list(possessive.groups()) if possessive else [word] if word else []
    return front + middle + back[::-1]


def tokenize(text: str) -> list[str]:
    """CoNLL-2003-like words of `text`: split on whitespace, then punctuation and quotes split off the ends of
    words; abbreviations (U.S., Dr., J.), numbers (3.5, 1,200, 2:06:41), scores and dates (3-1, 2026-03-14),
    hyphenated words, e-mail addresses and URLs stay whole; "$1,200.50" -> "$", "1,200.50"; "5%" -> "5", "%";
    "Kenya's" -> "Kenya", "'s"; "don't" stays whole. A sentence-final dot after an abbreviation is not split
    off ("in the U.S." ends with "U.S."), as in CoNLL-2003."""
    words = [part for chunk in text.split() for part in _DASHES.split(chunk) if part]
    tokens = []
    for index, word in enumerate(words):
        tokens += _split_word(word, words[index + 1] if index + 1 < len(words) else "")
    return tokens


def token_spans(text: str) -> list[tuple[str, int, int]]:
    """tokenize(text) with each token's character start and end (end exclusive)."""
    spans, position = [], 0
    for token in tokenize(text):
        start = text.index(token, position)
        spans.append((token, start, start + len(token)))
        position = start + len(token)
    return spans


# Punctuation that never begins or ends an entity (a markup edge next to it is outside the brackets).
OUTSIDE_ENTITIES = {",", ";", ":", "!", "?", ".", "...", "'", "\"", "“", "”", "(", ")"}
