"""Named mistakes of assignment 07 (extractive question answering), one module per part."""
