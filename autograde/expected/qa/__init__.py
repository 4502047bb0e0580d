"""Generator of the visible checks' expected values of this assignment: the parts' dicts merged."""

from __future__ import annotations

import importlib
import pkgutil


def generate() -> dict:
    merged: dict = {}
    for part in pkgutil.iter_modules(__path__):
        merged.update(importlib.import_module(f"{__name__}.{part.name}").generate())
    return merged
