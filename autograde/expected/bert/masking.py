"""Expected values of the mask_tokens check of assignment 05 (`course_lib.bert.masking`): the reference's
masking of two short sequences at rates whose answer is certain (any random generator gives it)."""

from __future__ import annotations

import numpy as np

from autograde.reference.bert import masking as ref
from course_lib.bert.masking import BERT_MASKING, CERTAIN_RATES, TWO_SENTENCES


def generate() -> dict:
    cases = {}
    for label, (select_rate, mask_rate, random_rate) in CERTAIN_RATES.items():
        masked_ids, selected = ref.mask_tokens(np.array(TWO_SENTENCES), np.random.default_rng(0), **BERT_MASKING,
                                               select_rate=select_rate, mask_rate=mask_rate, random_rate=random_rate)
        cases[label] = {"selected": selected, "masked_ids": masked_ids}
    return {"masking": cases}
