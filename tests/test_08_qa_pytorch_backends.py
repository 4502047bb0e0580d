"""Assignment 08 across Keras backends: a QA model saved from TensorFlow gives the same start and end logits on
PyTorch (each backend in a process of its own, as a process has one); `save_qa_model` finds assignment 07's head
by what it computes, whatever its layout; loading refuses what does not fit; `load_bert` on the torch backend
lists the backbone's weights in `parameters()`; the throughput helper's data are the same for both frameworks.

This process runs Keras on TensorFlow (the grader's side); the PyTorch side always runs in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from course_lib.heads import TINY_BACKBONE, tiny_backbone  # noqa: E402
from course_lib.layers import make_windows  # noqa: E402
from course_lib.qa import corpus, saving  # noqa: E402
from course_lib.qa.features import encode_examples  # noqa: E402
from course_lib.qa_pytorch import loop, throughput  # noqa: E402
from course_lib.qa_pytorch.backends import BackendProcessError, run_in_backend  # noqa: E402

from conftest import REPO  # noqa: E402

REFERENCE_MODULE = "autograde.reference.qa_pytorch.model:QAModel"
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def course_windows():
    """The windows of the first six test questions of the course's set (some contexts need two windows)."""
    from course_lib.pretrained import load_bert

    tokenizer = load_bert().tokenizer
    examples = corpus.load_splits()["test"][:6]
    return encode_examples(tokenizer, examples, make_windows, max_length=256, stride=64)


@pytest.mark.thorough
def test_tensorflow_and_pytorch_give_the_same_logits(tmp_path, course_windows):
    folder = tmp_path / "qa_model"
    run_in_backend("tensorflow", "course_lib.qa_pytorch.backends:make_tensorflow_weights", folder=str(folder), seed=3)
    inputs = {name: course_windows.arrays[name] for name in ("token_ids", "segment_ids", "padding_mask")}
    in_tensorflow = run_in_backend("tensorflow", "course_lib.qa_pytorch.backends:tensorflow_logits", arrays=inputs,
                                   folder=str(folder))
    in_torch = run_in_backend("torch", "course_lib.qa_pytorch.backends:torch_logits", arrays=inputs,
                              folder=str(folder), module=REFERENCE_MODULE)
    assert (str(in_tensorflow["backend"]), str(in_torch["backend"])) == ("tensorflow", "torch")
    for key in ("start_logits", "end_logits"):
        assert in_torch[key].shape == in_tensorflow[key].shape == inputs["token_ids"].shape
        difference = float(np.max(np.abs(in_torch[key] - in_tensorflow[key])))
        assert difference < TOLERANCE, f"{key} differ by {difference:.2e} between the backends"
    assert np.std(in_torch["start_logits"]) > 0.05, "the logits are all alike: the comparison would prove nothing"


@pytest.mark.thorough
def test_a_failing_child_says_why(tmp_path):
    with pytest.raises(BackendProcessError, match="holds no saved QA model"):
        run_in_backend("tensorflow", "course_lib.qa_pytorch.backends:tensorflow_logits",
                       arrays={"token_ids": np.zeros((1, 4)), "segment_ids": np.zeros((1, 4)),
                               "padding_mask": np.ones((1, 4))}, folder=str(tmp_path / "nothing"))


@pytest.mark.thorough
def test_load_bert_on_torch_lists_the_backbone_weights():
    code = ("from course_lib.qa_pytorch.setup import setup\nsetup(verbose=False)\n"
            "import json, keras\nfrom course_lib.pretrained import load_bert\n"
            "backbone = load_bert().backbone\n"
            "trained = [p for p in backbone.parameters() if p.requires_grad]\n"
            "print(json.dumps({'backend': keras.config.backend(), 'parameters': sum(p.numel() for p in trained), "
            "'weights': sum(int(w.numpy().size) for w in backbone.trainable_weights)}))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, KERAS_BACKEND="torch"))
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["backend"] == "torch"
    assert found["parameters"] == found["weights"] > 22_000_000


@pytest.mark.thorough
def test_setup_refuses_keras_on_another_backend():
    code = ("import keras\nfrom course_lib.qa_pytorch.setup import WrongBackend, setup\n"
            "try:\n    setup()\nexcept WrongBackend as error:\n    print('refused:', error)\n")
    env = {key: value for key, value in os.environ.items() if key != "KERAS_BACKEND"}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=env)
    assert "refused: Keras runs on 'tensorflow' here, not on 'torch'" in done.stdout, done.stdout + done.stderr
    assert "restart the kernel" in done.stdout


# ------------------------------------------------------------------------------------------------
# save_qa_model on assignment 07's models (this process: TensorFlow)


def _inputs(seed: int = 0, batch: int = 3, seq: int = 10) -> dict:
    rng = np.random.default_rng(seed)
    mask = np.ones((batch, seq), np.int32)
    mask[1, 6:] = 0
    ids = rng.integers(1, TINY_BACKBONE["vocabulary_size"], size=(batch, seq)).astype(np.int32) * mask
    return {"token_ids": ids, "segment_ids": (np.arange(seq)[None, :] > 3).astype(np.int32) * mask,
            "padding_mask": mask}


def _model(layout: str):
    """A 07-style model on a tiny backbone: one Dense(2) (the solution's), or two Dense(1) in either order."""
    backbone = tiny_backbone(TINY_BACKBONE)
    hidden = keras.layers.Dropout(0.1)(backbone(backbone.input)["sequence_output"])
    if layout == "dense2":
        logits = keras.layers.Dense(2, name="span_logits")(hidden)
        outputs = [logits[..., 0], logits[..., 1]]
    else:
        end = keras.layers.Dense(1, name="end")(hidden)[..., 0]
        start = keras.layers.Dense(1, name="start")(hidden)[..., 0]
        outputs = [start, end]
    model = keras.Model(backbone.input, outputs)
    rng = np.random.default_rng(7)
    for layer in model.layers:
        if isinstance(layer, keras.layers.Dense):
            layer.set_weights([rng.standard_normal(w.shape).astype(np.float32) for w in layer.get_weights()])
    return model


@pytest.mark.thorough
@pytest.mark.parametrize("layout", ["dense2", "two_dense1"])
def test_saved_model_reproduces_the_keras_model(tmp_path, layout):
    model = _model(layout)
    folder = saving.save_qa_model(model, tmp_path / "qa_model")
    assert sorted(p.name for p in folder.iterdir()) == ["backbone.json", "backbone.weights.h5", "head.npz"]
    backbone = saving.saved_backbone(folder)
    saving.load_backbone_weights(backbone, folder)
    kernel, bias = saving.load_head(folder)
    inputs = _inputs()
    sequence = np.asarray(backbone(inputs, training=False)["sequence_output"], np.float64)
    expected = [np.asarray(output, np.float64) for output in model(inputs, training=False)]
    for column in (0, 1):
        np.testing.assert_allclose(sequence @ kernel[:, column] + bias[column], expected[column], atol=1e-5)
    description = json.loads((folder / "backbone.json").read_text())
    assert description["saved_with"]["backend"] == "tensorflow" and description["config"]["hidden_dim"] == 6


def test_a_mixed_precision_model_is_saved_with_its_float32_weights(tmp_path):
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = _model("dense2")
    finally:
        keras.mixed_precision.set_global_policy("float32")
    folder = saving.save_qa_model(model, tmp_path / "qa_model")
    kernel, bias = saving.load_head(folder)
    head = model.get_layer("span_logits")
    np.testing.assert_array_equal(kernel, np.asarray(head.kernel, np.float32))
    np.testing.assert_array_equal(bias, np.asarray(head.bias, np.float32))


def test_a_head_that_is_not_linear_is_refused(tmp_path):
    backbone = tiny_backbone(TINY_BACKBONE)
    logits = keras.layers.Dense(2, activation="softmax")(backbone(backbone.input)["sequence_output"])
    model = keras.Model(backbone.input, [logits[..., 0], logits[..., 1]])
    with pytest.raises(saving.SavedModelError, match="gives the model's logits"):
        saving.save_qa_model(model, tmp_path / "qa_model")


def test_loading_refuses_what_does_not_fit(tmp_path):
    import torch

    folder = saving.save_qa_model(_model("dense2"), tmp_path / "qa_model")
    other = tiny_backbone({**TINY_BACKBONE, "num_layers": 1})
    with pytest.raises(saving.SavedModelError, match="num_layers"):
        saving.load_backbone_weights(other, folder)

    class NoHead(torch.nn.Module):
        pass

    with pytest.raises(saving.SavedModelError, match="qa_outputs should be a torch.nn.Linear"):
        saving.load_into_torch(NoHead(), folder)
    with pytest.raises(saving.SavedModelError, match="holds no saved QA model"):
        saving.saved_backbone(tmp_path / "empty")


# ------------------------------------------------------------------------------------------------
# The throughput helper's data


@pytest.mark.thorough
def test_timing_windows_are_one_block_both_frameworks_read(course_windows):
    arrays = course_windows.arrays
    timing = throughput.timing_windows(arrays, 4, 3)
    assert timing["token_ids"].shape[0] == 12 and timing["token_ids"].dtype == np.int32
    width = timing["token_ids"].shape[1]
    assert width % 16 == 0 and width >= int(np.asarray(arrays["padding_mask"])[:12].sum(axis=1).max())
    assert timing["labels"].shape == (12, 2) and timing["labels"].max() < width
    assert len(loop.first_questions(course_windows, 2)) == int(np.sum(course_windows.example < 2))
