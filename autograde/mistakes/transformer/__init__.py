"""Named mistakes of assignment 04 (transformer), one module per part."""
