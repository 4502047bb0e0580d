"""Hidden checks of assignment 04, the Transformer."""
