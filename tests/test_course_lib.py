"""The shared helpers every notebook uses: comparisons, plots and the fast-mode switch."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from course_lib import env, plotting
from course_lib.checking import CheckFailed, expect_close, expect_shape, expect_tensor, to_array

from conftest import AlwaysEqual


def test_to_array_rejects_an_object_that_equals_everything():
    with pytest.raises(CheckFailed, match="could not be read as an array"):
        to_array(AlwaysEqual(), "your result")


def test_to_array_explains_a_missing_return():
    with pytest.raises(CheckFailed, match="did you forget a `return`"):
        to_array(None, "get_angles(...)")


def test_to_array_rejects_nan():
    with pytest.raises(CheckFailed, match="NaN"):
        to_array([1.0, np.nan], "scores")


def test_expect_close_reports_shape_before_values():
    with pytest.raises(CheckFailed, match=r"shape \(2, 3\), expected \(3, 2\)"):
        expect_close(np.zeros((2, 3)), np.zeros((3, 2)), "weights")


def test_expect_close_names_the_worst_entry_and_adds_the_hint():
    expected = np.arange(6.0).reshape(2, 3)
    actual = expected.copy()
    actual[1, 2] += 0.5
    with pytest.raises(CheckFailed, match=r"index \(1, 2\): got 5.5, expected 5.*Check the scaling"):
        expect_close(actual, expected, "output", hint="Check the scaling.")


def test_expect_close_accepts_tensors_and_returns_the_array():
    import tensorflow as tf

    result = expect_close(tf.constant([[1.0, 2.0]]), [[1.0, 2.0]], "x")
    assert isinstance(result, np.ndarray) and result.shape == (1, 2)


def test_expect_tensor_and_dtype():
    import tensorflow as tf

    expect_tensor(tf.zeros(3), "x", dtype="float32")
    with pytest.raises(CheckFailed, match="should be a tf.Tensor, got ndarray"):
        expect_tensor(np.zeros(3), "x")
    with pytest.raises(CheckFailed, match="dtype float32, got float64"):
        expect_tensor(tf.zeros(3, dtype=tf.float64), "x", dtype="float32")


def test_expect_shape():
    expect_shape(np.zeros((1, 4)), (1, 4), "x")
    with pytest.raises(CheckFailed):
        expect_shape(np.zeros((4,)), (1, 4), "x")


def test_a_layer_made_for_a_check_is_built_by_its_first_call_without_a_symbolic_trace():
    import keras

    from course_lib.checking import make_layer

    class Counted(keras.layers.Layer):  # no build() of its own: Keras would trace call() once to build it
        def __init__(self):
            super().__init__()
            self.dense, self.calls = keras.layers.Dense(3), 0

        def call(self, x):
            self.calls += 1
            return self.dense(x)

    plain, made = Counted(), make_layer(Counted)
    for layer in (plain, made):
        assert tuple(layer(np.ones((2, 4), "float32")).shape) == (2, 3)
    assert (plain.calls, made.calls) == (2, 1), "the check's layer was traced before its first call"
    assert [tuple(w.shape) for w in made.weights] == [tuple(w.shape) for w in plain.weights] == [(4, 3), (3,)]


def test_training_only_the_top_layers_freezes_the_embeddings_and_the_layers_below():
    import keras

    from course_lib.heads import TINY_BACKBONE, tiny_backbone, train_top_layers

    backbone = tiny_backbone({**TINY_BACKBONE, "num_layers": 3})
    sequence = backbone(backbone.input)["sequence_output"]
    model = keras.Model(backbone.input, keras.layers.Dense(2)(sequence))
    every = {id(w) for w in model.trainable_weights}
    assert train_top_layers(model, 0) == [] and {id(w) for w in model.trainable_weights} == every
    frozen = train_top_layers(model, 2)
    assert frozen == ["token_embedding", "position_embedding", "segment_embedding", "embeddings_layer_norm",
                      "transformer_layer_0", "transformer_layer_1"]
    trained = {id(w) for w in model.trainable_weights}
    for name in frozen:
        assert not {id(w) for w in backbone.get_layer(name).weights} & trained, name
    assert {id(w) for w in backbone.get_layer("transformer_layer_2").weights} <= trained
    assert {id(w) for w in model.layers[-1].weights} <= trained  # the head
    with pytest.raises(ValueError, match="between 0 and the encoder's 3 layers"):
        train_top_layers(model, 4)


def test_fast_mode_switch(monkeypatch):
    monkeypatch.setenv("COURSE_FAST", "1")
    assert env.fast_mode() and env.pick(full=100, fast=3) == 3
    monkeypatch.setenv("COURSE_FAST", "0")
    assert not env.fast_mode() and env.pick(full=100, fast=3) == 100
    monkeypatch.delenv("COURSE_FAST")
    assert not env.fast_mode(), "full mode must be the default for learners"


def test_show_heatmap_draws_the_matrix_as_given():
    matrix = np.arange(12.0).reshape(3, 4)
    ax = plotting.show_heatmap(matrix[np.newaxis], title="t", xticklabels=list("abcd"))
    np.testing.assert_array_equal(ax.images[0].get_array(), matrix)
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcd")
    matplotlib.pyplot.close("all")


def test_show_heatmap_centres_a_diverging_scale():
    ax = plotting.show_heatmap(np.array([[-1.0, 3.0]]), cmap="coolwarm", center=0.0)
    assert ax.images[0].get_clim() == (-3.0, 3.0)
    matplotlib.pyplot.close("all")


def test_show_heatmap_rejects_a_3d_input_clearly():
    with pytest.raises(ValueError, match="2-D matrix"):
        plotting.show_heatmap(np.zeros((2, 3, 4)))


def test_show_heatmaps_shares_one_colour_scale():
    fig = plotting.show_heatmaps([np.zeros((2, 2)), np.ones((2, 2)) * 3], titles=["a", "b"], ncols=2)
    limits = {ax.images[0].get_clim() for ax in fig.axes if ax.images}
    assert limits == {(0.0, 3.0)}
    matplotlib.pyplot.close("all")


# ------------------------------------------------------------------------------------------------
# course_lib.layers: the building blocks that later notebooks import (answers of 01, 02, 04 and 07) must agree
# with the independent references that graded them (CONTRIBUTING.md, "Where an answer lives").

# Each marked block, and the test below that compares it with its reference.
COMPARED = {"positional_encoding": "test_provided_positional_encoding_matches_the_reference",
            "create_padding_mask": "test_provided_masks_match_the_reference",
            "create_look_ahead_mask": "test_provided_masks_match_the_reference",
            "scaled_dot_product_attention": "test_provided_attention_matches_the_reference",
            "EncoderLayer": "test_provided_encoder_layer_passes_the_hidden_check_of_assignment_04",
            "char_span_to_token_span": "test_provided_windows_and_spans_match_the_references",
            "make_windows": "test_provided_windows_and_spans_match_the_references",
            "best_span": "test_provided_best_span_matches_the_reference",
            "normalize_answer": "test_provided_squad_scores_match_the_reference",
            "squad_em_f1": "test_provided_squad_scores_match_the_reference"}


def test_every_building_block_is_compared_with_its_reference():
    from pathlib import Path

    from autograde.student_kit.layers import answer_blocks

    source = (Path(__file__).resolve().parents[1] / "course_lib" / "layers.py").read_text()
    assert {block.name for block in answer_blocks(source)} == set(COMPARED)
    assert all(callable(globals().get(test)) for test in COMPARED.values())


def test_no_reference_imports_the_building_blocks():
    """A reference that used course_lib.layers would grade a wrong block right; its Keras layers
    (keras_layers.py) may build on the blocks, which the tests here keep equal to the NumPy references."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "autograde" / "reference"
    users = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module] if isinstance(node, ast.ImportFrom) else
                     [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            if path.name != "keras_layers.py" and any((name or "").startswith("course_lib.layers") for name in names):
                users.append(str(path.relative_to(root)))
    assert users == []


def test_provided_positional_encoding_matches_the_reference():
    from autograde.reference.positional_encoding import positional_encoding as reference
    from course_lib.layers import positional_encoding

    encoding = positional_encoding(50, 16)
    assert encoding.dtype.name == "float32" and tuple(encoding.shape) == (1, 50, 16)
    np.testing.assert_allclose(encoding.numpy(), reference(50, 16), atol=1e-6)


def test_provided_masks_match_the_reference():
    from autograde.reference import scaled_dot_product_attention as reference
    from course_lib.layers import create_look_ahead_mask, create_padding_mask

    ids = np.array([[5, 3, 0, 0], [1, 2, 3, 4]])
    np.testing.assert_array_equal(create_padding_mask(ids).numpy(), reference.padding_mask(ids))
    np.testing.assert_array_equal(create_look_ahead_mask(5).numpy(), reference.look_ahead_mask(5))


@pytest.mark.parametrize("mask_kind", [None, "padding", "look-ahead"])
def test_provided_attention_matches_the_reference(mask_kind):
    from autograde.reference import scaled_dot_product_attention as reference
    from course_lib.layers import scaled_dot_product_attention

    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 6, 8)).astype(np.float32) for _ in range(3))
    mask = {None: None,
            "padding": reference.padding_mask(np.array([[1, 2, 3, 0, 0, 0], [4, 5, 6, 7, 8, 0]]))[:, None],
            "look-ahead": reference.look_ahead_mask(6)[None]}[mask_kind]
    output, weights = scaled_dot_product_attention(q, k, v, None if mask is None else mask.astype(np.float32))
    expected_output, expected_weights = reference.scaled_dot_product_attention(q, k, v, mask)
    np.testing.assert_allclose(weights.numpy(), expected_weights, atol=1e-6)
    np.testing.assert_allclose(output.numpy(), expected_output, atol=1e-5)


@pytest.mark.thorough
def test_provided_encoder_layer_passes_the_hidden_check_of_assignment_04():
    from autograde.checks.transformer.layers import grade_encoder_layer
    from course_lib.layers import EncoderLayer

    grade_encoder_layer(EncoderLayer)


def test_provided_encoder_layer_with_gelu_is_a_keras_hub_bert_layer():
    """With the tanh GELU and epsilon 1e-12, the 04 layer computes what keras-hub's BERT layer computes."""
    import keras
    import keras_hub

    from course_lib.layers import EncoderLayer

    def gelu_tanh(x):
        return keras.activations.gelu(x, approximate=True)

    hub = keras_hub.layers.TransformerEncoder(intermediate_dim=24, num_heads=2, activation=gelu_tanh,
                                              layer_norm_epsilon=1e-12)
    ours = EncoderLayer(embedding_dim=8, num_heads=2, fully_connected_dim=24, layernorm_eps=1e-12,
                        activation=gelu_tanh)
    x = np.random.default_rng(1).standard_normal((2, 5, 8)).astype(np.float32)
    padding = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=np.int32)
    hub(x, padding_mask=padding)
    ours(x, mask=padding[:, None, :])
    ours.mha.set_weights(hub._self_attention_layer.get_weights())
    ours.layernorm1.set_weights(hub._self_attention_layer_norm.get_weights())
    ours.layernorm2.set_weights(hub._feedforward_layer_norm.get_weights())
    ours.ffn.layers[0].set_weights(hub._feedforward_intermediate_dense.get_weights())
    ours.ffn.layers[1].set_weights(hub._feedforward_output_dense.get_weights())
    np.testing.assert_allclose(ours(x, mask=padding[:, None, :]).numpy(), hub(x, padding_mask=padding).numpy(),
                               atol=1e-6)


def _random_windows(rng, containers: str):
    """make_windows' arguments for a random question and context, ids and offsets in `containers`."""
    size, question = int(rng.integers(0, 40)), int(rng.integers(1, 8))
    max_length = question + 3 + int(rng.integers(1, 25))
    stride = int(rng.integers(0, max_length - question - 3))
    lengths = rng.integers(1, 6, size)
    ends = np.cumsum(lengths + rng.integers(0, 3, size))  # tokens of 1-5 characters, 0-2 spaces between
    offsets = [(int(end - length), int(end)) for end, length in zip(ends, lengths, strict=True)]
    context = rng.integers(1000, 30000, size)
    if containers == "arrays":
        return [rng.integers(1000, 30000, question), context, np.array(offsets).reshape(-1, 2), max_length, stride]
    return [rng.integers(1000, 30000, question).tolist(), context.tolist(), offsets, max_length, stride]


@pytest.mark.thorough
def test_provided_windows_and_spans_match_the_references():
    from autograde.reference.qa import spans, windows
    from course_lib.layers import char_span_to_token_span, make_windows

    rng = np.random.default_rng(0)
    for trial in range(300):
        args = _random_windows(rng, ["lists", "arrays"][trial % 2])
        characters = int(args[2][-1][1]) + 3 if len(args[2]) else 4
        answer = sorted(int(c) for c in rng.integers(0, characters, 2))
        answer[1] += 1  # at least one character
        options = {"answer": tuple(answer)} if trial % 3 else {"cls_id": 2, "sep_id": 3, "pad_id": 1}
        provided = make_windows(*args, **options)
        assert provided == windows.make_windows(*args, **options), (args, options)
        for window in provided:
            for start in range(-1, characters):
                for end in (start + 1, start + 4):
                    where = (window["offsets"], window["sequence_ids"], start, end)
                    assert char_span_to_token_span(*where) == spans.char_span_to_token_span(*where), where


def test_provided_best_span_matches_the_reference():
    from autograde.reference.qa.decoding import best_span as reference
    from course_lib.layers import best_span

    rng = np.random.default_rng(0)
    for trial in range(300):
        windows, seq = int(rng.integers(1, 5)), int(rng.integers(1, 24))
        grid = [0.5, 2 ** -8][trial % 2]  # many ties, then few; sums exact in float32 and float64
        start, end = (rng.integers(-16, 16, (windows, seq)) * grid for _ in range(2))
        mask = rng.random((windows, seq)) < 0.6
        longest, n_best = int(rng.integers(1, 12)), int(rng.integers(1, 40))
        args = {0: (start.astype(np.float32), end.astype(np.float32), mask),
                1: (start, end, mask.astype(int)),
                2: (start[0].tolist(), end[0].tolist(), mask[0].tolist())}[trial % 3]
        assert best_span(*args, longest, n_best) == reference(*args, longest, n_best), (args, longest, n_best)
        assert best_span(*args) == reference(*args)


def test_provided_squad_scores_match_the_reference():
    from autograde.reference.qa import metrics as reference
    from course_lib.layers import normalize_answer, squad_em_f1

    words = ["the", "A", "an", "Øresund", "bridge", "Bridge!", "a.k.a.", "'the'", "theatre", "1", "...", " \n"]
    rng = np.random.default_rng(0)
    for trial in range(1000):
        prediction = " ".join(rng.choice(words, int(rng.integers(0, 5))))
        golds = [" ".join(rng.choice(words, int(rng.integers(0, 5)))) for _ in range(int(rng.integers(0, 4)))]
        golds = golds[0] if trial % 7 == 0 and golds else golds  # one gold answer as a plain string too
        assert normalize_answer(prediction) == reference.normalize_answer(prediction), prediction
        assert squad_em_f1(prediction, golds) == reference.squad_em_f1(prediction, golds), (prediction, golds)


# ----------------------------------------------------------------------------------------------
# What Jupyter shows for a failed check


def _shown_in_ipython(code: str, capsys) -> str:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_cell(code)
    return capsys.readouterr().out


def test_a_crash_in_the_learners_code_shows_their_line_not_a_traceback(capsys):
    shown = _shown_in_ipython(
        "import numpy as np\n"
        "from course_lib.checking import call_learner\n"
        "def scores(q, k):\n"
        "    product = np.ones((2, 3))\n"
        "    return product @ k\n"
        "call_learner(scores, None, np.ones((2, 2)))\n", capsys)
    assert "Check failed" in shown and "scores raised ValueError" in shown, shown
    assert "In your code" in shown and "in scores, line 5: return product @ k" in shown, shown
    assert "Traceback" not in shown and "course_lib" not in shown, shown


def test_a_wrong_answer_shows_the_message_alone(capsys):
    shown = _shown_in_ipython(
        "from course_lib.checking import expect_close\n"
        "expect_close([1.0, 2.0], [1.0, 3.0], 'the scores')\n", capsys)
    assert "Check failed" in shown and "the scores" in shown, shown
    assert "In your code" not in shown and "Traceback" not in shown and "course_lib" not in shown, shown


def test_an_unfinished_function_says_so_in_one_sentence(capsys):
    shown = _shown_in_ipython(
        "from course_lib.checking import call_learner\n"
        "def get_angles(pos, k, d):\n"
        "    raise NotImplementedError()\n"
        "call_learner(get_angles, 1, 2, 3)\n", capsys)
    assert "Not implemented yet" in shown and "get_angles is not implemented yet" in shown, shown
    assert "Traceback" not in shown and "course_lib" not in shown, shown


def test_an_unfinished_keras_layer_shows_no_keras_call_context(capsys):
    shown = _shown_in_ipython(
        "import keras\n"
        "from course_lib.checking import call_layer\n"
        "class EncoderLayer(keras.layers.Layer):\n"
        "    def call(self, x, training=False):\n"
        "        raise NotImplementedError()\n"
        "call_layer(EncoderLayer(), keras.ops.ones((1, 2)), training=False)\n", capsys)
    assert "EncoderLayer is not implemented yet" in shown, shown
    assert "Exception encountered" not in shown and "Arguments received" not in shown, shown


def test_a_crash_inside_a_keras_layer_shows_the_error_and_the_learners_line(capsys):
    shown = _shown_in_ipython(
        "import keras, tensorflow as tf\n"
        "from course_lib.checking import call_layer\n"
        "class Projection(keras.layers.Layer):\n"
        "    def call(self, x, training=False):\n"
        "        return tf.matmul(x, tf.ones((5, 4)))\n"
        "call_layer(Projection(), tf.ones((2, 3)), training=False)\n", capsys)
    assert "Projection raised" in shown and "Matrix size-incompatible" in shown, shown
    assert "in call, line 5: return tf.matmul(x, tf.ones((5, 4)))" in shown, shown
    for noise in ("Exception encountered", "Arguments received", "function_node", "\x1b[1mMatrix", "Traceback"):
        assert noise not in shown, (noise, shown)


def test_plain_message_unwraps_nested_keras_contexts():
    from course_lib.checking import plain_message

    inner = ("Exception encountered when calling MultiHeadAttention.call().\n\n\x1b[1mshapes (2, 3) and (5, 4) "
             "do not match\x1b[0m\n\nArguments received by MultiHeadAttention.call():\n  • x=tf.Tensor(shape=(2, 3))")
    outer = (f"Exception encountered when calling EncoderLayer.call().\n\n\x1b[1m{inner}\x1b[0m\n\n"
             "Arguments received by EncoderLayer.call():\n  • training=False")
    assert plain_message(ValueError(outer)) == "shapes (2, 3) and (5, 4) do not match"
    assert plain_message("no context here") == "no context here"


def test_messages_wrap_between_words_never_inside_code():
    from course_lib.checking import wrap

    text = "x " * 45 + "Replace `raise NotImplementedError()` with your code"
    lines = wrap(text, 100)
    assert any("`raise NotImplementedError()`" in line for line in lines), lines
    assert all(len(line) <= 100 for line in lines), lines
