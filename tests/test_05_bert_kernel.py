"""Assignment 05, the checks' helpers for objects in the student's kernel (autograde.checks.bert.kernel), on a
remote served in this process through the real wire: a layer read through a handle gives the weight reader the
same variables as the layer itself (Keras's own lists cross the wire as lists), and a course_lib helper run
"there" fails with our CheckFailed."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from autograde import wire  # noqa: E402
from autograde.checks.bert.kernel import run_there  # noqa: E402
from autograde.reference.bert.keras_layers import BertEncoder  # noqa: E402
from autograde.registry import resolve  # noqa: E402
from autograde.remote import Handle, handle_type, learner_error  # noqa: E402
from course_lib.bert.encoder import prebuild  # noqa: E402
from course_lib.checking import CheckFailed  # noqa: E402
from course_lib.keras_weights import bert_variables  # noqa: E402

CONFIG = {"vocabulary_size": 12, "num_layers": 2, "num_heads": 2, "hidden_dim": 4, "intermediate_dim": 8,
          "max_sequence_length": 6, "num_segments": 2}


class InProcessRemote:
    """What the kernel's agent does, here: values cross through `wire` both ways, other objects stay as handles."""

    def __init__(self):
        self.objects: dict[int, object] = {}

    def _keep(self, value) -> int:
        self.objects[id(value)] = value
        return id(value)

    def send(self, value):
        """A value of the "kernel" as the grader receives it."""
        encoder = wire.Encoder(handle_of=self._keep)
        tree = encoder.encode(value)
        return wire.Decoder(encoder.arrays, tensor=tf.constant,
                            handle=lambda key, name: handle_type(name)(self, key)).decode(tree)

    def receive(self, value):
        """A value of the grader as the "kernel" receives it."""
        encoder = wire.Encoder(handle_of=lambda h: object.__getattribute__(h, "_id"))
        tree = encoder.encode(value)
        return wire.Decoder(encoder.arrays, tensor=tf.constant, handle=lambda key, _: self.objects[key]).decode(tree)

    def request(self, op: str, **args):
        args = self.receive(args)
        try:
            if op == "getattr":
                return self.send(getattr(args["target"], args["name"]))
            if op == "call":
                return self.send(args["target"](*args["args"], **args["kwargs"]))
        except Exception as error:
            raise learner_error(type(error).__name__, str(error)) from None
        raise ValueError(op)

    def library(self, dotted: str):
        return self.send(resolve(dotted))


@pytest.fixture(scope="module")
def encoder():
    layer = BertEncoder(**CONFIG)
    prebuild(layer, CONFIG)
    return layer


def test_a_layer_through_a_handle_reads_as_the_layer(encoder):
    remote = InProcessRemote()
    handle = remote.send(encoder)
    assert isinstance(handle, Handle) and type(handle).__name__ == "BertEncoder"
    local, remote_variables = bert_variables(encoder, CONFIG), bert_variables(handle, CONFIG)
    assert list(remote_variables) == list(local)
    for key, variable in remote_variables.items():
        assert tuple(variable.shape) == tuple(local[key].shape), key
    key = "enc_layers[1].ffn.layers[0].kernel"
    value = np.full(local[key].shape, 0.5, np.float32)
    remote_variables[key].assign(value)
    np.testing.assert_array_equal(local[key].numpy(), value)


def test_run_there_raises_our_check_failed(encoder):
    remote = InProcessRemote()
    handle = remote.send(encoder)
    with pytest.raises(CheckFailed, match="has 2 layers, expected 3"):
        run_there(handle, "course_lib.keras_weights:bert_variables", handle, {**CONFIG, "num_layers": 3})
    with pytest.raises(KeyError):  # other errors stay what they are
        run_there(handle, "course_lib.keras_weights:bert_variables", handle, {})
    assert sorted(run_there(handle, "course_lib.keras_weights:bert_variables", handle, CONFIG)) == \
        sorted(bert_variables(encoder, CONFIG))
