"""Assignment 08's set-up: Keras must run on PyTorch, which it decides once per process, at its first import.

`require_torch_backend` says what to do when Keras was imported on another backend; `setup` seeds Python, NumPy,
TensorFlow (through course_lib.env, which also silences TensorFlow's start-up log: keras-hub imports it whatever the
backend) and PyTorch, and prints the versions; `pick_device` chooses a GPU when there is one.
"""

from __future__ import annotations

import os
import sys

BACKEND_VARIABLE = "KERAS_BACKEND"


class WrongBackend(RuntimeError):
    """Keras was imported on another backend than PyTorch in this process."""


def keras_backend() -> str:
    """The backend Keras runs on in this process (importing Keras if no one has)."""
    import keras

    return keras.config.backend()


def require_torch_backend() -> None:
    """Fail clearly unless Keras runs on PyTorch in this process."""
    imported = "keras" in sys.modules
    backend = keras_backend()
    if backend != "torch":
        when = "was imported before" if imported else "is imported without"
        raise WrongBackend(
            f"Keras runs on {backend!r} here, not on 'torch': it {when} os.environ[\"{BACKEND_VARIABLE}\"] = "
            f"\"torch\" was set (now {os.environ.get(BACKEND_VARIABLE)!r}). Keras reads the variable once, at its "
            "first import: restart the kernel and run the notebook from its first cell.")


def setup(seed: int = 0, *, verbose: bool = True) -> None:
    """The torch backend checked; Python, NumPy, TensorFlow and PyTorch seeded; versions and mode printed."""
    from course_lib import env

    require_torch_backend()
    # keras-hub imports TensorFlow whatever the backend; its C++ code logs to stderr while it loads. On the torch
    # backend importing Keras does not load it (env.setup's muting assumes it does), so it is loaded muted here.
    with env._native_stderr_muted():
        import tensorflow  # noqa: F401
    env.setup(seed, verbose=False)  # TensorFlow's logger quietened, Python, NumPy and TensorFlow seeded
    import keras
    import numpy as np
    import torch

    keras.utils.set_random_seed(seed)  # Python, NumPy and the backend's generator (torch.manual_seed)
    torch.manual_seed(seed)
    if verbose:
        mode = "fast (COURSE_FAST=1)" if env.fast_mode() else "full"
        print(f"Keras {keras.__version__} on the {keras.config.backend()} backend, PyTorch {torch.__version__}, "
              f"NumPy {np.__version__}; {torch.get_num_threads()} CPU threads; seed {seed}; {mode} mode")


def pick_device(prefer: str | None = None):
    """The device to compute on: `prefer` if given ("cpu", "cuda", "cuda:1", "mps"), else an NVIDIA (or AMD ROCm)
    GPU, else Apple's Metal GPU, else the CPU."""
    import torch

    if prefer is not None:
        return torch.device(prefer)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def describe_device(device) -> str:
    """One line about `device`: the GPU's name and memory, or the CPU's thread count."""
    import torch

    device = torch.device(device)
    if device.type == "cuda":
        properties = torch.cuda.get_device_properties(device)
        return f"{device}: {properties.name}, {properties.total_memory / 2**30:.1f} GiB"
    if device.type == "mps":
        return f"{device}: Apple GPU (Metal)"
    return f"{device}: {torch.get_num_threads()} CPU threads"
