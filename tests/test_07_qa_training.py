"""Assignment 07, the pipeline around the learner's functions: examples to windows (labels that point at the
answer's text, clear errors for malformed windows), fine-tuning a start/end head (the loss falls, logits in the
windows' order), decoding over windows back to characters (duplicates merged, invalid spans refused), EM/F1
averages, Reader.answer on any text and the HTML highlight; a tiny random BERT keeps it fast."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from autograde.reference.qa.model import build_qa_model  # noqa: E402
from course_lib.heads import tiny_backbone  # noqa: E402
from course_lib.layers import best_span, make_windows, squad_em_f1  # noqa: E402
from course_lib.pretrained import load_bert  # noqa: E402
from course_lib.qa import corpus  # noqa: E402
from course_lib.qa.answering import Prediction, Reader, decode, evaluate, highlight  # noqa: E402
from course_lib.qa.features import encode_examples, thin_unanswered  # noqa: E402
from course_lib.qa.squad import Answer, QAExample  # noqa: E402
from course_lib.qa.training import fine_tune_spans, predict_logits, span_loss  # noqa: E402

# Each test trains a small model for seconds: make test runs them, make test-quick does not.
pytestmark = pytest.mark.thorough

LONG = ("The first section is about rivers. " * 30 + "The Volga flows into the Caspian Sea. "
        + "The last section is about lakes. " * 30)


@pytest.fixture(scope="module")
def tokenizer():
    return load_bert().tokenizer


def example(question, context, answer, id="q"):
    return QAExample(id, "t", context, question, (Answer(answer, context.index(answer)),))


def test_every_window_label_points_at_the_answer(tokenizer):
    examples = corpus.load_splits()["train"][:5] + [example("Where does the Volga flow?", LONG, "Caspian Sea")]
    windows = encode_examples(tokenizer, examples, make_windows, max_length=64, stride=16)
    assert windows.arrays["token_ids"].shape == (len(windows), 64)
    assert windows.arrays["labels"].shape == (len(windows), 2)
    assert len(windows.of_example(len(examples) - 1)) > 3  # the long context needs several windows
    found = np.zeros(len(examples), bool)
    for row, (start, end) in enumerate(windows.arrays["labels"]):
        owner = examples[windows.example[row]]
        if (start, end) == (0, 0):
            continue
        offsets = windows.offsets[row]
        assert windows.context_mask[row, start] and windows.context_mask[row, end]
        assert owner.context[offsets[start][0]:offsets[end][1]].lower() == owner.answers[0].text.lower()
        found[windows.example[row]] = True
    assert found.all(), "every answer lies whole in at least one window"


def test_malformed_windows_are_named(tokenizer):
    one = [example("Who?", "Ada wrote it.", "Ada")]
    with pytest.raises(ValueError, match="returned None"):
        encode_examples(tokenizer, one, lambda *a, **k: None, max_length=32, stride=8)
    with pytest.raises(ValueError, match="should hold 32 positions"):
        encode_examples(tokenizer, one, lambda *a, **k: [{**w, "input_ids": w["input_ids"][:-1]}
                                                          for w in make_windows(*a, **k)], max_length=32, stride=8)
    with pytest.raises(ValueError, match="no start_position"):
        encode_examples(tokenizer, one, lambda *a, **k: make_windows(*a[:5]), max_length=32, stride=8)


def test_thinning_keeps_every_answered_window_and_a_seeded_share_of_the_others():
    labels = np.array([[0, 0]] * 1000 + [[5, 7]] * 100 + [[0, 3]])
    arrays = {"labels": labels, "token_ids": np.arange(len(labels))[:, None]}
    thinned = thin_unanswered(arrays, 0.25, seed=1)
    kept = thinned["token_ids"][:, 0]
    assert set(range(1000, 1101)) <= set(kept)  # every window with an answer, ([0, 3] too)
    assert 200 <= np.sum(kept < 1000) <= 300
    assert np.array_equal(thinned["labels"], labels[kept])
    assert np.array_equal(thin_unanswered(arrays, 0.25, seed=1)["token_ids"], thinned["token_ids"])
    assert len(thin_unanswered(arrays, 0.0)["labels"]) == 101 and len(thin_unanswered(arrays, 1.0)["labels"]) == 1101
    with pytest.raises(ValueError, match="between 0 and 1"):
        thin_unanswered(arrays, 1.5)
    with pytest.raises(ValueError, match="labels"):
        thin_unanswered({"token_ids": arrays["token_ids"]}, 0.5)


def test_span_loss_is_the_mean_of_two_cross_entropies():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 7, 2)).astype("float32")
    positions = np.array([[0, 0], [2, 4], [6, 6]])

    def nll(z, i):
        return -(z[i] - np.log(np.exp(z).sum()))

    expected = np.mean([(nll(logits[b, :, 0], s) + nll(logits[b, :, 1], e)) / 2 for b, (s, e) in enumerate(positions)])
    assert float(span_loss(positions, logits)) == pytest.approx(expected, rel=1e-5)


def reader_backbone(tokenizer, num_layers: int) -> dict:
    """The sizes of a tiny BERT (course_lib.heads.tiny_backbone) that reads the real tokenizer's ids."""
    return {"vocabulary_size": tokenizer.get_vocab_size(), "num_layers": num_layers, "num_heads": 2,
            "hidden_dim": 32, "intermediate_dim": 64, "max_sequence_length": 64, "num_segments": 2}


def colour_examples(count: int, seed: int = 0) -> list:
    """Questions whose answer is the token after "is": "what colour is the kite?" in "... the kite is red today"."""
    rng = np.random.default_rng(seed)
    colours = ["red", "blue", "green", "yellow", "black", "white", "grey", "pink"]
    things = ["kite", "cup", "lamp", "door", "car", "boat"]
    examples = []
    for i in range(count):
        thing, colour = rng.choice(things), rng.choice(colours)
        filler = " ".join(rng.choice(["we", "saw", "it", "there", "then", "and"], size=rng.integers(0, 6)))
        context = f"{filler} the {thing} is {colour} today".strip()
        examples.append(example(f"what colour is the {thing}?", context, colour, id=str(i)))
    return examples


@pytest.fixture(scope="module")
def tiny_reader(tokenizer):
    """A tiny BERT fine-tuned to answer with the token after "is": learnable in a few dozen steps."""
    keras.utils.set_random_seed(0)
    backbone = tiny_backbone(reader_backbone(tokenizer, num_layers=1))
    model = build_qa_model(backbone)
    examples = colour_examples(96)
    windows = encode_examples(tokenizer, examples, make_windows, max_length=32, stride=8)
    history = fine_tune_spans(model, windows.arrays, epochs=6, batch_size=16, peak_learning_rate=3e-3,
                              warmup_fraction=0.1, weight_decay=0.0, verbose=0)
    return Reader(model, tokenizer, make_windows, best_span, max_length=32, stride=8), examples, windows, history


def test_fine_tuning_lowers_the_loss(tiny_reader):
    _, _, _, history = tiny_reader
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses
    assert len(history.steps["loss"]) == 6 * 6


def test_logits_come_in_the_windows_order(tiny_reader):
    reader, _, windows, _ = tiny_reader
    start, end = predict_logits(reader.model, windows.arrays, batch_size=7)
    assert start.shape == end.shape == windows.arrays["token_ids"].shape
    inputs = {name: windows.arrays[name] for name in ("token_ids", "segment_ids", "padding_mask")}
    direct_start, direct_end = (np.asarray(o) for o in reader.model(inputs, training=False))
    real = windows.arrays["padding_mask"] == 1
    np.testing.assert_allclose(start[real], direct_start[real], atol=1e-4)
    np.testing.assert_allclose(end[real], direct_end[real], atol=1e-4)


def test_reader_answers_with_the_text_at_its_offsets(tiny_reader):
    reader, examples, _, _ = tiny_reader
    result = evaluate(examples[:40], reader.predict(examples[:40]), squad_em_f1)
    assert result["exact_match"] > 80 and result["questions"] == 40
    context = "and then the boat is green today"
    answer = reader.answer("what colour is the boat?", context)
    assert context[answer.start:answer.end] == answer.text and answer.text == "green"
    with pytest.raises(ValueError, match="has no text"):
        reader.answer("", context)


def test_many_questions_at_once_get_what_one_at_a_time_gets(tiny_reader):
    reader, examples, _, _ = tiny_reader
    questions = [e.question for e in examples[:12]]
    contexts = [e.context for e in examples[:12]]
    together = reader.many(questions, contexts, batch_size=5)
    assert [(p.text, p.start) for p in together] == [(reader.answer(q, c).text, reader.answer(q, c).start)
                                                    for q, c in zip(questions, contexts, strict=True)]
    one_context = reader.many(questions[:3], contexts[0])
    assert [p.text for p in one_context] == [reader.answer(q, contexts[0]).text for q in questions[:3]]
    with pytest.raises(ValueError, match="3 questions but 2 contexts"):
        reader.many(questions[:3], contexts[:2])
    with pytest.raises(TypeError, match="reader.many"):
        reader.answer(questions, contexts)


def test_decoding_merges_windows_and_refuses_non_context_positions(tokenizer):
    examples = [example("Where does the Volga flow?", LONG, "Caspian Sea")]
    windows = encode_examples(tokenizer, examples, make_windows, max_length=48, stride=16)
    rows = [row for row, (s, e) in enumerate(windows.arrays["labels"]) if s]
    assert len(rows) >= 2, "the answer lies whole in two overlapping windows"
    start = np.zeros(windows.arrays["token_ids"].shape, np.float32)
    end = np.zeros_like(start)
    for row in rows:
        s, e = windows.arrays["labels"][row]
        start[row, s] = end[row, e] = 5.0
    prediction = decode(examples, windows, start, end, best_span, n_best=5)[0]
    assert prediction.text == "Caspian Sea" and prediction.score == pytest.approx(10.0)
    assert all(text != "Caspian Sea" for text, _ in prediction.candidates)

    def cls_span(*args, **kwargs):
        return [{"window": 0, "start": 0, "end": 0, "score": 1.0}]

    with pytest.raises(ValueError, match="not both context tokens"):
        decode(examples, windows, start, end, cls_span)
    assert decode(examples, windows, start, end, lambda *a, **k: [])[0].text == ""


def test_highlight_escapes_the_text():
    context = "<b>Ada</b> & co"
    page = highlight(context, Prediction("Ada", 3, 6, 2.5, []), question="Who <wrote>?", gold="Ada")
    assert "<mark" in page and "&lt;b&gt;" in page and "&amp; co" in page and "&lt;wrote&gt;" in page


# ------------------------------------------------------------------------------------------------
# Every kind of model Exercise 7.3 allows, through fine-tuning, prediction, the reader and saving for 08


class SubclassedSpanModel(keras.Model):
    """A subclassed keras.Model: no `inputs` or `outputs`, returns a tuple, its backbone an attribute."""

    def __init__(self, backbone, dropout=0.1):
        super().__init__()
        self.encoder = backbone
        self.drop = keras.layers.Dropout(dropout)
        self.span = keras.layers.Dense(2)

    def call(self, inputs, training=None):
        logits = self.span(self.drop(self.encoder(inputs)["sequence_output"], training=training))
        return logits[..., 0], logits[..., 1]


def two_dense1_model(backbone, dropout=0.1):
    """A functional model with one Dense(1) per end, the end head made first, each squeezed to (batch, seq)."""
    hidden = keras.layers.Dropout(dropout)(backbone(backbone.input)["sequence_output"])
    end_head, start_head = keras.layers.Dense(1), keras.layers.Dense(1)
    return keras.Model(backbone.input, [keras.ops.squeeze(start_head(hidden), axis=-1),
                                        keras.ops.squeeze(end_head(hidden), axis=-1)])


MODEL_KINDS = {"functional": build_qa_model, "subclassed": SubclassedSpanModel, "two_dense1": two_dense1_model}


def values_of(weights) -> list[np.ndarray]:
    return [np.array(keras.ops.convert_to_numpy(weight)) for weight in weights]


def moved(before, after) -> bool:
    return any(not np.allclose(b, a, atol=1e-7) for b, a in zip(before, after, strict=True))


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_every_allowed_model_kind_fine_tunes_predicts_answers_and_saves(kind, tokenizer, tmp_path):
    from course_lib.heads import train_top_layers
    from course_lib.qa.saving import load_head, save_qa_model
    from course_lib.qa_pytorch.backends import tensorflow_logits

    keras.utils.set_random_seed(1)
    backbone = tiny_backbone(reader_backbone(tokenizer, num_layers=2))
    model = MODEL_KINDS[kind](backbone)
    windows = encode_examples(tokenizer, colour_examples(12, seed=1), make_windows, max_length=32, stride=8)
    inputs = {name: windows.arrays[name] for name in ("token_ids", "segment_ids", "padding_mask")}
    model(inputs, training=False)  # builds a subclassed model's weights

    # train_top_layers finds the backbone inside every kind of model
    assert train_top_layers(model, 1)[-1] == "transformer_layer_0"
    inside = {id(weight) for weight in backbone.weights}
    head = [weight for weight in model.trainable_weights if id(weight) not in inside]
    frozen = backbone.get_layer("transformer_layer_0").weights
    trained = backbone.get_layer("transformer_layer_1").weights
    assert head and not {id(w) for w in frozen} & {id(w) for w in model.trainable_weights}
    before = [values_of(weights) for weights in (head, trained, frozen)]

    history = fine_tune_spans(model, windows.arrays, epochs=2, batch_size=8, peak_learning_rate=1e-2,
                              warmup_fraction=0.0, weight_decay=0.0, verbose=0)
    losses = history.steps["loss"]
    assert len(losses) == 2 * -(-len(windows) // 8) and np.all(np.isfinite(losses)) and len(set(losses)) > 1
    # fine-tuning the stacked model trained the learner's own layers, and only those left trainable
    assert moved(before[0], values_of(head)), "the head did not train"
    assert moved(before[1], values_of(trained)), "the trained encoder layer did not train"
    assert not moved(before[2], values_of(frozen)), "a frozen encoder layer changed"

    direct_start, direct_end = (np.asarray(output) for output in model(inputs, training=False))
    start, end = predict_logits(model, windows.arrays, batch_size=5)
    real = windows.arrays["padding_mask"] == 1
    np.testing.assert_allclose(start[real], direct_start[real], atol=1e-4)
    np.testing.assert_allclose(end[real], direct_end[real], atol=1e-4)

    context = "and then the boat is green today"
    answer = Reader(model, tokenizer, make_windows, best_span, max_length=32, stride=8).answer(
        "what colour is the boat?", context)
    assert answer.text and context[answer.start:answer.end] == answer.text

    folder = save_qa_model(model, tmp_path / "qa_model")
    kernel, bias = load_head(folder)
    assert kernel.shape == (32, 2) and bias.shape == (2,)
    reloaded = tensorflow_logits(arrays=inputs, folder=str(folder))  # what assignment 08 computes on TensorFlow
    np.testing.assert_allclose(reloaded["start_logits"], direct_start, atol=1e-4)
    np.testing.assert_allclose(reloaded["end_logits"], direct_end, atol=1e-4)


class ThreeOutputs(keras.Model):
    def __init__(self, backbone):
        super().__init__()
        self.encoder, self.span = backbone, keras.layers.Dense(3)

    def call(self, inputs):
        logits = self.span(self.encoder(inputs)["sequence_output"])
        return [logits[..., 0], logits[..., 1], logits[..., 2]]


def one_tensor(backbone):
    return keras.Model(backbone.input, keras.layers.Dense(2)(backbone(backbone.input)["sequence_output"]))


def a_dict(backbone):
    logits = keras.layers.Dense(2)(backbone(backbone.input)["sequence_output"])
    return keras.Model(backbone.input, {"start": logits[..., 0], "end": logits[..., 1]})


@pytest.mark.parametrize("build, named", [(one_tensor, r"one tensor of shape \(None, None, 2\)"),
                                          (a_dict, r"a dict with keys \['end', 'start'\]"),
                                          (ThreeOutputs, "a list of 3 outputs")])
def test_a_model_without_two_outputs_is_named_before_training(build, named, tmp_path):
    from course_lib.heads import TINY_BACKBONE
    from course_lib.qa.saving import SavedModelError, save_qa_model
    from course_lib.qa.training import stacked

    model = build(tiny_backbone(TINY_BACKBONE))
    with pytest.raises(ValueError, match=r"should return two outputs, \[start_logits, end_logits\].*" + named):
        stacked(model)
    with pytest.raises(SavedModelError, match="should return two outputs"):
        save_qa_model(model, tmp_path / "qa_model")


def test_train_top_layers_refuses_a_model_without_a_backbone():
    from course_lib.heads import train_top_layers

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="no keras_hub BertBackbone"):
        train_top_layers(model, 1)
