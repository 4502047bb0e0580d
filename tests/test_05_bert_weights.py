"""Assignment 05, load_bert_weights: correct loaders (as in the solution notebook, and variable by variable)
pass the visible check (course_lib.bert.weights) and the hidden check (autograde.checks.bert.weights); each
usual mistake names the weight that went astray and where it came from; the checkpoint's generated
fingerprints are its weights'; an always-equal result fails; NotImplementedError passes through."""

from __future__ import annotations

import keras
import pytest

from autograde.checks.bert import weights as hidden  # noqa: E402
from autograde.reference.bert.weights import EMBEDDING_SOURCES, LAYER_SOURCES, sources  # noqa: E402
from course_lib import keras_weights  # noqa: E402
from course_lib.bert import weights as visible  # noqa: E402
from course_lib.checking import CheckFailed  # noqa: E402
from course_lib.expected import load as load_expected  # noqa: E402
from course_lib.pretrained import load_bert  # noqa: E402

from conftest import AlwaysEqual  # noqa: E402

# ------------------------------------------------------------------------------------------------
# Correct loaders: as in the solution notebook, and another way.


def load_bert_weights(encoder, backbone):
    encoder.embedding.token_embedding.set_weights(backbone.token_embedding.get_weights())
    encoder.embedding.position_embedding.set_weights(backbone.position_embedding.get_weights())
    encoder.embedding.segment_embedding.set_weights(backbone.segment_embedding.get_weights())
    encoder.embedding.layer_norm.set_weights(backbone.embeddings_layer_norm.get_weights())
    for mine, theirs in zip(encoder.enc_layers, backbone.transformer_layers, strict=True):
        mine.mha.set_weights(theirs._self_attention_layer.get_weights())
        mine.layernorm1.set_weights(theirs._self_attention_layer_norm.get_weights())
        mine.ffn.layers[0].set_weights(theirs._feedforward_intermediate_dense.get_weights())
        mine.ffn.layers[1].set_weights(theirs._feedforward_output_dense.get_weights())
        mine.layernorm2.set_weights(theirs._feedforward_layer_norm.get_weights())


def load_by_assign(encoder, backbone):
    """Another correct loader: variable by variable, with `assign`."""
    embedding = encoder.embedding
    embedding.token_embedding.embeddings.assign(backbone.token_embedding.embeddings)
    embedding.position_embedding.embeddings.assign(backbone.position_embedding.position_embeddings)
    embedding.segment_embedding.embeddings.assign(backbone.segment_embedding.embeddings)
    embedding.layer_norm.gamma.assign(backbone.embeddings_layer_norm.gamma)
    embedding.layer_norm.beta.assign(backbone.embeddings_layer_norm.beta)
    for i, layer in enumerate(encoder.enc_layers):
        theirs = backbone.transformer_layers[i]
        for mine_part, their_part in [(layer.mha, theirs._self_attention_layer),
                                      (layer.ffn.layers[0], theirs._feedforward_intermediate_dense),
                                      (layer.ffn.layers[1], theirs._feedforward_output_dense),
                                      (layer.layernorm1, theirs._self_attention_layer_norm),
                                      (layer.layernorm2, theirs._feedforward_layer_norm)]:
            for target, source in zip(mine_part.weights, their_part.weights, strict=True):
                target.assign(source)


@pytest.fixture(scope="module")
def bert():
    return load_bert()


def sources_by_sublayer(encoder, backbone, num_layers: int) -> dict[str, str]:
    """Encoder weight label -> backbone weight label, pairing the weights of each pair of sublayers in order."""
    labels = {}
    for mine, theirs in sources(num_layers):
        mine_weights = keras_weights.sublayer_weights(keras_weights.resolve(encoder, mine))
        their_weights = keras_weights.sublayer_weights(keras_weights.resolve(backbone, theirs))
        for (mine_attr, _), (their_attr, _) in zip(mine_weights, their_weights, strict=True):
            labels[f"{mine}.{mine_attr}"] = f"{theirs}.{their_attr}"
    return labels


@pytest.mark.thorough
def test_generated_fingerprints_are_the_checkpoints(bert):
    """Each stored fingerprint is that of the backbone weight the reference says it comes from; the hidden
    check's map of sources, made from names, pairs the sublayers' weights as Keras lists them."""
    prints = load_expected(visible.STEM, "weights", "shipped_checkpoint")
    skeleton = visible.encoder_skeleton(visible.SHIPPED_CONFIG)
    source_of = hidden.weight_sources(visible.SHIPPED_CONFIG["num_layers"])
    assert source_of == sources_by_sublayer(skeleton, bert.backbone, visible.SHIPPED_CONFIG["num_layers"])
    backbone = keras_weights.backbone_variables(bert.backbone)
    assert sorted(prints) == sorted(source_of)
    for label, source in source_of.items():
        assert keras_weights.same_fingerprint(keras_weights.fingerprint(backbone[source]), prints[label]), label


@pytest.mark.thorough
def test_correct_loaders_pass_visible_and_hidden_checks(bert, capsys):
    visible.check_load_bert_weights(load_bert_weights, bert.backbone)
    visible.check_load_bert_weights(load_by_assign)
    hidden.grade_load_bert_weights(load_bert_weights)
    hidden.grade_load_bert_weights(load_by_assign)
    out = capsys.readouterr()
    assert out.out.count("\N{CHECK MARK}") == 4 and "Note:" not in out.out
    assert out.err == ""


# ------------------------------------------------------------------------------------------------
# load_bert_weights mistakes


def _loader(replace: dict | None = None, *, skip=(), order=None):
    """A loader with some sources replaced, some sublayers skipped, or the layers taken in another order."""
    replace = replace or {}

    def load(encoder, backbone):
        n = len(encoder.enc_layers)
        pairs = [(mine, replace.get(mine, theirs)) for mine, theirs in EMBEDDING_SOURCES if mine not in skip]
        for i, j in enumerate(range(n) if order is None else order(n)):
            pairs += [(f"enc_layers[{i}].{mine}", f"transformer_layers[{j}].{replace.get(mine, theirs)}")
                      for mine, theirs in LAYER_SOURCES]
        for mine, theirs in pairs:
            keras_weights.resolve(encoder, mine).set_weights(keras_weights.resolve(backbone, theirs).get_weights())

    return load


def hard_coded_loader(encoder, backbone):
    for i in range(6):
        encoder.enc_layers[i].mha.set_weights(backbone.transformer_layers[i]._self_attention_layer.get_weights())


def backwards_loader(encoder, backbone):
    backbone.embeddings_layer_norm.set_weights(encoder.embedding.layer_norm.get_weights())
    load_bert_weights(encoder, backbone)


def always_equal_loader(encoder, backbone):
    return AlwaysEqual()


def unfinished_loader(encoder, backbone):
    raise NotImplementedError()


LOADER_CASES = [
    (_loader({"layernorm1": "_feedforward_layer_norm", "layernorm2": "_self_attention_layer_norm"}),
     "layernorm1.gamma has the values of backbone.transformer_layers\\[0\\]._feedforward_layer_norm.gamma"
     ".*layernorm1 follows the attention"),
    (_loader(skip=("embedding.segment_embedding",)),
     "embedding.segment_embedding.embeddings still holds the zeros"),
    (_loader({"embedding.token_embedding": "position_embedding", "embedding.position_embedding": "token_embedding"}),
     "A shape mismatch means a weight went to the wrong place"),
    (_loader({"ffn.layers[0]": "_feedforward_output_dense", "ffn.layers[1]": "_feedforward_intermediate_dense"}),
     "intermediate dense layer"),
    (_loader(order=lambda n: list(range(n))[::-1]),
     "enc_layers\\[0\\].mha.query_dense.kernel has the values of backbone.transformer_layers\\[1\\]"
     ".*enc_layers\\[0\\] takes the weights of transformer_layers\\[0\\]"),
    (_loader(order=lambda n: [0] * n), "enc_layers\\[1\\].* takes the weights of transformer_layers\\[1\\]"),
    (hard_coded_loader, "never hard-code them"),
    (backwards_loader, "load_bert_weights changed the backbone"),
    (always_equal_loader, "still holds the zeros"),
]


@pytest.mark.thorough
@pytest.mark.parametrize("loader, message", LOADER_CASES, ids=[
    "norms_swapped", "segment_untouched", "token_position_swapped", "dense_swapped", "layers_reversed",
    "first_layer_everywhere", "hard_coded_sizes", "writes_into_backbone", "always_equal"])
@pytest.mark.parametrize("check", [visible.check_load_bert_weights, hidden.grade_load_bert_weights],
                         ids=["visible", "hidden"])
def test_loader_mistakes_are_named(check, loader, message):
    with pytest.raises(CheckFailed, match=message):
        check(loader)


def test_hidden_loader_check_says_where_a_weight_should_come_from():
    loader = LOADER_CASES[0][0]
    with pytest.raises(CheckFailed, match="it should get those of backbone.transformer_layers\\[0\\]"
                                          "._self_attention_layer_norm.gamma"):
        hidden.grade_load_bert_weights(loader)


@pytest.mark.thorough
def test_visible_loader_check_on_the_pretrained_backbone_names_the_wrong_weight(bert):
    """Right for the small backbone, wrong for the pretrained one: the fingerprints of the checkpoint catch it."""
    def loader(encoder, backbone):
        load_bert_weights(encoder, backbone)
        if len(encoder.enc_layers) == 6:
            encoder.enc_layers[2].layernorm1.set_weights(
                backbone.transformer_layers[2]._feedforward_layer_norm.get_weights())

    with pytest.raises(CheckFailed, match="enc_layers\\[2\\].layernorm1.gamma has the values of "
                                          "backbone.transformer_layers\\[2\\]._feedforward_layer_norm.gamma"):
        visible.check_load_bert_weights(loader, bert.backbone)


def test_loader_that_changes_the_encoder_otherwise_fails(bert):
    """Weights right, but the activation replaced: the output comparison with the backbone catches it."""
    def loader(encoder, backbone):
        load_bert_weights(encoder, backbone)
        for layer in encoder.enc_layers:
            layer.ffn.layers[0].activation = keras.activations.relu

    with pytest.raises(CheckFailed, match="differs from the backbone's sequence_output"):
        hidden.grade_load_bert_weights(loader)


@pytest.mark.parametrize("check", [visible.check_load_bert_weights, hidden.grade_load_bert_weights],
                         ids=["visible", "hidden"])
def test_unfinished_loader_passes_through(check):
    with pytest.raises(NotImplementedError):
        check(unfinished_loader)
