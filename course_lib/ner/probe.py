"""Assignment 06, which layer's features? A frozen-feature probe, as in BERT's feature-based CoNLL-2003 study.

The encoder is not trained: every layer's output is computed once for each word's first piece, a choice of
layers is combined into one vector per word (one layer, a sum, a concatenation), and a small tagger (one hidden
layer) is trained on those vectors alone. Its validation F1 says how much of the task each choice of layers
already holds. `LECTURE_TABLE` is the lecture notes' table (Devlin et al., 2019, Table 7: BERT-base, CoNLL-2003
dev F1).
BERT's two sums are weighted, with a weight per layer learned with the tagger; the course's are plain sums, and
their rows say so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from course_lib.ner.encoding import IGNORE
from course_lib.published import CONLL_FEATURES

# The lecture notes' CoNLL-2003 dev F1 (BERT-base, frozen features fed to a two-layer BiLSTM; BERT paper, Table 7).
LECTURE_TABLE = CONLL_FEATURES.scores

# layers[0] is the embedding output (what the first encoder layer reads), layers[1:] the encoder layers' outputs.
COMBINATIONS: dict[str, Callable[[Sequence[np.ndarray]], np.ndarray]] = {
    "first layer (embeddings)": lambda layers: layers[0],
    "last hidden layer": lambda layers: layers[-1],
    "sum of all layers (BERT: weighted)": lambda layers: np.sum(layers[1:], axis=0),
    "second-to-last hidden layer": lambda layers: layers[-2],
    "sum of the last four (BERT: weighted)": lambda layers: np.sum(layers[-4:], axis=0),
    "concatenation of the last four": lambda layers: np.concatenate(layers[-4:], axis=-1),
}


def layer_outputs(backbone):
    """A Keras model from the backbone's inputs to [embedding output, output of each encoder layer]."""
    import keras

    names = ["embeddings_layer_norm"] + [f"transformer_layer_{i}" for i in range(backbone.num_layers)]
    return keras.Model(backbone.input, [backbone.get_layer(name).output for name in names])


def word_features(backbone, arrays: Mapping[str, np.ndarray], *, batch_size: int = 64):
    """Every layer's vector at each labelled piece (a word's first piece), with its label and sentence.

    Returns (layers, labels, sentence): `layers` a list of (words, hidden) float16 arrays, embedding first
    (half the memory of float32; a probe's F1 does not notice the rounding)."""
    model = layer_outputs(backbone)
    layers, labels, sentence = None, [], []
    for begin in range(0, len(arrays["token_ids"]), batch_size):
        rows = slice(begin, begin + batch_size)
        length = int(arrays["padding_mask"][rows].sum(axis=1).max())  # cut the batch's padding
        inputs = {name: arrays[name][rows, :length] for name in ("token_ids", "segment_ids", "padding_mask")}
        outputs = [np.asarray(output) for output in model(inputs, training=False)]
        kept = arrays["labels"][rows, :length] != IGNORE
        if layers is None:
            layers = [[] for _ in outputs]
        for store, output in zip(layers, outputs, strict=True):
            store.append(output[kept].astype(np.float16))
        labels.append(arrays["labels"][rows, :length][kept])
        sentence.append(np.nonzero(kept)[0] + begin)
    return [np.concatenate(store) for store in layers], np.concatenate(labels), np.concatenate(sentence)


def train_probe(train_x: np.ndarray, train_y: np.ndarray, *, num_labels: int, epochs: int = 8, hidden: int = 256,
                seed: int = 0):
    """A small tagger on frozen word vectors: Dense(hidden, GELU), dropout, Dense(num_labels)."""
    import keras

    keras.utils.set_random_seed(seed)
    probe = keras.Sequential([
        keras.Input((train_x.shape[-1],)),
        keras.layers.LayerNormalization(),  # sums of layers are larger than single layers: one scale for all
        keras.layers.Dense(hidden, activation="gelu"),
        keras.layers.Dropout(0.2),
        keras.layers.Dense(num_labels),
    ])
    probe.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    probe.fit(train_x, train_y, batch_size=64, epochs=epochs, verbose=0)
    return probe


def tags_by_sentence(label_ids: np.ndarray, sentence: np.ndarray, count: int, labels: Sequence[str]) -> list[list[str]]:
    """Word-level label ids (in order, with their sentence index) back to one tag list per sentence."""
    tags: list[list[str]] = [[] for _ in range(count)]
    for label_id, index in zip(label_ids, sentence, strict=True):
        tags[int(index)].append(labels[int(label_id)])
    return tags


def plot_layer_table(ours: Mapping[str, float], *, ax=None):
    """Our probe's validation F1 beside the lecture notes' BERT-base figures, one pair of bars per choice."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.8))
    names = list(LECTURE_TABLE)
    y = np.arange(len(names))
    ax.barh(y - 0.2, [LECTURE_TABLE[n] for n in names], height=0.4, label="BERT-base, CoNLL-2003 dev (lecture)",
            color="#bbbbbb")
    ax.barh(y + 0.2, [100 * ours[n] for n in names], height=0.4, label="MiniLM-L6, course corpus validation (ours)",
            color="#4c72b0")
    for i, name in enumerate(names):
        ax.text(100 * ours[name] + 0.3, i + 0.2, f"{100 * ours[name]:.1f}", va="center", fontsize=8)
        ax.text(LECTURE_TABLE[name] + 0.3, i - 0.2, f"{LECTURE_TABLE[name]:.1f}", va="center", fontsize=8)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    low = min(min(LECTURE_TABLE.values()), 100 * min(ours.values()))
    ax.set_xlim(max(0.0, low - 10), 101)
    ax.set_xlabel("entity-level F1 (%)")
    ax.legend(loc="lower right", fontsize=8)
    return ax
