"""Assignment 06, the training plumbing: sentences to BERT inputs and token labels (truncation counted), the
warm-up/linear-decay schedule (values, serialisation), batches of similar lengths cut to a multiple of 16
(every sentence once per epoch, reshuffled reproducibly), fine-tuning with AdamW (no decay on norms and biases,
the unused pooler frozen, quiet) and predictions in the arrays' order, on a tiny random BERT; one slower test
fine-tunes the shipped MiniLM on a repeated batch and sees the loss fall."""

from __future__ import annotations

from dataclasses import dataclass

import keras
import numpy as np
import pytest
import tensorflow as tf

from autograde.reference.ner.model import build_token_classifier, masked_token_loss  # noqa: E402
from course_lib import finetuning  # noqa: E402
from course_lib.heads import tiny_backbone  # noqa: E402
from course_lib.ner import LABELS, encoding, training  # noqa: E402
from course_lib.pretrained import load_bert  # noqa: E402

# Each test trains a small model for seconds: make test runs them, make test-quick does not.
pytestmark = pytest.mark.thorough

LABEL_TO_ID = {label: i for i, label in enumerate(LABELS)}


@dataclass
class Sentence:  # duck-types course_lib.ner.conll.Sentence
    tokens: tuple
    tags: tuple


def first_piece(word_labels, word_ids):
    """The course's rule: a word's label on its first piece, -100 elsewhere."""
    out, previous = [], None
    for word in word_ids:
        out.append(-100 if word is None or word == previous else word_labels[word])
        previous = word
    return out


@pytest.fixture(scope="module")
def tokenizer():
    return load_bert().tokenizer


SENTENCES = [
    Sentence(("Nkechi", "Adeyemi", "joined", "Rheinmetall", "in", "Düsseldorf", "."),
             ("B-PER", "I-PER", "O", "B-ORG", "O", "B-LOC", "O")),
    Sentence(("Hello", "!"), ("O", "O")),
    Sentence(("The", "Dutch", "side", "lost"), ("O", "B-MISC", "O", "O")),
]


# ------------------------------------------------------------------------------------------------
# Encoding


def test_encode_sentences_layout_and_labels(tokenizer):
    arrays = encoding.encode_sentences(tokenizer, SENTENCES, label_to_id=LABEL_TO_ID, align=first_piece,
                                       max_length=16)
    for name in ("token_ids", "segment_ids", "padding_mask", "labels"):
        assert arrays[name].shape == (3, 16) and arrays[name].dtype == np.int32, name
    for row, sentence in enumerate(SENTENCES):
        expected = tokenizer.encode(list(sentence.tokens), is_pretokenized=True)
        n = len(expected.ids)
        assert arrays["token_ids"][row, :n].tolist() == expected.ids
        assert arrays["token_ids"][row, 0] == tokenizer.token_to_id("[CLS]")
        assert arrays["token_ids"][row, n - 1] == tokenizer.token_to_id("[SEP]")
        assert arrays["padding_mask"][row].tolist() == [1] * n + [0] * (16 - n)
        assert not arrays["token_ids"][row, n:].any() and not arrays["segment_ids"][row].any()
        assert arrays["word_ids"][row] == list(expected.word_ids)
        labels = arrays["labels"][row]
        assert labels[n:].tolist() == [-100] * (16 - n)
        kept = labels[labels != -100]
        assert [LABELS[i] for i in kept] == list(sentence.tags)  # one label per word, on its first piece


def test_long_sentences_are_cut_and_counted(tokenizer, capsys):
    long = Sentence(tuple(["Düsseldorf"] * 12), tuple(["B-LOC"] * 12))
    arrays = encoding.encode_sentences(tokenizer, [long, SENTENCES[1]], label_to_id=LABEL_TO_ID, align=first_piece,
                                       max_length=10)
    assert "1 of 2 sentences are longer than max_length=10" in capsys.readouterr().out
    assert arrays["padding_mask"][0].all()
    assert arrays["token_ids"][0, -1] == tokenizer.token_to_id("[SEP]")
    assert arrays["word_ids"][0][-1] is None and len(arrays["word_ids"][0]) == 10
    assert np.all((arrays["labels"][0] == -100) | (arrays["labels"][0] == LABEL_TO_ID["B-LOC"]))
    encoding.encode_sentences(tokenizer, [SENTENCES[1]], label_to_id=LABEL_TO_ID, align=first_piece)
    assert capsys.readouterr().out == ""


def test_encode_sentences_says_what_is_wrong(tokenizer):
    with pytest.raises(KeyError, match="B-DISH"):
        encoding.encode_sentences(tokenizer, [Sentence(("Paella",), ("B-DISH",))], label_to_id=LABEL_TO_ID,
                                  align=first_piece)
    with pytest.raises(ValueError, match="labels for the"):
        encoding.encode_sentences(tokenizer, SENTENCES, label_to_id=LABEL_TO_ID, align=lambda labels, ids: labels)
    with pytest.raises(ValueError, match="returned None"):
        encoding.encode_sentences(tokenizer, SENTENCES, label_to_id=LABEL_TO_ID, align=lambda labels, ids: None)
    with pytest.raises(NotImplementedError):
        encoding.encode_sentences(tokenizer, SENTENCES, label_to_id=LABEL_TO_ID,
                                  align=lambda labels, ids: (_ for _ in ()).throw(NotImplementedError()))


def test_encode_sentences_takes_conll_sentences(tokenizer):
    from course_lib.ner import conll
    sentences = [conll.Sentence(s.tokens, s.tags) for s in SENTENCES]
    arrays = encoding.encode_sentences(tokenizer, sentences, label_to_id=LABEL_TO_ID, align=first_piece)
    assert arrays["token_ids"].shape == (3, 128)


def test_encode_text_keeps_offsets(tokenizer):
    text = "Nkechi Adeyemi joined Rheinmetall in Düsseldorf."
    encoded = encoding.encode_text(tokenizer, text, max_length=64)
    tokens = tokenizer.encode(text).tokens
    assert encoded["token_ids"].shape == (1, len(tokens)) and not encoded["truncated"]
    assert encoded["offsets"][0] == (0, 0) and encoded["offsets"][-1] == (0, 0)
    start, end = encoded["offsets"][1]
    assert text[start:end].lower().startswith(tokens[1])
    cut = encoding.encode_text(tokenizer, text, max_length=5)
    assert cut["truncated"] and cut["token_ids"].shape == (1, 5) and cut["word_ids"][-1] is None


# ------------------------------------------------------------------------------------------------
# The schedule


def test_warmup_then_linear_decay():
    schedule = finetuning.WarmupLinearDecay(1e-3, warmup_steps=10, total_steps=110)
    values = {step: float(schedule(step)) for step in (0, 5, 10, 60, 109, 110, 200)}
    assert values == pytest.approx({0: 0.0, 5: 5e-4, 10: 1e-3, 60: 5e-4, 109: 1e-5, 110: 0.0, 200: 0.0}, abs=1e-9)
    assert float(finetuning.WarmupLinearDecay(2.0, warmup_steps=0, total_steps=4)(0)) == pytest.approx(2.0)
    assert float(schedule(tf.constant(5, tf.int64))) == pytest.approx(5e-4)
    with pytest.raises(ValueError):
        finetuning.WarmupLinearDecay(1e-3, warmup_steps=5, total_steps=4)


def test_schedule_is_serialisable():
    schedule = finetuning.WarmupLinearDecay(3e-5, warmup_steps=7, total_steps=70)
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(schedule))
    assert isinstance(again, finetuning.WarmupLinearDecay) and again.get_config() == schedule.get_config()
    optimizer = keras.optimizers.AdamW(learning_rate=schedule)
    rebuilt = keras.optimizers.AdamW.from_config(optimizer.get_config())
    assert float(rebuilt.learning_rate) == pytest.approx(0.0)  # step 0 of the warm-up


# ------------------------------------------------------------------------------------------------
# Batches


def random_arrays(seed=0, n=100, max_length=64, vocabulary=50, num_labels=5):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, max_length + 1, size=n)
    lengths[:20] = rng.integers(3, 12, size=20)  # many short ones, as in a corpus
    mask = (np.arange(max_length)[None] < lengths[:, None]).astype(np.int32)
    ids = (rng.integers(5, vocabulary, size=(n, max_length)) * mask).astype(np.int32)
    ids[:, 0] = 1
    labels = np.where(mask == 1, ids % num_labels, -100).astype(np.int32)
    labels[:, 0] = -100
    ids[:, -1] = np.where(mask[:, -1] == 1, ids[:, -1], 0)
    return {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": mask, "labels": labels}


def test_batch_plan_covers_every_row_once_with_bucketed_widths():
    arrays = random_arrays()
    lengths = finetuning.lengths_of(arrays)
    for rng in (None, np.random.default_rng(1)):
        plan = finetuning.batch_plan(lengths, 16, bucket=16, max_length=64, rng=rng, pool=2)
        rows = np.concatenate([r for r, _ in plan])
        assert sorted(rows.tolist()) == list(range(100)) and len(plan) == 7
        for r, width in plan:
            assert width % 16 == 0 and lengths[r].max() <= width <= 64 and width - lengths[r].max() < 16
    sorted_plan = finetuning.batch_plan(lengths, 16, bucket=16, max_length=64)
    assert [w for _, w in sorted_plan] == sorted(w for _, w in sorted_plan)
    assert finetuning.batch_plan(np.array([3, 100]), 1, bucket=16, max_length=100)[-1][1] == 100  # capped


def _epoch(dataset):
    return [(inputs, labels) for inputs, labels in dataset]


def test_batches_rows_are_whole_and_aligned_and_reshuffled():
    arrays = random_arrays()
    dataset = finetuning.batches(arrays, 16, shuffle=True, seed=3)
    assert int(dataset.cardinality()) == 7
    first, second = _epoch(dataset), _epoch(dataset)
    for epoch in (first, second):
        seen = []
        for inputs, labels in epoch:
            assert set(inputs) == {"token_ids", "segment_ids", "padding_mask"}
            width = labels.shape[1]
            assert width % 16 == 0 and inputs["token_ids"].dtype == tf.int32
            for ids, mask, label in zip(inputs["token_ids"].numpy(), inputs["padding_mask"].numpy(), labels.numpy(),
                                        strict=True):
                row = int(np.flatnonzero((arrays["token_ids"][:, :width] == ids).all(axis=1)
                                         & (arrays["padding_mask"][:, width:].sum(axis=1) == 0))[0])
                assert np.array_equal(arrays["labels"][row, :width], label)
                assert np.array_equal(arrays["padding_mask"][row, :width], mask)
                seen.append(row)
        assert sorted(seen) == list(range(100))
    order = [b[0]["token_ids"].numpy()[:, 1].tolist() for b in first]
    assert order != [b[0]["token_ids"].numpy()[:, 1].tolist() for b in second]
    again = _epoch(finetuning.batches(arrays, 16, shuffle=True, seed=3))
    assert order == [b[0]["token_ids"].numpy()[:, 1].tolist() for b in again]


def test_bucketing_cuts_most_of_the_padding():
    arrays = random_arrays(n=400, max_length=128)
    arrays["padding_mask"][:, 30:] = 0  # sentences of at most 30 tokens, padded to 128
    assert finetuning.padding_share(arrays, 16) < 0.3
    assert finetuning.padding_share(arrays, 16, bucket=128) > 0.7


# ------------------------------------------------------------------------------------------------
# Fine-tuning a tiny BERT


@pytest.fixture(scope="module")
def tiny_run():
    keras.utils.set_random_seed(0)
    backbone = tiny_backbone({"vocabulary_size": 50, "num_layers": 1, "num_heads": 2, "hidden_dim": 16,
                              "intermediate_dim": 32, "max_sequence_length": 64, "num_segments": 2})
    model = build_token_classifier(backbone, 5)
    arrays = random_arrays()
    history = training.fine_tune(model, masked_token_loss, arrays, arrays, epochs=3, batch_size=16,
                                 peak_learning_rate=2e-3, warmup_fraction=0.2, weight_decay=0.01, verbose=0)
    return model, backbone, arrays, history


def test_fine_tune_learns_and_records_every_step(tiny_run):
    model, backbone, arrays, history = tiny_run
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0] and "val_loss" in history.history
    assert len(history.steps["loss"]) == 21 and history.steps["step"] == list(range(1, 22))
    rates = history.steps["learning_rate"]
    assert rates[0] == 0.0 and max(rates) == pytest.approx(2e-3) and rates.index(max(rates)) == 4
    # Keras's epoch loss is the mean over sentences: the steps' losses weighted by their batch sizes.
    epoch = np.average(history.steps["loss"][:7], weights=history.steps["sentences"][:7])
    assert epoch == pytest.approx(losses[0], rel=1e-4) and sorted(history.steps["sentences"][:7]) == [4] + [16] * 6


def test_adamw_decays_no_norm_nor_bias(tiny_run):
    model, backbone, _, _ = tiny_run
    optimizer = model.optimizer
    assert isinstance(optimizer, keras.optimizers.AdamW) and optimizer.weight_decay == pytest.approx(0.01)
    decayed = {v.path for v in model.trainable_weights if optimizer._use_weight_decay(v)}
    assert decayed and all(v.endswith(("kernel", "embeddings")) for v in decayed)
    assert not backbone.get_layer("pooled_dense").trainable


def test_predictions_in_the_arrays_order(tiny_run):
    model, _, arrays, _ = tiny_run
    predicted = training.predict_labels(model, arrays, batch_size=8)
    assert predicted.shape == arrays["token_ids"].shape and predicted.dtype == np.int32
    inputs = encoding.inputs_of(arrays)
    direct = np.argmax(np.asarray(model(inputs, training=False)), axis=-1)
    real = arrays["padding_mask"] == 1
    assert np.array_equal(predicted[real], direct[real])
    labelled = arrays["labels"] != -100
    assert np.mean(predicted[labelled] == arrays["labels"][labelled]) > 0.5



class LabelByTokenId:
    """A stand-in model: the most likely label of a token is its id modulo the number of labels."""

    def predict_on_batch(self, inputs):
        return np.eye(len(LABELS))[np.asarray(inputs["token_ids"]) % len(LABELS)]


def test_word_tags_come_from_each_words_first_token_and_cut_words_are_o(tokenizer):
    arrays = encoding.encode_sentences(tokenizer, SENTENCES, label_to_id=LABEL_TO_ID, align=first_piece,
                                       max_length=6, verbose=False)  # the first sentence loses its last words
    tags = training.predict_word_tags(LabelByTokenId(), arrays, SENTENCES, batch_size=2)
    for sentence, found, ids, word_ids in zip(SENTENCES, tags, arrays["token_ids"], arrays["word_ids"], strict=True):
        first = {}  # each word's first token, from the tokenizer's word ids rather than the labels
        for position, word in enumerate(word_ids):
            if word is not None:
                first.setdefault(word, position)
        assert found == [LABELS[ids[first[w]] % len(LABELS)] if w in first else "O"
                         for w in range(len(sentence.tokens))]
    assert len(tags[0]) == len(SENTENCES[0].tokens) and tags[0][-2:] == ["O", "O"]
    assert len({tag for sentence in tags for tag in sentence}) > 2  # the stand-in's labels are not all O

def test_learning_curves_plot(tiny_run):
    import matplotlib.pyplot as plt

    figure = finetuning.plot_learning_curves(tiny_run[3])
    assert len(figure.axes) == 2 and figure.axes[0].get_legend() is not None
    plt.close(figure)
    plain = keras.callbacks.History()
    plain.history = {"loss": [1.0, 0.5], "val_loss": [0.9, 0.6]}
    plt.close(finetuning.plot_learning_curves(plain))


def test_fine_tune_is_quiet_on_stderr(capfd):
    keras.utils.set_random_seed(1)
    backbone = tiny_backbone({"vocabulary_size": 50, "num_layers": 1, "num_heads": 1, "hidden_dim": 8,
                              "intermediate_dim": 8, "max_sequence_length": 64, "num_segments": 2})
    model = build_token_classifier(backbone, 3)
    training.fine_tune(model, masked_token_loss, random_arrays(n=20, num_labels=3), None, epochs=1, batch_size=8,
                       peak_learning_rate=1e-3, verbose=0)
    err = capfd.readouterr().err
    assert "Gradients do not exist" not in err and "shuffle" not in err, err


# ------------------------------------------------------------------------------------------------
# The shipped MiniLM


WORDS = ("the market in Lagos opened early while Amara Okafor of Zenith Bank spoke to reporters from Reuters about "
         "prices in Berlin and Paris").split()
TAGS = {"Lagos": "B-LOC", "Amara": "B-PER", "Okafor": "I-PER", "Zenith": "B-ORG", "Bank": "I-ORG",
        "Reuters": "B-ORG", "Berlin": "B-LOC", "Paris": "B-LOC"}


@pytest.mark.thorough
def test_minilm_loss_falls_on_a_repeated_batch(tokenizer):
    rng = np.random.default_rng(0)
    sentences = []
    for _ in range(32):
        words = [WORDS[i] for i in rng.integers(len(WORDS), size=int(rng.integers(8, 20)))]
        sentences.append(Sentence(tuple(words), tuple(TAGS.get(w, "O") for w in words)))
    arrays = encoding.encode_sentences(tokenizer, sentences, label_to_id=LABEL_TO_ID, align=first_piece,
                                       max_length=64)
    keras.utils.set_random_seed(0)
    model = build_token_classifier(load_bert().backbone, len(LABELS))
    # 10 epochs at 2e-4 end near 3% of the first loss here (20 at 1e-4 took longer to get to 1%)
    history = training.fine_tune(model, masked_token_loss, arrays, None, epochs=10, batch_size=32,
                                 peak_learning_rate=2e-4, warmup_fraction=0.1, verbose=0)
    losses = history.history["loss"]
    assert len(losses) == 10 and losses[-1] < 0.3 * losses[0], losses
