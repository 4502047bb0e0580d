"""Hidden check of load_bert_weights (assignment 05).

The learner's loader fills the REFERENCE BertEncoder, from small keras-hub backbones of other sizes with
seeded weights and from the shipped checkpoint; every weight is compared with where it should come from
(the first wrong one is named), the backbone must be unchanged, and the loaded encoder must reproduce the
backbone's sequence_output within 1e-4 (real sentences, with padding, for the checkpoint).

The encoder and the backbones the loader is given are made where it runs (the student's kernel when grading):
the small backbones get the weights of twins built here from a seed, the checkpoint is loaded there as here.
What they should hold and output is known here only from those twins, never read back from the kernel.
"""

from __future__ import annotations

import functools

import keras_hub
import numpy as np

from autograde.checks import rng as draw
from autograde.checks import seed_of
from autograde.checks.weights import assign, shapes, variables_of
from autograde.reference.bert.keras_layers import BertEncoder as ReferenceEncoder
from autograde.reference.bert.weights import sources
from autograde.remote import library, part, run_there
from course_lib.bert.encoder import ENCODER_ARGS, padded_batch, prebuild
from course_lib.bert.weights import call_loader, describe_wrong_weight, expect_backbone_unchanged, make_backbone
from course_lib.checking import CheckFailed, passed, quiet, to_array
from course_lib.keras_weights import backbone_variables, bert_variables, fingerprint, fingerprints, same_fingerprint
from course_lib.pretrained import load_bert

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
    return load_bert()


def _weight_names(path: str, *, backbone: bool) -> list[str]:
    """The weights of the sublayer at `path`, in the order `course_lib.keras_weights.sublayer_weights` lists them."""
    name = path.rsplit(".", 1)[-1]
    if name in ("mha", "_self_attention_layer"):
        return [f"{p}_dense.{kind}" for p in ("query", "key", "value", "output") for kind in ("kernel", "bias")]
    if "norm" in name:
        return ["gamma", "beta"]
    if name.endswith("embedding"):
        return ["position_embeddings" if backbone and name == "position_embedding" else "embeddings"]
    return ["kernel", "bias"]  # a dense layer


def weight_sources(num_layers: int) -> dict[str, str]:
    """Encoder weight label -> the backbone weight label it is loaded from."""
    labels = {}
    for mine, theirs in sources(num_layers):
        pairs = zip(_weight_names(mine, backbone=False), _weight_names(theirs, backbone=True), strict=True)
        labels.update({f"{mine}.{a}": f"{theirs}.{b}" for a, b in pairs})
    return labels


def _sizes(config: dict) -> dict:
    return {k: config[k] for k in ENCODER_ARGS if k in config}


def _reference_encoder(learner, config: dict):
    """The reference BertEncoder of these sizes, made where the learner runs, built without tracing, every
    weight zero; returns (encoder, its variables by attribute path)."""
    encoder = part(learner, ReferenceEncoder)(**_sizes(config))
    run_there(learner, prebuild, encoder, config)
    variables = variables_of(encoder, bert_variables, config)
    assign(variables, {label: np.zeros(shape) for label, shape in shapes(variables).items()})
    return encoder, variables


def _small_backbone(learner, config: dict, seed: int):
    """(the backbone given to the loader, its twin here): the same sizes and seeded weights."""
    twin = make_backbone(config, seed=seed)
    backbone = library(learner, keras_hub.models.BertBackbone)(**_sizes(config))
    variables = _backbone_variables(learner, backbone)
    values = {label: variable.numpy() for label, variable in backbone_variables(twin).items()}
    if sorted(variables) != sorted(values):
        raise CheckFailed("keras_hub.models.BertBackbone does not have the weights the grader expects in your "
                          "kernel: did the notebook change keras_hub?")
    assign(variables, values)
    return backbone, twin


def _backbone_variables(learner, backbone) -> dict:
    """The encoder weights of a backbone (one made by the check) by attribute path, read where it lives."""
    return variables_of(backbone, backbone_variables)


def _pretrained_backbone(learner):
    """(the shipped checkpoint loaded where the learner runs, the same checkpoint loaded here)."""
    return run_there(learner, load_bert).backbone, _pretrained().backbone


def _fingerprints(learner, variables: dict) -> dict[str, tuple[float, float]]:
    """The fingerprint of each variable, computed where it lives (one request, no array sent)."""
    return {label: tuple(value) for label, value in run_there(learner, fingerprints, variables).items()}


def _grade_loaded(load_bert_weights, backbones, config: dict, inputs, what: str) -> None:
    backbone, twin = backbones
    with quiet():
        encoder, variables = _reference_encoder(load_bert_weights, config)
        truth = {label: fingerprint(v) for label, v in backbone_variables(twin).items()}
        given = _fingerprints(load_bert_weights, _backbone_variables(load_bert_weights, backbone))
        if sorted(given) != sorted(truth) or not all(same_fingerprint(given[k], truth[k]) for k in truth):
            # Not the learner's doing: the kernel has another checkpoint or keras-hub than the grader.
            raise RuntimeError(f"the backbone made for the loader differs from the grader's ({what})")
        call_loader(load_bert_weights, encoder, backbone, config)
        run_there(load_bert_weights, expect_backbone_unchanged, truth, backbone)
        loaded = _fingerprints(load_bert_weights, variables)
    for label, source in weight_sources(config["num_layers"]).items():
        if not same_fingerprint(loaded[label], truth[source]):
            raise CheckFailed(describe_wrong_weight(label, variables[label], truth, expected_source=source)
                              + f" ({what})")
    with quiet():
        output = encoder(*inputs, training=False)
        expected = twin({"token_ids": inputs[0], "segment_ids": inputs[1], "padding_mask": inputs[2]})
    difference = np.abs(to_array(output, "encoder output") - to_array(expected["sequence_output"], "backbone output"))
    if difference.max() > OUTPUT_TOLERANCE:
        raise CheckFailed(f"every weight is in its place, but the encoder's output differs from the backbone's "
                          f"sequence_output by up to {difference.max():.3g} ({what}): did load_bert_weights change "
                          "anything else, such as an activation or a layer?")


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
            backbones = _small_backbone(load_bert_weights, config, seed_of(940 + index))
        inputs = padded_batch(draw(950 + index), config, 3, 7)
        what = (f"small random backbone: {config['num_layers']} layers, hidden {config['hidden_dim']}, "
                f"vocabulary {config['vocabulary_size']}")
        _grade_loaded(load_bert_weights, backbones, config, inputs, what)
    with quiet():
        bert = _pretrained()
        backbones = _pretrained_backbone(load_bert_weights)
    config = {k: bert.config[k] for k in ENCODER_ARGS}
    _grade_loaded(load_bert_weights, backbones, config, real_inputs(bert.tokenizer),
                  f"pretrained checkpoint on {len(SENTENCES)} padded sentences")
    passed(f"load_bert_weights puts every weight in its place for {len(SMALL_BACKBONES)} small backbones and the "
           f"pretrained checkpoint, whose sequence_output the encoder then reproduces within {OUTPUT_TOLERANCE:g}")
