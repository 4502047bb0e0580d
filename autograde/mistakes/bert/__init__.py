"""Named mistakes of assignment 05 (BERT), one module per part."""
