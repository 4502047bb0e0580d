"""Generators of the visible checks' expected values, one module (or package) per assignment
(`autograde/expected/<topic>`, with a `generate() -> dict`), written to `course_lib/expected/<stem>.json`.

    python -m autograde.expected                 # regenerate every assignment's file
    python -m autograde.expected --check         # exit 1 if a file differs from what the references give
    python -m autograde.expected 04_transformer  # one assignment

Values are computed by the references on the visible checks' fixed inputs (and seeded weights), for the
right answer and for each named mistake, so the visible checks hold no solution code and no literal arrays.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import numpy as np

from autograde.course import list_assignments
from autograde.registry import topic
from course_lib import expected as stored

SIGNIFICANT_DIGITS = 10
# How far a regenerated number may move before it counts as a changed generator. The references compute in
# float64 (the tiny keras-hub backbone included), so another CPU, thread count or oneDNN setting moves a value by
# rounding only, about 1e-12; the visible checks compare at 1e-6 (01-05) and 1e-4 (06-08), ten and a thousand
# times this, so anything the checks could notice is still caught. tests/test_registry.py regenerates under
# other thread counts and with oneDNN off to hold this.
TOLERANCE = 1e-7


def generator_stems() -> list[str]:
    """The assignments that have a generator module."""
    folder = Path(__file__).resolve().parent
    return [stem for stem in list_assignments()
            if (folder / f"{topic(stem)}.py").is_file() or (folder / topic(stem) / "__init__.py").is_file()]


def generate(stem: str) -> dict:
    """Run the generator of `stem` and return plain JSON data (numbers rounded, arrays as lists)."""
    module = importlib.import_module(f"autograde.expected.{topic(stem)}")
    return _plain(module.generate())


def _plain(value):
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and not all(isinstance(v, (int, float, np.number)) for v in value):
        return [_plain(item) for item in value]
    if isinstance(value, str):
        return value
    array = np.asarray(value)
    if array.dtype.kind in "iub":
        return array.astype(int).tolist()
    return np.vectorize(lambda x: float(f"{x:.{SIGNIFICANT_DIGITS}g}"), otypes=[float])(array).tolist() \
        if array.ndim else float(f"{float(array):.{SIGNIFICANT_DIGITS}g}")


def dumps(data: dict) -> str:
    """JSON with one innermost row of numbers per line: readable diffs."""
    text = json.dumps(data, indent=1, sort_keys=False)
    return re.sub(r"\[\s*([-+0-9.eE,\s]+?)\s*\]", lambda m: "[" + " ".join(m[1].split()) + "]", text) + "\n"


def differences(actual, expected, where: str = "") -> list[str]:
    """Where two JSON values differ (structure exactly, numbers within TOLERANCE)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or sorted(actual) != sorted(expected):
            return [f"{where or 'top level'}: keys {sorted(actual) if isinstance(actual, dict) else actual!r} "
                    f"instead of {sorted(expected)}"]
        return [line for key in expected for line in differences(actual[key], expected[key], f"{where}/{key}")]
    if isinstance(expected, str) or isinstance(actual, str):
        return [] if actual == expected else [f"{where}: {actual!r} instead of {expected!r}"]
    try:
        a, e = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    except (TypeError, ValueError):
        if not isinstance(actual, list) or not isinstance(expected, list) or len(actual) != len(expected):
            return [f"{where}: different structure"]
        pairs = enumerate(zip(actual, expected, strict=True))
        return [line for i, (x, y) in pairs for line in differences(x, y, f"{where}[{i}]")]
    if a.shape != e.shape:
        return [f"{where}: shape {a.shape} instead of {e.shape}"]
    if not np.allclose(a, e, rtol=TOLERANCE, atol=TOLERANCE):
        return [f"{where}: values differ by up to {np.max(np.abs(a - e)):.3g}"]
    return []


def check(stem: str) -> list[str]:
    """What differs between the committed file of `stem` and a fresh generation."""
    file = stored.path(stem)
    if not file.is_file():
        return [f"{file} is missing"]
    return differences(generate(stem), json.loads(file.read_text(encoding="utf-8")))


def write(stem: str) -> Path:
    file = stored.path(stem)
    file.write_text(dumps(generate(stem)), encoding="utf-8")
    return file
