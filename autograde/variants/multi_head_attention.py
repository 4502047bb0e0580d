"""Other implementations of assignment 03's functions and layer (see autograde/variants/__init__.py).

The layer has no dropout, so it has no training-mode mistakes to vary."""

from autograde.variants import right, wrong

_TRANSPOSE = "return tf.transpose(x, perm=(0, 2, 1, 3))"
_MERGE = "return tf.reshape(x, (batch, seq, x.shape[2] * x.shape[3]))"
_SIZES = "batch, seq = tf.shape(x)[0], tf.shape(x)[1]"

SPLIT = [
    wrong("split_heads", "reshaped straight to (batch, heads, seq, depth), no transpose", old=_TRANSPOSE,
          new="return tf.reshape(x, (batch, num_heads, seq, depth))",
          message="the heads are interleaved wrongly: reshaping straight to (batch, heads, seq"),
    wrong("split_heads", "depth before heads: features dealt out to the heads one by one",
          old="x = tf.reshape(x, (batch, seq, num_heads, depth))\n    return tf.transpose(x, perm=(0, 2, 1, 3))",
          new="x = tf.reshape(x, (batch, seq, depth, num_heads))\n    return tf.transpose(x, perm=(0, 3, 1, 2))",
          message="the features are dealt out to the heads one by one; head h must get the"),
    wrong("split_heads", "the transpose missing: (batch, seq, heads, depth)", old=_TRANSPOSE, new="return x",
          message="the transpose is missing: after the reshape to (batch, seq, heads, depth), swap"),
    wrong("split_heads", "transposed with perm (0, 2, 3, 1)", old=_TRANSPOSE,
          new="return tf.transpose(x, perm=(0, 2, 3, 1))",
          message="the axes are transposed in the wrong order: use perm (0, 2, 1, 3), which gives"),
    right("split_heads", "tf.split into heads, stacked on axis 1", source=(
        "def split_heads(x, num_heads):\n"
        "    return tf.stack(tf.split(x, num_heads, axis=-1), axis=1)\n")),
    wrong("split_heads", "NumPy reshape and moveaxis, back to a tensor (no symbolic tensor in a tf.function)",
          source=(
              "def split_heads(x, num_heads):\n"
              "    batch, seq, d_model = x.shape\n"
              "    heads = np.asarray(x).reshape(batch, seq, num_heads, d_model // num_heads)\n"
              "    return tf.constant(np.moveaxis(heads, 2, 1))\n"),
          message="split_heads raised NotImplementedError in a tf.function whose batch and sequence sizes are"),
    wrong("split_heads", "batch and sequence sizes read from x.shape (None in a tf.function)", old=_SIZES,
          new="batch, seq = x.shape[0], x.shape[1]",
          message="split_heads raised TypeError in a tf.function whose batch and sequence sizes are unknown"),
    right("split_heads", "tf.reshape with -1 for the batch size", source=(
        "def split_heads(x, num_heads):\n"
        "    heads = tf.reshape(x, (-1, tf.shape(x)[1], num_heads, x.shape[-1] // num_heads))\n"
        "    return tf.transpose(heads, perm=(0, 2, 1, 3))\n")),
    wrong("merge_heads", "reshaped without the transpose", old="\n    x = tf.transpose(x, perm=(0, 2, 1, 3))",
          new="",
          message="the heads are still the second axis",
          visible_message="has shape (2, 2, 6), expected (2, 3, 4)"),
    wrong("merge_heads", "batch and sequence sizes read from x.shape (None in a tf.function)", old=_SIZES,
          new="batch, seq = x.shape[0], x.shape[1]",
          message="merge_heads raised TypeError in a tf.function whose batch and sequence sizes are unknown"),
    wrong("merge_heads", "the final reshape missing", old=_MERGE, new="return x",
          message="the final reshape is missing: after the transpose, reshape to (batch, seq"),
    wrong("merge_heads", "transposed with perm (0, 2, 3, 1): heads and depth interleaved",
          old="x = tf.transpose(x, perm=(0, 2, 1, 3))", new="x = tf.transpose(x, perm=(0, 2, 3, 1))",
          message="has wrong values"),
    wrong("merge_heads", "heads concatenated in reverse order", source=(
        "def merge_heads(x):\n"
        "    return tf.concat(tf.unstack(x, axis=1)[::-1], axis=-1)\n"), message="has wrong values"),
    right("merge_heads", "tf.unstack over the heads, concatenated on the features", source=(
        "def merge_heads(x):\n"
        "    return tf.concat(tf.unstack(x, axis=1), axis=-1)\n")),
    right("merge_heads", "tf.einsum to move the axes, reshape with -1", source=(
        "def merge_heads(x):\n"
        "    moved = tf.einsum('bhsd->bshd', x)\n"
        "    return tf.reshape(moved, (tf.shape(moved)[0], tf.shape(moved)[1], -1))\n")),
]

_MASK = "attention_mask = tf.cast(attention_mask, heads_q.dtype)[:, tf.newaxis, :, :]"
_OUTPUT = "output = self.wo(merge_heads(attended))"
_BODY = """heads_q = split_heads(self.wq(q), self.num_heads)
        heads_k = split_heads(self.wk(k), self.num_heads)
        heads_v = split_heads(self.wv(v), self.num_heads)
        if attention_mask is not None:
            attention_mask = tf.cast(attention_mask, heads_q.dtype)[:, tf.newaxis, :, :]
        attended, attention_weights = scaled_dot_product_attention(heads_q, heads_k, heads_v, attention_mask)
        output = self.wo(merge_heads(attended))
        return output, attention_weights"""


def _call(body: str) -> dict:
    """old/new replacing the body of the layer's call."""
    return {"old": _BODY, "new": body}


CALL = [
    wrong("ScratchMultiHeadAttention", "no output projection W^O", old=_OUTPUT, new="output = merge_heads(attended)",
          message="the output projection is missing: after merging the heads, apply self.wo to the"),
    wrong("ScratchMultiHeadAttention", "mask without a head axis", old=_MASK,
          new="attention_mask = tf.cast(attention_mask, heads_q.dtype)",
          message="the mask is given to the attention without a head axis: a mask (batch, n_q"),
    wrong("ScratchMultiHeadAttention", "mask ignored", old="heads_v, attention_mask)", new="heads_v, None)",
          message="the mask is ignored: blocked positions (mask 0) get the same weights as without"),
    wrong("ScratchMultiHeadAttention", "mask inverted (1 - mask)", old=_MASK,
          new="attention_mask = 1.0 - tf.cast(attention_mask, heads_q.dtype)[:, tf.newaxis, :, :]",
          message="scaled_dot_product_attention"),
    wrong("ScratchMultiHeadAttention", "queries through wk and keys through wq",
          old="split_heads(self.wq(q), self.num_heads)\n        heads_k = split_heads(self.wk(k)",
          new="split_heads(self.wk(q), self.num_heads)\n        heads_k = split_heads(self.wq(k)",
          message="the queries go through wk and the keys through wq: project q with self.wq, k"),
    wrong("ScratchMultiHeadAttention", "values projected with wk", old="self.wv(v)", new="self.wk(v)",
          message="the weights are right: the output is wo(merge_heads(attention_weights @"),
    wrong("ScratchMultiHeadAttention", "own attention scaled by sqrt(d_model) instead of sqrt(depth)", **_call(
        """heads_q, heads_k, heads_v = (split_heads(w(t), self.num_heads) for w, t in
                                      ((self.wq, q), (self.wk, k), (self.wv, v)))
        scores = tf.matmul(heads_q, heads_k, transpose_b=True) / tf.sqrt(float(self.d_model))
        if attention_mask is not None:
            scores += (1.0 - attention_mask[:, tf.newaxis]) * -1e9
        attention_weights = tf.nn.softmax(scores, axis=-1)
        return self.wo(merge_heads(attention_weights @ heads_v)), attention_weights"""),
          message="the scores are divided by sqrt(d_model); each head works in depth = d_model /"),
    wrong("ScratchMultiHeadAttention", "attention weights averaged over the heads",
          old="return output, attention_weights", new="return output, tf.reduce_mean(attention_weights, axis=1)",
          message="return the weights of every head, shape (batch, heads, n_q, n_k) ="),
    right("ScratchMultiHeadAttention", "its own einsum attention with tf.where, no split_heads", **_call(
        """batch, n_q, n_k = tf.shape(q)[0], tf.shape(q)[1], tf.shape(k)[1]
        heads_q = tf.reshape(self.wq(q), (batch, n_q, self.num_heads, self.depth))
        heads_k = tf.reshape(self.wk(k), (batch, n_k, self.num_heads, self.depth))
        heads_v = tf.reshape(self.wv(v), (batch, n_k, self.num_heads, self.depth))
        scores = tf.einsum('bqhd,bkhd->bhqk', heads_q, heads_k) / tf.sqrt(float(self.depth))
        if attention_mask is not None:
            blocked = tf.expand_dims(tf.cast(attention_mask, tf.float32), 1) == 0.0
            scores = tf.where(blocked, -1e9, scores)
        attention_weights = tf.nn.softmax(scores, axis=-1)
        attended = tf.einsum('bhqk,bkhd->bqhd', attention_weights, heads_v)
        return self.wo(tf.reshape(attended, (batch, n_q, self.d_model))), attention_weights""")),
    right("ScratchMultiHeadAttention", "a loop over the heads, tf.expand_dims for the mask", **_call(
        """heads = [split_heads(w(t), self.num_heads) for w, t in ((self.wq, q), (self.wk, k), (self.wv, v))]
        mask = None if attention_mask is None else tf.expand_dims(attention_mask, axis=1)
        outputs, weights = [], []
        for h in range(self.num_heads):
            head_mask = None if mask is None else mask[:, 0]
            out, w = scaled_dot_product_attention(heads[0][:, h], heads[1][:, h], heads[2][:, h], head_mask)
            outputs.append(out)
            weights.append(w)
        return self.wo(merge_heads(tf.stack(outputs, axis=1))), tf.stack(weights, axis=1)""")),
]

_PAIRS = """pairs = [(keras_layer.query_dense, layer.wq), (keras_layer.key_dense, layer.wk),
             (keras_layer.value_dense, layer.wv)]"""
_RESHAPE = "target.set_weights([kernel.reshape(kernel.shape[0], -1), bias.reshape(-1)])"
_WO = "layer.wo.set_weights([kernel.reshape(-1, kernel.shape[-1]), bias])"

COPY = [
    wrong("copy_keras_weights", "heads and depth axes swapped in the kernels", old=_RESHAPE,
          new="target.set_weights([kernel.transpose(0, 2, 1).reshape(kernel.shape[0], -1), bias.reshape(-1)])",
          message="the heads and depth axes are swapped: reshape the (d_model, heads, key_dim)"),
    wrong("copy_keras_weights", "the biases left as they were", old=_RESHAPE,
          new="target.set_weights([kernel.reshape(kernel.shape[0], -1), target.get_weights()[1]])",
          message="it was not changed: copy the Keras layer's query bias into wq"),
    wrong("copy_keras_weights", "the output projection not copied",
          old="kernel, bias = keras_layer.output_dense.get_weights()\n    " + _WO, new="",
          message="it was not changed: copy the Keras layer's output kernel into wo"),
    wrong("copy_keras_weights", "query and key swapped", old=_PAIRS, new=(
        "pairs = [(keras_layer.key_dense, layer.wq), (keras_layer.query_dense, layer.wk),\n"
        "             (keras_layer.value_dense, layer.wv)]"),
          message="it holds the Keras key kernel; wq takes the query kernel"),
    wrong("copy_keras_weights", "the kernels transposed", old=_RESHAPE,
          new="target.set_weights([kernel.reshape(kernel.shape[0], -1).T, bias.reshape(-1)])",
          message="the kernel is transposed: a Dense kernel is (inputs, outputs"),
    wrong("copy_keras_weights", "the output kernel's heads and depth axes swapped", old=_WO,
          new="layer.wo.set_weights([kernel.transpose(1, 0, 2).reshape(-1, kernel.shape[-1]), bias])",
          message="the heads and depth axes are swapped: reshape the (heads, key_dim, d_model)"),
    right("copy_keras_weights", "variable.assign with tf.reshape", source=(
        "def copy_keras_weights(keras_layer, layer):\n"
        "    for source, target in [(keras_layer.query_dense, layer.wq), (keras_layer.key_dense, layer.wk),\n"
        "                           (keras_layer.value_dense, layer.wv), (keras_layer.output_dense, layer.wo)]:\n"
        "        target.kernel.assign(tf.reshape(source.kernel, target.kernel.shape))\n"
        "        target.bias.assign(tf.reshape(source.bias, target.bias.shape))\n")),
    right("copy_keras_weights", "keras_layer.get_weights() in its order (q, k, v, output)", source=(
        "def copy_keras_weights(keras_layer, layer):\n"
        "    arrays = keras_layer.get_weights()\n"
        "    for index, target in enumerate([layer.wq, layer.wk, layer.wv, layer.wo]):\n"
        "        kernel, bias = arrays[2 * index], arrays[2 * index + 1]\n"
        "        rows = layer.d_model if target is not layer.wo else -1\n"
        "        target.set_weights([np.reshape(kernel, (rows, layer.d_model)), np.reshape(bias, (-1,))])\n"),
          visible_gap="the visible check's stand-in layer has no d_model"),
]

VARIANTS = SPLIT + CALL + COPY
