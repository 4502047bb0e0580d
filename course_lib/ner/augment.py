"""Assignment 06: entity-substitution augmentation of the training split (names, places and companies from
Faker in several locales); never applied to validation or test."""

from __future__ import annotations

import random
from collections.abc import Sequence

from course_lib.ner.annotations import gold_entities
from course_lib.ner.conll import Sentence
from course_lib.ner.words import OUTSIDE_ENTITIES, tokenize

# Latin-script Faker locales only: the corpus and the course's uncased vocabulary are Latin script.
LOCALES = ("en_GB", "en_US", "de_DE", "fr_FR", "es_ES", "es_MX", "it_IT", "nl_NL", "pl_PL", "pt_BR", "sv_SE",
           "tr_TR", "cs_CZ", "ro_RO", "hu_HU", "fi_FI", "da_DK", "id_ID")


def _faker(fakers: dict, locale: str, rng: random.Random):
    """The cached Faker of `locale`, reseeded from `rng` (Faker instances share one global random otherwise)."""
    from faker import Faker

    if locale not in fakers:
        fakers[locale] = Faker(locale)
    fakers[locale].seed_instance(rng.randrange(2**32))
    return fakers[locale]


def _fake_entity(fakers: dict, locale: str, kind: str, original: Sequence[str], rng: random.Random) -> list[str]:
    tokens: list[str] = []
    for _ in range(10):  # a few locales produce odd values (lower-case "da Cunha", "Gray, Clark"): draw again
        if kind == "PER":
            fake = _faker(fakers, locale, rng)
            text = fake.last_name() if len(original) == 1 else f"{fake.first_name()} {fake.last_name()}"
        elif kind == "LOC":  # English country names: real news writes them in English
            text = _faker(fakers, "en_GB", rng).country() if rng.random() < 0.3 else _faker(fakers, locale, rng).city()
        else:
            text = _faker(fakers, locale, rng).company()
        tokens = tokenize(text)
        if tokens and tokens[0][:1].isupper() and not set(tokens) & OUTSIDE_ENTITIES:
            break
    else:
        tokens = list(original)  # no usable name drawn: keep the original entity
    if all(token.isupper() or not token.isalpha() for token in original):  # a headline in capitals
        tokens = [token.upper() for token in tokens]
    return tokens


def augment(sentences: Sequence[Sentence], rng: random.Random, *, copies: int = 1,
            types: Sequence[str] = ("PER", "ORG", "LOC")) -> list[Sentence]:
    """Entity-substitution copies of training sentences (only the copies are returned): in each copy every PER,
    ORG and LOC entity is replaced by a Faker name from a random Latin-script locale (PER: first and last name,
    or a last name when the original is one word; LOC: a city, or a country; ORG: a company), the same string
    by the same replacement within a sentence. Sentences without such entities are not copied. Deterministic
    for the same rng state. For the training split only: validation and test must stay as written."""
    fakers: dict = {}
    copied = []
    for sentence in sentences:
        entities = [entity for entity in gold_entities(sentence) if entity[0] in types]
        if not entities:
            continue
        for copy in range(1, copies + 1):
            locale = rng.choice(LOCALES)
            replacements, tokens, tags, cursor = {}, [], [], 0
            for kind, start, end in entities:
                original = sentence.tokens[start:end]
                if (kind, original) not in replacements:
                    replacements[kind, original] = _fake_entity(fakers, locale, kind, original, rng)
                new = replacements[kind, original]
                tokens += sentence.tokens[cursor:start] + tuple(new)
                tags += sentence.tags[cursor:start] + (f"B-{kind}",) + (f"I-{kind}",) * (len(new) - 1)
                cursor = end
            tokens += sentence.tokens[cursor:]
            tags += sentence.tags[cursor:]
            copied.append(Sentence(tokens, tags, f"{sentence.document}+aug{copy}"))
    return copied
