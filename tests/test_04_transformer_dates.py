"""course_lib.transformer.dates: the generated date data set (assignment 04) and its character vocabulary."""

from __future__ import annotations

import datetime as dt
import random
import re
from collections import Counter, defaultdict

import numpy as np
import pytest

from course_lib.transformer import dates


@pytest.fixture(scope="module")
def sample():
    return dates.generate(20_000, seed=7)


def texts_for(date: dt.date, language: str, family: str, tries: int = 3000) -> set[str]:
    rng = random.Random(0)
    return {dates._text(date, language, family, rng) for _ in range(tries)}


def test_same_seed_same_data_other_seed_other_data():
    assert dates.generate(300, seed=3) == dates.generate(300, seed=3)
    assert dates.generate(300, seed=3) != dates.generate(300, seed=4)
    assert dates.train_heldout_split(200, 50, seed=1) == dates.train_heldout_split(200, 50, seed=1)


def test_text_to_iso_is_a_function(sample):
    meanings = defaultdict(set)
    for example in sample:
        meanings[example.text].add(example.iso)
    ambiguous = {text: isos for text, isos in meanings.items() if len(isos) > 1}
    assert not ambiguous, f"texts with more than one meaning: {list(ambiguous.items())[:5]}"


def test_every_language_and_family_appears(sample):
    counts = Counter((example.language, example.family) for example in sample)
    for language in dates.LANGUAGES:
        for family in dates.FAMILIES:
            assert counts[language, family] > 300, (language, family, counts[language, family])


def test_dates_are_valid_and_span_the_stated_range(sample):
    days = sorted(dt.date.fromisoformat(example.iso) for example in sample)
    assert dates.FIRST_DATE <= days[0] < dt.date(1951, 1, 1)
    assert dt.date(2048, 12, 31) < days[-1] <= dates.LAST_DATE
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", example.iso) for example in sample)


def test_the_formats_of_the_issue_are_generated():
    march_3 = dt.date(1998, 3, 3)
    assert "le 3 mars 1998" in texts_for(march_3, "fr", "ordinal") | texts_for(march_3, "fr", "words")
    assert "Tuesday, March 3rd, 1998" in texts_for(march_3, "en", "ordinal")
    assert "3/3/98" in texts_for(march_3, "en", "numeric")
    assert "le 1er mars 1998" in texts_for(dt.date(1998, 3, 1), "fr", "ordinal")
    english = texts_for(dt.date(2011, 6, 22), "en", "ordinal") | texts_for(dt.date(2011, 6, 11), "en", "ordinal")
    assert "June 22nd, 2011" in english and "June 11th, 2011" in english


def test_numeric_conventions(sample):
    """Slashes are month/day/year, dots day.month.year, dashes ISO; two-digit years use 1950-2049."""
    seen = set()
    for example in sample:
        if example.family != "numeric":
            continue
        year, month, day = (int(part) for part in example.iso.split("-"))
        if "/" in example.text:
            m, d, y = (int(part) for part in example.text.split("/"))
            seen.add("slash")
        elif "." in example.text:
            d, m, y = (int(part) for part in example.text.split("."))
            seen.add("dot")
        else:
            y, m, d = (int(part) for part in example.text.split("-"))
            seen.add("dash")
        if y < 100:
            y += 2000 if y < 50 else 1900
        assert (y, m, d) == (year, month, day), example
    assert seen == {"slash", "dot", "dash"}


def test_calendar_year_not_week_based_year():
    # 30 December 2024 belongs to week 1 of 2025: a YYYY pattern would write 2025.
    date = dt.date(2024, 12, 30)
    for language in dates.LANGUAGES:
        for family in dates.FAMILIES:
            for text in texts_for(date, language, family, tries=200):
                assert "2025" not in text and not text.endswith("25"), (language, family, text)


def test_texts_use_plain_spaces_and_fit_the_model(sample):
    assert all("\u00a0" not in e.text and "\u202f" not in e.text and "  " not in e.text for e in sample)
    assert max(len(e.text) for e in sample) <= 40


def test_split_has_no_common_text_and_the_requested_sizes():
    train, heldout = dates.train_heldout_split(5000, 1000, seed=0)
    assert len(train) == 5000 and len(heldout) == 1000
    assert not {e.text for e in train} & {e.text for e in heldout}
    assert len({e.text for e in heldout}) == 1000


def test_vocabulary_round_trip_and_special_ids():
    vocabulary = dates.CharVocabulary.from_texts(["le 3 mars 1998", "3/3/98"])
    assert (vocabulary.PAD, vocabulary.START, vocabulary.END) == (0, 1, 2)
    assert vocabulary.tokens[:3] == ["<pad>", "<s>", "</s>"]
    ids = vocabulary.encode("3 mars", start=True, end=True)
    assert ids[0] == 1 and ids[-1] == 2 and len(ids) == 8
    assert vocabulary.decode(ids + [0, 0]) == "3 mars"
    assert vocabulary.decode([1, *vocabulary.encode("98"), 2, *vocabulary.encode("le")]) == "98"
    batch = vocabulary.encode_batch(["3/3/98", "le"], 8, end=True)
    assert batch.dtype == np.int32 and batch.shape == (2, 8)
    assert batch[1].tolist()[3:] == [0] * 5
    assert len(vocabulary) == 3 + len(set("le 3 mars 1998/"))


def test_vocabulary_errors_name_the_problem():
    vocabulary = dates.CharVocabulary("0123456789-")
    with pytest.raises(ValueError, match=r"\['x'\]"):
        vocabulary.encode("19x8")
    with pytest.raises(ValueError, match="more than 4"):
        vocabulary.encode_batch(["1998"], 4, start=True)


def test_the_alphabet_covers_every_generated_character(sample):
    alphabet = dates.alphabet()
    assert len(alphabet) == len(set(alphabet)) and list(alphabet) == sorted(alphabet)
    used = set().union(*(set(e.text) for e in sample))
    assert used <= set(alphabet), sorted(used - set(alphabet))
    vocabulary = dates.CharVocabulary(alphabet)
    assert vocabulary.encode_batch([e.text for e in sample], 40).shape == (len(sample), 40)
