"""Assignments 07 and 08: a fine-tuned QA model saved by one Keras backend and loaded by another.

Assignment 07 fine-tunes, on TensorFlow, a Keras model whose head is a Dense layer on BERT's sequence output, and
saves it with `save_qa_model(model, folder)`; assignment 08 loads the same numbers into its PyTorch module with
`load_into_torch(module, folder)`. The folder holds three files that any Keras backend reads:

- `backbone.json`: the BertBackbone's configuration (its sizes), and what saved it;
- `backbone.weights.h5`: the backbone's weights, Keras's `save_weights` format (arrays by variable path, the same on
  every backend);
- `head.npz`: the head as Keras computes it, `kernel` (hidden, 2) and `bias` (2,), column 0 the start logit and
  column 1 the end logit. A torch.nn.Linear stores the transpose: weight (2, hidden) = kernel.T.

The head is found by what it computes, not by its name: the layers outside the backbone with a (hidden, 2) kernel
(07's Dense(2) "span_logits") or two with (hidden, 1) kernels (one per end), whose output, on a probe batch, gives
the model's start and end logits; the columns are saved in the order that reproduces them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from course_lib.heads import head_candidates, layers_below

CONFIG_FILE = "backbone.json"
WEIGHTS_FILE = "backbone.weights.h5"
HEAD_FILE = "head.npz"
FORMAT = 1


class SavedModelError(ValueError):
    """A model that cannot be saved in this format, or a folder that does not hold one."""


def _backbone_of(model):
    import keras_hub

    found = [layer for layer in layers_below(model) if isinstance(layer, keras_hub.models.BertBackbone)]
    if len(found) != 1:
        raise SavedModelError(f"the model should hold one keras_hub BertBackbone, it holds {len(found)}")
    return found[0]


def _probe(backbone) -> dict:
    """A small batch of real token ids, with padding, for the backbone's vocabulary."""
    vocabulary = int(backbone.vocabulary_size)
    rng = np.random.default_rng(0)
    ids = rng.integers(1000 if vocabulary > 2000 else 1, vocabulary, size=(2, 12)).astype(np.int32)
    mask = np.ones_like(ids)
    mask[1, 8:] = 0
    ids = ids * mask
    segments = (np.arange(12)[None, :] >= 5).astype(np.int32) * mask
    return {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}


def _numbers(value) -> np.ndarray:
    import keras

    return np.asarray(keras.ops.convert_to_numpy(value), np.float64)


def _head_of(model, backbone) -> tuple[np.ndarray, np.ndarray]:
    """(kernel (hidden, 2), bias (2,)) that turn the backbone's sequence output into the model's [start, end]."""
    import keras

    from course_lib.qa.training import start_and_end

    hidden = int(backbone.hidden_dim)
    candidates = [layer for layer in head_candidates(model, backbone) if tuple(layer.kernel.shape)[0] == hidden]
    columns = []
    for layer in candidates:
        kernel = _numbers(layer.kernel)
        bias = np.zeros(kernel.shape[1]) if getattr(layer, "bias", None) is None else _numbers(layer.bias)
        columns += [(kernel[:, j], bias[j]) for j in range(kernel.shape[1])]
    probe = _probe(backbone)
    sequence = _numbers(backbone(probe, training=False)["sequence_output"])
    try:
        outputs = start_and_end(model(probe, training=False))
    except ValueError as error:
        raise SavedModelError(str(error)) from error
    chosen = []
    for output in outputs:
        target = _numbers(output)
        # A mixed-precision model (keras.mixed_precision, "mixed_bfloat16") computes in 16 bits: bfloat16 keeps
        # about 3 significant digits, so its logits match the float32 product only to a few per cent.
        tolerance = 1e-4 if keras.backend.standardize_dtype(output.dtype) in ("float32", "float64") else 5e-2
        match = [(k, b) for k, b in columns
                 if np.allclose(sequence @ k + b, target, atol=tolerance, rtol=tolerance)]
        if not match:
            raise SavedModelError("no Dense layer on the backbone's sequence output gives the model's logits: the "
                                  "head should be Dense(2) (or two Dense(1)) on sequence_output, without activation")
        chosen.append(match[0])
    kernel = np.stack([chosen[0][0], chosen[1][0]], axis=1).astype(np.float32)
    return kernel, np.asarray([chosen[0][1], chosen[1][1]], np.float32)


def write_saved(backbone, kernel, bias, folder) -> Path:
    """Write a backbone and a (hidden, 2) head in the folder's format; return the folder."""
    import keras
    import keras_hub

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    kernel, bias = np.asarray(kernel, np.float32), np.asarray(bias, np.float32)
    hidden = int(backbone.hidden_dim)
    if kernel.shape != (hidden, 2) or bias.shape != (2,):
        raise SavedModelError(f"the head should be a ({hidden}, 2) kernel and a (2,) bias, got {kernel.shape} and "
                              f"{bias.shape}")
    description = {"format": FORMAT, "class_name": type(backbone).__name__, "config": backbone.get_config(),
                   "saved_with": {"backend": keras.config.backend(), "keras": keras.__version__,
                                  "keras_hub": keras_hub.__version__}}
    (folder / CONFIG_FILE).write_text(json.dumps(description, indent=1) + "\n")
    backbone.save_weights(str(folder / WEIGHTS_FILE))
    np.savez(folder / HEAD_FILE, kernel=kernel, bias=bias)
    return folder


def save_qa_model(model, folder) -> Path:
    """Save 07's fine-tuned Keras model (BertBackbone, then a Dense head giving [start_logits, end_logits]) in `folder`,
    readable by any Keras backend; return the folder."""
    backbone = _backbone_of(model)
    kernel, bias = _head_of(model, backbone)
    return write_saved(backbone, kernel, bias, folder)


def _description(folder) -> dict:
    folder = Path(folder)
    missing = [name for name in (CONFIG_FILE, WEIGHTS_FILE, HEAD_FILE) if not (folder / name).is_file()]
    if missing:
        raise SavedModelError(f"{folder} holds no saved QA model: {', '.join(missing)} missing (assignment 07 writes "
                              "them with save_qa_model)")
    description = json.loads((folder / CONFIG_FILE).read_text())
    if description.get("format") != FORMAT or description.get("class_name") != "BertBackbone":
        raise SavedModelError(f"{folder / CONFIG_FILE} is not a saved BertBackbone of format {FORMAT}")
    return description


def saved_backbone(folder):
    """A BertBackbone of the saved configuration, on this process's Keras backend (its weights not loaded yet: see
    `load_into_torch`), its parameters registered with torch on the PyTorch backend."""
    import keras_hub

    from course_lib.pretrained import register_torch_parameters

    backbone = keras_hub.models.BertBackbone.from_config(_description(folder)["config"])
    return register_torch_parameters(backbone)


def load_head(folder) -> tuple[np.ndarray, np.ndarray]:
    """(kernel (hidden, 2), bias (2,)) as saved, float32."""
    with np.load(Path(folder) / HEAD_FILE) as saved:
        return np.asarray(saved["kernel"], np.float32), np.asarray(saved["bias"], np.float32)


def load_backbone_weights(backbone, folder) -> None:
    """The saved backbone weights into `backbone`, whose sizes must be the saved ones."""
    from course_lib.pretrained import register_torch_parameters

    saved = _description(folder)["config"]
    mine = backbone.get_config()
    different = sorted(key for key in saved
                       if key not in ("name", "trainable", "dtype") and saved[key] != mine.get(key))
    if different:
        raise SavedModelError(f"the backbone's sizes differ from the saved ones in {', '.join(different)}: build it "
                              "with saved_backbone(folder)")
    backbone.load_weights(str(Path(folder) / WEIGHTS_FILE))
    register_torch_parameters(backbone)


def load_into_torch(module, folder):
    """Load a saved QA model into a torch module with `.backbone` (a BertBackbone of the saved sizes, on the PyTorch
    backend) and `.qa_outputs` (torch.nn.Linear(hidden, 2)): the backbone's weights, then weight = kernel.T and the
    bias. Returns the module."""
    import torch

    head = getattr(module, "qa_outputs", None)
    if not isinstance(head, torch.nn.Linear):
        raise SavedModelError(f"the module's qa_outputs should be a torch.nn.Linear, it is a {type(head).__name__}")
    load_backbone_weights(module.backbone, folder)
    kernel, bias = load_head(folder)
    if tuple(head.weight.shape) != kernel.T.shape or head.bias is None:
        raise SavedModelError(f"qa_outputs should be Linear({kernel.shape[0]}, 2) with a bias, it has weight "
                              f"{tuple(head.weight.shape)}")
    with torch.no_grad():
        head.weight.copy_(torch.from_numpy(kernel.T.copy()).to(head.weight.device))
        head.bias.copy_(torch.from_numpy(bias).to(head.bias.device))
    return module
