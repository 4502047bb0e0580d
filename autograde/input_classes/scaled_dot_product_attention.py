"""The inputs assignment 02's graded functions must handle (autograde/input_classes/__init__.py), in notebook order."""

from __future__ import annotations

import numpy as np

from autograde.input_classes import InputClass

# ----------------------------------------------------------------------------------------------
# The score functions: queries (n, d) and keys (m, d), float32 tensors, and their weights


def _n(a) -> int:
    return a["queries"].shape[0]


def _m(a) -> int:
    return a["keys"].shape[0]


def _d(a) -> int:
    return a["keys"].shape[-1]


def _shape_classes() -> tuple[InputClass, ...]:
    """The shapes every score function takes."""
    return (
        InputClass("one_query", "a single query (n = 1)", lambda a: _n(a) == 1),
        InputClass("one_key", "a single key (m = 1)", lambda a: _m(a) == 1),
        InputClass("d_one", "vectors of length d = 1", lambda a: _d(a) == 1),
        InputClass("more_queries", "more queries than keys (n > m)", lambda a: _n(a) > _m(a)),
        InputClass("more_keys", "more keys than queries (m > n)", lambda a: _m(a) > _n(a)),
        InputClass("long_vectors", "d larger than n and m", lambda a: _d(a) > max(_n(a), _m(a))),
    )


def _lengths(x) -> np.ndarray:
    return np.linalg.norm(np.asarray(x, dtype=np.float64), axis=-1)


def _spread(name: str):
    """Vectors of `name` of which one is more than twice as long as another."""
    def drawn(a) -> bool:
        lengths = _lengths(a[name])
        return lengths.max() > 2 * lengths.min()
    return drawn


GENERAL = (*_shape_classes(),
           InputClass("asymmetric_weight", "a W that is not symmetric (W != W^T)",
                      lambda a: not np.allclose(np.asarray(a["weight"]), np.asarray(a["weight"]).T)))

ADDITIVE = (*_shape_classes(),
            InputClass("hidden_differs_from_d", "h hidden units, h != d", lambda a: a["w_query"].shape[-1] != _d(a)),
            InputClass("different_projections", "W_q != W_k",
                       lambda a: not np.allclose(np.asarray(a["w_query"]), np.asarray(a["w_key"]))))

COSINE = (*_shape_classes(),
          InputClass("queries_of_many_lengths", "a query more than twice as long as another", _spread("queries")),
          InputClass("keys_of_many_lengths", "a key more than twice as long as another", _spread("keys")))

# ----------------------------------------------------------------------------------------------
# create_padding_mask(token_ids): integer tensor (batch, seq), 0 is padding


def _ids(a) -> np.ndarray:
    return np.asarray(a["token_ids"])


def _rows(test):
    return lambda a: any(test(row) for row in _ids(a))


def _padded_before_a_token(row) -> bool:
    real = np.flatnonzero(row != 0)
    return len(real) > 0 and bool(np.any(row[: real[-1]] == 0))


PADDING = (
    InputClass("int32_ids", "int32 token ids", lambda a: a["token_ids"].dtype.name == "int32"),
    InputClass("int64_ids", "int64 token ids", lambda a: a["token_ids"].dtype.name == "int64"),
    InputClass("one_sentence", "a batch of one sentence", lambda a: _ids(a).shape[0] == 1),
    InputClass("one_position", "sentences of one position (seq 1)", lambda a: _ids(a).shape[1] == 1),
    InputClass("no_padding", "a sentence without padding", _rows(lambda row: bool(np.all(row != 0)))),
    InputClass("padding_at_the_end", "a sentence padded after its tokens",
               _rows(lambda row: row[0] != 0 and row[-1] == 0 and not _padded_before_a_token(row))),
    InputClass("padding_before_tokens", "a 0 before a real token (padding on the left)", _rows(_padded_before_a_token)),
    InputClass("only_padding", "a sentence of padding only", _rows(lambda row: bool(np.all(row == 0)))),
)

# ----------------------------------------------------------------------------------------------
# create_look_ahead_mask(sequence_length)

LOOK_AHEAD = (
    InputClass("length_one", "L = 1", lambda a: a["sequence_length"] == 1),
    InputClass("length_two", "L = 2", lambda a: a["sequence_length"] == 2),
    InputClass("longer", "L of 16 or more", lambda a: a["sequence_length"] >= 16),
)

# ----------------------------------------------------------------------------------------------
# scaled_dot_product_attention(q, k, v, mask): q (..., n, d_k), k (..., m, d_k), v (..., m, d_v), mask None or
# float32 broadcasting to (..., n, m)


def _leading(count: int):
    return lambda a: len(a["q"].shape) == count + 2


def _mask(a) -> np.ndarray:
    return np.asarray(a["mask"])


def _is_look_ahead(a) -> bool:
    mask = _mask(a)
    rows, cols = mask.shape[-2:]
    return rows == cols > 1 and mask.shape[0] == 1 and np.array_equal(mask.reshape(rows, cols), np.tril(np.ones(rows)))


def _large_scores(a) -> bool:
    q, k = (np.asarray(a[name], dtype=np.float64) for name in ("q", "k"))
    return float(np.max(np.abs(q @ np.swapaxes(k, -1, -2)))) / np.sqrt(k.shape[-1]) > 1e3


ATTENTION = (
    InputClass("no_leading_axes", "q (n, d_k): no batch axis", _leading(0)),
    InputClass("one_leading_axis", "q (batch, n, d_k)", _leading(1)),
    InputClass("two_leading_axes", "q (batch, heads, n, d_k)", _leading(2)),
    InputClass("three_leading_axes", "q with three leading axes", _leading(3)),
    InputClass("no_mask", "mask None", lambda a: a["mask"] is None),
    InputClass("mask_without_batch", "a mask (n, m) or (1, m) for q without leading axes",
               lambda a: len(a["q"].shape) == 2 and a["mask"] is not None),
    InputClass("padding_mask", "a padding mask: one row for every query, a batch axis, (batch, 1, ..., m)",
               lambda a: len(a["q"].shape) > 2 and _mask(a).shape[-2] == 1 and _mask(a).shape[0] > 1),
    InputClass("look_ahead_mask", "a look-ahead mask (1, ..., L, L)", _is_look_ahead),
    InputClass("padding_times_look_ahead", "padding times look-ahead: (batch, ..., n, m) with n > 1",
               lambda a: _mask(a).shape[0] > 1 and _mask(a).shape[-2] > 1 and len(a["q"].shape) > 2),
    InputClass("cross_attention", "n != m (queries from one sequence, keys from another)",
               lambda a: a["q"].shape[-2] != a["k"].shape[-2]),
    InputClass("d_v_differs", "d_v != d_k", lambda a: a["v"].shape[-1] != a["k"].shape[-1]),
    InputClass("one_query", "a single query (n = 1, one decoding step)", lambda a: a["q"].shape[-2] == 1),
    InputClass("one_key", "a single key (m = 1)", lambda a: a["k"].shape[-2] == 1),
    InputClass("large_scores", "scaled scores above 1,000 in size (a blocked key may have the largest)", _large_scores),
)

CLASSES = {
    "dot_score": _shape_classes(),
    "scaled_dot_score": _shape_classes(),
    "general_score": GENERAL,
    "additive_score": ADDITIVE,
    "cosine_score": COSINE,
    "create_padding_mask": PADDING,
    "create_look_ahead_mask": LOOK_AHEAD,
    "scaled_dot_product_attention": ATTENTION,
}
