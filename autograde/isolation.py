"""Grade a composite function on its own: while it runs, the parts it calls by name from the
learner's notebook are replaced by reference versions, so an earlier mistake costs points once."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

_MISSING = object()


@contextmanager
def parts_replaced(fn, **references) -> Iterator[None]:
    """Within the block, `fn`'s global names (notebook variables) point at `references`."""
    namespace = getattr(fn, "__globals__", None)
    if namespace is None:  # not a plain Python function: nothing to isolate
        yield
        return
    saved = {name: namespace.get(name, _MISSING) for name in references}
    namespace.update(references)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = value


@contextmanager
def quiet() -> Iterator[None]:
    """Silence Python warnings: nbgrader scores a test cell that writes to stderr as 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
