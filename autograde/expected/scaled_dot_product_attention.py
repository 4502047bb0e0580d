"""Expected values of assignment 02's visible checks (`course_lib.scaled_dot_product_attention`).

The inputs are small and chosen by hand so that a learner can follow them; every result, right or wrong,
is computed here by the reference and the mistakes catalogue.
"""

from __future__ import annotations

import numpy as np

from autograde.mistakes import scaled_dot_product_attention as mistakes
from autograde.mistakes import stored
from autograde.reference import scaled_dot_product_attention as ref

# Two queries and four keys (d = 3) whose lengths are whole numbers, and a W that is not symmetric.
SCORE_INPUTS = {
    "queries": [[1, 2, 2], [0, 3, 4]],  # lengths 3 and 5
    "keys": [[1, 0, 0], [0, 0.6, 0.8], [2, -1, 2], [0, 4, -3]],  # lengths 1, 1, 3 and 5
    "weight": [[1, 2, 0], [0, 1, 0], [1, 0, -1]],
    # Additive scores with h = 2 hidden units.
    "w_query": [[0.5, -1.0], [0.25, 0.0], [0.0, 0.5]],
    "w_key": [[1.0, 0.0], [-0.5, 0.5], [0.0, -0.25]],
    "v": [1.0, -2.0],
}

# Three sentences of lengths 3, 1 and 5 (id 0 is padding), then one without padding, then one padded before its
# tokens and one of padding only.
TOKEN_IDS = [[7, 3, 9, 0, 0], [4, 0, 0, 0, 0], [2, 8, 6, 5, 1]]
UNPADDED_IDS = [[5, 6]]
LEFT_PADDED_IDS = [[0, 0, 6, 2], [0, 0, 0, 0]]


def _attention_cases() -> dict[str, dict]:
    """The inputs (q, k, v and, for most, a mask) of the attention check's four cases."""
    lower = ref.look_ahead_mask(3)[np.newaxis]  # (1, 1, 3, 3)
    return {
        # The lecture's (Thinking Machines) numbers: q.k1 = 112 and q.k2 = 96 with d_k = 64, so the scaled
        # scores are 14 and 12 and the weights 1/(1 + e^-2) = 0.8808 and 0.1192. No leading axes, no mask.
        "lecture": {"q": np.ones((1, 64)), "k": np.stack([np.full(64, 1.75), np.full(64, 1.5)]),
                    "v": [[10, 0, 1], [0, 10, 1]]},
        # A batch of two, three queries, four keys (d_k = 2, d_v = 3), a padding mask (2, 1, 4).
        "padded_batch": {"q": [[[1, 0], [0, 2], [1, 1]], [[2, -1], [0, 0], [-1, 1]]],
                         "k": [[[1, 1], [2, 0], [0, -1], [3, 3]], [[0, 1], [1, 2], [5, 5], [-2, 0]]],
                         "v": [[[1, 0, 2], [0, 1, 0], [1, 1, 1], [9, 9, 9]],
                               [[2, 0, 0], [0, 2, 0], [9, 9, 9], [7, 7, 7]]],
                         "mask": [[[1, 1, 1, 0]], [[1, 1, 0, 0]]]},
        # Two leading axes (batch 2, heads 2) and a look-ahead mask (1, 1, 3, 3). All-zero queries give equal
        # scores, so each row spreads its weight evenly over what it may see: 1, 1/2 and 1/3.
        "look_ahead_two_axes": {"q": np.zeros((2, 2, 3, 4)), "k": np.arange(48).reshape(2, 2, 3, 4) / 10.0,
                                "v": np.arange(24).reshape(2, 2, 3, 2), "mask": lower},
        # The blocked key has by far the largest score (2e4): its weight must still be exactly 0.
        "blocked_large_score": {"q": np.full((1, 1, 4), 100.0), "k": [[[0, 0, 0, 0], [0, 0, 0, 0], [100] * 4]],
                                "v": [[[1, 0], [0, 1], [5, 5]]], "mask": [[[1, 1, 0]]]},
        # Three leading axes (1, 2, 2), one query, three keys of which the last is blocked (d_k = 2, d_v = 1).
        "three_axes_one_query": {"q": np.arange(8).reshape(1, 2, 2, 1, 2) / 4.0,
                                 "k": np.arange(24).reshape(1, 2, 2, 3, 2) / 8.0 - 1.0,
                                 "v": np.arange(12).reshape(1, 2, 2, 3, 1), "mask": [[[[[1, 1, 0]]]]]},
    }


# The cases whose wrong weights are named: with all-zero queries every scaling gives the same weights, and the
# large-score case is about the mask.
NAMED_MISTAKES_IN = ("lecture", "padded_batch")
# Why the lecture case's wrong weights are wrong, in its own numbers.
LECTURE_NOTES = {"unscaled": "scores 112 and 96 should become 14 and 12", "by_d_k": "here sqrt(d_k) = 8, d_k = 64"}


def _attention() -> dict[str, dict]:
    cases = {}
    for name, inputs in _attention_cases().items():
        q, k, v, mask = (inputs.get(key) for key in ("q", "k", "v", "mask"))
        output, weights = ref.scaled_dot_product_attention(q, k, v, mask)
        wrong = stored(mistakes.ATTENTION_WEIGHTS, q, k, v, mask) if name in NAMED_MISTAKES_IN else {}
        if name == "lecture":
            for mistake, note in LECTURE_NOTES.items():
                wrong[mistake]["message"] += f" ({note})"
        cases[name] = {**inputs, "output": output, "weights": weights, "mistakes": wrong}
        if mask is not None:  # to tell an ignored mask from a weak one
            cases[name]["unmasked_weights"] = ref.attention_weights(q, k)
    return cases


def generate() -> dict:
    inputs = SCORE_INPUTS
    q, k = inputs["queries"], inputs["keys"]
    additive = (q, k, inputs["w_query"], inputs["w_key"], inputs["v"])
    return {
        "score_inputs": inputs,
        "dot_score": {"expected": ref.dot_score(q, k), "mistakes": stored(mistakes.DOT_SCORE, q, k)},
        "scaled_dot_score": {"expected": ref.scaled_dot_score(q, k),
                             "mistakes": stored(mistakes.SCALED_DOT_SCORE, q, k)},
        "general_score": {"expected": ref.general_score(q, k, inputs["weight"]),
                          "mistakes": stored(mistakes.GENERAL_SCORE, q, k, inputs["weight"])},
        "additive_score": {"expected": ref.additive_score(*additive),
                           "mistakes": stored(mistakes.ADDITIVE_SCORE, *additive)},
        "cosine_score": {"expected": ref.cosine_score(q, k), "mistakes": stored(mistakes.COSINE_SCORE, q, k)},
        "create_padding_mask": {"token_ids": TOKEN_IDS, "expected": ref.padding_mask(TOKEN_IDS),
                                "mistakes": stored(mistakes.PADDING_MASK, TOKEN_IDS),
                                "unpadded_ids": UNPADDED_IDS, "unpadded_expected": ref.padding_mask(UNPADDED_IDS),
                                "left_padded_ids": LEFT_PADDED_IDS,
                                "left_padded_expected": ref.padding_mask(LEFT_PADDED_IDS),
                                "left_padded_mistakes": stored(mistakes.PADDING_MASK, LEFT_PADDED_IDS)},
        "create_look_ahead_mask": {"expected": ref.look_ahead_mask(4),
                                   "mistakes": stored(mistakes.LOOK_AHEAD_MASK, 4),
                                   "length_1": ref.look_ahead_mask(1)},
        "scaled_dot_product_attention": _attention(),
    }
