"""Assignment 06, keeping a tagger: save_tagger / load_tagger round-trip a fine-tuned token classifier, its labels
and its tokenizer, give the same entities, and refuse a damaged or incomplete folder with a clear message."""

from __future__ import annotations

import json

import keras
import pytest

from autograde.reference.ner.entities import predictions_to_entities
from autograde.reference.ner.model import build_token_classifier
from course_lib.heads import tiny_backbone
from course_lib.ner import LABELS
from course_lib.ner.saving import SavedTaggerError, load_tagger, save_tagger
from course_lib.ner.tagging import Tagger
from course_lib.pretrained import load_tokenizer

TEXTS = ["Marie Curie worked in Paris with Pierre Curie at the Sorbonne.",
         "The Rhine flows from the Swiss Alps to the North Sea; Basel, Cologne and Rotterdam lie on it."]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    keras.utils.set_random_seed(3)
    backbone = tiny_backbone({"vocabulary_size": 30522, "num_layers": 1, "num_heads": 2, "hidden_dim": 16,
                              "intermediate_dim": 32, "max_sequence_length": 128})
    tagger = Tagger(build_token_classifier(backbone, len(LABELS)), load_tokenizer(), predictions_to_entities,
                    max_length=64)
    folder = save_tagger(tagger, tmp_path_factory.mktemp("tagger") / "kept")
    return tagger, folder


@pytest.mark.thorough
def test_a_reloaded_tagger_gives_the_same_entities(saved):
    tagger, folder = saved
    reloaded = load_tagger(folder, predictions_to_entities)
    found = tagger.many(TEXTS)
    assert any(found), "the seeded random model should find some entities, or the test proves nothing"
    assert reloaded.many(TEXTS) == found
    assert reloaded.id_to_label == tagger.id_to_label and reloaded.max_length == 64


def test_the_folder_holds_the_model_the_tokenizer_and_the_labels(saved):
    _, folder = saved
    assert sorted(path.name for path in folder.iterdir()) == ["model.keras", "tagger.json", "tokenizer.json"]
    description = json.loads((folder / "tagger.json").read_text())
    assert description["labels"] == list(LABELS) and len(description["tokenizer_sha256"]) == 64


def test_another_tokenizer_is_refused(saved, tmp_path):
    _, folder = saved
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in folder.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    text = (copy / "tokenizer.json").read_text()
    (copy / "tokenizer.json").write_text(text.replace('"lowercase":true', '"lowercase":false', 1)
                                         if '"lowercase":true' in text else text + " ")
    with pytest.raises(SavedTaggerError, match="is not the tokenizer the model was saved with"):
        load_tagger(copy, predictions_to_entities)


def test_an_incomplete_or_damaged_folder_is_refused(saved, tmp_path):
    missing = "holds no saved tagger: model.keras, tokenizer.json, tagger.json missing"
    with pytest.raises(SavedTaggerError, match=missing):
        load_tagger(tmp_path, predictions_to_entities)
    _, folder = saved
    for path in folder.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "tagger.json").write_text("{not json")
    with pytest.raises(SavedTaggerError, match="tagger.json is not valid JSON"):
        load_tagger(tmp_path, predictions_to_entities)
    (tmp_path / "tagger.json").write_bytes((folder / "tagger.json").read_bytes())
    (tmp_path / "model.keras").write_bytes(b"not a zip")
    with pytest.raises(SavedTaggerError, match="cannot be read as a Keras model"):
        load_tagger(tmp_path, predictions_to_entities)


def test_save_tagger_takes_a_tagger():
    with pytest.raises(TypeError, match="takes a Tagger"):
        save_tagger(object(), "unused")
