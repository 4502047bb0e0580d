"""A Keras layer's weights by attribute path, for the checks of assignments 04 and 05.

One vocabulary everywhere: a weight's key is the attribute path that reaches it from the layer given,
as a learner would write it: "mha.query_dense.kernel", "enc_layers[1].ffn.layers[0].bias",
"embedding.token_embedding.embeddings", and for keras-hub's BertBackbone
"transformer_layers[0]._self_attention_layer_norm.gamma". `resolve(layer, key)` finds the weight, the
messages name it that way, and the NumPy references read their weights under the same keys.

The checks SET every weight from a seeded NumPy generator (`seed_variables`), not Keras's initialisers,
so the visible checks' expected values can be generated from the references with the same weights.
"""

from __future__ import annotations

import re

import numpy as np

from course_lib.checking import CheckFailed


def resolve(owner, path: str):
    """The object at an attribute path such as "enc_layers[2].ffn.layers[0]" (or a weight's full key)."""
    for part in path.split("."):
        match = re.fullmatch(r"(\w+)((?:\[\d+\])*)", part)
        if match is None:
            raise ValueError(f"not an attribute path: {path!r}")
        owner = getattr(owner, match[1])
        for index in re.findall(r"\[(\d+)\]", match[2]):
            owner = owner[int(index)]
    return owner


def named_sublayer(owner, name: str, where: str):
    """`owner.name`, or a failed check saying the template's sublayer is missing."""
    if not hasattr(owner, name):
        raise CheckFailed(
            f"{where} has no attribute `{name}`: keep the sublayers that the template creates in __init__, "
            "with their names"
        )
    return getattr(owner, name)


def require_built(sublayer, where: str):
    """`sublayer`, or a failed check if it has no weights yet (never called)."""
    if not getattr(sublayer, "built", False) or not sublayer.weights:
        raise CheckFailed(
            f"{where} has no weights yet: it was never used in `call` (every sublayer created in __init__ "
            "has a place in the computation)"
        )
    return sublayer


class WeightReader:
    """Collects a layer's variables under their attribute paths; `root` names the layer in messages."""

    def __init__(self, root: str):
        self.root = root
        self.variables: dict = {}

    def where(self, path: str) -> str:
        return f"{self.root}.{path}" if path else self.root

    def sublayer(self, owner, prefix: str, name: str, *, built: bool = True):
        """`owner.name` (at `prefix`), which must exist and, with `built`, have weights."""
        sublayer = named_sublayer(owner, name, self.where(prefix.rstrip(".")))
        return require_built(sublayer, self.where(prefix + name)) if built else sublayer

    def add(self, key: str, variable, shape: tuple[int, ...]) -> None:
        """Record `variable` under `key` after checking its shape."""
        if tuple(variable.shape) != tuple(shape):
            raise CheckFailed(f"{self.where(key)} has shape {tuple(variable.shape)}, expected {tuple(shape)}")
        self.variables[key] = variable

    # Sublayers of the Transformer's blocks (assignment 04), reused by BERT's encoder (05)

    def attention(self, owner, prefix: str, name: str, d: int, heads: int) -> None:
        """A keras.layers.MultiHeadAttention: kernels (d, heads, d/heads), output kernel (heads, d/heads, d)."""
        mha = self.sublayer(owner, prefix, name)
        path, key_dim = f"{prefix}{name}.", d // heads
        for part in ("query", "key", "value"):
            dense = getattr(mha, f"{part}_dense")
            self.add(f"{path}{part}_dense.kernel", dense.kernel, (d, heads, key_dim))
            self.add(f"{path}{part}_dense.bias", dense.bias, (heads, key_dim))
        self.add(f"{path}output_dense.kernel", mha.output_dense.kernel, (heads, key_dim, d))
        self.add(f"{path}output_dense.bias", mha.output_dense.bias, (d,))

    def feed_forward(self, owner, prefix: str, d: int, fc: int) -> None:
        """The given FullyConnected block: two Dense layers, d -> fc -> d."""
        ffn = self.sublayer(owner, prefix, "ffn")
        layers = getattr(ffn, "layers", [])
        if len(layers) != 2:
            raise CheckFailed(f"{self.where(prefix + 'ffn')} should be the given FullyConnected block "
                              "(two Dense layers)")
        for index, (rows, columns) in enumerate([(d, fc), (fc, d)]):
            self.add(f"{prefix}ffn.layers[{index}].kernel", layers[index].kernel, (rows, columns))
            self.add(f"{prefix}ffn.layers[{index}].bias", layers[index].bias, (columns,))

    def norm(self, owner, prefix: str, name: str, d: int) -> None:
        norm = self.sublayer(owner, prefix, name)
        self.add(f"{prefix}{name}.gamma", norm.gamma, (d,))
        self.add(f"{prefix}{name}.beta", norm.beta, (d,))

    def table(self, owner, prefix: str, name: str, rows: int, d: int) -> None:
        """A keras.layers.Embedding of `rows` rows."""
        table = self.sublayer(owner, prefix, name)
        self.add(f"{prefix}{name}.embeddings", table.embeddings, (rows, d))

    def dense(self, owner, prefix: str, name: str, rows: int, columns: int) -> None:
        dense = self.sublayer(owner, prefix, name)
        self.add(f"{prefix}{name}.kernel", dense.kernel, (rows, columns))
        self.add(f"{prefix}{name}.bias", dense.bias, (columns,))

    def block(self, layer, prefix: str, config: dict, *, decoder: bool) -> None:
        """An EncoderLayer (mha, ffn, layernorm1-2) or DecoderLayer (mha1, mha2, ffn, layernorm1-3)."""
        d, heads, fc = config["embedding_dim"], config["num_heads"], config["fully_connected_dim"]
        for name in ("mha1", "mha2") if decoder else ("mha",):
            self.attention(layer, prefix, name, d, heads)
        self.feed_forward(layer, prefix, d, fc)
        for i in range(1, 4 if decoder else 3):
            self.norm(layer, prefix, f"layernorm{i}", d)

    def stack(self, layer, prefix: str, config: dict, *, decoder: bool, layers_too: bool = True) -> None:
        """An Encoder or Decoder: its embedding table, then (with `layers_too`) each of its layers."""
        vocabulary = config["target_vocab_size" if decoder else "input_vocab_size"]
        self.table(layer, prefix, "embedding", vocabulary, config["embedding_dim"])
        if not layers_too:
            return
        name = "dec_layers" if decoder else "enc_layers"
        layers = list(self.sublayer(layer, prefix, name, built=False))
        if len(layers) != config["num_layers"]:
            raise CheckFailed(f"{self.where(prefix + name)} has {len(layers)} layers, expected {config['num_layers']}")
        for i, block in enumerate(layers):
            self.block(block, f"{prefix}{name}[{i}].", config, decoder=decoder)


def layer_variables(layer, kind: str, config: dict) -> dict:
    """The Keras variables of a built layer of assignment 04, keyed by attribute path.

    `kind` is one of "encoder_layer", "decoder_layer", "encoder", "decoder", "transformer", or
    "encoder_embedding", "decoder_embedding", "final_layer" (only those weights: the visible checks build
    composites from test doubles that have none); `config` holds the constructor arguments (embedding_dim,
    num_heads, ...). A missing attribute, a sublayer never used, or a wrong shape fails with a message
    that names it.
    """
    reader = WeightReader(type(layer).__name__)
    if kind in ("encoder_layer", "decoder_layer"):
        reader.block(layer, "", config, decoder=kind == "decoder_layer")
    elif kind in ("encoder", "decoder", "encoder_embedding", "decoder_embedding"):
        reader.stack(layer, "", config, decoder=kind.startswith("decoder"), layers_too="embedding" not in kind)
    elif kind == "transformer":
        for part in ("encoder", "decoder"):
            reader.stack(reader.sublayer(layer, "", part, built=False), f"{part}.", config, decoder=part == "decoder")
    elif kind != "final_layer":
        raise ValueError(f"unknown kind {kind!r}")
    if kind in ("transformer", "final_layer"):
        reader.dense(layer, "", "final_layer", config["embedding_dim"], config["target_vocab_size"])
    return reader.variables


def bert_encoder_layer_config(config: dict) -> dict:
    """Assignment 04's names for the sizes of one of BERT's encoder layers."""
    return {"embedding_dim": config["hidden_dim"], "num_heads": config["num_heads"],
            "fully_connected_dim": config["intermediate_dim"]}


def bert_variables(layer, config: dict, *, part: str = "encoder") -> dict:
    """The variables of a built layer of assignment 05, keyed by attribute path.

    `part` is "embedding" (a BertEmbedding: "token_embedding.embeddings", ...), "encoder" (a BertEncoder:
    "embedding.token_embedding.embeddings", ..., "enc_layers[0].mha.query_dense.kernel", ...) or "layers"
    (only a BertEncoder's enc_layers: its visible check gives it a test double as embedding)."""
    if part not in ("embedding", "encoder", "layers"):
        raise ValueError(f"unknown part {part!r}")
    reader = WeightReader(type(layer).__name__)
    d = config["hidden_dim"]
    if part != "layers":
        embedding, prefix = ((layer, "") if part == "embedding"
                             else (reader.sublayer(layer, "", "embedding", built=False), "embedding."))
        for name, rows in [("token_embedding", config["vocabulary_size"]),
                           ("position_embedding", config["max_sequence_length"]),
                           ("segment_embedding", config["num_segments"])]:
            reader.table(embedding, prefix, name, rows, d)
        reader.norm(embedding, prefix, "layer_norm", d)
    if part == "embedding":
        return reader.variables
    layers = list(reader.sublayer(layer, "", "enc_layers", built=False))
    if len(layers) != config["num_layers"]:
        raise CheckFailed(f"{reader.where('enc_layers')} has {len(layers)} layers, expected {config['num_layers']}")
    for i, block in enumerate(layers):
        reader.block(block, f"enc_layers[{i}].", bert_encoder_layer_config(config), decoder=False)
    return reader.variables


# ----------------------------------------------------------------------------------------------
# Setting and reading values


def seeded_value(key: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """A weight of a sensible scale: kernels ~ N(0, 1.5^2 / fan_in), gammas near 1, small biases and betas."""
    if key.endswith("gamma"):
        return 1.0 + 0.3 * rng.standard_normal(shape)
    if key.endswith("embeddings"):
        return rng.standard_normal(shape) / np.sqrt(shape[-1])
    if key.endswith("kernel"):
        # An attention output kernel (heads, key_dim, d) takes heads * key_dim inputs.
        fan_in = int(np.prod(shape[:-1])) if len(shape) == 3 and "output" in key else shape[0]
        return rng.standard_normal(shape) * (1.5 / np.sqrt(fan_in))
    return 0.2 * rng.standard_normal(shape)


def read(variables: dict) -> dict[str, np.ndarray]:
    """The variables' values as float64 arrays, under the same keys."""
    return {key: np.asarray(v.numpy(), dtype=np.float64) for key, v in variables.items()}


def seeded_values(shapes: dict[str, tuple[int, ...]], seed: int) -> dict[str, np.ndarray]:
    """A float32 value for each key from a seeded generator (in the dict's order)."""
    rng = np.random.default_rng(seed)
    return {key: seeded_value(key, tuple(shape), rng).astype(np.float32) for key, shape in shapes.items()}


def seed_variables(variables: dict, seed: int) -> dict[str, np.ndarray]:
    """Set every variable from a seeded generator (in the dict's order); return the values as float64."""
    values = seeded_values({key: tuple(v.shape) for key, v in variables.items()}, seed)
    for key, variable in variables.items():
        variable.assign(values[key])
    return {key: value.astype(np.float64) for key, value in values.items()}


def seed_weights(layer, kind: str, config: dict, seed: int) -> dict[str, np.ndarray]:
    """Set every weight of an assignment-04 layer from a seeded generator; return them by key."""
    return seed_variables(layer_variables(layer, kind, config), seed)


def set_unit_norm(norm) -> None:
    """gamma = 1 and beta = 0: the layer norm's output then has mean 0 and variance 1 per position."""
    norm.gamma.assign(np.ones(norm.gamma.shape, np.float32))
    norm.beta.assign(np.zeros(norm.beta.shape, np.float32))


# ----------------------------------------------------------------------------------------------
# keras-hub's BertBackbone, and telling weights apart without their values


def sublayer_weights(layer) -> list[tuple[str, object]]:
    """(attribute path, variable) of an embedding, layer norm, dense or multi-head attention layer."""
    import keras

    if isinstance(layer, keras.layers.MultiHeadAttention):
        return [(f"{part}_dense.{kind}", getattr(getattr(layer, f"{part}_dense"), kind))
                for part in ("query", "key", "value", "output") for kind in ("kernel", "bias")]
    if isinstance(layer, keras.layers.LayerNormalization):
        return [("gamma", layer.gamma), ("beta", layer.beta)]
    if isinstance(layer, keras.layers.Dense):
        return [("kernel", layer.kernel), ("bias", layer.bias)]
    if isinstance(layer, keras.layers.Embedding):
        return [("embeddings", layer.embeddings)]
    if hasattr(layer, "position_embeddings"):  # keras-hub's PositionEmbedding
        return [("position_embeddings", layer.position_embeddings)]
    raise TypeError(f"no known weights in {type(layer).__name__}")


BACKBONE_EMBEDDING_LAYERS = ("token_embedding", "position_embedding", "segment_embedding", "embeddings_layer_norm")
BACKBONE_BLOCK_LAYERS = ("_self_attention_layer", "_self_attention_layer_norm", "_feedforward_intermediate_dense",
                         "_feedforward_output_dense", "_feedforward_layer_norm")


def backbone_variables(backbone) -> dict:
    """The encoder weights of a keras-hub BertBackbone by attribute path ("transformer_layers[0]._self_...")."""
    paths = list(BACKBONE_EMBEDDING_LAYERS)
    for i in range(len(backbone.transformer_layers)):
        paths += [f"transformer_layers[{i}].{name}" for name in BACKBONE_BLOCK_LAYERS]
    return {f"{path}.{attr}": variable
            for path in paths for attr, variable in sublayer_weights(resolve(backbone, path))}


def fingerprint(value) -> tuple[float, float]:
    """Sum and sum of squares (float64): equal for a faithful copy, different for any other weight."""
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=np.float64)
    return float(array.sum()), float(np.square(array).sum())


def fingerprints(variables: dict) -> dict[str, tuple[float, float]]:
    """The fingerprint of each variable, under the same keys."""
    return {key: fingerprint(variable) for key, variable in variables.items()}


def same_fingerprint(a, b) -> bool:
    return bool(np.allclose(a, b, rtol=1e-9, atol=1e-9))
