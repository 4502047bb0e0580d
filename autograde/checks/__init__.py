"""Checks called from the hidden tests: each compares a learner's function with the reference
on randomized inputs of several shapes and says what is wrong."""
