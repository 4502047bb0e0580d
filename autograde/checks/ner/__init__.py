"""Hidden checks of assignment 06, named-entity recognition."""
