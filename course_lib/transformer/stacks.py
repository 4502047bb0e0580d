"""Assignment 04 (the Transformer's stacks): the visible checks of Encoder, Decoder and Transformer.

A composite is checked with test doubles in place of its parts, so that a mistake in EncoderLayer or
DecoderLayer never makes the Encoder's or Decoder's check fail. A double has the part's constructor and
call signature, no weights, and a simple output that is easy to predict; it records how it was called.
Expected values are generated from the reference (`course_lib/expected/04_transformer.json`, key "stacks").
"""

from __future__ import annotations

import functools

import numpy as np

from course_lib.checking import (
    CheckFailed,
    call_layer,
    expect_close,
    expect_deterministic,
    expect_shape,
    make_layer,
    parts_replaced,
    passed,
    stored_mistakes,
    to_array,
    to_tensor,
)
from course_lib.expected import load as load_expected
from course_lib.keras_weights import seed_weights
from course_lib.transformer.layers import BLOCK, STEM, TRAINING_ADVICE, expect_values, fixed_inputs, outputs_of

POSITION_HINT = "If this is a shape error: slice the positional encoding to the sequence, pos_encoding[:, :seq_len, :]"

# ----------------------------------------------------------------------------------------------
# Test doubles

_CALLS: list[dict] = []


@functools.cache
def _doubles() -> dict:
    import keras
    import tensorflow as tf

    class EncoderLayerDouble(keras.layers.Layer):
        """Adds 1 to its input and records the mask it was given."""

        def __init__(self, embedding_dim=None, num_heads=None, fully_connected_dim=None, dropout_rate=0.1,
                     layernorm_eps=1e-6):
            super().__init__()
            self.index = sum(1 for call in _CALLS if call.get("created") == "EncoderLayer")
            _CALLS.append({"created": "EncoderLayer"})

        def compute_mask(self, inputs, previous_mask=None):
            return None

        def call(self, x, training=None, mask=None):
            _CALLS.append({"called": "EncoderLayer", "index": self.index, "mask": mask})
            return x + 1.0

    class DecoderLayerDouble(keras.layers.Layer):
        """Adds the mean encoder vector; its attention weights are filled with 10 * layer + block."""

        def __init__(self, embedding_dim=None, num_heads=None, fully_connected_dim=None, dropout_rate=0.1,
                     layernorm_eps=1e-6):
            super().__init__()
            self.index = sum(1 for call in _CALLS if call.get("created") == "DecoderLayer")
            _CALLS.append({"created": "DecoderLayer"})

        def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
            _CALLS.append({"called": "DecoderLayer", "index": self.index, "look_ahead_mask": look_ahead_mask,
                           "padding_mask": padding_mask})
            batch, target, source = tf.shape(x)[0], tf.shape(x)[1], tf.shape(enc_output)[1]
            label = 10.0 * (self.index + 1)
            return (x + tf.reduce_mean(enc_output, axis=1, keepdims=True),
                    tf.fill([batch, 1, target, target], label + 1.0), tf.fill([batch, 1, target, source], label + 2.0))

    class EncoderDouble(keras.layers.Layer):
        """Token id times (0.1, 0.2, ...) along the embedding axis; records the mask."""

        def __init__(self, num_layers=None, embedding_dim=4, num_heads=None, fully_connected_dim=None,
                     input_vocab_size=None, maximum_position_encoding=None, dropout_rate=0.1, layernorm_eps=1e-6):
            super().__init__()
            self.scale = tf.constant(0.1 * np.arange(1, embedding_dim + 1), tf.float32)

        def compute_mask(self, inputs, previous_mask=None):
            return None

        def call(self, x, training=None, mask=None):
            _CALLS.append({"called": "Encoder", "mask": mask})
            return tf.cast(x, tf.float32)[..., tf.newaxis] * self.scale

    class DecoderDouble(keras.layers.Layer):
        """0.2 * token id plus the mean encoder vector; attention weights filled with 11 and 12."""

        def __init__(self, num_layers=None, embedding_dim=4, num_heads=None, fully_connected_dim=None,
                     target_vocab_size=None, maximum_position_encoding=None, dropout_rate=0.1, layernorm_eps=1e-6):
            super().__init__()

        def call(self, x, enc_output, training=None, look_ahead_mask=None, padding_mask=None):
            _CALLS.append({"called": "Decoder", "look_ahead_mask": look_ahead_mask, "padding_mask": padding_mask})
            batch, target, source = tf.shape(x)[0], tf.shape(x)[1], tf.shape(enc_output)[1]
            output = 0.2 * tf.cast(x, tf.float32)[..., tf.newaxis] + tf.reduce_mean(enc_output, axis=1, keepdims=True)
            return output, {"decoder_layer1_block1_self_att": tf.fill([batch, 1, target, target], 11.0),
                            "decoder_layer1_block2_decenc_att": tf.fill([batch, 1, target, source], 12.0)}

    return {"EncoderLayer": EncoderLayerDouble, "DecoderLayer": DecoderLayerDouble, "Encoder": EncoderDouble,
            "Decoder": DecoderDouble}


def _build_with_doubles(cls, names: list[str], *args, **kwargs):
    doubles = _doubles()
    _CALLS.clear()
    with parts_replaced(cls.__init__, **{name: doubles[name] for name in names}):
        return make_layer(cls, *args, **kwargs)


def _calls(kind: str) -> list[dict]:
    return [call for call in _CALLS if call.get("called") == kind]


def _layer_calls_in_order(kind: str, stack: str, attribute: str, count: int) -> list[dict]:
    """The calls of the `kind` doubles, which must be each layer once, in order."""
    calls = _calls(kind)
    order = [call["index"] for call in calls]
    if order != list(range(count)):
        raise CheckFailed(f"the {stack} layers were called in the order {order}; "
                          f"call each of self.{attribute} once, in order, on the previous layer's output")
    return calls


def _same_mask(received, expected) -> bool:
    if received is None:
        return expected is None
    received = np.asarray(received, dtype=np.float64)
    return received.shape == np.shape(expected) and np.array_equal(received, expected)


def _expect_mask_passed(received, expected, what: str, others: dict) -> None:
    if _same_mask(received, expected):
        return
    if received is None:
        raise CheckFailed(f"{what} received no mask")
    for name, other in others.items():
        if _same_mask(received, other):
            raise CheckFailed(f"{what} received {name}")
    raise CheckFailed(f"{what} received a mask of shape {np.shape(received)} that is not the one given")


def _expect_attention_dict(weights, num_layers: int, name: str) -> None:
    """Keys decoder_layer{i}_block1_self_att / _block2_decenc_att, each holding that layer's weights."""
    if not isinstance(weights, dict):
        raise CheckFailed(f"{name} should return a dict of attention weights, got {type(weights).__name__}")
    keys = []
    for i in range(1, num_layers + 1):
        keys += [f"decoder_layer{i}_block1_self_att", f"decoder_layer{i}_block2_decenc_att"]
    if sorted(weights) != sorted(keys):
        raise CheckFailed(f"{name}'s attention dict has keys {sorted(weights)}, expected {keys} "
                          "(layers numbered from 1)")
    for i in range(1, num_layers + 1):
        for block in (1, 2):
            key = keys[2 * (i - 1) + block - 1]
            value = to_array(weights[key], f"weights[{key!r}]")
            label = float(value.flat[0]) if value.size else -1.0
            if label != 10 * i + block:
                layer, got_block = int(label // 10), int(label % 10)
                raise CheckFailed(f"weights[{key!r}] holds the {'self' if got_block == 1 else 'cross'}-attention "
                                  f"weights of decoder layer {layer}, not those of layer {i}, block {block}")


# ----------------------------------------------------------------------------------------------
# The visible checks' fixed composites: the generator of the expected values builds the reference with these too

ENCODER = {"num_layers": 2, **BLOCK, "input_vocab_size": 10}
DECODER = {"num_layers": 2, **BLOCK, "target_vocab_size": 12}
TRANSFORMER = {"num_layers": 1, **BLOCK, "input_vocab_size": 10, "target_vocab_size": 7}
MAX_POSITIONS = 6
INPUT_IDS = np.array([[3, 7, 1, 0], [2, 5, 9, 4]], dtype=np.int32)
TARGET_IDS = np.array([[1, 5, 7], [2, 11, 0]], dtype=np.int32)
TRANSFORMER_TARGET_IDS = np.array([[1, 5, 6], [2, 4, 0]], dtype=np.int32)
ENCODER_PADDING = np.array([[[1, 1, 1, 0]], [[1, 1, 1, 1]]], dtype=np.float32)
LOOK_AHEAD = np.tril(np.ones((3, 3), dtype=np.float32))[np.newaxis]
# Different padding masks for the encoder and the decoder's cross-attention (in practice both come from
# the input sentence), so that the check sees where each one goes.
DEC_PADDING = np.array([[[1, 1, 0, 0]], [[1, 1, 1, 1]]], dtype=np.float32)


def decoder_enc_output() -> np.ndarray:
    return fixed_inputs(44, (2, 4, 4))


def seeded_encoder(Encoder):  # noqa: N803
    """Encoder (2 layers, d 4, vocabulary 10) with test doubles, called once, embedding from seed 5."""
    encoder = _build_with_doubles(Encoder, ["EncoderLayer"], 2, 4, 2, 8, 10, MAX_POSITIONS, dropout_rate=0.5,
                                  layernorm_eps=1e-6)
    call_layer(encoder, to_tensor(INPUT_IDS, "int32"), training=False, mask=to_tensor(ENCODER_PADDING),
               hint=POSITION_HINT)
    return encoder, seed_weights(encoder, "encoder_embedding", ENCODER, seed=5)


def seeded_decoder(Decoder):  # noqa: N803
    """Decoder (2 layers, d 4, vocabulary 12) with test doubles, called once, embedding from seed 7."""
    decoder = _build_with_doubles(Decoder, ["DecoderLayer"], 2, 4, 2, 8, 12, MAX_POSITIONS, dropout_rate=0.5,
                                  layernorm_eps=1e-6)
    call_layer(decoder, *_decoder_inputs(), **_decoder_kwargs())
    return decoder, seed_weights(decoder, "decoder_embedding", DECODER, seed=7)


def _decoder_inputs():
    return to_tensor(TARGET_IDS, "int32"), to_tensor(decoder_enc_output())


def _decoder_kwargs() -> dict:
    return dict(training=False, look_ahead_mask=to_tensor(LOOK_AHEAD), padding_mask=to_tensor(ENCODER_PADDING),
                hint=POSITION_HINT)


_TRANSFORMER_MASKS = {"enc_padding_mask": ENCODER_PADDING, "look_ahead_mask": LOOK_AHEAD,
                      "dec_padding_mask": DEC_PADDING}


def _transformer_arguments() -> tuple[tuple, dict]:
    inputs = to_tensor(INPUT_IDS, "int32"), to_tensor(TRANSFORMER_TARGET_IDS, "int32")
    return inputs, dict(training=False, **{name: to_tensor(mask) for name, mask in _TRANSFORMER_MASKS.items()})


def seeded_transformer(Transformer):  # noqa: N803
    """Transformer (vocabularies 10 and 7) with test doubles, called once, final layer from seed 8."""
    model = _build_with_doubles(Transformer, ["Encoder", "Decoder"], 1, 4, 2, 8, 10, 7, MAX_POSITIONS, 5,
                                dropout_rate=0.5, layernorm_eps=1e-6)
    inputs, kwargs = _transformer_arguments()
    call_layer(model, *inputs, **kwargs)
    return model, seed_weights(model, "final_layer", TRANSFORMER, seed=8)


# ----------------------------------------------------------------------------------------------
# Visible checks


def check_encoder(Encoder) -> None:  # noqa: N803
    """Encoder (2 layers, d 4, vocabulary 10) with test doubles as its EncoderLayers (they add 1)."""
    expected = load_expected(STEM, "stacks", "encoder")
    encoder, _ = seeded_encoder(Encoder)
    del _CALLS[:]
    ids, mask = to_tensor(INPUT_IDS, "int32"), to_tensor(ENCODER_PADDING)
    output = call_layer(encoder, ids, training=False, mask=mask, hint=POSITION_HINT)
    expect_shape(to_array(output, "Encoder output"), (2, 4, 4), "Encoder output")
    calls = _layer_calls_in_order("EncoderLayer", "encoder", "enc_layers", 2)
    for call in calls:
        _expect_mask_passed(call["mask"], ENCODER_PADDING, f"encoder layer {call['index']}", {})
    expect_deterministic(output, call_layer(encoder, ids, training=False, mask=mask), "Encoder output",
                         advice=TRAINING_ADVICE)
    expect_values(output, expected, "Encoder output (each test-double layer adds 1)")
    passed("Encoder: scaled embeddings plus positions, then every encoder layer in order with the mask")


def check_decoder(Decoder) -> None:  # noqa: N803
    """Decoder (2 layers, d 4, vocabulary 12) with test doubles as its DecoderLayers."""
    expected = load_expected(STEM, "stacks", "decoder")
    decoder, _ = seeded_decoder(Decoder)
    del _CALLS[:]
    inputs, kwargs = _decoder_inputs(), _decoder_kwargs()
    output, weights = outputs_of(call_layer(decoder, *inputs, **kwargs), 2, "Decoder", "a pair (x, weights)")
    expect_shape(to_array(output, "Decoder output"), (2, 3, 4), "Decoder output")
    calls = _layer_calls_in_order("DecoderLayer", "decoder", "dec_layers", 2)
    masks = {"look_ahead_mask": LOOK_AHEAD, "padding_mask": ENCODER_PADDING}
    for call in calls:
        for name, mask in masks.items():
            _expect_mask_passed(call[name], mask, f"decoder layer {call['index']}'s {name}",
                                {other: value for other, value in masks.items() if other != name})
    _expect_attention_dict(weights, 2, "Decoder")
    expect_deterministic(output, call_layer(decoder, *inputs, **kwargs)[0], "Decoder output", advice=TRAINING_ADVICE)
    expect_values(output, expected, "Decoder output (each test-double layer adds the mean encoder vector)")
    passed("Decoder: scaled embeddings plus positions, every decoder layer with both masks, the attention dict")


def check_transformer(Transformer) -> None:  # noqa: N803
    """Transformer (vocabularies 10 and 7) with test doubles as Encoder and Decoder: masks, logits, dict."""
    expected = load_expected(STEM, "stacks", "transformer")
    model, _ = seeded_transformer(Transformer)
    del _CALLS[:]
    inputs, kwargs = _transformer_arguments()
    logits, weights = outputs_of(call_layer(model, *inputs, **kwargs), 2, "Transformer",
                                 "a pair (logits, attention_weights)")
    logits = to_array(logits, "Transformer logits")
    if logits.shape == (2, 3, 4):
        raise CheckFailed("Transformer output has shape (2, 3, 4), the decoder's: apply self.final_layer to get "
                          "one logit per target-vocabulary word, (2, 3, 7)")
    expect_shape(logits, (2, 3, 7), "Transformer logits")
    encoder_calls, decoder_calls = _calls("Encoder"), _calls("Decoder")
    if len(encoder_calls) != 1 or len(decoder_calls) != 1:
        raise CheckFailed(f"the encoder was called {len(encoder_calls)} times and the decoder "
                          f"{len(decoder_calls)} times; call each once")
    others = dict(_TRANSFORMER_MASKS)
    _expect_mask_passed(encoder_calls[0]["mask"], ENCODER_PADDING, "the encoder's mask", others)
    _expect_mask_passed(decoder_calls[0]["look_ahead_mask"], LOOK_AHEAD, "the decoder's look_ahead_mask", others)
    _expect_mask_passed(decoder_calls[0]["padding_mask"], DEC_PADDING, "the decoder's padding_mask", others)
    _expect_attention_dict(weights, 1, "Transformer")
    expect_close(logits, expected["output"], "Transformer logits", atol=1e-4, rtol=1e-4,
                 mistakes=stored_mistakes(expected["mistakes"]),
                 hint="the decoder's output goes through self.final_layer, and the decoder gets the encoder's output")
    passed("Transformer: encoder, decoder with the right masks, final Dense layer giving logits (2, 3, 7)")
