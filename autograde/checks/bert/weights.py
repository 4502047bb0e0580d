"""Hidden check of load_bert_weights (assignment 05).

The learner's loader fills the REFERENCE BertEncoder, from small keras-hub backbones of other sizes with
seeded weights and from the shipped checkpoint; every weight is compared with where it should come from
(the first wrong one is named), the backbone must be unchanged, and the loaded encoder must reproduce the
backbone's sequence_output within 1e-4 (real sentences, with padding, for the checkpoint).
"""

from __future__ import annotations

import functools

import numpy as np

from autograde.checks import rng as draw
from autograde.checks import seed_of
from autograde.reference.bert.keras_layers import BertEncoder
from autograde.reference.bert.weights import sources
from course_lib.bert.encoder import ENCODER_ARGS, build_unused, padded_batch
from course_lib.bert.weights import call_loader, describe_wrong_weight, expect_backbone_unchanged, make_backbone
from course_lib.checking import CheckFailed, passed, quiet, to_array
from course_lib.keras_weights import (
    backbone_variables,
    bert_variables,
    fingerprint,
    resolve,
    same_fingerprint,
    sublayer_weights,
)

OUTPUT_TOLERANCE = 1e-4  # max |difference| from the backbone's sequence_output
SMALL_BACKBONES = [
    {"vocabulary_size": 200, "num_layers": 2, "num_heads": 4, "hidden_dim": 48, "intermediate_dim": 96,
     "max_sequence_length": 40, "num_segments": 2},
    {"vocabulary_size": 64, "num_layers": 3, "num_heads": 2, "hidden_dim": 16, "intermediate_dim": 40,
     "max_sequence_length": 24, "num_segments": 3},
]
SENTENCES = [
    ("The quick brown fox jumps over the lazy dog.", None),
    ("Where is the station?", "Turn left after the bridge."),
    ("Attention is all you need.", None),
    ("Transformers read every word of a sentence at once, so each word can look at all the others.", None),
    ("Yes.", None),
]


@functools.cache
def _pretrained():
    from course_lib.pretrained import load_bert

    return load_bert()


def _reference_encoder(config: dict):
    """The reference BertEncoder of these sizes, built without tracing, every weight zero."""
    encoder = BertEncoder(**{k: config[k] for k in ENCODER_ARGS if k in config})
    build_unused(encoder, config)
    encoder.embedding.built = encoder.built = True
    variables = bert_variables(encoder, config)
    for variable in variables.values():
        variable.assign(np.zeros(variable.shape, np.float32))
    return encoder, variables


def _grade_loaded(load_bert_weights, backbone, config: dict, inputs, what: str) -> None:
    with quiet():
        encoder, variables = _reference_encoder(config)
        before = {label: fingerprint(v) for label, v in backbone_variables(backbone).items()}
        call_loader(load_bert_weights, encoder, backbone, config)
    expect_backbone_unchanged(before, backbone)
    mine_to_theirs = _sources_by_label(encoder, backbone, config["num_layers"])
    for label, variable in variables.items():
        source = mine_to_theirs[label]
        if not same_fingerprint(fingerprint(variable), before[source]):
            raise CheckFailed(describe_wrong_weight(label, variable, before, expected_source=source)
                              + f" ({what})")
    with quiet():
        output = encoder(*inputs, training=False)
    expected = backbone({"token_ids": inputs[0], "segment_ids": inputs[1], "padding_mask": inputs[2]})
    difference = np.abs(to_array(output, "encoder output") - to_array(expected["sequence_output"], "backbone output"))
    if difference.max() > OUTPUT_TOLERANCE:
        raise CheckFailed(f"every weight is in its place, but the encoder's output differs from the backbone's "
                          f"sequence_output by up to {difference.max():.3g} ({what}): did load_bert_weights change "
                          "anything else, such as an activation or a layer?")


def _sources_by_label(encoder, backbone, num_layers: int) -> dict[str, str]:
    """Encoder weight label -> backbone weight label, pairing the sublayers' weights in order."""
    labels = {}
    for mine, theirs in sources(num_layers):
        mine_weights = sublayer_weights(resolve(encoder, mine))
        their_weights = sublayer_weights(resolve(backbone, theirs))
        for (mine_attr, _), (their_attr, _) in zip(mine_weights, their_weights, strict=True):
            labels[f"{mine}.{mine_attr}"] = f"{theirs}.{their_attr}"
    return labels


def real_inputs(tokenizer, sentences=SENTENCES):
    """Token ids, segment ids and padding mask (int32, padded with 0) of (sentence, second sentence) pairs."""
    encodings = [tokenizer.encode(a) if b is None else tokenizer.encode(a, b) for a, b in sentences]
    length = max(len(e.ids) for e in encodings)
    ids, segments, mask = (np.zeros((len(encodings), length), np.int32) for _ in range(3))
    for row, encoding in enumerate(encodings):
        n = len(encoding.ids)
        ids[row, :n], segments[row, :n], mask[row, :n] = encoding.ids, encoding.type_ids, 1
    return ids, segments, mask


def grade_load_bert_weights(load_bert_weights) -> None:
    for index, config in enumerate(SMALL_BACKBONES):
        with quiet():
            backbone = make_backbone(config, seed=seed_of(940 + index))
        inputs = padded_batch(draw(950 + index), config, 3, 7)
        what = (f"small random backbone: {config['num_layers']} layers, hidden {config['hidden_dim']}, "
                f"vocabulary {config['vocabulary_size']}")
        _grade_loaded(load_bert_weights, backbone, config, inputs, what)
    with quiet():
        bert = _pretrained()
    config = {k: bert.config[k] for k in ENCODER_ARGS}
    _grade_loaded(load_bert_weights, bert.backbone, config, real_inputs(bert.tokenizer),
                  f"pretrained checkpoint on {len(SENTENCES)} padded sentences")
    passed(f"load_bert_weights puts every weight in its place for {len(SMALL_BACKBONES)} small backbones and the "
           f"pretrained checkpoint, whose sequence_output the encoder then reproduces within {OUTPUT_TOLERANCE:g}")
