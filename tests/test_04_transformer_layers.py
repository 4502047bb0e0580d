"""Assignment 04: the reference agrees with Keras and with hand-computed numbers; correct layers (written
below the way a learner would) pass the visible checks (course_lib.transformer.layers) and the hidden checks
(autograde.checks.transformer.layers); each usual mistake is diagnosed with the right message; a composite
keeps its points when its part is wrong; an always-equal result fails; NotImplementedError passes."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from autograde.checks.transformer import layers as hidden  # noqa: E402
from autograde.reference.transformer import layers as ref  # noqa: E402
from course_lib import keras_weights  # noqa: E402
from course_lib.checking import CheckFailed  # noqa: E402
from course_lib.layers import positional_encoding  # noqa: E402
from course_lib.transformer import layers as visible  # noqa: E402
from course_lib.transformer.layers import FullyConnected  # noqa: E402

from conftest import AlwaysEqual  # noqa: E402

# ------------------------------------------------------------------------------------------------
# Correct layers, as in the solution notebook. Variants below change one line of `call`.


class EncoderLayer(keras.layers.Layer):
    def __init__(self, embedding_dim, num_heads, fully_connected_dim, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.mha = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embedding_dim // num_heads,
                                                   dropout=dropout_rate)
        self.ffn = FullyConnected(embedding_dim, fully_connected_dim)
        self.layernorm1 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
        self.layernorm2 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
        self.dropout_ffn = keras.layers.Dropout(dropout_rate)

    def compute_mask(self, inputs, previous_mask=None):
        return None

    def call(self, x, training=None, mask=None):
        attention = self.mha(x, x, x, attention_mask=mask, training=training)
        out1 = self.layernorm1(x + attention)
        ffn_output = self.dropout_ffn(self.ffn(out1), training=training)
        return self.layernorm2(out1 + ffn_output)


class Encoder(keras.layers.Layer):
    def __init__(self, num_layers, embedding_dim, num_heads, fully_connected_dim, input_vocab_size,
                 maximum_position_encoding, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.num_layers = num_layers
        self.embedding = keras.layers.Embedding(input_vocab_size, embedding_dim)
        self.pos_encoding = positional_encoding(maximum_position_encoding, embedding_dim)
        self.enc_layers = [EncoderLayer(embedding_dim=embedding_dim, num_heads=num_heads,
                                        fully_connected_dim=fully_connected_dim, dropout_rate=dropout_rate,
                                        layernorm_eps=layernorm_eps) for _ in range(num_layers)]
        self.dropout = keras.layers.Dropout(dropout_rate)

    def compute_mask(self, inputs, previous_mask=None):
        return None

    def call(self, x, training=None, mask=None):
        seq_len = tf.shape(x)[1]
        x = self.embedding(x)
        x *= tf.math.sqrt(tf.cast(self.embedding_dim, tf.float32))
        x += self.pos_encoding[:, :seq_len, :]
        x = self.dropout(x, training=training)
        for i in range(self.num_layers):
            x = self.enc_layers[i](x, training=training, mask=mask)
        return x


class DecoderLayer(keras.layers.Layer):
    def __init__(self, embedding_dim, num_heads, fully_connected_dim, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.mha1 = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embedding_dim // num_heads,
                                                    dropout=dropout_rate)
        self.mha2 = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embedding_dim // num_heads,
                                                    dropout=dropout_rate)
        self.ffn = FullyConnected(embedding_dim, fully_connected_dim)
        self.layernorm1 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
        self.layernorm2 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
        self.layernorm3 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
        self.dropout_ffn = keras.layers.Dropout(dropout_rate)

    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        mult_attn_out1, attn_weights_block1 = self.mha1(x, x, x, attention_mask=look_ahead_mask,
                                                        return_attention_scores=True, training=training)
        Q1 = self.layernorm1(mult_attn_out1 + x)  # noqa: N806
        mult_attn_out2, attn_weights_block2 = self.mha2(Q1, enc_output, enc_output, attention_mask=padding_mask,
                                                        return_attention_scores=True, training=training)
        mult_attn_out2 = self.layernorm2(mult_attn_out2 + Q1)
        ffn_output = self.dropout_ffn(self.ffn(mult_attn_out2), training=training)
        out3 = self.layernorm3(ffn_output + mult_attn_out2)
        return out3, attn_weights_block1, attn_weights_block2


class Decoder(keras.layers.Layer):
    def __init__(self, num_layers, embedding_dim, num_heads, fully_connected_dim, target_vocab_size,
                 maximum_position_encoding, dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.num_layers = num_layers
        self.embedding = keras.layers.Embedding(target_vocab_size, embedding_dim)
        self.pos_encoding = positional_encoding(maximum_position_encoding, embedding_dim)
        self.dec_layers = [DecoderLayer(embedding_dim=embedding_dim, num_heads=num_heads,
                                        fully_connected_dim=fully_connected_dim, dropout_rate=dropout_rate,
                                        layernorm_eps=layernorm_eps) for _ in range(num_layers)]
        self.dropout = keras.layers.Dropout(dropout_rate)

    def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
        seq_len = x.shape[1]
        attention_weights = {}
        x = self.embedding(x) * np.sqrt(self.embedding_dim)
        x = self.dropout(x + self.pos_encoding[:, :seq_len, :], training=training)
        for i in range(self.num_layers):
            x, block1, block2 = self.dec_layers[i](x, enc_output, training=training,
                                                   look_ahead_mask=look_ahead_mask, padding_mask=padding_mask)
            attention_weights[f"decoder_layer{i + 1}_block1_self_att"] = block1
            attention_weights[f"decoder_layer{i + 1}_block2_decenc_att"] = block2
        return x, attention_weights


class Transformer(keras.Model):
    def __init__(self, num_layers, embedding_dim, num_heads, fully_connected_dim, input_vocab_size,
                 target_vocab_size, max_positional_encoding_input, max_positional_encoding_target,
                 dropout_rate=0.1, layernorm_eps=1e-6):
        super().__init__()
        self.encoder = Encoder(num_layers=num_layers, embedding_dim=embedding_dim, num_heads=num_heads,
                               fully_connected_dim=fully_connected_dim, input_vocab_size=input_vocab_size,
                               maximum_position_encoding=max_positional_encoding_input,
                               dropout_rate=dropout_rate, layernorm_eps=layernorm_eps)
        self.decoder = Decoder(num_layers=num_layers, embedding_dim=embedding_dim, num_heads=num_heads,
                               fully_connected_dim=fully_connected_dim, target_vocab_size=target_vocab_size,
                               maximum_position_encoding=max_positional_encoding_target,
                               dropout_rate=dropout_rate, layernorm_eps=layernorm_eps)
        self.final_layer = keras.layers.Dense(target_vocab_size)

    def call(self, input_sentence, output_sentence, training=None, enc_padding_mask=None, look_ahead_mask=None,
             dec_padding_mask=None):
        enc_output = self.encoder(input_sentence, training=training, mask=enc_padding_mask)
        dec_output, attention_weights = self.decoder(output_sentence, enc_output, training=training,
                                                     look_ahead_mask=look_ahead_mask, padding_mask=dec_padding_mask)
        return self.final_layer(dec_output), attention_weights


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
    assert ref.attention_keys(2) == ["decoder_layer1_block1_self_att", "decoder_layer1_block2_decenc_att",
                                     "decoder_layer2_block1_self_att", "decoder_layer2_block2_decenc_att"]


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
        visible.call_layer(layer, x, False, None)


# ------------------------------------------------------------------------------------------------
# Correct layers pass


def test_correct_layers_pass_visible_and_hidden_checks(capsys):
    for check, layer in [(visible.check_encoder_layer, EncoderLayer), (visible.check_encoder, Encoder),
                         (visible.check_decoder_layer, DecoderLayer), (visible.check_decoder, Decoder),
                         (visible.check_transformer, Transformer), (hidden.grade_encoder_layer, EncoderLayer),
                         (hidden.grade_encoder, Encoder), (hidden.grade_decoder_layer, DecoderLayer),
                         (hidden.grade_decoder, Decoder), (hidden.grade_transformer, Transformer)]:
        check(layer)
    out = capsys.readouterr()
    assert out.out.count("\N{CHECK MARK}") == 10 and "Note:" not in out.out
    assert out.err == ""


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


def test_encoder_keeps_its_points_when_only_encoder_layer_is_wrong(monkeypatch, capsys):
    monkeypatch.setitem(globals(), "EncoderLayer", NoResidualEncoderLayer)
    assert Encoder.__init__.__globals__["EncoderLayer"] is NoResidualEncoderLayer
    visible.check_encoder(Encoder)
    hidden.grade_encoder(Encoder)
    out = capsys.readouterr().out
    assert out.count("\N{CHECK MARK}") == 2
    assert "Note: Encoder is right, but with your own EncoderLayer" in out


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
def test_decoder_layer_mistakes_are_named(check, layer, message):
    with pytest.raises(CheckFailed, match=message):
        check(layer)


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
def test_decoder_mistakes_are_named(check, layer, message):
    with pytest.raises(CheckFailed, match=message):
        check(layer)


def test_decoder_keeps_its_points_when_only_decoder_layer_is_wrong(monkeypatch, capsys):
    monkeypatch.setitem(globals(), "DecoderLayer", CrossQueryIsXDecoderLayer)
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
@pytest.mark.filterwarnings("ignore:`build\\(\\)` was called on layer:UserWarning")
def test_transformer_mistakes_are_named(check, layer, message):
    with pytest.raises(CheckFailed, match=message):
        check(layer)


def test_transformer_keeps_its_points_when_encoder_and_decoder_are_wrong(monkeypatch):
    monkeypatch.setitem(globals(), "Encoder", UnscaledEncoder)
    monkeypatch.setitem(globals(), "Decoder", SwappedMasksDecoder)
    visible.check_transformer(Transformer)
    hidden.grade_transformer(Transformer)
