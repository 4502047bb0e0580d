"""Expected values of assignment 04's EncoderLayer and DecoderLayer checks (`course_lib.transformer.layers`):
the reference Keras layer built and seeded exactly as the visible check builds the learner's, then the NumPy
reference and each named mistake on those weights and the check's fixed inputs."""

from __future__ import annotations

from autograde.mistakes import stored
from autograde.mistakes.transformer import layers as mistakes
from autograde.reference.transformer import keras_layers
from autograde.reference.transformer import layers as ref
from course_lib.transformer.layers import decoder_layer_arguments, seeded_decoder_layer, seeded_encoder_layer


def _encoder_layer() -> dict:
    _, w, x, mask = seeded_encoder_layer(keras_layers.EncoderLayer)
    return {"output": ref.encoder_layer(w, x, mask), "mistakes": stored(mistakes.ENCODER_LAYER, w, x, mask)}


def _decoder_layer() -> dict:
    _, w = seeded_decoder_layer(keras_layers.DecoderLayer)
    (x, enc_output), masks = decoder_layer_arguments()
    inputs = (w, x, enc_output, masks["look_ahead_mask"], masks["padding_mask"])
    output, self_weights, cross_weights = ref.decoder_layer(*inputs)
    return {"output": output, "self_weights_1": self_weights[1], "cross_weights_0": cross_weights[0],
            "mistakes": stored(mistakes.DECODER_LAYER, *inputs)}


def generate() -> dict:
    return {"layers": {"encoder_layer": _encoder_layer(), "decoder_layer": _decoder_layer()}}
