"""A head on a pretrained backbone: the tiny test backbone, seeded weights, and the checks every head shares.

06's token classifier, 07's span head and 08's PyTorch QA module are all a layer on BERT's sequence output. Their
checks build the learner's model on a tiny keras-hub `BertBackbone` (random sizes, every weight from a seeded
generator, no dropout inside the encoder), call it on padded batches (`classifier_batches`), find the head among
the layers outside the backbone (`head_candidates`), and share two verdicts: determinism at inference
(`expect_deterministic`) and a trained encoder with dropout before the head (`expect_trained_encoder_and_dropout`),
the encoder's training observed through its gradients (`gradient_reach`, `expect_encoder_trains`).
`freeze_unused_pooler` is the one place the pooler, which no head here reads, is frozen.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np

from course_lib.checking import CheckFailed, plain_message, quiet

INPUT_NAMES = ("token_ids", "segment_ids", "padding_mask")  # a BertBackbone's inputs
# A tiny BERT for the checks: the real one would take seconds per call. No dropout inside the encoder, so that
# the head's dropout is the only randomness of a call with training=True.
# hidden_dim 6 is neither a num_labels of the checks nor one less, so a wrong output shape names one mistake.
TINY_BACKBONE = {"vocabulary_size": 50, "num_layers": 2, "num_heads": 2, "hidden_dim": 6, "intermediate_dim": 12,
                 "max_sequence_length": 32, "num_segments": 2}
HEAD_DROPOUT = 0.5  # the rate the checks ask for: half the vector dropped in training, never at inference
TOL = {"atol": 1e-4, "rtol": 1e-4}


def call_built_model(model, inputs: Mapping, training: bool | None, builder: str):
    """What the model that `builder` returned gives on one batch (the dict a BertBackbone takes); a crash is a
    CheckFailed naming the batch's shape and where the model's inputs should come from."""
    import keras

    tensors = {name: keras.ops.convert_to_tensor(np.asarray(value, np.int32)) for name, value in inputs.items()}
    try:
        with quiet():  # training=None: called as model(inputs), which Keras treats as inference
            return model(tensors) if training is None else model(tensors, training=training)
    except NotImplementedError:
        raise
    except Exception as error:
        raise CheckFailed(
            f"calling the model that {builder} returned on a batch of shape {tuple(np.shape(inputs['token_ids']))} "
            f"(the dict of token_ids, segment_ids and padding_mask) raised {type(error).__name__}: "
            f"{plain_message(error)}. Build the model on backbone.input, the backbone's own dict of inputs") from error


# ----------------------------------------------------------------------------------------------
# A tiny backbone with chosen weights, and inputs for it


def tiny_backbone(config: Mapping, weights: Mapping[str, np.ndarray] | None = None, *, dtype: str = "float32"):
    """A keras-hub BertBackbone of the sizes in `config`, without dropout; `weights` (by variable path) set.
    The references build it in float64, so that their values do not depend on the CPU or thread count."""
    import keras_hub

    with quiet():
        backbone = keras_hub.models.BertBackbone(**dict(config), dropout=0.0, dtype=dtype)
    if weights is not None:
        variables = {variable.path: variable for variable in backbone.weights}
        if set(variables) != set(weights):
            raise ValueError(f"the backbone's weights are {sorted(variables)}, not {sorted(weights)}")
        for path, value in weights.items():
            variables[path].assign(np.asarray(value, dtype))
    return backbone


@functools.cache
def _weight_shapes(config_items: tuple) -> tuple:
    backbone = tiny_backbone(dict(config_items))
    return tuple((variable.path, tuple(int(d) for d in variable.shape)) for variable in backbone.weights)


def backbone_weight_shapes(config: Mapping) -> dict[str, tuple[int, ...]]:
    """{variable path: shape} of a BertBackbone of these sizes."""
    return dict(_weight_shapes(tuple(sorted(config.items()))))


def seeded_classifier_weights(config: Mapping, num_labels: int, seed: int) -> tuple[dict, dict]:
    """(backbone weights by path, head {"kernel", "bias"}), float32 from a seeded generator."""
    from course_lib.keras_weights import seeded_values

    backbone = seeded_values(backbone_weight_shapes(config), seed)
    head = seeded_values({"kernel": (config["hidden_dim"], num_labels), "bias": (num_labels,)}, seed + 1)
    head["bias"] = head["bias"] + np.float32(0.5)  # clear of 0, so that dropout on the logits shows as exact zeros
    return backbone, head


def classifier_batches(rng: np.random.Generator, config: Mapping, shapes: Sequence[tuple[int, int]]) -> list[dict]:
    """Padded int32 inputs, one dict per (batch, seq) in `shapes` (each row a different length, the first row
    full, the second at most half), then two probes of the first batch: its padding positions given other
    token ids, and one real token of its first row changed."""
    batches = []
    for batch, seq in shapes:
        lengths = rng.integers(1, seq + 1, size=batch)
        lengths[0] = seq
        if batch > 1:
            lengths[1] = max(1, seq // 2)
        mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int32)
        ids = rng.integers(1, config["vocabulary_size"], size=(batch, seq)) * mask
        split = rng.integers(1, seq + 1, size=batch)
        segments = ((np.arange(seq)[None, :] >= split[:, None]) * mask).astype(np.int32)
        batches.append({"token_ids": ids.astype(np.int32), "segment_ids": segments, "padding_mask": mask})
    first = batches[0]
    padding = first["padding_mask"] == 0
    padded = dict(first, token_ids=np.where(padding, rng.integers(1, config["vocabulary_size"], size=padding.shape),
                                            first["token_ids"]).astype(np.int32))
    changed = first["token_ids"].copy()
    changed[0, 0] = changed[0, 0] % (config["vocabulary_size"] - 1) + 1  # another id, never 0
    return [*batches, padded, dict(first, token_ids=changed)]


# ----------------------------------------------------------------------------------------------
# The learner's model, walked where it lives


def layers_below(layer) -> list:
    """Every layer inside `layer` (nested models, wrappers), depth first."""
    found, stack, seen = [], list(getattr(layer, "layers", [])), set()
    while stack:
        current = stack.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        found.append(current)
        stack += list(getattr(current, "layers", []))
        if getattr(current, "layer", None) is not None:  # TimeDistributed and other wrappers
            stack.append(current.layer)
    return found


def head_candidates(model, backbone) -> list:
    """The layers outside the backbone that own a 2-D `kernel`: the head is among them."""
    inside = {id(layer) for layer in [backbone, *layers_below(backbone)]}
    return [layer for layer in layers_below(model)
            if id(layer) not in inside and getattr(layer, "kernel", None) is not None and len(layer.kernel.shape) == 2]


UNUSED_BY_HEADS = "pooled_dense"  # the pooler ([CLS] -> dense -> tanh): no head on the sequence output reads it


def _fixed_weights(shape):
    """Weights for a sum over an output that no symmetry cancels: sin(1), sin(2), ... laid out in `shape`."""
    import tensorflow as tf

    return tf.reshape(tf.sin(tf.cast(tf.range(1, tf.reduce_prod(shape) + 1), tf.float64)), shape)


def gradient_reach(model, backbone, inputs: Mapping) -> dict:
    """What training would do to the backbone, observed (TensorFlow): the paths of its weights, those among the
    model's trainable weights, and those a loss on the model's outputs sends a non-zero gradient to (the loss is a
    fixed weighted sum of every output, training=False so that dropout cannot hide a path)."""
    import tensorflow as tf

    tensors = {name: tf.constant(np.asarray(value, np.int32)) for name, value in inputs.items()}
    variables = list(backbone.weights)
    with quiet(), tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch([variable.value for variable in variables])
        outputs = tf.nest.flatten(model(tensors, training=False))
        loss = tf.add_n([tf.reduce_sum(tf.cast(output, tf.float64) * _fixed_weights(tf.shape(output)))
                         for output in outputs])
    gradients = tape.gradient(loss, [variable.value for variable in variables])
    trainable = {id(variable) for variable in model.trainable_weights}
    return {"backbone_trainable": bool(backbone.trainable),
            "backbone_paths": [variable.path for variable in variables],
            "trained": [variable.path for variable in variables if id(variable) in trainable],
            "reached": [variable.path for variable, gradient in zip(variables, gradients, strict=True)
                        if gradient is not None and bool(tf.reduce_any(tf.convert_to_tensor(gradient) != 0))]}


def freeze_unused_pooler(model) -> None:
    """Freeze the pooler ([CLS] -> dense -> tanh) of every trainable BertBackbone in `model` (or `model` itself):
    a head on the sequence output never uses it, and Keras would warn at every step that it gets no gradient."""
    for layer in [model, *layers_below(model)]:
        if type(layer).__name__ == "BertBackbone" and layer.trainable:
            try:
                layer.get_layer("pooled_dense").trainable = False
            except ValueError:
                pass



def train_top_layers(model, first: int) -> list[str]:
    """Freeze the embeddings and the encoder layers below `first` of every BertBackbone in `model`, so that
    only layers `first`, `first + 1`, ... and the head train (0 freezes nothing). Frozen layers
    need no gradient, no optimizer state and, below the lowest trained layer, no activations kept for the
    backward pass: a step costs less time and memory. The backbones are found among the model's layers, nested
    models and a subclassed model's attributes included. Returns the names of the layers frozen."""
    backbones = [layer for layer in [model, *layers_below(model)] if type(layer).__name__ == "BertBackbone"]
    if not backbones:  # freezing nothing without a word would train every layer, slowly
        raise ValueError(f"found no keras_hub BertBackbone in the {type(model).__name__} to freeze layers of: build "
                         "the model on the backbone (a subclassed model keeps it as an attribute)")
    frozen = []
    for layer in backbones:
        count = layer.num_layers
        if not 0 <= first <= count:
            raise ValueError(f"first must be between 0 and the encoder's {count} layers, got {first}")
        names = ["token_embedding", "position_embedding", "segment_embedding", "embeddings_layer_norm"]
        names += [f"transformer_layer_{i}" for i in range(count)]
        for name in names[:0 if first == 0 else 4 + first]:
            layer.get_layer(name).trainable = False
            frozen.append(name)
    return frozen

# ----------------------------------------------------------------------------------------------
# The verdicts every head shares (in the grader's process when grading)


def expect_deterministic(report: dict, inference: np.ndarray, label: str) -> None:
    """Two calls with training=False, and a call without `training` (inference for Keras), must agree: otherwise
    dropout acts at inference."""
    if not np.allclose(report["again"], inference, atol=1e-6):
        raise CheckFailed(f"[{label}] two calls with training=False gave different logits: dropout is active at "
                          "inference. Let Keras pass `training` to the Dropout layer (never training=True)")
    if not np.allclose(report["no_training_argument"], inference, atol=1e-6):
        raise CheckFailed(f"[{label}] called without a training argument, model(inputs), the model gave other logits "
                          "than with training=False: dropout acts by default. A subclassed model's call should "
                          "default to training=None (or False) and pass it on")


def some_paths(paths: Sequence[str]) -> str:
    """The first three weight paths, and how many more: a message's example of the weights it is about."""
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def encoder_paths(paths: Sequence[str]) -> list[str]:
    """The weights that fine-tuning trains: all of the backbone's but the pooler's."""
    return [path for path in paths if UNUSED_BY_HEADS not in path]


def expect_encoder_trains(report: dict, label: str) -> None:
    """Every encoder weight (all but the pooler, which no head reads) is among the model's trainable weights and
    receives a gradient from the outputs: judged from `gradient_reach`'s observation, not from flags."""
    encoder = encoder_paths(report["backbone_paths"])
    frozen = [path for path in encoder if path not in report["trained"]]
    if frozen:
        why = ("backbone.trainable is False" if not report["backbone_trainable"] else
               "they are not among the model's trainable weights")
        raise CheckFailed(f"[{label}] {len(frozen)} of the encoder's {len(encoder)} weights would not be trained "
                          f"({some_paths(frozen)}): {why}. Fine-tuning trains the encoder with the head; do not "
                          "freeze it")
    cut = [path for path in encoder if path not in report["reached"]]
    if cut:
        raise CheckFailed(f"[{label}] a loss on the model's outputs sends no gradient to {len(cut)} of the encoder's "
                          f"{len(encoder)} weights ({some_paths(cut)}), so training would not change them: compute the "
                          "logits from the backbone's sequence_output with Keras operations only (no "
                          "stop_gradient, no detour through NumPy)")


def expect_trained_encoder_and_dropout(report: dict, inference: np.ndarray, label: str) -> None:
    """The checks a fine-tuning head shares (06's and 07's): every encoder weight trained, dropout acting in
    training only, on the encoder's output, at the given rate. `inference`: the first batch's logits with
    training=False."""
    expect_encoder_trains(report, label)
    training = np.asarray(report["training"], np.float64)
    if np.allclose(training, inference, atol=1e-6):
        raise CheckFailed(f"[{label}] with dropout={HEAD_DROPOUT} and training=True the logits are those of "
                          "inference: no dropout acts. Apply keras.layers.Dropout(dropout) to the sequence_output, "
                          "before the Dense head")
    if np.mean(training == 0.0) > 0.2:
        raise CheckFailed(f"[{label}] with training=True about half the logits are exactly 0: the dropout is applied "
                          "to the logits. Apply it to the sequence_output, before the Dense head")
    without = report.get("training_without_dropout")
    if without is not None and not np.allclose(without, inference, **TOL):
        raise CheckFailed(f"[{label}] built with dropout=0.0, the model still drops values in training: use the "
                          "argument `dropout` as the rate, not a number of your own")
