"""The checks' helpers for objects in the student's kernel (autograde.remote, autograde.checks.weights), through
the real Remote, wire and agent, with the agent served in this process instead of a sandboxed kernel: a layer
read through a handle gives the weight reader the same variables as the layer itself (Keras's own lists cross
the wire as lists), a course_lib helper run "there" fails with our CheckFailed, and seeding a layer's weights
takes a handful of requests whatever its size. The helpers take objects, never "module:attribute" strings: what is
shipped is the address the object derives (where it is defined), and what has no address is refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from in_process_kernel import InProcessKernel

from autograde.checks import judging
from autograde.checks.weights import assign, seed_layer, set_seeded, shapes, variables_of
from autograde.reference.bert.keras_layers import BertEncoder
from autograde.reference.positional_encoding import get_angles as reference_angles
from autograde.reference.transformer.keras_layers import EncoderLayer
from autograde.remote import Handle, Remote, address_of, library, part, part_source, run_there, with_parts
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
    namespace = {"encoder": encoder, "block": block}
    exec("def uses(*args):\n    return helper(*args)\n", namespace)  # a notebook function calling a notebook name
    return InProcessKernel(tmp_path, namespace)


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


def _nested():
    def inner():
        return None

    return inner


def _in_main():
    return None


_in_main.__module__ = "__main__"


class _Holder:
    def method(self):
        return None


UNADDRESSABLE = [
    (lambda: None, r"<lambda> .*is a lambda"),
    (_nested(), r"_nested\.<locals>\.inner .*is defined inside a function"),
    (_in_main, r"_in_main .*is defined in __main__"),
    (_Holder().method, r"_Holder\.method .*is a bound method"),
    (_Holder.method, r"_Holder\.method .*is not at the top level"),
]


def test_a_string_is_refused_with_what_to_pass_instead(kernel):
    handle = Remote(kernel).lookup("uses")
    address = "course_lib.keras_weights:bert_variables"
    message = f"'{address}' is a string: pass the function or class itself"
    for learner in (handle, prebuild):  # in the kernel, and in this process (the unit tests' path)
        for helper in (run_there, part, library):
            with pytest.raises(TypeError, match=message):
                helper(learner, address)
        with pytest.raises(TypeError, match=message), with_parts(learner, helper=address):
            pass
    with pytest.raises(TypeError, match=message):
        part_source(address)


@pytest.mark.thorough
@pytest.mark.parametrize("obj, message", UNADDRESSABLE, ids=["lambda", "nested", "main", "bound", "method"])
def test_an_object_without_an_address_is_refused_by_name(kernel, obj, message):
    handle = Remote(kernel).lookup("uses")
    with pytest.raises((TypeError, ValueError), match=message):
        address_of(obj)
    with pytest.raises((TypeError, ValueError), match=message):
        run_there(handle, obj)
    with pytest.raises((TypeError, ValueError), match=message), with_parts(handle, helper=obj):
        pass
    assert kernel.agent.parts == {} and "helper" not in kernel.agent.namespace  # nothing reached the kernel


def test_the_address_shipped_is_where_the_object_is_defined(kernel):
    # Imported under another name, or from a module that only re-exports it: the address is its definition's.
    assert address_of(reference_angles) == ("autograde.reference.positional_encoding", "get_angles")
    assert address_of(judging.call_each) == ("course_lib.calls", "call_each")
    # Built by course_lib.layers on first use and bound there under its name: imported in the kernel, not shipped.
    assert address_of(EncoderLayer) == ("course_lib.layers", "EncoderLayer")
    assert part_source(EncoderLayer) == "from course_lib.layers import EncoderLayer\n"
    remote = Remote(kernel)
    handle = remote.lookup("uses")
    pos, k = np.arange(3.0)[:, None], np.arange(4.0)[None, :]
    with with_parts(handle, helper=reference_angles):
        assert list(remote.parts.items()) == [("autograde_reference_positional_encoding_get_angles",
                                              "autograde.reference.positional_encoding:get_angles")]
        np.testing.assert_allclose(np.asarray(handle(pos, k, 4)), reference_angles(pos, k, 4))
    shipped = kernel.agent.parts["autograde_reference_positional_encoding_get_angles"].get_angles
    assert shipped is not reference_angles and "helper" not in kernel.agent.namespace
