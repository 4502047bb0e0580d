"""Assignment 06, back to text: `Tagger` finds correct character offsets on tricky text, long texts are cut into
windows of whole words, and the HTML shows each entity once, escaped, in its type's colour."""

from __future__ import annotations

import numpy as np
import pytest

from autograde.reference.ner.entities import predictions_to_entities
from course_lib.ner import LABELS
from course_lib.ner.tagging import COLOURS, Tagger, entities_html, word_spans
from course_lib.pretrained import load_bert

TRICKY = ("Dr. Amara Okafor-Smith (U.S.) paid $1,200.50 to Zürich's FC Basel on 2026-03-14! "
          "Then:  \"Tchaikovskyesque\" works at Wrocław-Główny, e-mail ana@example.org.\n"
          "Über-Straße 7, 3-1 win; Ngũgĩ wa Thiong'o spoke.")


class FixedModel:
    """Stands for a fine-tuned model: a label id for every token from `choose(token_ids)`."""

    def __init__(self, choose):
        self.choose = choose

    def __call__(self, inputs, training=False):
        ids = np.asarray(inputs["token_ids"])
        logits = np.full((*ids.shape, len(LABELS)), -5.0, np.float32)
        chosen = self.choose(ids)
        np.put_along_axis(logits, chosen[..., None], 5.0, axis=-1)
        return logits

    def predict_on_batch(self, inputs):
        return self(inputs)


@pytest.fixture(scope="module")
def tokenizer():
    return load_bert().tokenizer


def random_labels(seed):
    rng = np.random.default_rng(seed)
    return lambda ids: rng.integers(0, len(LABELS), size=ids.shape)


def test_word_spans_are_the_words_in_the_text():
    for word, start, end in word_spans(TRICKY):
        assert TRICKY[start:end] == word
    words = [word for word, _, _ in word_spans(TRICKY)]
    assert "U.S." in words and "Okafor-Smith" in words and "1,200.50" in words, words


@pytest.mark.thorough
@pytest.mark.parametrize("seed", range(8))
def test_every_entity_is_exactly_its_text_and_starts_and_ends_on_word_boundaries(tokenizer, seed):
    tag = Tagger(FixedModel(random_labels(seed)), tokenizer, predictions_to_entities, max_length=24)
    starts = {start for _, start, _ in word_spans(TRICKY)}
    ends = {end for _, _, end in word_spans(TRICKY)}
    entities = tag(TRICKY)
    assert entities, "random labels should give some entities"
    for entity in entities:
        assert entity["text"] == TRICKY[entity["start"]:entity["end"]], entity
        assert entity["start"] in starts and entity["end"] in ends, entity
        assert entity["type"] in ("PER", "ORG", "LOC", "MISC")
    assert [e["start"] for e in entities] == sorted(e["start"] for e in entities)


@pytest.mark.parametrize("max_length", [12, 128])
def test_all_b_tags_make_every_word_an_entity_across_windows(tokenizer, max_length):
    """B-LOC on every piece: each word is one entity, whatever the windows, and none is lost or doubled."""
    text = " ".join([TRICKY] * 3)
    tag = Tagger(FixedModel(lambda ids: np.full(ids.shape, LABELS.index("B-LOC"))), tokenizer,
                 predictions_to_entities, max_length=max_length)
    found = [(e["start"], e["end"]) for e in tag(text)]
    assert found == [(start, end) for _, start, end in word_spans(text)]
    if max_length == 12:
        assert len(tag.encode(text)) > 3, "a long text should be cut into several windows"


def test_empty_text_has_no_entities(tokenizer):
    assert Tagger(FixedModel(random_labels(0)), tokenizer, predictions_to_entities)(" \n ") == []


def test_many_texts_at_once_find_what_one_at_a_time_finds(tokenizer):
    """The windows of several texts batched together (with padding) give each text its own entities."""
    def by_token(ids):  # a label that depends on the token only, so that padding and batching cannot matter
        return ids % len(LABELS)

    tag = Tagger(FixedModel(by_token), tokenizer, predictions_to_entities, max_length=24)
    texts = [TRICKY, "", "Lagos.", " ".join([TRICKY] * 2), "Amara met Kenji in Osaka on Monday."]
    assert tag.many(texts, batch_size=3) == [tag(text) for text in texts]
    assert tag.many([]) == []
    with pytest.raises(TypeError, match="tag.many"):
        tag(texts)


def test_html_marks_each_entity_once_and_escapes_the_text():
    text = "<b>Ada</b> & Ngozi met in Lagos"
    entities = [{"type": "PER", "start": 13, "end": 18, "text": "Ngozi"},
                {"type": "LOC", "start": 26, "end": 31, "text": "Lagos"}]
    shown = entities_html(text, entities)
    assert "&lt;b&gt;Ada&lt;/b&gt; &amp;" in shown
    assert shown.count("<mark") == 2 + 4  # two entities, four legend keys
    assert COLOURS["LOC"] in shown and ">Lagos<sub" in shown
    with pytest.raises(ValueError, match="overlaps"):
        entities_html(text, entities + [{"type": "ORG", "start": 12, "end": 20, "text": "x"}])


def test_tag_sentences_gives_each_word_its_entitys_tags(tokenizer):
    from course_lib.ner.conll import Sentence

    vocabulary = tokenizer.get_vocab()
    wanted = {vocabulary["paris"]: LABELS.index("B-LOC"), vocabulary["new"]: LABELS.index("B-LOC"),
              vocabulary["york"]: LABELS.index("I-LOC"), vocabulary["ada"]: LABELS.index("B-PER")}
    model = FixedModel(lambda ids: np.vectorize(lambda i: wanted.get(int(i), 0))(ids))
    tag = Tagger(model, tokenizer, predictions_to_entities)
    sentences = [Sentence(["Ada", "left", "New", "York", "for", "Paris", "."], ["O"] * 7), Sentence(["no"], ["O"])]
    assert tag.tag_sentences(sentences) == [["B-PER", "O", "B-LOC", "I-LOC", "O", "B-LOC", "O"], ["O"]]
