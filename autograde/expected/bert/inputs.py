"""Expected values of the build_bert_inputs check of assignment 05 (`course_lib.bert.inputs`): the reference on
the visible check's cases, with the token ids of the named truncation mistakes that differ from it."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import stored
from autograde.mistakes.bert import inputs as mistakes
from autograde.reference.bert import inputs as ref
from course_lib.bert.inputs import BUILD_CASES


def _case(tokens_a, tokens_b, max_len, ids) -> dict:
    expected = ref.build_bert_inputs(tokens_a, tokens_b, max_len, **ids)
    wrong = stored(mistakes.TRUNCATION, tokens_a, tokens_b, max_len, **ids)
    # Only results that differ from the right token ids can be recognised.
    return {"expected": expected,
            "mistakes": {name: entry for name, entry in wrong.items()
                         if not np.array_equal(entry["value"], expected[0])}}


def generate() -> dict:
    return {"inputs": {"build_bert_inputs": {
        label: _case(tokens_a, tokens_b, max_len, ids) for label, tokens_a, tokens_b, max_len, ids, _ in BUILD_CASES
    }}}
