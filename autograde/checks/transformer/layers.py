"""Hidden checks of assignment 04: the learner's Keras layers against the NumPy reference.

Each check builds the learner's layer for several seeded configurations, sets its weights from a
seeded generator (by attribute name), reads them back into the reference, and compares outputs and
attention weights in inference mode, with and without masks. Composites are built with reference
parts (Encoder with the reference EncoderLayer, Decoder with the reference DecoderLayer, Transformer
with the reference Encoder and Decoder), so a mistake in a part costs that part's points only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograde.reference.transformer import layers as ref
from course_lib.checking import CheckFailed, expect_close, expect_shape, parts_replaced, passed, quiet, to_array
from course_lib.layers import positional_encoding
from course_lib.transformer.layers import (
    DECODER_LAYER_MISTAKES,
    DECODER_MASK_HINT,
    DECODER_MISTAKES,
    ENCODER_LAYER_MISTAKES,
    ENCODER_MISTAKES,
    POSITION_HINT,
    TRANSFORMER_MISTAKES,
    call_layer,
    expect_deterministic,
    make_layer,
    seed_weights,
)

TOL = dict(atol=1e-4, rtol=1e-4)


@dataclass(frozen=True)
class Case:
    d: int
    heads: int
    fc: int
    batch: int
    target: int  # T: query positions (the encoder's sequence for encoder cases)
    source: int = 0  # S: encoder positions for decoder cases
    masks: str = "none"  # none | padding | look_ahead | both
    num_layers: int = 1
    eps: float = 1e-6

    def label(self) -> str:
        shape = f"T {self.target}, S {self.source}" if self.source else f"seq {self.target}"
        return (f"d {self.d}, {self.heads} heads, batch {self.batch}, {shape}, "
                f"{self.num_layers} layer{'s' * (self.num_layers > 1)}, masks: {self.masks}")


def _tf(array, dtype="float32"):
    import tensorflow as tf

    return None if array is None else tf.constant(np.asarray(array).astype(dtype))


def _token_ids(rng, batch: int, length: int, vocab: int) -> np.ndarray:
    """Random ids 1..vocab-1, each sentence padded with 0 after a random length (at least 1)."""
    ids = rng.integers(1, vocab, size=(batch, length))
    for row in range(batch):
        ids[row, rng.integers(1, length + 1):] = 0
    return ids.astype(np.int32)


def _padding(ids: np.ndarray) -> np.ndarray:
    return (ids != 0).astype(np.float32)[:, None, :]


def _look_ahead(length: int) -> np.ndarray:
    return np.tril(np.ones((length, length), np.float32))[None]


def _mistakes(compute, messages: dict, where: str, skip=()) -> list[tuple[object, str]]:
    """(wrong result, message) for each mistake the reference can compute for these inputs."""
    found = []
    for name, message in messages.items():
        if name in skip:
            continue
        try:
            found.append((compute(name), f"{message} ({where})"))
        except ValueError:  # shapes that do not fit for this case (e.g. masks swapped with T != S)
            continue
    return found


def _quietly(fn):
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


def _encoder_mask(case: Case, ids: np.ndarray):
    return {"none": None, "padding": _padding(ids), "look_ahead": _look_ahead(case.target),
            "both": _padding(ids) * _look_ahead(case.target)}[case.masks]


def grade_encoder_layer(EncoderLayer) -> None:  # noqa: N803
    for index, case in enumerate(ENCODER_LAYER_CASES):
        _grade_encoder_layer_case(EncoderLayer, index, case)
    passed(f"EncoderLayer matches the reference in {len(ENCODER_LAYER_CASES)} configurations, with and "
           "without masks")


def _grade_encoder_layer_case(EncoderLayer, index: int, case: Case) -> None:  # noqa: N803
    rng = np.random.default_rng(400 + index)
    config = {"embedding_dim": case.d, "num_heads": case.heads, "fully_connected_dim": case.fc}
    x = rng.standard_normal((case.batch, case.target, case.d))
    mask = _encoder_mask(case, _token_ids(rng, case.batch, case.target, 9))

    def run():
        layer = make_layer(EncoderLayer, case.d, case.heads, case.fc, dropout_rate=0.5, layernorm_eps=case.eps)
        call_layer(layer, _tf(x), training=False, mask=_tf(mask))
        weights = seed_weights(layer, "encoder_layer", config, seed=index)
        return weights, call_layer(layer, _tf(x), training=False, mask=_tf(mask)), \
            call_layer(layer, _tf(x), training=False, mask=_tf(mask))

    weights, output, again = _quietly(run)
    name = f"EncoderLayer output ({case.label()})"
    expect_deterministic(output, again, name)
    expected = ref.encoder_layer(weights, x, mask, eps=case.eps)
    mistakes = _mistakes(lambda m: ref.encoder_layer(weights, x, mask, eps=case.eps, mistake=m),
                         ENCODER_LAYER_MISTAKES, "EncoderLayer", skip=() if mask is not None else ("no_mask",))
    expect_close(output, expected, name, mistakes=mistakes, **TOL)


# ----------------------------------------------------------------------------------------------
# Encoder (graded with the reference EncoderLayer)

ENCODER_CASES = [
    Case(8, 2, 16, 2, 5, masks="padding", num_layers=2),
    Case(12, 3, 8, 3, 7, masks="none", num_layers=1),
    Case(16, 4, 16, 1, 1, masks="padding", num_layers=2),
    Case(8, 1, 8, 2, 6, masks="both", num_layers=2),
]


def _encoder_setup(case: Case, index: int):
    rng = np.random.default_rng(500 + index)
    vocab, max_positions = 11 + index, case.target + 3
    ids = _token_ids(rng, case.batch, case.target, vocab)
    config = {"num_layers": case.num_layers, "embedding_dim": case.d, "num_heads": case.heads,
              "fully_connected_dim": case.fc, "input_vocab_size": vocab}
    return ids, _encoder_mask(case, ids), config, (case.num_layers, case.d, case.heads, case.fc, vocab,
                                                   max_positions)


def _run_encoder(Encoder, case, index, ids, mask, config, args):  # noqa: N803
    encoder = make_layer(Encoder, *args, dropout_rate=0.5, layernorm_eps=case.eps)
    call_layer(encoder, _tf(ids, "int32"), training=False, mask=_tf(mask), hint=POSITION_HINT)
    weights = seed_weights(encoder, "encoder", config, seed=index)
    outputs = [call_layer(encoder, _tf(ids, "int32"), training=False, mask=_tf(mask), hint=POSITION_HINT)
               for _ in range(2)]
    return weights, *outputs


def grade_encoder(Encoder) -> None:  # noqa: N803
    for index, case in enumerate(ENCODER_CASES):
        _grade_encoder_case(Encoder, index, case)
    _note_own_part(lambda: _run_encoder(Encoder, ENCODER_CASES[0], 0, *_encoder_setup(ENCODER_CASES[0], 0)),
                   lambda weights: ref.encoder(weights, _encoder_setup(ENCODER_CASES[0], 0)[0],
                                               positional_encoding(ENCODER_CASES[0].target + 3, ENCODER_CASES[0].d),
                                               ENCODER_CASES[0].num_layers,
                                               _encoder_setup(ENCODER_CASES[0], 0)[1]),
                   "Encoder", "EncoderLayer")
    passed(f"Encoder matches the reference in {len(ENCODER_CASES)} configurations (graded with the reference "
           "EncoderLayer)")


def _grade_encoder_case(Encoder, index: int, case: Case) -> None:  # noqa: N803
    reference_layer = ref.keras_layers()["EncoderLayer"]
    ids, mask, config, args = _encoder_setup(case, index)
    with parts_replaced(Encoder.__init__, EncoderLayer=reference_layer):
        weights, output, again = _quietly(lambda: _run_encoder(Encoder, case, index, ids, mask, config, args))
    name = f"Encoder output ({case.label()}; built with the reference EncoderLayer, so Encoder.call is at fault)"
    expect_deterministic(output, again, name)
    pe = positional_encoding(args[-1], case.d)
    expected = ref.encoder(weights, ids, pe, case.num_layers, mask, eps=case.eps)
    skip = ("only_first_layer",) if case.num_layers == 1 else ()
    skip += ("no_mask",) if mask is None else ()
    mistakes = _mistakes(lambda m: ref.encoder(weights, ids, pe, case.num_layers, mask, eps=case.eps, mistake=m),
                         ENCODER_MISTAKES, "Encoder", skip=skip)
    expect_close(output, expected, name, mistakes=mistakes, **TOL)


def _note_own_part(run, reference, composite: str, part: str) -> None:
    """The composite is right; say (stdout) if it gives other results with the learner's own part."""
    try:
        weights, output, _ = _quietly(run)
        if np.allclose(to_array(output, "output"), reference(weights), **TOL):
            return
    except NotImplementedError:  # the part is unfinished: its own test says so
        return
    except CheckFailed:
        pass
    print(f"Note: {composite} is right, but with your own {part} its results differ from the reference: "
          f"{part} is at fault (its own test says why).")


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


def _decoder_masks(case: Case, target_ids: np.ndarray, source_ids: np.ndarray):
    """(look_ahead_mask, padding_mask) for a decoder case."""
    look_ahead = _look_ahead(case.target)
    padding = _padding(source_ids)
    return {
        "none": (None, None),
        "look_ahead": (look_ahead, None),
        "padding": (None, padding),
        "both": (look_ahead, padding),
        "target_padding": (look_ahead * _padding(target_ids), padding),  # look-ahead and target padding combined
    }[case.masks]


def _expect_weights(actual, expected, name: str, other=None, other_message: str = "") -> None:
    mistakes = [(other, other_message)] if other is not None and np.shape(other) == np.shape(expected) else []
    expect_close(actual, expected, name, mistakes=mistakes, **TOL)


def grade_decoder_layer(DecoderLayer) -> None:  # noqa: N803
    for index, case in enumerate(DECODER_LAYER_CASES):
        _grade_decoder_layer_case(DecoderLayer, index, case)
    passed(f"DecoderLayer matches the reference in {len(DECODER_LAYER_CASES)} configurations: output and both "
           "attention weights")


def _grade_decoder_layer_case(DecoderLayer, index: int, case: Case) -> None:  # noqa: N803
    rng = np.random.default_rng(600 + index)
    config = {"embedding_dim": case.d, "num_heads": case.heads, "fully_connected_dim": case.fc}
    x = rng.standard_normal((case.batch, case.target, case.d))
    enc_output = rng.standard_normal((case.batch, case.source, case.d))
    look_ahead, padding = _decoder_masks(case, _token_ids(rng, case.batch, case.target, 9),
                                         _token_ids(rng, case.batch, case.source, 9))
    kwargs = dict(training=False, look_ahead_mask=_tf(look_ahead), padding_mask=_tf(padding),
                  hint=DECODER_MASK_HINT)

    def run():
        layer = make_layer(DecoderLayer, case.d, case.heads, case.fc, dropout_rate=0.5, layernorm_eps=case.eps)
        call_layer(layer, _tf(x), _tf(enc_output), **kwargs)
        weights = seed_weights(layer, "decoder_layer", config, seed=index)
        return weights, [call_layer(layer, _tf(x), _tf(enc_output), **kwargs) for _ in range(2)]

    weights, (result, again) = _quietly(run)
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        raise CheckFailed("DecoderLayer should return a tuple (output, self_attention_weights, "
                          f"cross_attention_weights), got {type(result).__name__}")
    output, w1, w2 = result
    name = f"DecoderLayer output ({case.label()})"
    expect_deterministic(output, again[0], name)
    expected, e1, e2 = ref.decoder_layer(weights, x, enc_output, look_ahead, padding, eps=case.eps)
    skip = [m for m, absent in [("no_look_ahead_mask", look_ahead is None), ("no_padding_mask", padding is None),
                                ("masks_swapped", look_ahead is None and padding is None)] if absent]
    mistakes = _mistakes(
        lambda m: ref.decoder_layer(weights, x, enc_output, look_ahead, padding, eps=case.eps, mistake=m)[0],
        DECODER_LAYER_MISTAKES, "DecoderLayer", skip=skip)
    expect_close(output, expected, name, mistakes=mistakes, **TOL)
    swapped = "the attention weights are returned in the wrong order: (output, self-attention weights of " \
              "mha1, cross-attention weights of mha2)"
    _expect_weights(w1, e1, f"DecoderLayer self-attention weights ({case.label()})", e2, swapped)
    _expect_weights(w2, e2, f"DecoderLayer cross-attention weights ({case.label()})", e1, swapped)


# ----------------------------------------------------------------------------------------------
# Decoder (graded with the reference DecoderLayer)

DECODER_CASES = [
    Case(8, 2, 16, 2, 4, 4, masks="both", num_layers=2),
    Case(12, 3, 8, 3, 5, 7, masks="target_padding", num_layers=1),
    Case(16, 4, 16, 1, 1, 2, masks="none", num_layers=2),
    Case(8, 1, 8, 2, 6, 3, masks="padding", num_layers=2),
]


def _decoder_setup(case: Case, index: int):
    rng = np.random.default_rng(700 + index)
    vocab, max_positions = 13 + index, case.target + 2
    ids = _token_ids(rng, case.batch, case.target, vocab)
    enc_output = rng.standard_normal((case.batch, case.source, case.d))
    look_ahead, padding = _decoder_masks(case, ids, _token_ids(rng, case.batch, case.source, 9))
    config = {"num_layers": case.num_layers, "embedding_dim": case.d, "num_heads": case.heads,
              "fully_connected_dim": case.fc, "target_vocab_size": vocab}
    args = (case.num_layers, case.d, case.heads, case.fc, vocab, max_positions)
    return ids, enc_output, look_ahead, padding, config, args


def _run_decoder(Decoder, case, index, ids, enc_output, look_ahead, padding, config, args):  # noqa: N803
    decoder = make_layer(Decoder, *args, dropout_rate=0.5, layernorm_eps=case.eps)
    kwargs = dict(training=False, look_ahead_mask=_tf(look_ahead), padding_mask=_tf(padding), hint=POSITION_HINT)
    call_layer(decoder, _tf(ids, "int32"), _tf(enc_output), **kwargs)
    weights = seed_weights(decoder, "decoder", config, seed=index)
    return weights, *[call_layer(decoder, _tf(ids, "int32"), _tf(enc_output), **kwargs) for _ in range(2)]


def _pair(result, name: str, what: str):
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise CheckFailed(f"{name} should return a pair {what}, got {type(result).__name__}")
    return result


def _expect_attention_dict(actual, expected: dict, name: str) -> None:
    if not isinstance(actual, dict):
        raise CheckFailed(f"{name}: the attention weights should be a dict, got {type(actual).__name__}")
    if sorted(actual) != sorted(expected):
        raise CheckFailed(f"{name}: the attention dict has keys {sorted(actual)}, expected {list(expected)} "
                          "(decoder layers numbered from 1)")
    for key, value in expected.items():
        expect_close(actual[key], value, f"{name}: weights[{key!r}]", **TOL)


def grade_decoder(Decoder) -> None:  # noqa: N803
    for index, case in enumerate(DECODER_CASES):
        _grade_decoder_case(Decoder, index, case)
    case = DECODER_CASES[0]
    setup = _decoder_setup(case, 0)
    pe0 = positional_encoding(setup[-1][-1], case.d)
    _note_own_part(lambda: (lambda r: (r[0], r[1][0], None))(_run_decoder(Decoder, case, 0, *setup)),
                   lambda weights: ref.decoder(weights, setup[0], setup[1], pe0, case.num_layers, setup[2],
                                               setup[3])[0],
                   "Decoder", "DecoderLayer")
    passed(f"Decoder matches the reference in {len(DECODER_CASES)} configurations (graded with the reference "
           "DecoderLayer)")


def _grade_decoder_case(Decoder, index: int, case: Case) -> None:  # noqa: N803
    reference_layer = ref.keras_layers()["DecoderLayer"]
    ids, enc_output, look_ahead, padding, config, args = _decoder_setup(case, index)
    with parts_replaced(Decoder.__init__, DecoderLayer=reference_layer):
        weights, result, again = _quietly(
            lambda: _run_decoder(Decoder, case, index, ids, enc_output, look_ahead, padding, config, args))
    what = "(x, attention_weights)"
    output, attention = _pair(result, "Decoder", what)
    name = f"Decoder output ({case.label()}; built with the reference DecoderLayer, so Decoder.call is at fault)"
    expect_deterministic(output, _pair(again, "Decoder", what)[0], name)
    pe = positional_encoding(args[-1], case.d)
    expected, expected_attention = ref.decoder(weights, ids, enc_output, pe, case.num_layers, look_ahead, padding,
                                               eps=case.eps)
    skip = [m for m, absent in [("no_look_ahead_mask", look_ahead is None), ("no_padding_mask", padding is None),
                                ("masks_swapped", look_ahead is None and padding is None)] if absent]
    mistakes = _mistakes(lambda m: ref.decoder(weights, ids, enc_output, pe, case.num_layers, look_ahead, padding,
                                               eps=case.eps, mistake=m)[0], DECODER_MISTAKES, "Decoder", skip=skip)
    expect_close(output, expected, name, mistakes=mistakes, **TOL)
    _expect_attention_dict(attention, expected_attention, f"Decoder ({case.label()})")


# ----------------------------------------------------------------------------------------------
# Transformer (graded with the reference Encoder and Decoder)

TRANSFORMER_CASES = [
    Case(8, 2, 16, 2, 4, 4, masks="both", num_layers=2),
    Case(12, 3, 8, 3, 3, 6, masks="target_padding", num_layers=1),
    Case(16, 4, 16, 1, 1, 2, masks="none", num_layers=1),
]


def grade_transformer(Transformer) -> None:  # noqa: N803
    for index, case in enumerate(TRANSFORMER_CASES):
        _grade_transformer_case(Transformer, index, case)
    passed(f"Transformer matches the reference in {len(TRANSFORMER_CASES)} configurations (graded with the "
           "reference Encoder and Decoder)")


def _grade_transformer_case(Transformer, index: int, case: Case) -> None:  # noqa: N803
    layers = ref.keras_layers()
    rng = np.random.default_rng(800 + index)
    input_vocab, target_vocab = 11 + index, 6 + index
    max_in, max_out = case.source + 2, case.target + 3
    inputs = _token_ids(rng, case.batch, case.source, input_vocab)
    targets = _token_ids(rng, case.batch, case.target, target_vocab)
    look_ahead, padding = _decoder_masks(case, targets, inputs)
    config = {"num_layers": case.num_layers, "embedding_dim": case.d, "num_heads": case.heads,
              "fully_connected_dim": case.fc, "input_vocab_size": input_vocab, "target_vocab_size": target_vocab}
    kwargs = dict(training=False, enc_padding_mask=_tf(padding), look_ahead_mask=_tf(look_ahead),
                  dec_padding_mask=_tf(padding))

    def run():
        model = make_layer(Transformer, case.num_layers, case.d, case.heads, case.fc, input_vocab, target_vocab,
                           max_in, max_out, dropout_rate=0.5, layernorm_eps=case.eps)
        call_layer(model, _tf(inputs, "int32"), _tf(targets, "int32"), **kwargs)
        weights = seed_weights(model, "transformer", config, seed=index)
        return weights, [call_layer(model, _tf(inputs, "int32"), _tf(targets, "int32"), **kwargs)
                         for _ in range(2)]

    with parts_replaced(Transformer.__init__, Encoder=layers["Encoder"], Decoder=layers["Decoder"]):
        weights, (result, again) = _quietly(run)
    what = "(logits, attention_weights)"
    logits, attention = _pair(result, "Transformer", what)
    name = (f"Transformer logits ({case.label()}; built with the reference Encoder and Decoder, so "
            "Transformer.call is at fault)")
    logits_array = to_array(logits, name)
    if logits_array.shape == (case.batch, case.target, case.d) and case.d != target_vocab:
        raise CheckFailed(f"{name} have the decoder's shape {logits_array.shape}: apply self.final_layer to get "
                          f"one logit per target-vocabulary word, ({case.batch}, {case.target}, {target_vocab})")
    expect_shape(logits_array, (case.batch, case.target, target_vocab), name)
    expect_deterministic(logits, _pair(again, "Transformer", what)[0], name)
    pes = positional_encoding(max_in, case.d), positional_encoding(max_out, case.d)
    expected, expected_attention = ref.transformer(weights, inputs, targets, *pes, case.num_layers, padding,
                                                   look_ahead, padding, eps=case.eps)
    skip = ["no_encoder_mask"] if padding is None else []
    skip += ["decoder_masks_swapped"] if look_ahead is None and padding is None else []
    mistakes = _mistakes(lambda m: ref.transformer(weights, inputs, targets, *pes, case.num_layers, padding,
                                                   look_ahead, padding, eps=case.eps, mistake=m)[0],
                         TRANSFORMER_MISTAKES, "Transformer", skip=skip)
    expect_close(logits_array, expected, name, mistakes=mistakes, **TOL)
    _expect_attention_dict(attention, expected_attention, f"Transformer ({case.label()})")
