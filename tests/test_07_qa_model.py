"""Assignment 07, build_qa_model: the reference gives columns 0 and 1 of Dense(2) on keras-hub's BertBackbone's
sequence output (as the float64 counterpart computes them); the visible check (course_lib.qa.model) and the hidden
check (autograde.checks.qa.model) keep an unfinished exercise unfinished, a crash is a failed check, an always-equal
result fails.

The reference, the solution notebook's cell and every variant against both checks: tests/test_exercises.py (from the
registry)."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from cell_checks import cell_function, failure_messages  # noqa: E402

from autograde.checks.qa import model as hidden  # noqa: E402
from autograde.mistakes.qa import model as mistakes  # noqa: E402
from autograde.reference.qa import model as ref  # noqa: E402
from autograde.variants.qa.model import VARIANTS  # noqa: E402
from course_lib.checking import CheckFailed, NotImplementedYet  # noqa: E402
from course_lib.expected import load as load_expected  # noqa: E402
from course_lib.qa import model as visible  # noqa: E402

from conftest import AlwaysEqual  # noqa: E402

STEM = "07_qa"
NOTEBOOK_IMPORTS = "import keras\nimport numpy as np\n"
CHECKS = (visible.check_build_qa_model, hidden.grade_build_qa_model)


def message_of(catalogue, name: str) -> str:
    return next(mistake.message for mistake in catalogue if mistake.name == name)


def define(source: str):
    return cell_function(source, "build_qa_model", imports=NOTEBOOK_IMPORTS)


def both_checks(fn) -> list[str]:
    """The failure message of the visible and of the hidden check ("" for a pass)."""
    return failure_messages(CHECKS, fn)


# ------------------------------------------------------------------------------------------------
# The reference and the stored expected values


def test_reference_is_dense2_on_the_sequence_output():
    config = visible.TINY_BACKBONE
    weights, head = visible.seeded_classifier_weights(config, 2, 5)
    batches = visible.classifier_batches(np.random.default_rng(5), config, [(3, 8)])
    backbone = visible.tiny_backbone(config, weights)
    model = ref.build_qa_model(backbone, dropout=0.3)
    dense = model.get_layer("span_logits")
    dense.kernel.assign(head["kernel"])
    dense.bias.assign(head["bias"])
    outputs = model(batches[0], training=False)
    assert isinstance(outputs, list) and len(outputs) == 2 and all(o.shape == (3, 8) for o in outputs)
    forward = ref.backbone_forward(config, weights, batches[0])
    start, end = ref.span_logits(forward["sequence_output"], head["kernel"], head["bias"])
    np.testing.assert_allclose(np.asarray(outputs[0]), start, atol=1e-5)
    np.testing.assert_allclose(np.asarray(outputs[1]), end, atol=1e-5)
    hand = forward["sequence_output"] @ head["kernel"].astype(np.float64) + head["bias"]
    np.testing.assert_allclose(ref.stacked_span_logits(forward["sequence_output"], head["kernel"], head["bias"]),
                               np.moveaxis(hand, -1, 0))
    assert len(model.trainable_weights) == len(backbone.weights) + 2
    assert dense.activation.__name__ == "linear"


def test_every_mistake_is_stored_for_the_visible_check():
    stored = load_expected(STEM, "model", "build_qa_model")
    assert {name for case in stored.values() for batch in case["mistakes"] for name in batch} == \
        {mistake.name for mistake in mistakes.LOGITS}
    assert {name for case in stored.values() for name in case["shapes"]} == {m.name for m in mistakes.SHAPES}
    for case in stored.values():
        shapes = [visible._shapes(entry["value"]) for entry in case["shapes"].values()]
        assert len(shapes) == len(set(shapes)), "two shape mistakes give the same shapes"


def test_every_named_mistake_has_a_wrong_answer_that_shows_it():
    """Each mistake of the catalogues is the message of a wrong variant (autograde.variants.qa.model), but one."""
    shown = {v.message for v in VARIANTS if not v.correct}
    used = {(kind, m.name) for kind in ("SHAPES", "LOGITS") for m in getattr(mistakes, kind) if m.message in shown}
    used.add(("SHAPES", "no_head"))  # test_the_backbones_vectors_are_not_logits
    assert used == {(kind, m.name) for kind in ("SHAPES", "LOGITS") for m in getattr(mistakes, kind)}


# ------------------------------------------------------------------------------------------------
# The reference, the solution cell and the variants against both checks: tests/test_exercises.py; here what is
# particular to this exercise


def test_whole_cell_variants_and_four_wrong_ones():
    assert sum(not v.correct for v in VARIANTS) >= 4
    assert all(v.source for v in VARIANTS), "whole-cell variants only: the solution cell may still change"


# ------------------------------------------------------------------------------------------------
# Unfinished, crashing, always-equal and other wrong answers


def test_unfinished_stays_unfinished():
    def unfinished(backbone, dropout=0.1):
        raise NotImplementedError()

    with pytest.raises(NotImplementedYet):
        visible.check_build_qa_model(unfinished)
    with pytest.raises(NotImplementedError):
        hidden.grade_build_qa_model(unfinished)


def test_a_crash_is_a_failed_check_naming_the_error():
    def crashing(backbone, dropout=0.1):
        return keras.Model(backbone.input, [backbone.input["token_ids"] + undefined])  # noqa: F821

    assert all("NameError" in message for message in both_checks(crashing))


def test_always_equal_results_fail():
    messages = both_checks(lambda backbone, dropout=0.1: AlwaysEqual())
    assert all("should return a keras.Model" in m for m in messages), messages


@pytest.mark.thorough
def test_the_backbone_itself_is_not_a_span_model():
    messages = both_checks(lambda backbone, dropout=0.1: backbone)
    assert all("returns a dict" in message for message in messages), messages


@pytest.mark.thorough
def test_the_backbones_vectors_are_not_logits():
    def vectors(backbone, dropout=0.1):
        return keras.Model(backbone.input, backbone(backbone.input)["sequence_output"])

    assert all(message_of(mistakes.SHAPES, "no_head") in m for m in both_checks(vectors))


@pytest.mark.thorough
def test_an_inverted_mask_a_missing_bias_and_an_extra_layer_are_named():
    def inverted(backbone, dropout=0.1):
        inputs = backbone.input
        vectors = backbone({**inputs, "padding_mask": 1 - inputs["padding_mask"]})["sequence_output"]
        logits = keras.layers.Dense(2)(keras.layers.Dropout(dropout)(vectors))
        return keras.Model(inputs, [logits[..., 0], logits[..., 1]])

    def unbiased(backbone, dropout=0.1):
        vectors = keras.layers.Dropout(dropout)(backbone(backbone.input)["sequence_output"])
        logits = keras.layers.Dense(2, use_bias=False, name="no_bias")(vectors)
        return keras.Model(backbone.input, [logits[..., 0], logits[..., 1]])

    def deeper(backbone, dropout=0.1):
        vectors = keras.layers.Dropout(dropout)(backbone(backbone.input)["sequence_output"])
        logits = keras.layers.Dense(2)(keras.layers.Dense(32, activation="relu")(vectors))
        return keras.Model(backbone.input, [logits[..., 0], logits[..., 1]])

    assert all("the backbone attends to the padding" in m for m in both_checks(inverted))
    assert all("no_bias has no bias" in m for m in both_checks(unbiased))
    assert all("kernel (32, 2)" in m for m in both_checks(deeper))


def test_a_dict_of_outputs_is_told_to_be_a_list():
    def named_outputs(backbone, dropout=0.1):
        logits = keras.layers.Dense(2)(keras.layers.Dropout(dropout)(backbone(backbone.input)["sequence_output"]))
        return keras.Model(backbone.input, {"start": logits[..., 0], "end": logits[..., 1]})

    assert all("returns a dict" in m and "[start_logits, end_logits]" in m for m in both_checks(named_outputs))


# ------------------------------------------------------------------------------------------------
# Through the wire: the hidden check with the learner's function behind a handle (a real Remote and agent)


VARIANTS_BY_WHAT = {v.what: v for v in VARIANTS}


@pytest.mark.thorough
def test_hidden_check_through_handles(tmp_path, capsys):
    from in_process_kernel import InProcessKernel

    from autograde.remote import Remote

    namespace = {"two_heads": define(VARIANTS_BY_WHAT["two Dense(1) heads, the end head created first"].source),
                 "swapped": define(VARIANTS_BY_WHAT["start and end swapped"].source)}
    kernel = InProcessKernel(tmp_path, namespace)
    remote = Remote(kernel)
    hidden.grade_build_qa_model(remote.lookup("two_heads"))
    assert kernel.requests <= 1 + 2 * len(hidden.QA_CASES)  # the lookup, then the helper and one call per case
    assert capsys.readouterr().out.count("\N{CHECK MARK}") == 1
    with pytest.raises(CheckFailed, match="start and end are swapped"):
        hidden.grade_build_qa_model(remote.lookup("swapped"))
