"""Assignment 04, the Transformer: the visible checks and helpers of its layers, stacks, decoding and data."""
