"""Notebook set-up: quiet TensorFlow, seeds, and the fast-mode switch used by CI."""

from __future__ import annotations

import os
import random
import sys
from contextlib import contextmanager

FAST_ENV_VAR = "COURSE_FAST"


def fast_mode() -> bool:
    """True when `COURSE_FAST` is set to 1/true/yes: CI shortens long work with it."""
    return os.environ.get(FAST_ENV_VAR, "").strip().lower() in {"1", "true", "yes"}


def pick(full, fast):
    """Return `fast` in fast mode, `full` otherwise (epochs, data sizes, repeats)."""
    return fast if fast_mode() else full


@contextmanager
def _native_stderr_muted():
    """Send file descriptor 2 to /dev/null: TensorFlow's C++ code logs there at import time,
    whatever TF_CPP_MIN_LOG_LEVEL says, and learners would see it as a red error box."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def quiet_tensorflow():
    """TensorFlow, imported without its start-up log lines on stderr."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if "tensorflow" not in sys.modules:
        with _native_stderr_muted():
            import keras  # noqa: F401  (keras and tensorflow log while they load)
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    return tf


def setup(seed: int = 0, *, verbose: bool = True) -> None:
    """Import TensorFlow quietly, seed every generator, and say which mode is on."""
    # Must be set before TensorFlow is first imported to take effect.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np

    tf = quiet_tensorflow()
    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)
    if verbose:
        import keras

        mode = "fast (COURSE_FAST=1)" if fast_mode() else "full"
        print(
            f"TensorFlow {tf.__version__}, Keras {keras.__version__}, NumPy {np.__version__}; "
            f"seed {seed}; {mode} mode"
        )


RESULTS_ENV_VAR = "COURSE_RESULTS_JSON"


def record_results(**figures) -> None:
    """Add figures to the JSON file named by `COURSE_RESULTS_JSON`, if it is set (a benchmark in bench/ reads
    them); otherwise do nothing."""
    import json
    from pathlib import Path

    target = os.environ.get(RESULTS_ENV_VAR)
    if not target:
        return
    path = Path(target)
    recorded = json.loads(path.read_text()) if path.is_file() else {}
    recorded.update(figures)
    path.write_text(json.dumps(recorded, indent=2))
