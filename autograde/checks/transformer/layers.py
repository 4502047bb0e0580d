"""Hidden checks of assignment 04's EncoderLayer and DecoderLayer against the NumPy reference.

Each check builds the learner's layer for several seeded configurations, sets its weights from a seeded
generator (by attribute name), gives the same values to the reference, and compares outputs and attention
weights in inference mode, with and without masks; then it checks that each dropout acts in training mode
(autograde/checks/transformer/training.py). The cases and helpers here serve the stacks' checks too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograde.checks import rng as draw
from autograde.checks import seed_of
from autograde.checks.layers import make_layer
from autograde.checks.transformer.training import (
    BLOCK_ADVICE,
    SITE_ADVICE,
    block_sites,
    expect_dropout_acts,
    expect_each_site_acts,
)
from autograde.checks.weights import seed_layer, set_seeded, variables_of
from autograde.mistakes import results
from autograde.mistakes.transformer import layers as mistakes
from autograde.reference.transformer import layers as ref
from course_lib.checking import (
    CheckFailed,
    call_layer,
    expect_close,
    expect_deterministic,
    passed,
    quiet,
    to_tensor,
)
from course_lib.keras_weights import layer_variables
from course_lib.transformer.layers import DECODER_MASK_HINT, TRAINING_ADVICE

TOL = dict(atol=1e-4, rtol=1e-4)


@dataclass(frozen=True)
class Case:
    d: int
    heads: int
    fc: int
    batch: int
    target: int  # T: query positions (the encoder's sequence for encoder cases)
    source: int = 0  # S: encoder positions for decoder cases
    masks: str = "none"  # none | padding | look_ahead | both | target_padding
    num_layers: int = 1
    eps: float = 1e-6

    def label(self) -> str:
        shape = f"T {self.target}, S {self.source}" if self.source else f"seq {self.target}"
        return (f"d {self.d}, {self.heads} heads, batch {self.batch}, {shape}, "
                f"{self.num_layers} layer{'s' * (self.num_layers > 1)}, masks: {self.masks}")

    def block_config(self) -> dict:
        return {"embedding_dim": self.d, "num_heads": self.heads, "fully_connected_dim": self.fc}


def expect_same_at_inference(first, second, name: str, advice: str = TRAINING_ADVICE) -> None:
    expect_deterministic(first, second, name, advice=advice)


def token_ids(rng, batch: int, length: int, vocab: int) -> np.ndarray:
    """Random ids 1..vocab-1, each sentence padded with 0 after a random length (at least 1); the first
    sentence is always padded (when longer than 1), so that a padding mask matters whatever the seed."""
    ids = rng.integers(1, vocab, size=(batch, length))
    for row in range(batch):
        ids[row, rng.integers(1, length if row == 0 and length > 1 else length + 1):] = 0
    return ids.astype(np.int32)


def padding_mask(ids: np.ndarray) -> np.ndarray:
    return (ids != 0).astype(np.float32)[:, None, :]


def look_ahead_mask(length: int) -> np.ndarray:
    return np.tril(np.ones((length, length), np.float32))[None]


def encoder_mask(case: Case, ids: np.ndarray):
    return {"none": None, "padding": padding_mask(ids), "look_ahead": look_ahead_mask(case.target),
            "both": padding_mask(ids) * look_ahead_mask(case.target)}[case.masks]


def decoder_masks(case: Case, target_ids: np.ndarray, source_ids: np.ndarray):
    """(look_ahead_mask, padding_mask) for a decoder case."""
    look_ahead, padding = look_ahead_mask(case.target), padding_mask(source_ids)
    return {
        "none": (None, None),
        "look_ahead": (look_ahead, None),
        "padding": (None, padding),
        "both": (look_ahead, padding),
        "target_padding": (look_ahead * padding_mask(target_ids), padding),  # look-ahead and target padding
    }[case.masks]


def absent_mask_mistakes(look_ahead, padding) -> list[str]:
    """The mask mistakes that cannot be told apart from the right answer when masks are absent."""
    return [name for name, absent in [("no_look_ahead_mask", look_ahead is None),
                                      ("no_padding_mask", padding is None),
                                      ("masks_swapped", look_ahead is None and padding is None)] if absent]


def quietly_run(fn):
    with quiet():
        return fn()


# ----------------------------------------------------------------------------------------------
# EncoderLayer

ENCODER_LAYER_CASES = [
    Case(8, 2, 16, 2, 5, masks="padding"),
    Case(12, 3, 8, 3, 7, masks="look_ahead"),
    Case(16, 4, 32, 1, 1, masks="none"),
    Case(8, 1, 8, 2, 4, masks="both", eps=1e-3),
    Case(16, 2, 24, 3, 6, masks="none"),
]


ENCODER_LAYER_TRAINING = Case(8, 2, 16, 2, 6, masks="padding")


def grade_encoder_layer(EncoderLayer) -> None:  # noqa: N803
    for index, case in enumerate(ENCODER_LAYER_CASES):
        _grade_encoder_layer_case(EncoderLayer, index, case)
    _grade_encoder_layer_training(EncoderLayer)
    passed(f"EncoderLayer matches the reference in {len(ENCODER_LAYER_CASES)} configurations, with and "
           "without masks; its dropouts act in training mode only")


def _grade_encoder_layer_case(EncoderLayer, index: int, case: Case) -> None:  # noqa: N803
    rng = draw(400 + index)
    x = rng.standard_normal((case.batch, case.target, case.d))
    mask = encoder_mask(case, token_ids(rng, case.batch, case.target, 9))

    def run():
        layer = make_layer(EncoderLayer, case.d, case.heads, case.fc, dropout_rate=0.5, layernorm_eps=case.eps)
        call_layer(layer, to_tensor(x), training=False, mask=to_tensor(mask))
        weights = seed_layer(layer, "encoder_layer", case.block_config(), seed=seed_of(index))
        return weights, *[call_layer(layer, to_tensor(x), training=False, mask=to_tensor(mask)) for _ in range(2)]

    weights, output, again = quietly_run(run)
    name = f"EncoderLayer output ({case.label()})"
    expect_same_at_inference(output, again, name)
    wrong = results(mistakes.ENCODER_LAYER, weights, x, mask, eps=case.eps, where="EncoderLayer",
                    skip=() if mask is not None else ("no_mask",))
    expect_close(output, ref.encoder_layer(weights, x, mask, eps=case.eps), name, mistakes=wrong, **TOL)


def _grade_block_training(Layer, kind: str, case: Case, number: int, call) -> None:  # noqa: N803
    """The layer's dropouts act in training mode, each site alone (`kind`: "EncoderLayer" or "DecoderLayer");
    `call(layer, training)` runs a layer of the case's sizes on the case's inputs and returns its output."""
    decoder = kind == "DecoderLayer"

    def run(training: bool):
        return call(layer, training)

    with quiet():
        layer = make_layer(Layer, case.d, case.heads, case.fc, dropout_rate=0.5, layernorm_eps=case.eps)
        run(False)
        variables = variables_of(layer, layer_variables, "decoder_layer" if decoder else "encoder_layer",
                                 case.block_config())
        weights = set_seeded(variables, seed=seed_of(number))
    name = f"{kind} output ({case.label()})"
    own_sites = ("mha1", "mha2", "dropout_ffn") if decoder else ("mha", "dropout_ffn")
    expect_dropout_acts(run(False), run(True), name, what="layer", advice=BLOCK_ADVICE)
    expect_each_site_acts(variables, weights, run, block_sites("", decoder=decoder), name,
                          {site: SITE_ADVICE[site] for site in own_sites})


def _grade_encoder_layer_training(EncoderLayer) -> None:  # noqa: N803
    case = ENCODER_LAYER_TRAINING
    rng = draw(450)
    x = rng.standard_normal((case.batch, case.target, case.d))
    mask = encoder_mask(case, token_ids(rng, case.batch, case.target, 9))
    _grade_block_training(EncoderLayer, "EncoderLayer", case, 450,
                          lambda layer, training: call_layer(layer, to_tensor(x), training=training,
                                                             mask=to_tensor(mask)))


# ----------------------------------------------------------------------------------------------
# DecoderLayer

DECODER_LAYER_CASES = [
    Case(8, 2, 16, 2, 4, 4, masks="both"),  # T == S first: swapped masks fit and can be named
    Case(12, 3, 8, 3, 5, 7, masks="both"),
    Case(16, 4, 32, 1, 1, 3, masks="look_ahead"),
    Case(8, 1, 8, 2, 6, 2, masks="none"),
    Case(12, 2, 12, 2, 3, 5, masks="padding", eps=1e-3),
    Case(8, 4, 8, 3, 5, 5, masks="target_padding"),
]

WEIGHTS_SWAPPED = ("the attention weights are returned in the wrong order: (output, self-attention weights of "
                   "mha1, cross-attention weights of mha2)")


DECODER_LAYER_TRAINING = Case(8, 2, 16, 2, 5, 6, masks="both")


def grade_decoder_layer(DecoderLayer) -> None:  # noqa: N803
    for index, case in enumerate(DECODER_LAYER_CASES):
        _grade_decoder_layer_case(DecoderLayer, index, case)
    _grade_decoder_layer_training(DecoderLayer)
    passed(f"DecoderLayer matches the reference in {len(DECODER_LAYER_CASES)} configurations: output and both "
           "attention weights; its dropouts act in training mode only")


def _expect_weights(actual, expected, name: str, other) -> None:
    wrong = [(other, WEIGHTS_SWAPPED)] if np.shape(other) == np.shape(expected) else []
    expect_close(actual, expected, name, mistakes=wrong, **TOL)


def _grade_decoder_layer_case(DecoderLayer, index: int, case: Case) -> None:  # noqa: N803
    rng = draw(600 + index)
    x = rng.standard_normal((case.batch, case.target, case.d))
    enc_output = rng.standard_normal((case.batch, case.source, case.d))
    look_ahead, padding = decoder_masks(case, token_ids(rng, case.batch, case.target, 9),
                                        token_ids(rng, case.batch, case.source, 9))
    kwargs = dict(training=False, look_ahead_mask=to_tensor(look_ahead), padding_mask=to_tensor(padding),
                  hint=DECODER_MASK_HINT)

    def run():
        layer = make_layer(DecoderLayer, case.d, case.heads, case.fc, dropout_rate=0.5, layernorm_eps=case.eps)
        call_layer(layer, to_tensor(x), to_tensor(enc_output), **kwargs)
        weights = seed_layer(layer, "decoder_layer", case.block_config(), seed=seed_of(index))
        return weights, [call_layer(layer, to_tensor(x), to_tensor(enc_output), **kwargs) for _ in range(2)]

    weights, (result, again) = quietly_run(run)
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        raise CheckFailed("DecoderLayer should return a tuple (output, self_attention_weights, "
                          f"cross_attention_weights), got {type(result).__name__}")
    output, w1, w2 = result
    name = f"DecoderLayer output ({case.label()})"
    expect_same_at_inference(output, again[0], name)
    inputs = (weights, x, enc_output, look_ahead, padding)
    expected, e1, e2 = ref.decoder_layer(*inputs, eps=case.eps)
    wrong = results(mistakes.DECODER_LAYER, *inputs, eps=case.eps, where="DecoderLayer",
                    skip=absent_mask_mistakes(look_ahead, padding))
    expect_close(output, expected, name, mistakes=wrong, **TOL)
    _expect_weights(w1, e1, f"DecoderLayer self-attention weights ({case.label()})", e2)
    _expect_weights(w2, e2, f"DecoderLayer cross-attention weights ({case.label()})", e1)


def _grade_decoder_layer_training(DecoderLayer) -> None:  # noqa: N803
    case = DECODER_LAYER_TRAINING
    rng = draw(650)
    x = rng.standard_normal((case.batch, case.target, case.d))
    enc_output = rng.standard_normal((case.batch, case.source, case.d))
    look_ahead, padding = decoder_masks(case, token_ids(rng, case.batch, case.target, 9),
                                        token_ids(rng, case.batch, case.source, 9))

    def call(layer, training: bool):
        return call_layer(layer, to_tensor(x), to_tensor(enc_output), training=training,
                          look_ahead_mask=to_tensor(look_ahead), padding_mask=to_tensor(padding),
                          hint=DECODER_MASK_HINT)[0]

    _grade_block_training(DecoderLayer, "DecoderLayer", case, 650, call)
