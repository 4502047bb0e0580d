"""Helpers for the notebooks of *Transformers, from attention to BERT*.

Plotting, data and the visible checks that learners run. No solution code lives here.
"""

__version__ = "0.1.0"
