"""Grading side of the course: nbgrader configuration, NumPy reference implementations,
the checks that hidden tests call, and the batch grading command."""
