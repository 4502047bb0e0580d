"""The checks' helpers for objects in the student's kernel (autograde.remote, autograde.checks.weights), through
the real Remote, wire and agent, with the agent served in this process instead of a sandboxed kernel: a layer
read through a handle gives the weight reader the same variables as the layer itself (Keras's own lists cross
the wire as lists), a course_lib helper run "there" fails with our CheckFailed, and seeding a layer's weights
takes a handful of requests whatever its size."""

from __future__ import annotations

import numpy as np
import pytest
from in_process_kernel import InProcessKernel

from autograde.checks.weights import assign, seed_layer, set_seeded, shapes, variables_of
from autograde.reference.bert.keras_layers import BertEncoder
from autograde.reference.transformer.keras_layers import EncoderLayer
from autograde.remote import Handle, Remote, run_there
from course_lib.bert.encoder import prebuild
from course_lib.checking import CheckFailed
from course_lib.keras_weights import bert_variables, layer_variables, seed_variables

CONFIG = {"vocabulary_size": 12, "num_layers": 2, "num_heads": 2, "hidden_dim": 4, "intermediate_dim": 8,
          "max_sequence_length": 6, "num_segments": 2}
BLOCK = {"embedding_dim": 8, "num_heads": 2, "fully_connected_dim": 16}


@pytest.fixture()
def kernel(tmp_path):
    encoder = BertEncoder(**CONFIG)
    prebuild(encoder, CONFIG)
    block = EncoderLayer(8, 2, 16)
    block(np.zeros((1, 3, 8), np.float32), training=False)
    return InProcessKernel(tmp_path, {"encoder": encoder, "block": block})


def test_a_layer_through_a_handle_reads_as_the_layer(kernel):
    remote = Remote(kernel)
    handle, encoder = remote.lookup("encoder"), kernel.agent.namespace["encoder"]
    assert isinstance(handle, Handle) and type(handle).__name__ == "BertEncoder"
    local, remote_variables = bert_variables(encoder, CONFIG), bert_variables(handle, CONFIG)
    assert list(remote_variables) == list(local)
    for key, variable in remote_variables.items():
        assert tuple(variable.shape) == tuple(local[key].shape), key


def test_run_there_raises_our_check_failed(kernel):
    handle = Remote(kernel).lookup("encoder")
    with pytest.raises(CheckFailed, match="has 2 layers, expected 3"):
        run_there(handle, bert_variables, handle, {**CONFIG, "num_layers": 3})
    with pytest.raises(KeyError):  # other errors stay what they are
        run_there(handle, bert_variables, handle, {})
    assert list(variables_of(handle, bert_variables, CONFIG)) == \
        list(bert_variables(kernel.agent.namespace["encoder"], CONFIG))


def test_seeding_through_the_kernel_sets_what_it_returns_in_few_requests(kernel):
    handle, block = Remote(kernel).lookup("block"), kernel.agent.namespace["block"]
    before = kernel.requests
    values = seed_layer(handle, "encoder_layer", BLOCK, seed=3)
    assert kernel.requests - before <= 4, f"seeding one layer took {kernel.requests - before} requests"
    local = layer_variables(block, "encoder_layer", BLOCK)
    for key, variable in local.items():
        np.testing.assert_array_equal(variable.numpy(), values[key].astype(np.float32), err_msg=key)
    # The same values as seeding the layer where it is, from the same seed.
    again = seed_variables(local, seed=3)
    assert all(np.array_equal(again[key], values[key]) for key in values)


def test_assign_and_shapes_through_the_kernel(kernel):
    handle, block = Remote(kernel).lookup("block"), kernel.agent.namespace["block"]
    variables = variables_of(handle, layer_variables, "encoder_layer", BLOCK)
    sizes = shapes(variables)
    assert sizes["mha.output_dense.kernel"] == (2, 4, 8) and sizes["ffn.layers[1].bias"] == (8,)
    assign(variables, {"ffn.layers[1].bias": np.full(8, 0.25)})
    np.testing.assert_array_equal(block.ffn.layers[1].bias.numpy(), np.full(8, 0.25, np.float32))
    with pytest.raises(ValueError, match=r"shape \(8,\), expected \(3,\)"):
        assign(variables, {"ffn.layers[1].bias": np.zeros(3)})
    assert set_seeded({}, seed=1) == {}
