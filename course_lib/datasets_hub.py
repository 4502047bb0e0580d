"""Hugging Face datasets, loaded only when asked by name (06's CoNLL sentences, 07's SQuAD questions): the course
runs offline, so every failure becomes one error that says why."""

from __future__ import annotations


class DatasetUnavailableError(RuntimeError):
    """A Hugging Face dataset that could not be loaded (no network, offline mode, unknown name, no `datasets`)."""


def load_dataset(name: str, split: str, *, hint: str = ""):
    """`datasets.load_dataset(name, split=split)`, or DatasetUnavailableError saying why not (`hint` is added to the
    message of a failed load)."""
    try:
        import datasets
    except ImportError as error:
        raise DatasetUnavailableError(f"loading {name!r} needs the `datasets` package: {error}") from error
    try:
        return datasets.load_dataset(name, split=split)
    except Exception as error:  # the datasets library raises many types (ConnectionError, FileNotFoundError, ...)
        raise DatasetUnavailableError(f"could not load the Hugging Face dataset {name!r}, split {split!r}{hint}: "
                                      f"{type(error).__name__}: {error}") from error
