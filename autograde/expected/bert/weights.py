"""Expected values of the visible check of load_bert_weights (`course_lib.bert.weights`): the fingerprints
(sum, sum of squares) each weight of the check's empty encoder must have once loaded, from the small seeded
backbone and from the checkpoint shipped with the course, as the reference loader puts them there."""

from __future__ import annotations

from autograde.reference.bert.weights import load_bert_weights
from course_lib.bert import weights as visible
from course_lib.checking import quiet


def _loaded_fingerprints(backbone, config: dict) -> dict:
    encoder = visible.encoder_skeleton(config)
    load_bert_weights(encoder, backbone)
    return visible.encoder_fingerprints(encoder, config)


def generate() -> dict:
    from course_lib.pretrained import load_bert  # keras-hub and the checkpoint load only when generating

    with quiet():
        small = visible.make_backbone(visible.SMALL_CONFIG, seed=visible.SMALL_SEED)
        return {"weights": {
            "small_backbone": _loaded_fingerprints(small, visible.SMALL_CONFIG),
            "shipped_checkpoint": _loaded_fingerprints(load_bert().backbone, visible.SHIPPED_CONFIG),
        }}
