"""The inputs assignment 03's graded functions must handle (autograde/input_classes/__init__.py), in notebook order."""

from __future__ import annotations

import numpy as np

from autograde.input_classes import KERAS_LAYER, InputClass

# ScratchMultiHeadAttention is left out: its hidden check builds and calls the Keras layer class, and the
# recorder of autograde.input_classes follows a class's construction and forward calls only for torch modules.

# ----------------------------------------------------------------------------------------------
# split_heads(x, num_heads): x (batch, seq, d_model), a float32 tensor; merge_heads(x): x (batch, heads, seq, depth)


def _traced(batch_axis: int, seq_axis: int):
    return lambda a: a["x"].shape[batch_axis] is None and a["x"].shape[seq_axis] is None


SPLIT = (
    InputClass("one_head", "num_heads = 1 (depth = d_model)", lambda a: a["num_heads"] == 1),
    InputClass("several_heads", "three heads or more", lambda a: a["num_heads"] >= 3),
    InputClass("depth_differs_from_heads", "depth != num_heads",
               lambda a: a["x"].shape[-1] // a["num_heads"] != a["num_heads"]),
    InputClass("batch_of_one", "a batch of one sentence", lambda a: a["x"].shape[0] == 1),
    InputClass("one_position", "sentences of one position (seq 1)", lambda a: a["x"].shape[1] == 1),
    InputClass("traced", "called in a tf.function whose batch and sequence sizes are unknown (as Keras calls a layer)",
               _traced(0, 1)),
)

MERGE = (
    InputClass("one_head", "one head", lambda a: a["x"].shape[1] == 1),
    InputClass("several_heads", "three heads or more", lambda a: a["x"].shape[1] >= 3),
    InputClass("depth_differs_from_heads", "depth != num_heads", lambda a: a["x"].shape[3] != a["x"].shape[1]),
    InputClass("batch_of_one", "a batch of one sentence", lambda a: a["x"].shape[0] == 1),
    InputClass("one_position", "sentences of one position (seq 1)", lambda a: a["x"].shape[2] == 1),
    InputClass("traced", "called in a tf.function whose batch and sequence sizes are unknown (as Keras calls a layer)",
               _traced(0, 2)),
)

# ----------------------------------------------------------------------------------------------
# copy_keras_weights(keras_layer, layer): a built keras.layers.MultiHeadAttention, a built layer of the same size


def _holds_weights(a) -> bool:
    return any(np.any(np.asarray(w) != 0) for name in ("wq", "wk", "wv", "wo") for w in getattr(a["layer"], name)
               .get_weights())


COPY = (
    InputClass("one_head", "one head (key_dim = d_model)", lambda a: a["keras_layer"].num_heads == 1),
    InputClass("several_heads", "three heads or more", lambda a: a["keras_layer"].num_heads >= 3),
    InputClass("key_dim_differs_from_heads", "key_dim != num_heads",
               lambda a: a["keras_layer"].key_dim != a["keras_layer"].num_heads),
    InputClass("wide", "d_model of 32 or more", lambda a: a["keras_layer"].num_heads * a["keras_layer"].key_dim >= 32),
    InputClass("target_holds_weights", "the layer copied into already holds other, non-zero weights", _holds_weights),
)

CLASSES = {"split_heads": SPLIT, "merge_heads": MERGE, "copy_keras_weights": COPY}

UNLISTED = {  # exercises whose classes this proof cannot show drawn, and why
    "ScratchMultiHeadAttention": KERAS_LAYER,
}
