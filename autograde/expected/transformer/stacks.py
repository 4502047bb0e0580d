"""Expected values of assignment 04's Encoder, Decoder and Transformer checks (`course_lib.transformer.stacks`).

The visible checks run a composite with test doubles as its parts, so the expected value is the reference's
embedding (or the seeded final layer) followed by what the doubles do, written out here in NumPy: each
EncoderLayer double adds 1, each DecoderLayer double adds the mean encoder vector, the Encoder double gives
token id * (0.1, 0.2, ...), the Decoder double 0.2 * token id plus the mean encoder vector.
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import stored
from autograde.mistakes.transformer import stacks as mistakes
from autograde.reference.transformer import keras_layers
from autograde.reference.transformer import stacks as ref
from course_lib.layers import positional_encoding
from course_lib.transformer import stacks as visible


def _through_doubles(entry: dict, after) -> dict:
    """The stored expected value or mistakes, each passed through the doubles (`after`)."""
    return {"output": after(entry["output"]),
            "mistakes": {name: {"value": after(wrong["value"]), "message": wrong["message"]}
                         for name, wrong in entry["mistakes"].items()}}



def _embedding(w: dict, token_ids) -> dict:
    pe = positional_encoding(visible.MAX_POSITIONS, visible.BLOCK["embedding_dim"])
    return {"output": ref.embed(w, "", token_ids, pe), "mistakes": stored(mistakes.EMBEDDING, w, "", token_ids, pe)}


def _encoder() -> dict:
    _, w = visible.seeded_encoder(keras_layers.Encoder)
    layers = visible.ENCODER["num_layers"]
    return _through_doubles(_embedding(w, visible.INPUT_IDS), lambda x: x + layers)


def _decoder() -> dict:
    _, w = visible.seeded_decoder(keras_layers.Decoder)
    mean_encoder_vector = visible.decoder_enc_output().astype(np.float64).mean(axis=1, keepdims=True)
    layers = visible.DECODER["num_layers"]
    return _through_doubles(_embedding(w, visible.TARGET_IDS), lambda x: x + layers * mean_encoder_vector)


def _transformer() -> dict:
    _, w = visible.seeded_transformer(keras_layers.Transformer)
    scale = 0.1 * np.arange(1, visible.BLOCK["embedding_dim"] + 1)
    enc_output = visible.INPUT_IDS[..., np.newaxis] * scale
    dec_output = 0.2 * visible.TRANSFORMER_TARGET_IDS[..., np.newaxis] + enc_output.mean(axis=1, keepdims=True)
    logits = dec_output @ w["final_layer.kernel"] + w["final_layer.bias"]
    return {"output": logits, "mistakes": stored(mistakes.LOGITS, logits)}


def generate() -> dict:
    return {"stacks": {"encoder": _encoder(), "decoder": _decoder(), "transformer": _transformer()}}
