"""Assignment 05, "your encoder, BERT's weights": the visible check of load_bert_weights, and the helpers the
hidden check shares (small keras-hub backbones with known weights, naming a weight that went astray).

load_bert_weights is checked on an empty encoder built here, so a mistake in BertEncoder never fails it.
The check knows the checkpoint's weights only through "fingerprints" (sum and sum of squares of each
weight, generated into `course_lib/expected/05_bert.json`), and names the backbone weight a wrong one
came from.
"""

from __future__ import annotations

import re

import numpy as np

from course_lib.bert.encoder import ENCODER_ARGS, STEM, build_encoder_layer
from course_lib.checking import CheckFailed, call_learner, passed, to_array
from course_lib.expected import load as load_expected
from course_lib.keras_weights import (
    backbone_variables,
    bert_variables,
    fingerprint,
    fingerprints,
    same_fingerprint,
    seeded_value,
)

# The checkpoint shipped with the course (all-MiniLM-L6-v2), as `load_bert().config` gives it.
SHIPPED_CONFIG = {"vocabulary_size": 30522, "num_layers": 6, "num_heads": 12, "hidden_dim": 384,
                  "intermediate_dim": 1536, "max_sequence_length": 512, "num_segments": 2}
SMALL_CONFIG = {"vocabulary_size": 200, "num_layers": 2, "num_heads": 4, "hidden_dim": 48, "intermediate_dim": 96,
                "max_sequence_length": 40, "num_segments": 2}
SMALL_SEED = 53
SIZES_HINT = ("The backbone passed here has {num_layers} layers, hidden size {hidden_dim} and a vocabulary of "
              "{vocabulary_size}: take the sizes from the encoder or the backbone (len(backbone.transformer_layers), "
              "zip(...)), never hard-code them")
SHAPE_HINT = ("A shape mismatch means a weight went to the wrong place, for example the token table "
              "(vocabulary_size, hidden_dim) and the position table (max_sequence_length, hidden_dim), or the "
              "intermediate dense layer (hidden_dim -> intermediate_dim) and the output one (back to hidden_dim)")
ROLES = {
    "embedding.token_embedding": "the token table has one row per vocabulary entry",
    "embedding.position_embedding": "the position table has one row per position",
    "embedding.segment_embedding": "the segment table has one row per segment",
    "embedding.layer_norm": "embedding.layer_norm normalises the sum of the three embeddings",
    "mha": "mha is the self-attention",
    "layernorm1": "layernorm1 follows the attention",
    "layernorm2": "layernorm2 follows the feed-forward block",
    "ffn.layers[0]": "ffn.layers[0] widens hidden_dim to intermediate_dim (with GELU)",
    "ffn.layers[1]": "ffn.layers[1] maps intermediate_dim back to hidden_dim",
}


def role(label: str) -> str:
    """What the encoder weight at `label` ("enc_layers[2].layernorm1.gamma") is for."""
    sublayer = re.sub(r"^enc_layers\[\d+\]\.", "", label)
    return next((text for prefix, text in ROLES.items() if sublayer.startswith(prefix + ".")), "")


def make_backbone(config: dict, seed: int):
    """A keras-hub BertBackbone of the given sizes with every weight set from a seeded generator."""
    import keras_hub

    backbone = keras_hub.models.BertBackbone(**{k: config[k] for k in ENCODER_ARGS if k in config})
    rng = np.random.default_rng(seed)
    for variable in backbone.weights:
        variable.assign(seeded_value(variable.path, tuple(variable.shape), rng).astype(np.float32))
    return backbone


def encoder_skeleton(config: dict):
    """An empty encoder with the template's attributes (no `call`), built, every weight zero."""
    import keras

    from course_lib.layers import EncoderLayer

    class EmbeddingSkeleton(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            d = config["hidden_dim"]
            self.token_embedding = keras.layers.Embedding(config["vocabulary_size"], d)
            self.position_embedding = keras.layers.Embedding(config["max_sequence_length"], d)
            self.segment_embedding = keras.layers.Embedding(config["num_segments"], d)
            self.layer_norm = keras.layers.LayerNormalization(epsilon=1e-12)
            for table in (self.token_embedding, self.position_embedding, self.segment_embedding):
                table.build()
            self.layer_norm.build((None, d))

    class EncoderSkeleton(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.embedding = EmbeddingSkeleton()
            self.enc_layers = [EncoderLayer(config["hidden_dim"], config["num_heads"], config["intermediate_dim"],
                                            layernorm_eps=1e-12) for _ in range(config["num_layers"])]
            for layer in self.enc_layers:
                build_encoder_layer(layer, config["hidden_dim"])

    encoder = EncoderSkeleton()
    for variable in bert_variables(encoder, config).values():
        variable.assign(np.zeros(variable.shape, np.float32))
    return encoder


def encoder_fingerprints(encoder, config: dict) -> dict[str, tuple[float, float]]:
    """The fingerprint of every weight of an encoder, by attribute path."""
    return fingerprints(bert_variables(encoder, config))


def call_loader(load_bert_weights, encoder, backbone, config: dict) -> None:
    """Run the learner's loader; a crash becomes a failed check with a hint about sizes or shapes."""
    try:
        call_learner(load_bert_weights, encoder, backbone)
    except CheckFailed as error:
        message = str(error)
        if "IndexError" in message or "list index" in message:
            message += ". " + SIZES_HINT.format(**config)
        elif "shape" in message.lower() or "ValueError" in message:
            message += f". {SHAPE_HINT}. " + SIZES_HINT.format(**config)
        raise CheckFailed(message) from error


def expect_backbone_unchanged(before: dict, backbone) -> None:
    """Every backbone weight still has the fingerprint it had before the loader ran."""
    for label, variable in backbone_variables(backbone).items():
        if not same_fingerprint(fingerprint(variable), before[label]):
            raise CheckFailed(f"load_bert_weights changed the backbone: backbone.{label} has other values "
                              "afterwards. Copy from the backbone into the encoder, never the other way round "
                              "(and reload the pretrained model, bert = load_bert(), whose weights may be damaged)")


def describe_wrong_weight(label: str, value, backbone_prints: dict, expected_source: str | None = None) -> str:
    """Why the encoder weight at `label` is wrong: left untouched, or whose values it holds instead."""
    array = to_array(value, label)
    where = f"encoder.{label}"
    if not np.any(array):
        message = f"{where} still holds the zeros the check put there: it was never copied"
    else:
        found = [source for source, prints in backbone_prints.items()
                 if same_fingerprint(fingerprint(array), prints)]
        message = (f"{where} has the values of backbone.{found[0]}" if found
                   else f"{where} holds none of the backbone's weights")
        layer = re.match(r"enc_layers\[(\d+)\]", label)
        source_layer = re.match(r"transformer_layers\[(\d+)\]", found[0]) if found else None
        if layer and source_layer and layer[1] != source_layer[1]:
            message += f"; enc_layers[{layer[1]}] takes the weights of transformer_layers[{layer[1]}]"
    if expected_source:
        message += f"; it should get those of backbone.{expected_source}"
    hint = role(label)
    return message + (f" ({hint})" if hint else "")


def _check_loaded(load_bert_weights, backbone, config: dict, expected_prints: dict | None) -> int:
    encoder = encoder_skeleton(config)
    before = {label: fingerprint(v) for label, v in backbone_variables(backbone).items()}
    call_loader(load_bert_weights, encoder, backbone, config)
    expect_backbone_unchanged(before, backbone)
    variables = bert_variables(encoder, config)
    for label, variable in variables.items():
        value = to_array(variable, f"encoder.{label}")
        if not np.any(value) or (expected_prints is not None
                                 and not same_fingerprint(fingerprint(value), expected_prints[label])):
            raise CheckFailed(describe_wrong_weight(label, value, before))
        if expected_prints is None and not any(same_fingerprint(fingerprint(value), p) for p in before.values()):
            raise CheckFailed(describe_wrong_weight(label, value, before))
    return len(variables)


def check_load_bert_weights(load_bert_weights, backbone=None) -> None:
    """load_bert_weights into an empty encoder: from a small random backbone (2 layers, hidden 48), then from
    `backbone`, the pretrained one; every weight is compared with the checkpoint's."""
    small = make_backbone(SMALL_CONFIG, seed=SMALL_SEED)
    count = _check_loaded(load_bert_weights, small, SMALL_CONFIG, load_expected(STEM, "weights", "small_backbone"))
    message = f"load_bert_weights: all {count} weights of a small random backbone (2 layers, hidden 48)"
    if backbone is not None:
        config = {k: backbone.get_config()[k] for k in SHIPPED_CONFIG}
        prints = load_expected(STEM, "weights", "shipped_checkpoint")
        shipped = config == SHIPPED_CONFIG and same_fingerprint(
            fingerprint(backbone.token_embedding.embeddings), prints["embedding.token_embedding.embeddings"])
        if not shipped:
            print("Note: this is not the checkpoint shipped with the course, so the weights are only checked to "
                  "come from the backbone, not to be in the right places; the hidden tests use the shipped one.")
        count = _check_loaded(load_bert_weights, backbone, config, prints if shipped else None)
        message += f" and all {count} of the pretrained one ({config['num_layers']} layers, hidden " \
                   f"{config['hidden_dim']})"
    passed(message + " are in their places")
