"""Catalogues of named mistakes, one module per assignment (`autograde/mistakes/<topic>.py`).

A `Mistake` is a name, the message a learner reads, and how the wrong result is produced from the
check's inputs. The hidden checks produce the results at grading time; the generator of the visible
checks' expected values (`autograde.expected`) stores them with their messages in
`course_lib/expected/<stem>.json`, so both checks name a mistake in the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    name: str
    message: str
    produce: Callable[..., object]


def _produced(mistakes: Iterable[Mistake], args, kwargs, skip) -> Iterator[tuple[Mistake, object]]:
    """Each mistake with its wrong result on these inputs; one whose variant cannot run on them (shapes
    that do not fit) is left out."""
    for mistake in mistakes:
        if mistake.name in skip:
            continue
        try:
            yield mistake, mistake.produce(*args, **kwargs)
        except ValueError:
            continue


def results(mistakes: Iterable[Mistake], *args, skip: Iterable[str] = (), where: str = "",
            **kwargs) -> list[tuple[object, str]]:
    """(wrong result, message) pairs for `expect_close(mistakes=...)`; `where` is added in parentheses."""
    suffix = f" ({where})" if where else ""
    return [(value, mistake.message + suffix) for mistake, value in _produced(mistakes, args, kwargs, skip)]


def stored(mistakes: Iterable[Mistake], *args, skip: Iterable[str] = (), **kwargs) -> dict[str, dict]:
    """{name: {"value": wrong result, "message": message}} for a generated expected-values file."""
    return {mistake.name: {"value": value, "message": mistake.message}
            for mistake, value in _produced(mistakes, args, kwargs, skip)}
