"""Assignment 06, the model side: the reference head gives Dense(sequence_output) on keras-hub's BertBackbone and the
reference loss the masked mean cross-entropy (TensorFlow and NumPy agree); the visible checks (course_lib.ner.model)
and the hidden checks (autograde.checks.ner.model) keep an unfinished exercise unfinished, a crash is a failed check,
an always-equal result fails.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf
from cell_checks import cell_function, failure_messages  # noqa: E402

from autograde.checks.ner import model as hidden  # noqa: E402
from autograde.mistakes.ner import model as mistakes  # noqa: E402
from autograde.reference.ner import model as ref  # noqa: E402
from autograde.variants.ner.model import VARIANTS  # noqa: E402
from course_lib.checking import CheckFailed, NotImplementedYet  # noqa: E402
from course_lib.expected import load as load_expected  # noqa: E402
from course_lib.ner import model as visible  # noqa: E402
from course_lib.ner.loss import token_labels  # noqa: E402

from conftest import AlwaysEqual  # noqa: E402

STEM = "06_ner"
# The names the notebook's set-up cell gives the solution cells.
NOTEBOOK_IMPORTS = "import keras\nimport numpy as np\nimport tensorflow as tf\n"

CHECKS = {
    "build_token_classifier": (visible.check_build_token_classifier, hidden.grade_build_token_classifier),
    "masked_token_loss": (visible.check_masked_token_loss, hidden.grade_masked_token_loss),
}


def define(source: str, name: str):
    """The function a cell defines, run with the notebook's imports."""
    return cell_function(source, name, imports=NOTEBOOK_IMPORTS)


def both_checks(name: str, fn) -> list[str]:
    return failure_messages(CHECKS[name], fn)


# ------------------------------------------------------------------------------------------------
# The references


def _loss_inputs(seed, batch, seq, num_labels, scale=3.0):
    rng = np.random.default_rng(seed)
    labels = token_labels(rng, rng.integers(2, seq + 1, size=batch), seq, num_labels)
    return labels, (scale * rng.standard_normal((batch, seq, num_labels))).astype(np.float32)


def test_reference_loss_by_hand():
    logits = np.log(np.array([[[0.5, 0.25, 0.25], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]]]))
    labels = np.array([[0, -100, 2]])
    expected = -(np.log(0.5) + np.log(1 / 3)) / 2
    assert ref.masked_token_loss_numpy(labels, logits) == pytest.approx(expected)
    assert float(ref.masked_token_loss(labels, logits.astype(np.float32))) == pytest.approx(expected, rel=1e-6)
    assert ref.masked_token_loss_numpy(np.full((2, 3), -100), np.zeros((2, 3, 4))) == 0.0
    assert float(ref.masked_token_loss(np.full((2, 3), -100), np.zeros((2, 3, 4), np.float32))) == 0.0


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_reference_loss_tensorflow_equals_numpy(dtype):
    for seed, (batch, seq, num_labels, scale) in enumerate([(3, 9, 5, 2.0), (1, 4, 2, 1.0), (6, 30, 9, 40.0)]):
        labels, logits = _loss_inputs(seed, batch, seq, num_labels, scale)
        value = ref.masked_token_loss(tf.constant(labels.astype(dtype)), tf.constant(logits))
        assert value.dtype == tf.float32 and value.shape == ()
        assert float(value) == pytest.approx(ref.masked_token_loss_numpy(labels, logits), rel=1e-5, abs=1e-6)


def test_reference_loss_agrees_with_keras_ignore_class():
    labels, logits = _loss_inputs(5, 4, 12, 9)
    keras_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-100)
    assert float(keras_loss(labels.astype(np.float32), logits)) == pytest.approx(
        ref.masked_token_loss_numpy(labels, logits), rel=1e-5)


def test_reference_classifier_is_dense_on_the_sequence_output():
    config = visible.TINY_BACKBONE
    weights, head = visible.seeded_classifier_weights(config, 4, 3)
    batches = visible.classifier_batches(np.random.default_rng(3), config, [(3, 6)])
    backbone = visible.tiny_backbone(config, weights)
    model = ref.build_token_classifier(backbone, 4, dropout=0.3)
    dense = model.get_layer("token_logits")
    dense.kernel.assign(head["kernel"])
    dense.bias.assign(head["bias"])
    forward = ref.backbone_forward(config, weights, batches[0])
    logits = np.asarray(model(batches[0], training=False))
    np.testing.assert_allclose(logits, ref.token_logits(forward["sequence_output"], head["kernel"], head["bias"]),
                               atol=1e-5)
    np.testing.assert_allclose(np.asarray(backbone(batches[0])["sequence_output"]), forward["sequence_output"],
                               atol=1e-6)
    assert len(model.trainable_weights) == len(backbone.weights) + 2


def test_probe_batches_change_only_what_they_say():
    batches = visible.classifier_batches(np.random.default_rng(0), visible.TINY_BACKBONE, [(3, 8), (2, 5)])
    base, padded, changed = batches[0], batches[-2], batches[-1]
    padding = base["padding_mask"] == 0
    assert padding.any() and base["padding_mask"][0].all()
    assert np.array_equal(base["token_ids"][~padding], padded["token_ids"][~padding])
    assert np.all(padded["token_ids"][padding] > 0)
    assert np.sum(base["token_ids"] != changed["token_ids"]) == 1 and changed["token_ids"][0, 0] != 0


# ------------------------------------------------------------------------------------------------
# The catalogue of mistakes and the stored expected values


def test_every_loss_mistake_is_told_apart_in_a_visible_case():
    stored = load_expected(STEM, "model", "masked_token_loss")
    named = {name for case in stored.values() for name in case["mistakes"]}
    assert named == {mistake.name for mistake in mistakes.LOSS}
    for case in stored.values():
        values = [float(entry["value"]) for entry in case["mistakes"].values()] + [float(case["loss"])]
        assert len(values) == len({round(v, 6) for v in values}), "two mistakes give the same loss"


def test_every_logits_and_shape_mistake_is_stored():
    stored = load_expected(STEM, "model", "build_token_classifier")
    assert {name for case in stored.values() for batch in case["mistakes"] for name in batch} == \
        {mistake.name for mistake in mistakes.LOGITS}
    assert {name for case in stored.values() for name in case["shapes"]} == {m.name for m in mistakes.SHAPES}
    for case in stored.values():
        shapes = [tuple(np.asarray(entry["value"]).astype(int)) for entry in case["shapes"].values()]
        assert len(shapes) == len(set(shapes)), "two shape mistakes give the same shape"


# ------------------------------------------------------------------------------------------------
# (The reference, the solution cells and the variants against both checks: tests/test_exercises.py)


# ------------------------------------------------------------------------------------------------
# Unfinished, crashing and always-equal answers


def unfinished_classifier(backbone, num_labels, dropout=0.1):
    raise NotImplementedError()


def unfinished_loss(labels, logits):
    raise NotImplementedError()


@pytest.mark.parametrize("name,fn", [("build_token_classifier", unfinished_classifier),
                                     ("masked_token_loss", unfinished_loss)])
def test_unfinished_stays_unfinished(name, fn):
    with pytest.raises(NotImplementedYet):
        CHECKS[name][0](fn)
    with pytest.raises(NotImplementedError):
        CHECKS[name][1](fn)


def test_a_crash_is_a_failed_check_naming_the_error():
    def crashing_loss(labels, logits):
        return tf.reduce_mean(tf.gather(logits, labels, batch_dims=2))  # -100 is out of range

    def crashing_classifier(backbone, num_labels, dropout=0.1):
        return keras.Model(backbone.input, backbone.input["token_ids"] + undefined)  # noqa: F821

    for name, fn, error in [("masked_token_loss", crashing_loss, "raised"),
                            ("build_token_classifier", crashing_classifier, "NameError")]:
        messages = both_checks(name, fn)
        assert all(error in message for message in messages), messages


def test_always_equal_results_fail():
    def loss(labels, logits):
        return AlwaysEqual()

    def classifier(backbone, num_labels, dropout=0.1):
        return AlwaysEqual()

    assert all(both_checks("masked_token_loss", loss))
    assert all("should return a keras.Model" in m for m in both_checks("build_token_classifier", classifier))


def test_the_backbone_itself_is_not_a_classifier():
    messages = both_checks("build_token_classifier", lambda backbone, num_labels, dropout=0.1: backbone)
    assert all("returns a dict" in message for message in messages), messages


@pytest.mark.thorough
def test_an_inverted_mask_is_diagnosed_and_an_extra_layer_named():
    def inverted(backbone, num_labels, dropout=0.1):
        inputs = backbone.input
        vectors = backbone({**inputs, "padding_mask": 1 - inputs["padding_mask"]})["sequence_output"]
        return keras.Model(inputs, keras.layers.Dense(num_labels)(keras.layers.Dropout(dropout)(vectors)))

    def deeper(backbone, num_labels, dropout=0.1):
        vectors = backbone(backbone.input)["sequence_output"]
        hidden_layer = keras.layers.Dense(32, activation="relu")(keras.layers.Dropout(dropout)(vectors))
        return keras.Model(backbone.input, keras.layers.Dense(num_labels)(hidden_layer))

    assert all("the backbone attends to the padding" in m for m in both_checks("build_token_classifier", inverted))
    assert all("kernel (32, " in m for m in both_checks("build_token_classifier", deeper))


def test_a_loss_per_token_is_told_to_return_one_number():
    def per_token(labels, logits):
        labels = tf.cast(labels, tf.int32)
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.maximum(labels, 0), logits=logits)

    assert all("one loss per token" in message for message in both_checks("masked_token_loss", per_token))


def test_log_of_softmax_overflows_on_large_logits():
    def unstable(labels, logits):
        labels = tf.cast(labels, tf.int32)
        mask = tf.cast(labels != -100, tf.float32)
        picked = tf.gather(tf.math.log(tf.nn.softmax(logits)), tf.maximum(labels, 0), batch_dims=2)
        return -tf.reduce_sum(picked * mask) / tf.maximum(tf.reduce_sum(mask), 1.0)

    assert all("not log(softmax" in message for message in both_checks("masked_token_loss", unstable))


# ------------------------------------------------------------------------------------------------
# Through the wire: the hidden checks with the learner's functions behind handles (a real Remote and agent)


VARIANTS_BY_WHAT = {v.what: v for v in VARIANTS}


@pytest.fixture()
def remote(tmp_path):
    from in_process_kernel import InProcessKernel

    from autograde.remote import Remote

    namespace = {
        "right_classifier": define(VARIANTS_BY_WHAT["a subclassed keras.Model"].source, "build_token_classifier"),
        "pooled_classifier": define(VARIANTS_BY_WHAT["a subclassed keras.Model"].source.replace(
            "['sequence_output']", "['pooled_output']"), "build_token_classifier"),
        "right_loss": ref.masked_token_loss,
        "summed_loss": lambda labels, logits: tf.reduce_sum(
            tf.nn.sparse_softmax_cross_entropy_with_logits(tf.maximum(tf.cast(labels, tf.int32), 0), logits)
            * tf.cast(tf.not_equal(tf.cast(labels, tf.int32), -100), tf.float32)),
        "unfinished_loss": unfinished_loss,
    }
    kernel = InProcessKernel(tmp_path, namespace)
    return Remote(kernel), kernel


@pytest.mark.thorough
def test_hidden_checks_through_handles(remote, capsys):
    remote, kernel = remote
    hidden.grade_build_token_classifier(remote.lookup("right_classifier"))
    assert kernel.requests <= 1 + 2 * len(hidden.CLASSIFIER_CASES)  # the helper, then one call, per case
    hidden.grade_masked_token_loss(remote.lookup("right_loss"))
    assert capsys.readouterr().out.count("\N{CHECK MARK}") == 2
    with pytest.raises(CheckFailed, match="the head reads pooled_output"):
        hidden.grade_build_token_classifier(remote.lookup("pooled_classifier"))
    with pytest.raises(CheckFailed, match="this is the sum of the losses"):
        hidden.grade_masked_token_loss(remote.lookup("summed_loss"))
    with pytest.raises(NotImplementedError):
        hidden.grade_masked_token_loss(remote.lookup("unfinished_loss"))
