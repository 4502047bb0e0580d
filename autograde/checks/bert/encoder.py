"""Hidden checks of assignment 05, "your encoder, BERT's weights".

- BertEmbedding: built in several sizes, weights set from a seeded generator, compared with the NumPy
  reference; usual mistakes are named.
- BertEncoder: built with the REFERENCE BertEmbedding (the notebook's name `BertEmbedding` points at it
  while the encoder is constructed), so a mistake in exercise 5.2 does not cost 5.3; weights seeded,
  inputs padded, compared with the NumPy reference.
- load_bert_weights: loads into the REFERENCE BertEncoder, from small keras-hub backbones of other sizes
  with seeded weights and from the shipped checkpoint; every weight is compared with where it should
  come from (the first wrong one is named), the backbone must be unchanged, and the loaded encoder must
  reproduce the backbone's sequence_output within 1e-4 (real sentences, with padding, for the checkpoint).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from autograde.reference.bert import encoder as ref
from course_lib.bert.encoder import (
    EMBEDDING_HINT,
    EMBEDDING_MISTAKES,
    ENCODER_ARGS,
    ENCODER_HINT,
    ENCODER_MISTAKES,
    build_unused,
    call_layer,
    call_loader,
    describe_wrong_weight,
    expect_backbone_unchanged,
    expect_deterministic,
    expect_dropout_in_training,
    make_backbone,
    padded_batch,
    prebuild,
)
from course_lib.checking import CheckFailed, call_learner, expect_close, parts_replaced, passed, quiet, to_array
from course_lib.keras_weights import (
    backbone_variables,
    bert_variables,
    fingerprint,
    resolve,
    same_fingerprint,
    seed_variables,
    sublayer_weights,
)

TOL = dict(atol=1e-4, rtol=1e-4)
OUTPUT_TOLERANCE = 1e-4  # max |difference| from the backbone's sequence_output


def _quietly(fn):
    with quiet():
        return fn()


def _mistakes(compute, messages: dict, where: str) -> list[tuple[object, str]]:
    """(wrong result, message) for each mistake the reference can compute for these inputs."""
    found = []
    for name, message in messages.items():
        try:
            found.append((compute(name), f"{message} ({where})"))
        except (ValueError, IndexError):  # does not fit these shapes (e.g. a 2-D mask with batch != seq)
            continue
    return found


@dataclass(frozen=True)
class Case:
    vocab: int
    hidden: int
    max_len: int
    segments: int
    batch: int
    seq: int
    layers: int = 1
    heads: int = 1
    inter: int = 8
    eps: float = 1e-12

    def config(self) -> dict:
        return {"vocabulary_size": self.vocab, "num_layers": self.layers, "num_heads": self.heads,
                "hidden_dim": self.hidden, "intermediate_dim": self.inter, "max_sequence_length": self.max_len,
                "num_segments": self.segments}

    def label(self) -> str:
        return (f"vocabulary {self.vocab}, hidden {self.hidden}, {self.max_len} positions, {self.segments} segments, "
                f"batch {self.batch}, seq {self.seq}" + (f", {self.layers} layers, {self.heads} heads"
                                                         if self.layers > 1 or self.heads > 1 else ""))


# ----------------------------------------------------------------------------------------------
# BertEmbedding

EMBEDDING_CASES = [
    Case(vocab=9, hidden=8, max_len=10, segments=2, batch=2, seq=5),  # ids < max_len: positions-from-ids fits
    Case(vocab=30, hidden=4, max_len=7, segments=2, batch=3, seq=7),
    Case(vocab=12, hidden=16, max_len=20, segments=3, batch=1, seq=1),
    Case(vocab=50, hidden=12, max_len=64, segments=2, batch=4, seq=9, eps=1e-3),
]


def grade_bert_embedding(BertEmbedding) -> None:  # noqa: N803
    for index, case in enumerate(EMBEDDING_CASES):
        _grade_embedding_case(BertEmbedding, index, case)
    passed(f"BertEmbedding matches the reference in {len(EMBEDDING_CASES)} configurations")


def _grade_embedding_case(BertEmbedding, index: int, case: Case) -> None:  # noqa: N803
    config = case.config()
    ids, segments, _ = padded_batch(np.random.default_rng(900 + index), config, case.batch, case.seq)

    def run():
        layer = call_learner(BertEmbedding, case.vocab, case.hidden, max_sequence_length=case.max_len,
                             num_segments=case.segments, dropout=0.5, layernorm_eps=case.eps)
        prebuild(layer, config)
        weights = seed_variables(bert_variables(layer, config, part="embedding"), seed=910 + index)
        return weights, [call_layer(layer, ids, segments, training=t, hint=EMBEDDING_HINT)
                         for t in (False, False, True)]

    weights, (output, again, training) = _quietly(run)
    name = f"BertEmbedding output ({case.label()})"
    expect_deterministic(output, again, name)
    expected = ref.bert_embedding(weights, ids, segments, eps=case.eps)
    mistakes = _mistakes(lambda m: ref.bert_embedding(weights, ids, segments, eps=case.eps, mistake=m),
                         EMBEDDING_MISTAKES, "BertEmbedding")
    expect_close(output, expected, name, mistakes=mistakes, **TOL)
    expect_dropout_in_training(output, training, name)


# ----------------------------------------------------------------------------------------------
# BertEncoder (built with the reference BertEmbedding)

ENCODER_CASES = [
    Case(vocab=20, hidden=8, max_len=12, segments=2, batch=5, seq=5, layers=2, heads=2, inter=16),  # batch == seq
    Case(vocab=15, hidden=12, max_len=10, segments=2, batch=3, seq=6, layers=3, heads=3, inter=20),
    Case(vocab=9, hidden=4, max_len=4, segments=2, batch=2, seq=4, layers=2, heads=1, inter=8),
    Case(vocab=40, hidden=16, max_len=30, segments=3, batch=2, seq=9, layers=1, heads=4, inter=32),
]


def _run_encoder(BertEncoder, case: Case, index: int):  # noqa: N803
    config = case.config()
    ids, segments, mask = padded_batch(np.random.default_rng(920 + index), config, case.batch, case.seq)
    encoder = call_learner(BertEncoder, case.vocab, case.layers, case.heads, case.hidden, case.inter, dropout=0.5,
                           max_sequence_length=case.max_len, num_segments=case.segments)
    prebuild(encoder, config)
    weights = seed_variables(bert_variables(encoder, config), seed=930 + index)
    outputs = [call_layer(encoder, ids, segments, mask, training=t, hint=ENCODER_HINT) for t in (False, False, True)]
    return (ids, segments, mask), weights, outputs


LAYER_ORDER_MISTAKES = ("only_first_layer", "only_last_layer", "layers_reversed")


def grade_bert_encoder(BertEncoder) -> None:  # noqa: N803
    for index, case in enumerate(ENCODER_CASES):
        _grade_encoder_case(BertEncoder, index, case)
    _note_own_embedding(BertEncoder)
    passed(f"BertEncoder matches the reference in {len(ENCODER_CASES)} configurations with padding (graded with "
           "the reference BertEmbedding)")


def _grade_encoder_case(BertEncoder, index: int, case: Case) -> None:  # noqa: N803
    with parts_replaced(BertEncoder.__init__, BertEmbedding=ref.keras_layers()["BertEmbedding"]):
        inputs, weights, (output, again, training) = _quietly(lambda: _run_encoder(BertEncoder, case, index))
    name = (f"BertEncoder output ({case.label()}; built with the reference BertEmbedding, so BertEncoder.call "
            "is at fault)")
    expect_deterministic(output, again, name)
    expected = ref.bert_encoder(weights, *inputs, case.layers)
    messages = {k: v for k, v in ENCODER_MISTAKES.items() if case.layers > 1 or k not in LAYER_ORDER_MISTAKES}
    mistakes = _mistakes(lambda m: ref.bert_encoder(weights, *inputs, case.layers, mistake=m), messages,
                         "BertEncoder")
    expect_close(output, expected, name, mistakes=mistakes, **TOL)
    expect_dropout_in_training(output, training, name)


def _note_own_embedding(BertEncoder) -> None:  # noqa: N803
    """BertEncoder is right; say (stdout) if it gives other results with the learner's own BertEmbedding."""
    case = ENCODER_CASES[1]
    try:
        inputs, weights, (output, _, _) = _quietly(lambda: _run_encoder(BertEncoder, case, 1))
        if np.allclose(to_array(output, "output"), ref.bert_encoder(weights, *inputs, case.layers), **TOL):
            return
    except NotImplementedError:  # the embedding is unfinished: its own test says so
        return
    except CheckFailed:
        pass
    print("Note: BertEncoder is right, but with your own BertEmbedding its results differ from the reference: "
          "BertEmbedding is at fault (its own test says why).")


# ----------------------------------------------------------------------------------------------
# load_bert_weights (into the reference BertEncoder)

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
    encoder = ref.keras_layers()["BertEncoder"](**{k: config[k] for k in ENCODER_ARGS if k in config})
    build_unused(encoder, config)
    encoder.embedding.built = encoder.built = True
    variables = bert_variables(encoder, config)
    for variable in variables.values():
        variable.assign(np.zeros(variable.shape, np.float32))
    return encoder, variables


def _grade_loaded(load_bert_weights, backbone, config: dict, inputs, what: str) -> None:
    encoder, variables = _quietly(lambda: _reference_encoder(config))
    source_vars = backbone_variables(backbone)
    before = {label: fingerprint(v) for label, v in source_vars.items()}
    _quietly(lambda: call_loader(load_bert_weights, encoder, backbone, config))
    expect_backbone_unchanged(before, backbone)
    mine_to_theirs = _sources_by_label(encoder, backbone, config["num_layers"])
    for label, variable in variables.items():
        source = mine_to_theirs[label]
        if not same_fingerprint(fingerprint(variable), before[source]):
            raise CheckFailed(describe_wrong_weight(label, variable, before, expected_source=source)
                              + f" ({what})")
    output = _quietly(lambda: encoder(*inputs, training=False))
    expected = backbone({"token_ids": inputs[0], "segment_ids": inputs[1], "padding_mask": inputs[2]})
    difference = np.abs(to_array(output, "encoder output") - to_array(expected["sequence_output"], "backbone output"))
    if difference.max() > OUTPUT_TOLERANCE:
        raise CheckFailed(f"every weight is in its place, but the encoder's output differs from the backbone's "
                          f"sequence_output by up to {difference.max():.3g} ({what}): did load_bert_weights change "
                          "anything else, such as an activation or a layer?")


def _sources_by_label(encoder, backbone, num_layers: int) -> dict[str, str]:
    """Encoder weight label -> backbone weight label, pairing the sublayers' weights in order."""
    labels = {}
    for mine, theirs in ref.sources(num_layers):
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
        backbone = _quietly(lambda: make_backbone(config, seed=940 + index))  # noqa: B023
        inputs = padded_batch(np.random.default_rng(950 + index), config, 3, 7)
        what = (f"small random backbone: {config['num_layers']} layers, hidden {config['hidden_dim']}, "
                f"vocabulary {config['vocabulary_size']}")
        _grade_loaded(load_bert_weights, backbone, config, inputs, what)
    bert = _quietly(_pretrained)
    config = {k: bert.config[k] for k in ENCODER_ARGS}
    _grade_loaded(load_bert_weights, bert.backbone, config, real_inputs(bert.tokenizer),
                  f"pretrained checkpoint on {len(SENTENCES)} padded sentences")
    passed(f"load_bert_weights puts every weight in its place for {len(SMALL_BACKBONES)} small backbones and the "
           f"pretrained checkpoint, whose sequence_output the encoder then reproduces within {OUTPUT_TOLERANCE:g}")
