"""Expected values of the visible checks of BertEmbedding and BertEncoder (`course_lib.bert.encoder`): the
reference Keras layers built as the checks build them, their weights seeded the same way, and the NumPy
reference (and its named mistakes) on the checks' fixed inputs."""

from __future__ import annotations

import numpy as np

from autograde.mistakes import stored
from autograde.mistakes.bert import encoder as mistakes
from autograde.reference.bert import encoder as ref
from course_lib.bert import encoder as visible
from course_lib.checking import quiet


def _embedding() -> dict:
    from autograde.reference.bert.keras_layers import BertEmbedding  # Keras loads only when generating

    _, weights = visible.make_embedding(BertEmbedding)
    ids, segments = (np.array(visible.EMBEDDING_INPUTS[k]) for k in ("token_ids", "segment_ids"))
    return {"output": ref.bert_embedding(weights, ids, segments),
            "mistakes": stored(mistakes.EMBEDDING, weights, ids, segments)}


def _encoder() -> dict:
    from autograde.reference.bert.keras_layers import BertEncoder  # Keras loads only when generating

    _, weights = visible.make_encoder_with_double(BertEncoder)
    inputs = [np.array(visible.ENCODER_INPUTS[k]) for k in ("token_ids", "segment_ids", "padding_mask")]
    embedded = visible.embedding_double_output(*inputs[:2])
    layers = visible.ENCODER_CONFIG["num_layers"]
    return {"output": ref.bert_encoder(weights, *inputs, layers, embedded=embedded),
            "mistakes": stored(mistakes.ENCODER, weights, *inputs, layers, embedded=embedded)}


def generate() -> dict:
    with quiet():
        return {"encoder": {"embedding": _embedding(), "encoder": _encoder()}}
