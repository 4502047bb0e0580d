"""Reference implementations of assignment 05, BERT."""
