"""Other implementations of assignment 07's exercises (see autograde/variants/__init__.py), one module per part:
the text side (spans, windows, the metric) and the model side (the head and span decoding)."""

import importlib
import pkgutil

VARIANTS = [variant for part in sorted(module.name for module in pkgutil.iter_modules(__path__))
            for variant in importlib.import_module(f"{__name__}.{part}").VARIANTS]
