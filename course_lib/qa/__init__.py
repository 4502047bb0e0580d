"""Assignments 07 and 08: extractive question answering (SQuAD-style spans)."""
