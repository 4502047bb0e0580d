"""Hidden checks of assignment 05, BERT."""
