"""Expected values of the visible checks, one JSON file per assignment (`<stem>.json` in this folder).

The files are generated from the references by `python -m autograde.expected`, never edited by hand;
tests/test_registry.py::test_expected_values_are_what_the_references_generate regenerates them and fails on any
difference. Lists of numbers are read back as float64 arrays, strings (the messages of named mistakes) stay strings.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

FOLDER = Path(__file__).resolve().parent


def path(stem: str) -> Path:
    return FOLDER / f"{stem}.json"


def _arrays(value):
    if isinstance(value, dict):
        return {key: _arrays(item) for key, item in value.items()}
    if isinstance(value, list):
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):  # strings, or rows of different lengths
            return [_arrays(item) for item in value]
        return array
    return value


@functools.cache
def _load(stem: str) -> dict:
    file = path(stem)
    if not file.is_file():
        raise FileNotFoundError(f"the expected values of {stem} are missing ({file}); "
                                "regenerate them with `python -m autograde.expected`")
    return _arrays(json.loads(file.read_text(encoding="utf-8")))


def load(stem: str, *keys: str):
    """The expected values of assignment `stem`, or the part under `keys`:
    load("01_positional_encoding", "get_angles")."""
    value = _load(stem)
    for key in keys:
        value = value[key]
    return value
