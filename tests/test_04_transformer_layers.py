"""Assignment 04, EncoderLayer and DecoderLayer: the reference agrees with Keras and with hand-computed numbers;
the correct layers (autograde.reference.transformer.keras_layers, the solution notebook's) pass the visible
checks (course_lib.transformer.layers) and the hidden checks (autograde.checks.transformer.layers); each usual
mistake, a subclass changing `call`, is diagnosed with the right message; an always-equal result fails;
NotImplementedError passes. The notebook template's __init__ of every graded class is the reference's."""

from __future__ import annotations

import ast
import inspect
import textwrap

import nbformat
import numpy as np
import pytest
import tensorflow as tf

from autograde.checks.transformer import layers as hidden  # noqa: E402
from autograde.reference.transformer import keras_layers  # noqa: E402
from autograde.reference.transformer import layers as ref  # noqa: E402
from autograde.reference.transformer.keras_layers import DecoderLayer, EncoderLayer  # noqa: E402
from course_lib import keras_weights  # noqa: E402
from course_lib.checking import CheckFailed, call_layer  # noqa: E402
from course_lib.transformer import layers as visible  # noqa: E402

from conftest import AlwaysEqual, solution_path  # noqa: E402

# ------------------------------------------------------------------------------------------------
# The notebook template's __init__ is the reference's

# course_lib.layers.EncoderLayer, the reference, serves assignment 05 too: it takes the feed-forward activation
# (and Keras's layer keywords), which the assignment's template does not have.
EXTRA_PARAMETERS = {"EncoderLayer": {"activation", "kwargs"}}


def _without_parameters(init: ast.FunctionDef, names: set[str]) -> ast.FunctionDef:
    """`init` without the parameters `names` and the keyword arguments that pass them on (name=name, **name)."""
    arguments = init.args
    kept = [arg for arg in arguments.args if arg.arg not in names]
    first_default = len(arguments.args) - len(arguments.defaults)
    arguments.defaults = [default for i, default in enumerate(arguments.defaults)
                          if arguments.args[first_default + i].arg not in names]
    arguments.args = kept
    if arguments.kwarg is not None and arguments.kwarg.arg in names:
        arguments.kwarg = None
    for node in ast.walk(init):
        if isinstance(node, ast.Call):
            node.keywords = [keyword for keyword in node.keywords
                             if not (isinstance(keyword.value, ast.Name) and keyword.value.id in names
                                     and keyword.arg in (None, keyword.value.id))]
    return init


def init_dump(source: str, class_name: str, extra: set[str] = frozenset()) -> str:
    """ast.dump of `class_name.__init__` in `source` (a class or a cell), docstring and `extra` parameters removed."""
    for node in ast.walk(ast.parse(textwrap.dedent(source))):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            init = next(item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__")
            if init.body and isinstance(init.body[0], ast.Expr) and isinstance(init.body[0].value, ast.Constant):
                init.body = init.body[1:]
            return ast.dump(_without_parameters(init, set(extra)))
    raise AssertionError(f"no class {class_name} in the source")


@pytest.mark.parametrize("name", ["EncoderLayer", "Encoder", "DecoderLayer", "Decoder", "Transformer"])
def test_template_init_is_the_reference_init(name):
    notebook = nbformat.read(solution_path("04_transformer"), as_version=4)
    cells = [cell.source for cell in notebook.cells
             if cell.metadata.get("nbgrader", {}).get("grade_id") == name]
    assert len(cells) == 1, f"one solution cell with grade_id {name}"
    extra = EXTRA_PARAMETERS.get(name, set())
    assert init_dump(cells[0], name) == init_dump(inspect.getsource(getattr(keras_layers, name)), name, extra), (
        f"the template's {name}.__init__ differs from autograde.reference.transformer.keras_layers.{name}'s")


def test_only_the_named_extra_parameters_are_ignored():
    source = inspect.getsource(EncoderLayer)
    assert init_dump(source, "EncoderLayer") != init_dump(source, "EncoderLayer", {"activation", "kwargs"})
    assert "activation" not in init_dump(source, "EncoderLayer", {"activation", "kwargs"})


# ------------------------------------------------------------------------------------------------
# Reference


def test_layer_norm_and_attention_by_hand():
    normed = ref.layer_norm(np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2), 0.0)
    np.testing.assert_allclose(normed, [[-1.0, 1.0]])
    # One head, identity projections, zero biases: plain scaled dot-product attention.
    d = 2
    w = {f"{name}_dense.kernel": np.eye(d).reshape(d, 1, d) for name in ("query", "key", "value")}
    w.update({f"{name}_dense.bias": np.zeros((1, d)) for name in ("query", "key", "value")})
    w["output_dense.kernel"], w["output_dense.bias"] = np.eye(d).reshape(1, d, d), np.zeros(d)
    x = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    output, weights = ref.multi_head_attention(w, "", x, x, x, np.array([[[1.0, 0.0]]]))
    np.testing.assert_array_equal(weights[0, 0], [[1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(output[0], [[1.0, 0.0], [1.0, 0.0]])
    top = 1 / (1 + np.exp(-1 / np.sqrt(2)))
    _, weights = ref.multi_head_attention(w, "", x, x, x)
    np.testing.assert_allclose(weights[0, 0], [[top, 1 - top], [1 - top, top]])


def _seeded(layer, kind, config, *args, **kwargs):
    layer(*args, **kwargs)
    weights = keras_weights.seed_weights(layer, kind, config, seed=3)
    return weights, layer(*args, **kwargs)


@pytest.mark.thorough
def test_reference_matches_keras_layers_with_every_mask():
    rng = np.random.default_rng(0)
    config = {"embedding_dim": 8, "num_heads": 2, "fully_connected_dim": 16}
    x, enc = rng.standard_normal((2, 5, 8)).astype("float32"), rng.standard_normal((2, 3, 8)).astype("float32")
    padding5 = np.array([[[1, 1, 1, 0, 0]], [[1, 1, 1, 1, 1]]], np.float32)
    look_ahead = np.tril(np.ones((5, 5), np.float32))[None]
    for mask in (None, padding5, look_ahead, padding5 * look_ahead):
        weights, output = _seeded(EncoderLayer(8, 2, 16), "encoder_layer", config, tf.constant(x), training=False,
                                  mask=None if mask is None else tf.constant(mask))
        np.testing.assert_allclose(output, ref.encoder_layer(weights, x, mask), atol=1e-5)
    padding3 = np.array([[[1, 1, 0]], [[1, 1, 1]]], np.float32)
    for look, pad in ((None, None), (look_ahead, padding3), (look_ahead * padding5, padding3)):
        weights, (out, w1, w2) = _seeded(DecoderLayer(8, 2, 16), "decoder_layer", config, tf.constant(x),
                                         tf.constant(enc), training=False,
                                         look_ahead_mask=None if look is None else tf.constant(look),
                                         padding_mask=None if pad is None else tf.constant(pad))
        expected = ref.decoder_layer(weights, x, enc, look, pad)
        for actual, wanted in zip((out, w1, w2), expected, strict=True):
            np.testing.assert_allclose(actual, wanted, atol=1e-5)


def test_reference_encoder_layer_takes_an_activation():
    """Assignment 05 reuses the reference encoder layer with its GELU: `activation` reaches the feed-forward."""
    rng = np.random.default_rng(1)
    config = {"embedding_dim": 8, "num_heads": 2, "fully_connected_dim": 16}
    x = rng.standard_normal((2, 4, 8)).astype("float32")
    weights, output = _seeded(EncoderLayer(8, 2, 16, layernorm_eps=1e-12, activation="tanh"), "encoder_layer",
                              config, tf.constant(x), training=False)
    np.testing.assert_allclose(output, ref.encoder_layer(weights, x, eps=1e-12, activation=np.tanh), atol=1e-5)
    assert not np.allclose(output, ref.encoder_layer(weights, x, eps=1e-12), atol=1e-3)


def test_keras_accepts_the_course_masks_and_keyword_arguments():
    """Keras 3.15: (batch, 1, S) and (1, T, T) masks broadcast in MultiHeadAttention; non-tensors must be
    keywords; a layer with compute_mask returning None takes `mask=` without warnings."""
    import warnings

    layer = EncoderLayer(8, 2, 16)
    x = tf.random.normal((2, 4, 8))
    with pytest.raises(ValueError, match="positional arguments"):
        layer(x, False, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layer(x, training=False, mask=tf.constant([[[1, 1, 0, 0]], [[1, 1, 1, 1]]], tf.float32))
        layer(x, training=False, mask=tf.linalg.band_part(tf.ones((1, 4, 4)), -1, 0))
    with pytest.raises(CheckFailed, match="by keyword"):
        call_layer(layer, x, False, None)


# (The reference layers pass both checks: tests/test_registry.py.)


# ------------------------------------------------------------------------------------------------
# Usual mistakes, each in one place, and the message that names it


class PreNormEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        normed = self.layernorm1(x)
        h = x + self.mha(normed, normed, normed, attention_mask=mask, training=training)
        return h + self.dropout_ffn(self.ffn(self.layernorm2(h)), training=training)


class NoResidualEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        out1 = self.layernorm1(self.mha(x, x, x, attention_mask=mask, training=training))
        return self.layernorm2(out1 + self.dropout_ffn(self.ffn(out1), training=training))


class SwappedNormsEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        out1 = self.layernorm2(x + self.mha(x, x, x, attention_mask=mask, training=training))
        return self.layernorm1(out1 + self.dropout_ffn(self.ffn(out1), training=training))


class UnmaskedEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        return super().call(x, training=training, mask=None)


class PositionalMaskEncoderLayer(EncoderLayer):
    """The common course's `self.mha(x, x, x, mask)`: in Keras 3 the fourth argument is query_mask."""

    def call(self, x, training=None, mask=None):
        out1 = self.layernorm1(x + self.mha(x, x, x, mask, training=training))
        return self.layernorm2(out1 + self.dropout_ffn(self.ffn(out1), training=training))


class AlwaysTrainingEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        out1 = self.layernorm1(x + self.mha(x, x, x, attention_mask=mask, training=training))
        return self.layernorm2(out1 + self.dropout_ffn(self.ffn(out1), training=True))


class AlwaysEqualEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        self.mha(x, x, x, attention_mask=mask)
        self.layernorm1(self.ffn(x))
        self.layernorm2(x)
        return AlwaysEqual()


class UnfinishedEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        raise NotImplementedError()


ENCODER_LAYER_CASES = [
    (PreNormEncoderLayer, "pre-norm"),
    (NoResidualEncoderLayer, "residual connection around the self-attention is missing"),
    (SwappedNormsEncoderLayer, "layernorm1 and layernorm2 are swapped"),
    (UnmaskedEncoderLayer, "the mask is not used"),
    (PositionalMaskEncoderLayer, "fourth positional argument of MultiHeadAttention is query_mask"),
    (AlwaysTrainingEncoderLayer, "dropout is active at inference"),
]


@pytest.mark.thorough
@pytest.mark.parametrize("layer, message", ENCODER_LAYER_CASES, ids=[c[0].__name__ for c in ENCODER_LAYER_CASES])
@pytest.mark.parametrize("check", [visible.check_encoder_layer, hidden.grade_encoder_layer],
                         ids=["visible", "hidden"])
def test_encoder_layer_mistakes_are_named(check, layer, message):
    with pytest.raises(CheckFailed, match=message):
        check(layer)


@pytest.mark.parametrize("check", [visible.check_encoder_layer, hidden.grade_encoder_layer], ids=["visible", "hidden"])
def test_always_equal_fails_and_unfinished_passes_through(check):
    with pytest.raises(CheckFailed, match="could not be read as an array"):
        check(AlwaysEqualEncoderLayer)
    with pytest.raises(NotImplementedError):
        check(UnfinishedEncoderLayer)


class SwappedMasksDecoderLayer(DecoderLayer):
    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        return super().call(x, enc_output, training=training, look_ahead_mask=padding_mask,
                            padding_mask=look_ahead_mask)


class NoLookAheadDecoderLayer(DecoderLayer):
    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        return super().call(x, enc_output, training=training, look_ahead_mask=None, padding_mask=padding_mask)


class CrossQueryIsXDecoderLayer(DecoderLayer):
    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        a1, w1 = self.mha1(x, x, x, attention_mask=look_ahead_mask, return_attention_scores=True)
        out1 = self.layernorm1(x + a1)
        a2, w2 = self.mha2(x, enc_output, enc_output, attention_mask=padding_mask, return_attention_scores=True)
        out2 = self.layernorm2(out1 + a2)
        return self.layernorm3(out2 + self.dropout_ffn(self.ffn(out2))), w1, w2


class WeightsSwappedDecoderLayer(DecoderLayer):
    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        out, w1, w2 = super().call(x, enc_output, training=training, look_ahead_mask=look_ahead_mask,
                                   padding_mask=padding_mask)
        return out, w2, w1


@pytest.mark.parametrize("check, layer, message", [
    (visible.check_decoder_layer, SwappedMasksDecoderLayer, "look_ahead_mask \\(1, T, T\\) belongs to the self"),
    (hidden.grade_decoder_layer, SwappedMasksDecoderLayer, "the masks are swapped"),
    (visible.check_decoder_layer, NoLookAheadDecoderLayer, "masked position: pass the mask"),
    (hidden.grade_decoder_layer, NoLookAheadDecoderLayer, "self-attention \\(mha1\\) is not masked"),
    (visible.check_decoder_layer, CrossQueryIsXDecoderLayer, "the cross-attention's query is x"),
    (hidden.grade_decoder_layer, CrossQueryIsXDecoderLayer, "the cross-attention's query is x"),
    (visible.check_decoder_layer, WeightsSwappedDecoderLayer, "self-attention weights .* has shape"),
    (hidden.grade_decoder_layer, WeightsSwappedDecoderLayer, "returned in the wrong order"),
])
@pytest.mark.thorough
def test_decoder_layer_mistakes_are_named(check, layer, message):
    with pytest.raises(CheckFailed, match=message):
        check(layer)


# ------------------------------------------------------------------------------------------------
# Training mode: each dropout acts with training=True (the hidden checks; the visible ones run inference only)


class NoFfnDropoutEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        out1 = self.layernorm1(x + self.mha(x, x, x, attention_mask=mask, training=training))
        return self.layernorm2(out1 + self.ffn(out1))


class AttentionNeverTrainingEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        out1 = self.layernorm1(x + self.mha(x, x, x, attention_mask=mask, training=False))
        return self.layernorm2(out1 + self.dropout_ffn(self.ffn(out1), training=training))


class OutputDropoutEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        out1 = self.layernorm1(x + self.mha(x, x, x, attention_mask=mask, training=training))
        return self.dropout_ffn(self.layernorm2(out1 + self.ffn(out1)), training=training)


class NeverTrainingEncoderLayer(EncoderLayer):
    def call(self, x, training=None, mask=None):
        return super().call(x, training=False, mask=mask)


class ImplicitTrainingEncoderLayer(EncoderLayer):
    """Right: Keras passes the call's `training` on to sublayers called without it."""

    def call(self, x, training=None, mask=None):
        out1 = self.layernorm1(x + self.mha(x, x, x, attention_mask=mask))
        return self.layernorm2(out1 + self.dropout_ffn(self.ffn(out1)))


class CrossAttentionNeverTrainingDecoderLayer(DecoderLayer):
    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        a1, w1 = self.mha1(x, x, x, attention_mask=look_ahead_mask, return_attention_scores=True, training=training)
        out1 = self.layernorm1(x + a1)
        a2, w2 = self.mha2(out1, enc_output, enc_output, attention_mask=padding_mask, return_attention_scores=True,
                           training=False)
        out2 = self.layernorm2(out1 + a2)
        return self.layernorm3(out2 + self.dropout_ffn(self.ffn(out2), training=training)), w1, w2


class NoFfnDropoutDecoderLayer(DecoderLayer):
    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        a1, w1 = self.mha1(x, x, x, attention_mask=look_ahead_mask, return_attention_scores=True, training=training)
        out1 = self.layernorm1(x + a1)
        a2, w2 = self.mha2(out1, enc_output, enc_output, attention_mask=padding_mask, return_attention_scores=True,
                           training=training)
        out2 = self.layernorm2(out1 + a2)
        return self.layernorm3(out2 + self.ffn(out2)), w1, w2


@pytest.mark.parametrize("check, layer, message", [
    (hidden.grade_encoder_layer, NoFfnDropoutEncoderLayer, "self.dropout_ffn never acts in training"),
    (hidden.grade_encoder_layer, AttentionNeverTrainingEncoderLayer, "self-attention's dropout .* call self.mha with"),
    (hidden.grade_encoder_layer, OutputDropoutEncoderLayer, "exact zeros with training=True"),
    (hidden.grade_encoder_layer, NeverTrainingEncoderLayer, "no dropout acts in training"),
    (hidden.grade_decoder_layer, CrossAttentionNeverTrainingDecoderLayer, "cross-attention's dropout"),
    (hidden.grade_decoder_layer, NoFfnDropoutDecoderLayer, "self.dropout_ffn never acts in training"),
], ids=lambda value: getattr(value, "__name__", "message"))
@pytest.mark.thorough
def test_training_mode_mistakes_are_named(check, layer, message):
    with pytest.raises(CheckFailed, match=message):
        check(layer)


def test_sublayers_called_without_training_pass(capsys):
    hidden.grade_encoder_layer(ImplicitTrainingEncoderLayer)
    assert "act in training mode only" in capsys.readouterr().out
