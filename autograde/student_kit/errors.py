"""The builder's one error: the kit cannot be built as asked (a bad --give or --out, a badly marked
course_lib/layers.py, an unpinned requirement, a kit that holds answers)."""


class KitError(Exception):
    """The kit cannot be built as asked; the message says why."""
