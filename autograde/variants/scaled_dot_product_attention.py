"""Other implementations of assignment 02's functions (see autograde/variants/__init__.py)."""

from autograde.variants import right, wrong

_DOT = "return tf.matmul(queries, keys, transpose_b=True)"
_SCALED = "return tf.matmul(queries, keys, transpose_b=True) / tf.sqrt(d)"
_GENERAL = "return tf.matmul(tf.matmul(queries, weight), keys, transpose_b=True)"
_HIDDEN = "hidden = tf.tanh(projected_queries[:, tf.newaxis, :] + projected_keys[tf.newaxis, :, :])"
_UNIT = ("unit_queries = queries / tf.norm(queries, axis=-1, keepdims=True)\n"
         "    unit_keys = keys / tf.norm(keys, axis=-1, keepdims=True)")
_IS_TOKEN = "is_token = tf.cast(tf.math.not_equal(token_ids, 0), tf.float32)"
_BAND = "return tf.linalg.band_part(ones, -1, 0)[tf.newaxis, :, :]"
_MASKED = "scores += (1.0 - tf.cast(mask, scores.dtype)) * -1e9"

SCORES = [
    wrong("dot_score", "divided by sqrt(d) (that is scaled_dot_score)", old=_DOT,
          new="return tf.matmul(queries, keys, transpose_b=True) / tf.sqrt(tf.cast(tf.shape(keys)[-1], keys.dtype))",
          message="dot_score has no scaling; that is scaled_dot_score"),
    wrong("dot_score", "keys times queries: (m, n) instead of (n, m)", old=_DOT,
          new="return tf.matmul(keys, queries, transpose_b=True)",
          message="rows must be the queries and columns the keys (queries (n, d) and keys (m, d)"),
    wrong("dot_score", "element-wise product summed over d (pairs query i with key i only)", old=_DOT,
          new="return tf.reduce_sum(queries * keys, axis=-1, keepdims=True)",
          message="raised InvalidArgumentError: Incompatible shapes"),
    right("dot_score", "tf.einsum", old=_DOT, new="return tf.einsum('nd,md->nm', queries, keys)"),
    right("dot_score", "NumPy, broadcast product summed over d", old=_DOT,
          new="return (queries.numpy()[:, None, :] * keys.numpy()[None, :, :]).sum(axis=-1)"),
    wrong("scaled_dot_score", "no scaling", old=_SCALED, new="return tf.matmul(queries, keys, transpose_b=True)",
          message="the scaling is missing: divide the scores q k^T by sqrt(d), the length of a key"),
    wrong("scaled_dot_score", "divided by d instead of sqrt(d)", old=_SCALED,
          new="return tf.matmul(queries, keys, transpose_b=True) / d", message="divide by sqrt(d), not by d"),
    wrong("scaled_dot_score", "d read from the number of keys", old="tf.shape(keys)[-1]", new="tf.shape(keys)[0]",
          message="divide by the square root of the vector length d (the last axis), not of the"),
    wrong("scaled_dot_score", "multiplied by sqrt(d) instead of divided", old=_SCALED,
          new="return tf.matmul(queries, keys, transpose_b=True) * tf.sqrt(d)", message="has wrong values"),
    right("scaled_dot_score", "dot_score times tf.math.rsqrt(d)", old=_SCALED,
          new="return dot_score(queries, keys) * tf.math.rsqrt(d)"),
    right("scaled_dot_score", "NumPy in float64, cast back to float32", source=(
        "def scaled_dot_score(queries, keys):\n"
        "    q, k = queries.numpy().astype(np.float64), keys.numpy().astype(np.float64)\n"
        "    return tf.constant(q @ k.T / np.sqrt(k.shape[1]), tf.float32)\n")),
    wrong("general_score", "W transposed: q W^T k^T", old=_GENERAL,
          new="return tf.matmul(tf.matmul(queries, weight, transpose_b=True), keys, transpose_b=True)",
          message="it equals q W^T k^T; the formula is q W k^T (W not transposed"),
    wrong("general_score", "the weight matrix unused", old=_GENERAL,
          new="return tf.matmul(queries, keys, transpose_b=True)", message="the weight matrix is not used"),
    wrong("general_score", "scaled by sqrt(d) like scaled_dot_score", old=_GENERAL,
          new=_GENERAL + " / tf.sqrt(tf.cast(tf.shape(keys)[-1], keys.dtype))", message="has wrong values"),
    wrong("general_score", "k W q^T: (m, n) instead of (n, m)", old=_GENERAL,
          new="return tf.matmul(tf.matmul(keys, weight), queries, transpose_b=True)",
          message="rows must be the queries and columns the keys (queries (n, d) and keys (m, d)"),
    right("general_score", "q (W k^T), the other association", old=_GENERAL,
          new="return tf.matmul(queries, tf.matmul(weight, keys, transpose_b=True))"),
    right("general_score", "tf.einsum over both products", old=_GENERAL,
          new="return tf.einsum('nd,de,me->nm', queries, weight, keys)"),
    wrong("additive_score", "w_query and w_key swapped",
          old="matmul(queries, w_query)  # (n, h)\n    projected_keys = tf.matmul(keys, w_key)",
          new="matmul(queries, w_key)\n    projected_keys = tf.matmul(keys, w_query)",
          message="w_query and w_key are swapped: queries go through w_query"),
    wrong("additive_score", "w_key used for the queries too", old="tf.matmul(queries, w_query)",
          new="tf.matmul(queries, w_key)", message="has wrong values"),
    wrong("additive_score", "no tanh", old=_HIDDEN,
          new="hidden = projected_queries[:, tf.newaxis, :] + projected_keys[tf.newaxis, :, :]",
          message="the tanh is missing: v . tanh(q W_q + k W_k"),
    wrong("additive_score", "v ignored: the hidden units summed", old="return tf.linalg.matvec(hidden, v)",
          new="return tf.reduce_sum(hidden, axis=-1)", message="has wrong values"),
    wrong("additive_score", "ReLU instead of tanh", old="hidden = tf.tanh(", new="hidden = tf.nn.relu(",
          message="has wrong values"),
    wrong("additive_score", "broadcast axes swapped: (m, n) scores", old=_HIDDEN,
          new="hidden = tf.tanh(projected_queries[tf.newaxis, :, :] + projected_keys[:, tf.newaxis, :])",
          message="rows must be the queries and columns the keys (queries (n, d) and keys (m, d)"),
    right("additive_score", "a loop over the queries, tf.stack", source=(
        "def additive_score(queries, keys, w_query, w_key, v):\n"
        "    projected_keys = keys @ w_key\n"
        "    rows = []\n"
        "    for i in range(queries.shape[0]):\n"
        "        hidden = tf.tanh(queries[i:i + 1] @ w_query + projected_keys)\n"
        "        rows.append(tf.reduce_sum(hidden * v, axis=-1))\n"
        "    return tf.stack(rows)\n")),
    right("additive_score", "NumPy broadcasting and einsum", source=(
        "def additive_score(queries, keys, w_query, w_key, v):\n"
        "    q, k = queries.numpy() @ w_query.numpy(), keys.numpy() @ w_key.numpy()\n"
        "    return np.einsum('nmh,h->nm', np.tanh(q[:, None] + k[None]), v.numpy())\n")),
    wrong("cosine_score", "not normalised", old=_UNIT, new="unit_queries, unit_keys = queries, keys",
          message="the vectors are not normalised: divide by |q| |k|"),
    wrong("cosine_score", "only the queries normalised", old="keys / tf.norm(keys, axis=-1, keepdims=True)",
          new="keys", message="only the queries are normalised; divide by |k| as well"),
    wrong("cosine_score", "divided by squared lengths", old=_UNIT, new=(
        "unit_queries = queries / tf.reduce_sum(queries ** 2, axis=-1, keepdims=True)\n"
        "    unit_keys = keys / tf.reduce_sum(keys ** 2, axis=-1, keepdims=True)"),
          message="divide by the lengths |q| |k|, not their squares"),
    wrong("cosine_score", "normalised over axis 0 (per feature, not per vector)", old=_UNIT, new=(
        "unit_queries = queries / tf.norm(queries, axis=0, keepdims=True)\n"
        "    unit_keys = keys / tf.norm(keys, axis=0, keepdims=True)"), message="has wrong values"),
    right("cosine_score", "tf.math.l2_normalize", old=_UNIT, new=(
        "unit_queries = tf.math.l2_normalize(queries, axis=-1)\n"
        "    unit_keys = tf.math.l2_normalize(keys, axis=-1)")),
    right("cosine_score", "NumPy: dot products over the outer product of the lengths", source=(
        "def cosine_score(queries, keys):\n"
        "    q, k = queries.numpy(), keys.numpy()\n"
        "    lengths = np.outer(np.linalg.norm(q, axis=1), np.linalg.norm(k, axis=1))\n"
        "    return tf.constant(q @ k.T / lengths)\n")),
]

MASKS = [
    wrong("create_padding_mask", "inverted: 1 on padding", old="tf.math.not_equal(token_ids, 0)",
          new="tf.math.equal(token_ids, 0)",
          message="the mask looks inverted: 1 must mean attend (a real token) and 0 blocked"),
    wrong("create_padding_mask", "no middle axis: (batch, seq)", old="return is_token[:, tf.newaxis, :]",
          new="return is_token",
          message="the middle axis of size 1 is missing; it lets one mask row broadcast over every"),
    wrong("create_padding_mask", "(batch, 1, 1, seq), the TensorFlow tutorial's shape",
          old="return is_token[:, tf.newaxis, :]", new="return is_token[:, tf.newaxis, tf.newaxis, :]",
          message="one axis too many: the mask is (batch, 1, seq"),
    wrong("create_padding_mask", "left as booleans (no cast to float32)", old=_IS_TOKEN,
          new="is_token = tf.math.not_equal(token_ids, 0)",
          message="should have dtype float32, got bool: convert it with tf.cast(..., tf.float32"),
    wrong("create_padding_mask", "ones on the first n positions, n the count of real tokens (tf.sequence_mask)",
          source=(
              "def create_padding_mask(token_ids):\n"
              "    lengths = tf.reduce_sum(tf.cast(token_ids != 0, tf.int32), axis=1)\n"
              "    return tf.sequence_mask(lengths, tf.shape(token_ids)[1], tf.float32)[:, tf.newaxis, :]\n"),
          message="but here padding comes before the tokens: mark each position by its own id"),
    right("create_padding_mask", "tf.where and tf.expand_dims", source=(
        "def create_padding_mask(token_ids):\n"
        "    ones = tf.ones_like(token_ids, dtype=tf.float32)\n"
        "    return tf.expand_dims(tf.where(token_ids == 0, tf.zeros_like(ones), ones), axis=1)\n")),
    right("create_padding_mask", "NumPy, then tf.constant", source=(
        "def create_padding_mask(token_ids):\n"
        "    ids = np.asarray(token_ids)\n"
        "    return tf.constant((ids > 0).astype(np.float32)[:, None, :])\n")),
    wrong("create_look_ahead_mask", "upper triangle", old=_BAND,
          new="return tf.linalg.band_part(ones, 0, -1)[tf.newaxis, :, :]",
          message="this is the upper triangle; use the lower one: row i (a query position) may"),
    wrong("create_look_ahead_mask", "inverted: 1 above the diagonal", old=_BAND,
          new="return (1.0 - tf.linalg.band_part(ones, -1, 0))[tf.newaxis, :, :]",
          message="the mask looks inverted: 1 must mean attend, so the ones go on and below the"),
    wrong("create_look_ahead_mask", "no diagonal: a position cannot see itself", old=_BAND,
          new="return tf.linalg.band_part(ones, -1, 0)[tf.newaxis] - tf.eye(sequence_length)[tf.newaxis]",
          message="a position must be allowed to attend to itself: put ones on the diagonal too"),
    wrong("create_look_ahead_mask", "no leading axis: (L, L)", old=_BAND,
          new="return tf.linalg.band_part(ones, -1, 0)",
          message="add a leading axis of size 1 so the mask broadcasts over the batch"),
    right("create_look_ahead_mask", "np.tril, then tf.constant", source=(
        "def create_look_ahead_mask(sequence_length):\n"
        "    return tf.constant(np.tril(np.ones((1, sequence_length, sequence_length), np.float32)))\n")),
    right("create_look_ahead_mask", "comparison of tf.range indices", source=(
        "def create_look_ahead_mask(sequence_length):\n"
        "    positions = tf.range(sequence_length)\n"
        "    return tf.cast(positions[:, None] >= positions[None, :], tf.float32)[None]\n")),
]

_SCORES_LINE = "scores = tf.matmul(q, k, transpose_b=True) / tf.sqrt(d_k)"

ATTENTION = [
    wrong("scaled_dot_product_attention", "no 1/sqrt(d_k) scaling", old=_SCORES_LINE,
          new="scores = tf.matmul(q, k, transpose_b=True)",
          message="the scaling is missing: divide the scores q k^T by sqrt(d_k), the length of a"),
    wrong("scaled_dot_product_attention", "d_k read from v (d_v)", old="tf.shape(k)[-1]", new="tf.shape(v)[-1]",
          message="divide by sqrt(d_k), the length of the keys, not sqrt(d_v"),
    wrong("scaled_dot_product_attention", "d_k read from the number of keys", old="tf.shape(k)[-1]",
          new="tf.shape(k)[-2]", message="the weights are softmax(q k^T / sqrt(d_k)) over the last axis"),
    wrong("scaled_dot_product_attention", "inverted mask: -1e9 where the mask is 1", old=_MASKED,
          new="scores += tf.cast(mask, scores.dtype) * -1e9",
          message="the mask looks inverted: 1 must mean attend and 0 blocked, so the large"),
    wrong("scaled_dot_product_attention", "mask ignored", old=_MASKED, new="pass",
          message="the mask is ignored: blocked positions (mask 0) get the same weight as without"),
    wrong("scaled_dot_product_attention", "-1e4 for blocked keys (not enough for large scores)", old=_MASKED,
          new="scores += (1.0 - tf.cast(mask, scores.dtype)) * -1e4",
          message="the number you add to blocked scores is not negative enough; use -1e9"),
    wrong("scaled_dot_product_attention", "softmax over the queries (axis -2)",
          old="tf.nn.softmax(scores, axis=-1)", new="tf.nn.softmax(scores, axis=-2)",
          message="apply the softmax with axis=-1"),
    wrong("scaled_dot_product_attention", "(weights, output) returned in the wrong order",
          old="return output, attention_weights", new="return attention_weights, output",
          message="the pair seems swapped; return (output, attention_weights) in that order"),
    wrong("scaled_dot_product_attention", "k transposed with a perm for 2, 3 or 4 axes only", old=_SCORES_LINE,
          new="perm = {2: [1, 0], 3: [0, 2, 1], 4: [0, 1, 3, 2]}[len(k.shape)]\n"
              "    scores = tf.matmul(q, tf.transpose(k, perm)) / tf.sqrt(d_k)",
          message="scaled_dot_product_attention raised KeyError"),
    right("scaled_dot_product_attention", "tf.where with -1e9 instead of an additive mask", old=_MASKED,
          new="scores = tf.where(tf.cast(mask, tf.bool), scores, tf.constant(-1e9, scores.dtype))"),
    right("scaled_dot_product_attention", "einsum with any number of leading axes", source=(
        "def scaled_dot_product_attention(q, k, v, mask):\n"
        "    scores = tf.einsum('...qd,...kd->...qk', q, k) * tf.math.rsqrt(tf.cast(k.shape[-1], tf.float32))\n"
        "    if mask is not None:\n"
        "        scores = scores - 1e9 * (1.0 - mask)\n"
        "    weights = tf.nn.softmax(scores)\n"
        "    return tf.einsum('...qk,...kd->...qd', weights, v), weights\n")),
    right("scaled_dot_product_attention", "NumPy in float64 with a stable softmax, cast to float32", source=(
        "def scaled_dot_product_attention(q, k, v, mask):\n"
        "    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))\n"
        "    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(k.shape[-1])\n"
        "    if mask is not None:\n"
        "        scores = np.where(np.asarray(mask) > 0, scores, -np.inf)\n"
        "    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))\n"
        "    weights = scores / scores.sum(axis=-1, keepdims=True)\n"
        "    return tf.constant(weights @ v, tf.float32), tf.constant(weights, tf.float32)\n")),
]

VARIANTS = SCORES + MASKS + ATTENTION
