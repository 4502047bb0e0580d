"""Reference multi-head attention for assignment 03, in NumPy (float64): splitting and merging heads, and
the forward pass of a multi-head attention layer from given weight matrices. The Keras layer the notebook
builds, `ScratchMultiHeadAttention`, is in `keras_layers` (it needs TensorFlow; this module does not).

Weights are dictionaries {"wq": (kernel, bias), "wk": ..., "wv": ..., "wo": ...} with kernels
(d_in, d_model) and biases (d_model,), the layout of `keras.layers.Dense`. Masks follow the course
convention (1 = may attend, 0 = blocked) and broadcast to (batch, n_q, n_k); the head axis is
inserted here. The named mistakes are built from these parts in autograde/mistakes/multi_head_attention.py.
"""

from __future__ import annotations

import numpy as np

from autograde.reference.scaled_dot_product_attention import as_float
from autograde.reference.scaled_dot_product_attention import scaled_dot_product_attention as attention

PROJECTIONS = ("wq", "wk", "wv", "wo")


def split_heads(x, num_heads: int) -> np.ndarray:
    """(batch, seq, d_model) -> (batch, num_heads, seq, depth): head h gets features h*depth..(h+1)*depth-1."""
    x = as_float(x)
    batch, seq, d_model = x.shape
    depth = d_model // num_heads
    return x.reshape(batch, seq, num_heads, depth).transpose(0, 2, 1, 3)


def merge_heads(x) -> np.ndarray:
    """(batch, num_heads, seq, depth) -> (batch, seq, num_heads * depth), the inverse of split_heads."""
    x = as_float(x)
    batch, heads, seq, depth = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, seq, heads * depth)


def head_mask(mask):
    """A mask that broadcasts to (batch, n_q, n_k) gets the head axis: (..., 1, n_q, n_k)."""
    if mask is None:
        return None
    mask = as_float(mask)
    return mask[..., np.newaxis, :, :] if mask.ndim >= 3 else mask


def dense(x, weights) -> np.ndarray:
    """x W + b, with weights = (kernel, bias)."""
    kernel, bias = weights
    return as_float(x) @ as_float(kernel) + as_float(bias)


def heads_of(x, weights, name: str, num_heads: int) -> np.ndarray:
    """The projection `name` ("wq", "wk" or "wv") of x, split into heads: (batch, num_heads, seq, depth)."""
    return split_heads(dense(x, weights[name]), num_heads)


def multi_head_attention(q, k, v, weights, num_heads: int, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Forward pass; returns (output (batch, n_q, d_model), weights (batch, heads, n_q, n_k))."""
    head_outputs, attention_weights = attention(heads_of(q, weights, "wq", num_heads),
                                                heads_of(k, weights, "wk", num_heads),
                                                heads_of(v, weights, "wv", num_heads), head_mask(mask))
    return dense(merge_heads(head_outputs), weights["wo"]), attention_weights


def random_weights(rng, d_in: int, d_model: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Seeded weights for the four projections (kernels scaled like Glorot, biases non-zero)."""
    weights = {}
    for name in PROJECTIONS:
        rows = d_model if name == "wo" else d_in
        weights[name] = (rng.standard_normal((rows, d_model)) / np.sqrt(rows), 0.1 * rng.standard_normal(d_model))
    return weights


# ------------------------------------------------------------------------------------------------
# Keras's layout of the same weights


def dense_layout(keras_blocks) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Weights of a keras.layers.MultiHeadAttention, {"wq": (kernel, bias), ...}, in the Dense layout.

    Keras keeps the head axis: query/key/value kernels (d_in, heads, key_dim), biases (heads, key_dim);
    output kernel (heads, key_dim, d_model), bias (d_model,). Head h's block of the reshaped kernel is
    the columns h*key_dim..(h+1)*key_dim-1, which is where split_heads looks for head h.
    """
    weights = {}
    for name in ("wq", "wk", "wv"):
        kernel, bias = (as_float(w) for w in keras_blocks[name])
        weights[name] = (kernel.reshape(kernel.shape[0], -1), bias.reshape(-1))
    kernel, bias = (as_float(w) for w in keras_blocks["wo"])
    weights["wo"] = (kernel.reshape(-1, kernel.shape[-1]), bias)
    return weights


def keras_sublayers(keras_layer) -> dict:
    """The Dense-like sublayers of a keras.layers.MultiHeadAttention, by the name of the projection they hold."""
    return {"wq": keras_layer.query_dense, "wk": keras_layer.key_dense, "wv": keras_layer.value_dense,
            "wo": keras_layer.output_dense}


def keras_blocks(keras_layer) -> dict[str, list[np.ndarray]]:
    """The (kernel, bias) of each projection of a built keras.layers.MultiHeadAttention, in Keras's layout."""
    return {name: sublayer.get_weights() for name, sublayer in keras_sublayers(keras_layer).items()}


def keras_weights(keras_layer) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The weights of a built keras.layers.MultiHeadAttention in the Dense layout of the notebook."""
    return dense_layout(keras_blocks(keras_layer))


def layer_weights(layer) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The (kernel, bias) of each Dense projection of a layer with attributes wq, wk, wv, wo."""
    return {name: tuple(as_float(w) for w in getattr(layer, name).get_weights()) for name in PROJECTIONS}


def set_layer_weights(layer, weights) -> None:
    for name in PROJECTIONS:
        kernel, bias = weights[name]
        getattr(layer, name).set_weights([np.asarray(kernel, np.float32), np.asarray(bias, np.float32)])


def set_keras_weights(keras_layer, weights, num_heads: int) -> None:
    """The inverse of keras_weights: load Dense-layout weights into a built keras.layers.MultiHeadAttention."""
    for name, sublayer in keras_sublayers(keras_layer).items():
        kernel, bias = (np.asarray(w, np.float32) for w in weights[name])
        if name == "wo":
            sublayer.set_weights([kernel.reshape(num_heads, -1, kernel.shape[-1]), bias])
        else:
            sublayer.set_weights([kernel.reshape(kernel.shape[0], num_heads, -1), bias.reshape(num_heads, -1)])


def copy_keras_weights(keras_layer, layer) -> None:
    """Copy a built keras.layers.MultiHeadAttention's weights into a built layer with wq, wk, wv, wo."""
    set_layer_weights(layer, keras_weights(keras_layer))


def reference_layer(d_model: int, num_heads: int):
    """A fresh (unbuilt) `keras_layers.ScratchMultiHeadAttention`; call it once, e.g. layer(x, x, x), to build it."""
    # Keras loads only for a layer: the NumPy reference, which grades, never needs it
    from autograde.reference.multi_head_attention.keras_layers import ScratchMultiHeadAttention

    return ScratchMultiHeadAttention(d_model, num_heads)
