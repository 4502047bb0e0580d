"""Reference multi-head attention for assignment 03.

NumPy (float64): splitting and merging heads, and the forward pass of a multi-head attention layer
from given weight matrices. TensorFlow/Keras: the same split and merge as TF ops, and a small
Keras layer with the attribute names of the notebook's layer (num_heads, d_model, depth, wq, wk, wv,
wo), used to grade composites with reference parts and by bench/attention_speed.py.

Weights are dictionaries {"wq": (kernel, bias), "wk": ..., "wv": ..., "wo": ...} with kernels
(d_in, d_model) and biases (d_model,), the layout of `keras.layers.Dense`. Masks follow the course
convention (1 = may attend, 0 = blocked) and broadcast to (batch, n_q, n_k); the head axis is
inserted here.
"""

from __future__ import annotations

import numpy as np

from autograde.reference.scaled_dot_product_attention import scaled_dot_product_attention as _attention

PROJECTIONS = ("wq", "wk", "wv", "wo")


def _as_float(x) -> np.ndarray:
    if hasattr(x, "numpy"):
        x = x.numpy()
    return np.asarray(x, dtype=np.float64)


def split_heads(x, num_heads: int) -> np.ndarray:
    """(batch, seq, d_model) -> (batch, num_heads, seq, depth): head h gets features h*depth..(h+1)*depth-1."""
    x = _as_float(x)
    batch, seq, d_model = x.shape
    depth = d_model // num_heads
    return x.reshape(batch, seq, num_heads, depth).transpose(0, 2, 1, 3)


def merge_heads(x) -> np.ndarray:
    """(batch, num_heads, seq, depth) -> (batch, seq, num_heads * depth), the inverse of split_heads."""
    x = _as_float(x)
    batch, heads, seq, depth = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, seq, heads * depth)


def head_mask(mask):
    """A mask that broadcasts to (batch, n_q, n_k) gets the head axis: (..., 1, n_q, n_k)."""
    if mask is None:
        return None
    mask = _as_float(mask)
    return mask[..., np.newaxis, :, :] if mask.ndim >= 3 else mask


def dense(x, weights) -> np.ndarray:
    kernel, bias = weights
    return _as_float(x) @ _as_float(kernel) + _as_float(bias)


def multi_head_attention(q, k, v, weights, num_heads: int, mask=None, *, scale_depth: int | None = None,
                         output_projection: bool = True, mask_transform=head_mask):
    """Forward pass; returns (output (batch, n_q, d_model), weights (batch, heads, n_q, n_k)).

    The keyword arguments exist to build the usual mistakes: `scale_depth` replaces the length used
    in 1/sqrt(depth), `output_projection=False` leaves out W^O, `mask_transform` changes how the mask
    is given to the attention of each head.
    """
    heads_q = split_heads(dense(q, weights["wq"]), num_heads)
    heads_k = split_heads(dense(k, weights["wk"]), num_heads)
    heads_v = split_heads(dense(v, weights["wv"]), num_heads)
    if scale_depth is not None:
        heads_q = heads_q * np.sqrt(heads_k.shape[-1] / scale_depth)
    head_outputs, attention = _attention(heads_q, heads_k, heads_v, mask_transform(mask))
    concatenated = merge_heads(head_outputs)
    output = dense(concatenated, weights["wo"]) if output_projection else concatenated
    return output, attention


def random_weights(rng, d_in: int, d_model: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Seeded weights for the four projections (kernels scaled like Glorot, biases non-zero)."""
    weights = {}
    for name in PROJECTIONS:
        rows = d_model if name == "wo" else d_in
        weights[name] = (rng.standard_normal((rows, d_model)) / np.sqrt(rows), 0.1 * rng.standard_normal(d_model))
    return weights


def keras_weights(keras_layer) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The weights of a built keras.layers.MultiHeadAttention in the Dense layout of the notebook.

    Keras keeps the head axis: query/key/value kernels (d_in, heads, key_dim), biases (heads, key_dim);
    output kernel (heads, key_dim, d_model), bias (d_model,). Head h's block of the reshaped kernel is
    the columns h*key_dim..(h+1)*key_dim-1, which is where split_heads looks for head h.
    """
    parts = {"wq": keras_layer.query_dense, "wk": keras_layer.key_dense, "wv": keras_layer.value_dense}
    weights = {}
    for name, sublayer in parts.items():
        kernel, bias = (_as_float(w) for w in sublayer.get_weights())
        weights[name] = (kernel.reshape(kernel.shape[0], -1), bias.reshape(-1))
    kernel, bias = (_as_float(w) for w in keras_layer.output_dense.get_weights())
    weights["wo"] = (kernel.reshape(-1, kernel.shape[-1]), bias)
    return weights


def layer_weights(layer) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The (kernel, bias) of each Dense projection of a layer with attributes wq, wk, wv, wo."""
    return {name: tuple(_as_float(w) for w in getattr(layer, name).get_weights()) for name in PROJECTIONS}


def set_layer_weights(layer, weights) -> None:
    for name in PROJECTIONS:
        kernel, bias = weights[name]
        getattr(layer, name).set_weights([np.asarray(kernel, np.float32), np.asarray(bias, np.float32)])


def set_keras_weights(keras_layer, weights, num_heads: int) -> None:
    """The inverse of keras_weights: load Dense-layout weights into a built keras.layers.MultiHeadAttention."""
    parts = {"wq": keras_layer.query_dense, "wk": keras_layer.key_dense, "wv": keras_layer.value_dense}
    for name, sublayer in parts.items():
        kernel, bias = weights[name]
        sublayer.set_weights([np.asarray(kernel, np.float32).reshape(kernel.shape[0], num_heads, -1),
                              np.asarray(bias, np.float32).reshape(num_heads, -1)])
    kernel, bias = weights["wo"]
    keras_layer.output_dense.set_weights([np.asarray(kernel, np.float32).reshape(num_heads, -1, kernel.shape[-1]),
                                          np.asarray(bias, np.float32)])


# ------------------------------------------------------------------------------------------------
# TensorFlow / Keras versions


def tf_split_heads(x, num_heads):
    """split_heads with TF ops (works inside tf.function and with an unknown batch size)."""
    import tensorflow as tf

    shape = tf.shape(x)
    depth = x.shape[-1] // num_heads
    x = tf.reshape(x, (shape[0], shape[1], num_heads, depth))
    return tf.transpose(x, (0, 2, 1, 3))


def tf_merge_heads(x):
    """merge_heads with TF ops."""
    import tensorflow as tf

    shape = tf.shape(x)
    x = tf.transpose(x, (0, 2, 1, 3))
    return tf.reshape(x, (shape[0], shape[2], x.shape[2] * x.shape[3]))


def copy_keras_weights(keras_layer, layer) -> None:
    """Copy a built keras.layers.MultiHeadAttention's weights into a built layer with wq, wk, wv, wo."""
    set_layer_weights(layer, keras_weights(keras_layer))


def _make_layer_class():
    import keras
    import tensorflow as tf

    from course_lib.layers import scaled_dot_product_attention

    class ReferenceMultiHeadAttention(keras.layers.Layer):
        """Multi-head attention with four Dense projections, the attribute names of the notebook."""

        def __init__(self, d_model, num_heads, **kwargs):
            super().__init__(**kwargs)
            if d_model % num_heads != 0:
                raise ValueError(f"d_model = {d_model} must be divisible by num_heads = {num_heads}")
            self.num_heads = num_heads
            self.d_model = d_model
            self.depth = d_model // num_heads
            self.wq = keras.layers.Dense(d_model)
            self.wk = keras.layers.Dense(d_model)
            self.wv = keras.layers.Dense(d_model)
            self.wo = keras.layers.Dense(d_model)

        def call(self, q, k, v, attention_mask=None):
            heads_q = tf_split_heads(self.wq(q), self.num_heads)
            heads_k = tf_split_heads(self.wk(k), self.num_heads)
            heads_v = tf_split_heads(self.wv(v), self.num_heads)
            if attention_mask is not None:
                attention_mask = tf.cast(attention_mask, heads_q.dtype)[..., tf.newaxis, :, :]
            heads, weights = scaled_dot_product_attention(heads_q, heads_k, heads_v, attention_mask)
            return self.wo(tf_merge_heads(heads)), weights

    return ReferenceMultiHeadAttention


_LAYER_CLASS = None


def reference_layer(d_model: int, num_heads: int):
    """A fresh (unbuilt) reference layer; call it once, e.g. layer(x, x, x), to build it."""
    global _LAYER_CLASS
    if _LAYER_CLASS is None:
        _LAYER_CLASS = _make_layer_class()
    return _LAYER_CLASS(d_model, num_heads)


def reference_layer_class():
    reference_layer(2, 1)
    return _LAYER_CLASS
