"""Assignment 05, BERT: the visible checks and helpers of its inputs, masking, embedding, encoder and weights."""
