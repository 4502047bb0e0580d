"""Assignment 04, Encoder, Decoder and Transformer: the correct composites (autograde.reference.transformer.
keras_layers) pass the visible checks (course_lib.transformer.stacks, with test doubles as parts) and the
hidden checks (autograde.checks.transformer.stacks, with reference parts); each usual mistake, a subclass
changing `call`, is named; a composite keeps its points when its part is wrong."""

from __future__ import annotations

import inspect
import types

import numpy as np
import pytest
import tensorflow as tf
from test_04_transformer_layers import CrossQueryIsXDecoderLayer, NoResidualEncoderLayer  # noqa: E402

from autograde.checks.transformer import stacks as hidden  # noqa: E402
from autograde.reference.transformer import keras_layers  # noqa: E402
from autograde.reference.transformer import stacks as ref  # noqa: E402
from autograde.reference.transformer.keras_layers import Decoder, Encoder, Transformer  # noqa: E402
from course_lib import keras_weights  # noqa: E402
from course_lib.checking import CheckFailed  # noqa: E402
from course_lib.layers import positional_encoding  # noqa: E402
from course_lib.transformer import stacks as visible  # noqa: E402

# ------------------------------------------------------------------------------------------------
# Reference


@pytest.mark.thorough
def test_reference_stacks_match_keras():
    rng = np.random.default_rng(2)
    config = {"num_layers": 2, "embedding_dim": 8, "num_heads": 2, "fully_connected_dim": 16,
              "input_vocab_size": 11, "target_vocab_size": 9}
    inputs, targets = np.array([[3, 7, 1, 0, 0], [2, 5, 9, 4, 6]]), np.array([[1, 5, 7], [2, 8, 0]])
    padding = (inputs != 0).astype(np.float32)[:, None, :]
    look_ahead = np.tril(np.ones((3, 3), np.float32))[None]
    model = Transformer(2, 8, 2, 16, 11, 9, 7, 6)
    kwargs = dict(training=False, enc_padding_mask=tf.constant(padding), look_ahead_mask=tf.constant(look_ahead),
                  dec_padding_mask=tf.constant(padding))
    model(tf.constant(inputs), tf.constant(targets), **kwargs)
    weights = keras_weights.seed_weights(model, "transformer", config, seed=rng.integers(100))
    logits, attention = model(tf.constant(inputs), tf.constant(targets), **kwargs)
    expected, expected_attention = ref.transformer(weights, inputs, targets, positional_encoding(7, 8),
                                                   positional_encoding(6, 8), 2, padding, look_ahead, padding)
    np.testing.assert_allclose(logits, expected, atol=1e-4)
    assert list(attention) == list(expected_attention) == ref.attention_keys(2)
    for key in attention:
        np.testing.assert_allclose(attention[key], expected_attention[key], atol=1e-5)
    assert ref.attention_keys(2) == ["decoder_layer1_block1_self_att", "decoder_layer1_block2_decenc_att",
                                     "decoder_layer2_block1_self_att", "decoder_layer2_block2_decenc_att"]


# (The reference composites pass both checks: tests/test_registry.py.)


# ------------------------------------------------------------------------------------------------
# Usual mistakes, each in one place, and the message that names it


class UnscaledEncoder(Encoder):
    def call(self, x, training=None, mask=None):
        x = self.embedding(x) + self.pos_encoding[:, : tf.shape(x)[1], :]
        for layer in self.enc_layers:
            x = layer(x, training=training, mask=mask)
        return x


class NoPositionsEncoder(Encoder):
    def call(self, x, training=None, mask=None):
        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))
        for layer in self.enc_layers:
            x = layer(x, training=training, mask=mask)
        return x


class UnslicedEncoder(Encoder):
    def call(self, x, training=None, mask=None):
        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32)) + self.pos_encoding
        for layer in self.enc_layers:
            x = layer(x, training=training, mask=mask)
        return x


class MaskDroppingEncoder(Encoder):
    def call(self, x, training=None, mask=None):
        return super().call(x, training=training, mask=None)


class PositionalArgumentsEncoder(Encoder):
    def call(self, x, training=None, mask=None):
        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))
        x += self.pos_encoding[:, : tf.shape(x)[1], :]
        for layer in self.enc_layers:
            x = layer(x, training, mask)
        return x


ENCODER_CASES = [
    (UnscaledEncoder, "not multiplied by sqrt\\(embedding_dim\\)"),
    (NoPositionsEncoder, "positional encoding is not added"),
    (UnslicedEncoder, "slice the positional encoding"),
    (PositionalArgumentsEncoder, "by keyword"),
]


@pytest.mark.parametrize("layer, message", ENCODER_CASES, ids=[c[0].__name__ for c in ENCODER_CASES])
@pytest.mark.parametrize("check", [visible.check_encoder, hidden.grade_encoder], ids=["visible", "hidden"])
def test_encoder_mistakes_are_named(check, layer, message):
    with pytest.raises(CheckFailed, match=message):
        check(layer)


@pytest.mark.parametrize("check, message", [(visible.check_encoder, "received no mask"),
                                            (hidden.grade_encoder, "the mask is not passed on")],
                         ids=["visible", "hidden"])
def test_encoder_without_mask_is_named(check, message):
    with pytest.raises(CheckFailed, match=message):
        check(MaskDroppingEncoder)


def notebook_class(name: str, **parts):
    """The reference class `name` defined again in a namespace of its own, as in a notebook whose `parts` (names
    its constructor uses) are the learner's: the checks must grade it with reference parts."""
    namespace = {**vars(keras_layers), **parts}
    exec(compile(inspect.getsource(getattr(keras_layers, name)), keras_layers.__file__, "exec"), namespace)
    return namespace[name]


@pytest.mark.thorough
def test_encoder_keeps_its_points_when_only_encoder_layer_is_wrong(capsys):
    Encoder = notebook_class("Encoder", EncoderLayer=NoResidualEncoderLayer)  # noqa: N806
    assert Encoder.__init__.__globals__["EncoderLayer"] is NoResidualEncoderLayer
    visible.check_encoder(Encoder)
    hidden.grade_encoder(Encoder)
    out = capsys.readouterr().out
    assert out.count("\N{CHECK MARK}") == 2
    assert "Note: Encoder is right, but with your own EncoderLayer" in out


class ZeroBasedKeysDecoder(Decoder):
    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        x, weights = super().call(x, enc_output, training=training, look_ahead_mask=look_ahead_mask,
                                  padding_mask=padding_mask)
        return x, {key.replace("layer1", "layer0").replace("layer2", "layer1"): v for key, v in weights.items()}


class SwappedMasksDecoder(Decoder):
    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        return super().call(x, enc_output, training=training, look_ahead_mask=padding_mask,
                            padding_mask=look_ahead_mask)


class UnscaledDecoder(Decoder):
    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        self.embedding_dim = 1  # sqrt(1) = 1: the scaling is lost
        return super().call(x, enc_output, training=training, look_ahead_mask=look_ahead_mask,
                            padding_mask=padding_mask)


@pytest.mark.parametrize("check, layer, message", [
    (visible.check_decoder, ZeroBasedKeysDecoder, "layers numbered from 1"),
    (hidden.grade_decoder, ZeroBasedKeysDecoder, "numbered from 1"),
    (visible.check_decoder, SwappedMasksDecoder, "look_ahead_mask received padding_mask"),
    (hidden.grade_decoder, SwappedMasksDecoder, "the masks are swapped"),
    (visible.check_decoder, UnscaledDecoder, "not multiplied by sqrt"),
    (hidden.grade_decoder, UnscaledDecoder, "not multiplied by sqrt"),
])
@pytest.mark.thorough
def test_decoder_mistakes_are_named(check, layer, message):
    with pytest.raises(CheckFailed, match=message):
        check(layer)


@pytest.mark.thorough
def test_decoder_keeps_its_points_when_only_decoder_layer_is_wrong(capsys):
    Decoder = notebook_class("Decoder", DecoderLayer=CrossQueryIsXDecoderLayer)  # noqa: N806
    assert Decoder.__init__.__globals__["DecoderLayer"] is CrossQueryIsXDecoderLayer
    visible.check_decoder(Decoder)
    hidden.grade_decoder(Decoder)
    out = capsys.readouterr().out
    assert out.count("\N{CHECK MARK}") == 2
    assert "Note: Decoder is right, but with your own DecoderLayer" in out


class SoftmaxTransformer(Transformer):
    def call(self, input_sentence, output_sentence, training=None, enc_padding_mask=None, look_ahead_mask=None,
             dec_padding_mask=None):
        logits, weights = super().call(input_sentence, output_sentence, training=training,
                                       enc_padding_mask=enc_padding_mask, look_ahead_mask=look_ahead_mask,
                                       dec_padding_mask=dec_padding_mask)
        return tf.nn.softmax(logits), weights


class NoFinalLayerTransformer(Transformer):
    def call(self, input_sentence, output_sentence, training=None, enc_padding_mask=None, look_ahead_mask=None,
             dec_padding_mask=None):
        enc_output = self.encoder(input_sentence, training=training, mask=enc_padding_mask)
        return self.decoder(output_sentence, enc_output, training=training, look_ahead_mask=look_ahead_mask,
                            padding_mask=dec_padding_mask)


class SwappedMasksTransformer(Transformer):
    def call(self, input_sentence, output_sentence, training=None, enc_padding_mask=None, look_ahead_mask=None,
             dec_padding_mask=None):
        return super().call(input_sentence, output_sentence, training=training, enc_padding_mask=enc_padding_mask,
                            look_ahead_mask=dec_padding_mask, dec_padding_mask=look_ahead_mask)


@pytest.mark.parametrize("check, layer, message", [
    (visible.check_transformer, SoftmaxTransformer, "return the final layer's logits"),
    (hidden.grade_transformer, SoftmaxTransformer, "return the final layer's logits"),
    (visible.check_transformer, NoFinalLayerTransformer, "final_layer has no weights yet: it was never used"),
    (hidden.grade_transformer, NoFinalLayerTransformer, "final_layer has no weights yet: it was never used"),
    (visible.check_transformer, SwappedMasksTransformer, "look_ahead_mask received dec_padding_mask"),
    (hidden.grade_transformer, SwappedMasksTransformer, "the decoder's masks are swapped"),
])
# A Transformer that never uses its final layer makes Keras warn about an unbuilt layer; expected here.
@pytest.mark.thorough
@pytest.mark.filterwarnings("ignore:`build\\(\\)` was called on layer:UserWarning")
def test_transformer_mistakes_are_named(check, layer, message):
    with pytest.raises(CheckFailed, match=message):
        check(layer)


@pytest.mark.thorough
def test_transformer_keeps_its_points_when_encoder_and_decoder_are_wrong():
    Transformer = notebook_class("Transformer", Encoder=UnscaledEncoder, Decoder=SwappedMasksDecoder)  # noqa: N806
    assert Transformer.__init__.__globals__["Encoder"] is UnscaledEncoder
    visible.check_transformer(Transformer)
    hidden.grade_transformer(Transformer)


# ------------------------------------------------------------------------------------------------
# Training mode: the stacks' own dropout acts, and every part runs in training mode


def in_a_notebook(cls):
    """`cls`, a reference composite with another `call` (written without super()), as a notebook defines it:
    its constructor and `call` share one namespace, where the checks swap its parts for reference ones or probes."""
    base = notebook_class(cls.__bases__[0].__name__)
    call = cls.__dict__["call"]
    call = types.FunctionType(call.__code__, base.__init__.__globals__, "call", call.__defaults__, call.__closure__)
    return type(cls.__name__, (base,), {"call": call})


class NoDropoutEncoder(Encoder):
    def call(self, x, training=None, mask=None):
        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))
        x += self.pos_encoding[:, : tf.shape(x)[1], :]
        for layer in self.enc_layers:
            x = layer(x, training=training, mask=mask)
        return x


class LayersNeverTrainingEncoder(Encoder):
    def call(self, x, training=None, mask=None):
        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))
        x = self.dropout(x + self.pos_encoding[:, : tf.shape(x)[1], :], training=training)
        for layer in self.enc_layers:
            x = layer(x, training=False, mask=mask)
        return x


class ImplicitTrainingEncoder(Encoder):
    """Right: Keras passes the call's `training` on to the dropout and the layers called without it."""

    def call(self, x, training=None, mask=None):
        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))
        x = self.dropout(x + self.pos_encoding[:, : tf.shape(x)[1], :])
        for layer in self.enc_layers:
            x = layer(x, mask=mask)
        return x


class NoDropoutDecoder(Decoder):
    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        x = self.embedding(x) * tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))
        x += self.pos_encoding[:, : tf.shape(x)[1], :]
        weights = {}
        for i, layer in enumerate(self.dec_layers):
            x, weights[f"decoder_layer{i + 1}_block1_self_att"], weights[f"decoder_layer{i + 1}_block2_decenc_att"] = (
                layer(x, enc_output, training=training, look_ahead_mask=look_ahead_mask, padding_mask=padding_mask))
        return x, weights


class EncoderNeverTrainingTransformer(Transformer):
    def call(self, input_sentence, output_sentence, training=None, enc_padding_mask=None, look_ahead_mask=None,
             dec_padding_mask=None):
        enc_output = self.encoder(input_sentence, training=False, mask=enc_padding_mask)
        dec_output, weights = self.decoder(output_sentence, enc_output, training=training,
                                           look_ahead_mask=look_ahead_mask, padding_mask=dec_padding_mask)
        return self.final_layer(dec_output), weights


@pytest.mark.parametrize("check, layer, message", [
    (hidden.grade_encoder, NoDropoutEncoder, "the Encoder's own dropout never acts in training"),
    (hidden.grade_encoder, LayersNeverTrainingEncoder, "the encoder layers never run in training mode"),
    (hidden.grade_decoder, NoDropoutDecoder, "the Decoder's own dropout never acts in training"),
    (hidden.grade_transformer, EncoderNeverTrainingTransformer, "the encoder never runs in training mode"),
], ids=lambda value: getattr(value, "__name__", "message"))
@pytest.mark.thorough
def test_training_mode_mistakes_are_named(check, layer, message):
    with pytest.raises(CheckFailed, match=message):
        check(in_a_notebook(layer))


@pytest.mark.thorough
def test_parts_called_without_training_pass(capsys):
    hidden.grade_encoder(in_a_notebook(ImplicitTrainingEncoder))
    assert "its layers run in training mode" in capsys.readouterr().out
