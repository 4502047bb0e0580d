"""Code run in a child process under a chosen Keras backend.

Keras picks its backend once per process, at its first import: a notebook running Keras on PyTorch cannot also run
it on TensorFlow. `run_in_backend("tensorflow", "module:function", arrays=..., **settings)` starts a fresh Python
with KERAS_BACKEND set, calls the function there with the NumPy arrays and the JSON settings, and returns the dict of
arrays and numbers it returned. The functions below are what assignment 08 runs on the other side: the TensorFlow
logits of a saved QA model (`tensorflow_logits`), weights saved from TensorFlow when assignment 07's are not there
(`make_tensorflow_weights`), and the PyTorch logits of a saved model in a module class named by its path
(`torch_logits`, for the tests).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

TIMEOUT = 1800  # seconds: a full-size throughput run on a slow CPU


class BackendProcessError(RuntimeError):
    """The child process failed; the message holds the end of what it printed."""


def run_in_backend(backend: str, function: str, *, arrays: Mapping[str, np.ndarray] | None = None,
                   timeout: float = TIMEOUT, threads: int | None = None, **settings) -> dict:
    """`function(arrays=..., **settings)` ("module:function") in a fresh Python whose Keras runs on `backend`."""
    with tempfile.TemporaryDirectory(prefix="course-backend-") as tmp:
        folder = Path(tmp)
        np.savez(folder / "in.npz", **{name: np.asarray(value) for name, value in (arrays or {}).items()})
        (folder / "call.json").write_text(json.dumps({"function": function, "settings": settings}))
        env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
        if threads is not None:
            env.update(OMP_NUM_THREADS=str(threads), TF_NUM_INTRAOP_THREADS=str(threads))
        done = subprocess.run([sys.executable, "-m", "course_lib.qa_pytorch.backends", str(folder)], env=env,
                              capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0 or not (folder / "out.npz").is_file():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise BackendProcessError(f"{function} on the {backend} backend failed (exit code {done.returncode}):"
                                      f"\n{tail}")
        with np.load(folder / "out.npz") as result:
            return {name: result[name][()] if result[name].ndim == 0 else np.asarray(result[name])
                    for name in result.files}


def _serve(folder: Path) -> None:
    call = json.loads((folder / "call.json").read_text())
    module, _, name = call["function"].partition(":")
    function = getattr(importlib.import_module(module), name)
    with np.load(folder / "in.npz") as saved:
        arrays = {key: saved[key] for key in saved.files}
    result = function(arrays=arrays, **call["settings"])
    np.savez(folder / "out.npz", **{key: np.asarray(value) for key, value in result.items()})


# ----------------------------------------------------------------------------------------------
# What assignment 08 runs in the other process


def _quiet_imports() -> None:
    from course_lib.env import quiet_tensorflow

    quiet_tensorflow()


def _inputs(arrays: Mapping) -> dict:
    return {name: np.asarray(arrays[name], np.int32) for name in ("token_ids", "segment_ids", "padding_mask")}


def _batches(count: int, batch_size: int):
    for start in range(0, count, batch_size):
        yield slice(start, min(count, start + batch_size))


def tensorflow_logits(*, arrays: Mapping, folder: str, batch_size: int = 16) -> dict:
    """Start and end logits of the model saved in `folder`, on TensorFlow: its BertBackbone, then a Keras Dense
    layer with the saved head (what 07's model computes in inference)."""
    _quiet_imports()
    import keras

    from course_lib.qa import saving

    backbone = saving.saved_backbone(folder)
    saving.load_backbone_weights(backbone, folder)
    kernel, bias = saving.load_head(folder)
    head = keras.layers.Dense(2)
    head.build((None, None, kernel.shape[0]))
    head.set_weights([kernel, bias])
    inputs = _inputs(arrays)
    starts, ends = [], []
    for rows in _batches(len(inputs["token_ids"]), batch_size):
        logits = head(backbone({k: v[rows] for k, v in inputs.items()}, training=False)["sequence_output"])
        logits = keras.ops.convert_to_numpy(logits)
        starts.append(logits[..., 0])
        ends.append(logits[..., 1])
    return {"start_logits": np.concatenate(starts), "end_logits": np.concatenate(ends),
            "backend": keras.config.backend()}


def make_tensorflow_weights(*, arrays: Mapping, folder: str, seed: int = 0) -> dict:
    """Save, from TensorFlow, the pretrained backbone with a head drawn from `seed`, in save_qa_model's format: a
    stand-in for assignment 07's fine-tuned weights."""
    _quiet_imports()
    from course_lib.pretrained import load_bert
    from course_lib.qa import saving

    backbone = load_bert().backbone
    hidden = int(backbone.hidden_dim)
    rng = np.random.default_rng(seed)
    kernel = rng.standard_normal((hidden, 2)) / np.sqrt(hidden)
    bias = 0.1 * rng.standard_normal(2)
    saving.write_saved(backbone, kernel, bias, folder)
    return {"hidden_dim": hidden}


def torch_logits(*, arrays: Mapping, folder: str, module: str, batch_size: int = 16) -> dict:
    """Start and end logits of the model saved in `folder`, on PyTorch, in `module` ("package.module:Class", a
    QAModel) built on saving.saved_backbone(folder) and given the weights with load_into_torch."""
    _quiet_imports()
    import keras
    import torch

    from course_lib.qa import saving

    module_path, _, class_name = module.partition(":")
    model_class = getattr(importlib.import_module(module_path), class_name)
    model = saving.load_into_torch(model_class(saving.saved_backbone(folder)), folder)
    model.eval()
    inputs = _inputs(arrays)
    starts, ends = [], []
    with torch.no_grad():
        for rows in _batches(len(inputs["token_ids"]), batch_size):
            start, end = model(*(torch.as_tensor(inputs[name][rows]) for name in inputs))
            starts.append(start.cpu().numpy())
            ends.append(end.cpu().numpy())
    return {"start_logits": np.concatenate(starts), "end_logits": np.concatenate(ends),
            "backend": keras.config.backend()}


if __name__ == "__main__":
    _serve(Path(sys.argv[1]))
