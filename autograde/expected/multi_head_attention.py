"""Expected values of assignment 03's visible checks (`course_lib.multi_head_attention`).

The inputs are small and chosen by hand so that a learner can follow them; every result, right or wrong,
is computed here by the reference and the mistakes catalogue.
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import multi_head_attention as mistakes
from autograde.mistakes import stored
from autograde.reference import multi_head_attention as ref

# call: d_model 4, 2 heads of depth 2, batch 2, 3 positions, and projections set by hand: wq the identity,
# wk swaps features 2 and 3 (and adds 0.5 to one), wv doubles, wo mixes features 0 and 1 and doubles 2.
CALL_WEIGHTS = {
    "wq": {"kernel": np.eye(4), "bias": [0, 0, 0, 0]},
    "wk": {"kernel": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], "bias": [0, 0, 0.5, 0]},
    "wv": {"kernel": 2 * np.eye(4), "bias": [0, 1, 0, 0]},
    "wo": {"kernel": [[1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 1]], "bias": [0.5, 0, 0, -0.5]},
}
CALL_X = [[[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, -1]],
          [[0, 1, 2, 0], [1, 0, 0, 1], [2, -1, 1, 0]]]
PADDING = [[[1, 1, 1]], [[1, 1, 0]]]  # the second sentence's last position is padding
CALL_CASES = {  # name: (description, number of queries, mask)
    "no_mask": ("no mask", 3, None),
    "padding": ("padding mask (2, 1, 3)", 3, PADDING),
    "look_ahead": ("look-ahead mask (1, 3, 3)", 3, np.tril(np.ones((3, 3)))[np.newaxis]),
    "cross_attention": ("cross-attention, 2 queries, 3 keys, padding mask", 2, PADDING),
}


def _call() -> dict:
    weights = {name: (pair["kernel"], pair["bias"]) for name, pair in CALL_WEIGHTS.items()}
    x = np.asarray(CALL_X, dtype=np.float64)
    cases = {}
    for name, (description, queries, mask) in CALL_CASES.items():
        inputs = (x[:, :queries], x, x, weights, 2, mask)
        output, attention = ref.multi_head_attention(*inputs)
        case = {"description": description, "queries": queries, "output": output, "weights": attention,
                # Without a mask, or with one that has no batch axis, a missing head axis changes nothing.
                "weight_mistakes": stored(mistakes.CALL_WEIGHTS, *inputs,
                                          skip=() if name in ("padding", "cross_attention")
                                          else ("mask_without_head_axis",)),
                "output_mistakes": stored(mistakes.CALL_OUTPUT, *inputs)}
        if mask is not None:
            case["mask"] = mask
            case["unmasked_weights"] = ref.multi_head_attention(*inputs[:-1])[1]  # to tell an ignored mask
        cases[name] = case
    return {"x": CALL_X, "weights": CALL_WEIGHTS, "cases": cases}


def _copy() -> dict:
    """Keras's weights for d_model 4 and 2 heads of key_dim 2, numbered so that every entry is different."""
    shapes = {"wq": ((4, 2, 2), (2, 2)), "wk": ((4, 2, 2), (2, 2)), "wv": ((4, 2, 2), (2, 2)), "wo": ((2, 2, 4), (4,))}
    blocks = {}
    for index, (name, (kernel, bias)) in enumerate(shapes.items()):
        blocks[name] = (np.arange(16 * index, 16 * index + 16).reshape(kernel) / 16,
                        np.arange(4 * index, 4 * index + 4).reshape(bias) / 4 + 1)
    expected = ref.dense_layout(blocks)
    return {"keras_blocks": {name: {"kernel": kernel, "bias": bias} for name, (kernel, bias) in blocks.items()},
            "expected": {name: {"kernel": kernel, "bias": bias} for name, (kernel, bias) in expected.items()}}


def generate() -> dict:
    split_x = np.arange(24).reshape(2, 3, 4)  # the numbers 0..23: each entry shows where it came from
    three_heads_x = np.arange(12).reshape(1, 2, 6)
    merge_x = np.arange(24).reshape(2, 2, 3, 2)
    return {
        "split_heads": {"x": split_x, "expected": ref.split_heads(split_x, 2),
                        "mistakes": stored(mistakes.SPLIT_HEADS, split_x, 2),
                        "three_heads": {"x": three_heads_x, "expected": ref.split_heads(three_heads_x, 3)}},
        "merge_heads": {"x": merge_x, "expected": ref.merge_heads(merge_x),
                        "mistakes": stored(mistakes.MERGE_HEADS, merge_x)},
        "call": _call(),
        "copy_keras_weights": _copy(),
    }
