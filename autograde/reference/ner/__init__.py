"""Reference implementations of assignment 06, named-entity recognition."""
