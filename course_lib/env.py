"""Notebook set-up: quiet TensorFlow, seeds, and the fast-mode switch used by CI."""

from __future__ import annotations

import os
import random

FAST_ENV_VAR = "COURSE_FAST"


def fast_mode() -> bool:
    """True when `COURSE_FAST` is set to 1/true/yes: CI shortens long work with it."""
    return os.environ.get(FAST_ENV_VAR, "").strip().lower() in {"1", "true", "yes"}


def pick(full, fast):
    """Return `fast` in fast mode, `full` otherwise (epochs, data sizes, repeats)."""
    return fast if fast_mode() else full


def setup(seed: int = 0, *, verbose: bool = True) -> None:
    """Silence TensorFlow's info logs, seed every generator, and say which mode is on."""
    # Must be set before TensorFlow is first imported to take effect.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
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
