"""Named mistakes of assignment 03, each built from the reference's parts. A mistake whose wrong result
equals the right one on some inputs (d_model instead of depth with one head, say) is harmless there: the
checks consult the mistakes only for a result that is already wrong. The weight copy's mistakes are derived
from the Keras arrays and the layer's weights before the copy alone, so they live with its check
(`course_lib.multi_head_attention.expect_copied_weights`) and serve both checks from there."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import Mistake
from autograde.reference import multi_head_attention as ref
from autograde.reference.scaled_dot_product_attention import scaled_dot_product_attention as attention

NO_TRANSPOSE_SPLIT = (
    "the heads are interleaved wrongly: reshaping straight to (batch, heads, seq, depth) mixes positions "
    "into the heads; reshape to (batch, seq, heads, depth) first, then transpose with perm (0, 2, 1, 3)"
)
DEPTH_FIRST_SPLIT = (
    "the features are dealt out to the heads one by one; head h must get the contiguous block of features "
    "h*depth .. (h+1)*depth-1: reshape to (batch, seq, heads, depth), not (batch, seq, depth, heads)"
)
NO_TRANSPOSE_MERGE = (
    "the heads are merged in the wrong order: reshaping (batch, heads, seq, depth) straight to "
    "(batch, seq, heads*depth) mixes positions; transpose with perm (0, 2, 1, 3) first, then reshape"
)
NO_OUTPUT_PROJECTION = (
    "the output projection is missing: after merging the heads, apply self.wo to the (batch, n_q, d_model) "
    "concatenation"
)
SCALED_BY_D_MODEL = (
    "the scores are divided by sqrt(d_model); each head works in depth = d_model / num_heads dimensions, "
    "so divide by sqrt(depth) (scaled_dot_product_attention does it when it gets the split heads)"
)
# Also the hint of the hidden check when such a mask makes the learner's call crash.
MASK_WITHOUT_HEAD_AXIS = (
    "the mask is given to the attention without a head axis: a mask (batch, n_q, n_k) or (batch, 1, n_k) "
    "must become (batch, 1, n_q, n_k) (e.g. mask[:, tf.newaxis, :, :]) to broadcast over the heads"
)
QUERIES_AND_KEYS_SWAPPED = (
    "the queries go through wk and the keys through wq: project q with self.wq, k with self.wk"
)


def _split_without_transpose(x, num_heads: int) -> np.ndarray:
    batch, seq, d_model = ref.as_float(x).shape
    return ref.as_float(x).reshape(batch, num_heads, seq, d_model // num_heads)


def _split_depth_first(x, num_heads: int) -> np.ndarray:
    batch, seq, d_model = ref.as_float(x).shape
    return ref.as_float(x).reshape(batch, seq, d_model // num_heads, num_heads).transpose(0, 3, 1, 2)


def _merge_without_transpose(x) -> np.ndarray:
    batch, heads, seq, depth = ref.as_float(x).shape
    return ref.as_float(x).reshape(batch, seq, heads * depth)


SPLIT_HEADS = (
    Mistake("no_transpose", NO_TRANSPOSE_SPLIT, _split_without_transpose),
    Mistake("depth_first", DEPTH_FIRST_SPLIT, _split_depth_first),
)

MERGE_HEADS = (
    Mistake("no_transpose", NO_TRANSPOSE_MERGE, _merge_without_transpose),
)


def _heads(q, k, v, weights, num_heads: int):
    return tuple(ref.heads_of(x, weights, name, num_heads) for x, name in ((q, "wq"), (k, "wk"), (v, "wv")))


def _weights_scaled_by_d_model(q, k, v, weights, num_heads: int, mask=None) -> np.ndarray:
    heads_q, heads_k, heads_v = _heads(q, k, v, weights, num_heads)
    d_model = heads_k.shape[1] * heads_k.shape[-1]
    # The attention divides by sqrt(depth); scaling q as well makes it sqrt(d_model).
    return attention(heads_q * np.sqrt(heads_k.shape[-1] / d_model), heads_k, heads_v, ref.head_mask(mask))[1]


def _weights_mask_without_head_axis(q, k, v, weights, num_heads: int, mask=None) -> np.ndarray:
    """Raises ValueError (the mistake is left out) when such a mask does not broadcast to the heads' scores."""
    return attention(*_heads(q, k, v, weights, num_heads), mask)[1]


def _weights_queries_and_keys_swapped(q, k, v, weights, num_heads: int, mask=None) -> np.ndarray:
    swapped = dict(weights, wq=weights["wk"], wk=weights["wq"])
    return ref.multi_head_attention(q, k, v, swapped, num_heads, mask)[1]


def _output_without_projection(q, k, v, weights, num_heads: int, mask=None) -> np.ndarray:
    return ref.merge_heads(attention(*_heads(q, k, v, weights, num_heads), ref.head_mask(mask))[0])


# The layer's call, inputs (q, k, v, weights, num_heads, mask): wrong attention weights, compared first ...
CALL_WEIGHTS = (
    Mistake("scaled_by_d_model", SCALED_BY_D_MODEL, _weights_scaled_by_d_model),
    Mistake("mask_without_head_axis", MASK_WITHOUT_HEAD_AXIS, _weights_mask_without_head_axis),
    Mistake("queries_and_keys_swapped", QUERIES_AND_KEYS_SWAPPED, _weights_queries_and_keys_swapped),
)
# ... then, with the right weights, a wrong output.
CALL_OUTPUT = (
    Mistake("no_output_projection", NO_OUTPUT_PROJECTION, _output_without_projection),
)
