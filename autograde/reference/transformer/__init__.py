"""Reference implementations of assignment 04, the Transformer."""
