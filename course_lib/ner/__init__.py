"""Assignment 06, named-entity recognition: CoNLL files, the course's corpus, and the visible checks and
helpers of label alignment, the token-classification head, entity-level evaluation and tagging text."""

ENTITY_TYPES = ("PER", "ORG", "LOC", "MISC")
# Label ids are indices into LABELS: "O" is 0, then B- and I- of each type in ENTITY_TYPES' order.
LABELS = ("O", *(f"{prefix}-{kind}" for kind in ENTITY_TYPES for prefix in ("B", "I")))
