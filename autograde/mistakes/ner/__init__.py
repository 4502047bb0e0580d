"""Named mistakes of assignment 06 (named-entity recognition), one module per part."""
