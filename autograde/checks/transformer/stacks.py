"""Hidden checks of assignment 04's Encoder, Decoder and Transformer against the NumPy reference.

Composites are built with reference parts (Encoder with the reference EncoderLayer, Decoder with the
reference DecoderLayer, Transformer with the reference Encoder and Decoder), made where the learner's code
runs (autograde.remote.with_parts), so a mistake in a part costs that part's points only. In training mode,
the Encoder's and Decoder's own dropout must act, and every composite must run its parts in training mode
(autograde/checks/transformer/training.py).
"""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks import seed_of
from autograde.checks.layers import make_layer
from autograde.checks.transformer import probes
from autograde.checks.transformer.layers import (
    TOL,
    Case,
    absent_mask_mistakes,
    decoder_masks,
    encoder_mask,
    expect_same_at_inference,
    quietly_run,
    token_ids,
)
from autograde.checks.transformer.training import (
    STACK_ADVICE,
    block_sites,
    expect_dropout_acts,
    expect_each_site_acts,
    expect_probe_flags,
)
from autograde.checks.weights import seed_layer, set_seeded, variables_of
from autograde.mistakes import results
from autograde.mistakes.transformer import stacks as mistakes
from autograde.reference.transformer import keras_layers as reference_layers
from autograde.reference.transformer import stacks as ref
from autograde.remote import with_parts
from course_lib.checking import (
    CheckFailed,
    call_layer,
    expect_close,
    expect_shape,
    passed,
    quiet,
    to_array,
    to_tensor,
)
from course_lib.keras_weights import layer_variables
from course_lib.layers import positional_encoding
from course_lib.transformer.stacks import POSITION_HINT

# A stack's layers by the notebook name it uses: the reference layer, and a probe that reports `training`.
BLOCKS = {"EncoderLayer": reference_layers.EncoderLayer, "DecoderLayer": reference_layers.DecoderLayer}
BLOCK_PROBES = {"EncoderLayer": probes.EncoderLayerProbe, "DecoderLayer": probes.DecoderLayerProbe}
STACK_DROPOUT = ("the {stack}'s own dropout never acts in training: apply self.dropout to the scaled embeddings plus "
                 "the positional encoding, before the layers, with training=training")
STACK_AT_INFERENCE = "Pass training=training to the dropout and to every layer (never training=True)"
TRANSFORMER_AT_INFERENCE = "Pass training=training to the encoder and the decoder (never training=True)"


def _note_own_part(run, reference, composite: str, part: str) -> None:
    """The composite is right; say (stdout) if it gives other results with the learner's own part."""
    try:
        weights, output = quietly_run(run)
        if np.allclose(to_array(output, "output"), reference(weights), **TOL):
            return
    except NotImplementedError:  # the part is unfinished: its own test says so
        return
    except CheckFailed:
        pass
    print(f"Note: {composite} is right, but with your own {part} its results differ from the reference: "
          f"{part} is at fault (its own test says why).")


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


# ----------------------------------------------------------------------------------------------
# Encoder (graded with the reference EncoderLayer)

ENCODER_CASES = [
    Case(8, 2, 16, 2, 5, masks="padding", num_layers=2),
    Case(12, 3, 8, 3, 7, masks="none", num_layers=1),
    Case(16, 4, 16, 1, 1, masks="padding", num_layers=2),
    Case(8, 1, 8, 2, 6, masks="both", num_layers=2),
]


def _encoder_setup(case: Case, index: int):
    """(ids, mask, weight config, constructor arguments) of an encoder case."""
    rng = draw(500 + index)
    vocab, max_positions = 11 + index, case.target + 3
    ids = token_ids(rng, case.batch, case.target, vocab)
    config = {"num_layers": case.num_layers, **case.block_config(), "input_vocab_size": vocab}
    return ids, encoder_mask(case, ids), config, (case.num_layers, case.d, case.heads, case.fc, vocab,
                                                  max_positions)


def _run_encoder(Encoder, case, index):  # noqa: N803
    """(weights, first output, second output) of the learner's Encoder on a case."""
    ids, mask, config, args = _encoder_setup(case, index)
    encoder = make_layer(Encoder, *args, dropout_rate=0.5, layernorm_eps=case.eps)
    call_layer(encoder, to_tensor(ids, "int32"), training=False, mask=to_tensor(mask), hint=POSITION_HINT)
    weights = seed_layer(encoder, "encoder", config, seed=seed_of(index))
    outputs = [call_layer(encoder, to_tensor(ids, "int32"), training=False, mask=to_tensor(mask), hint=POSITION_HINT)
               for _ in range(2)]
    return weights, *outputs


def grade_encoder(Encoder) -> None:  # noqa: N803
    for index, case in enumerate(ENCODER_CASES):
        _grade_encoder_case(Encoder, index, case)
    case = ENCODER_CASES[0]
    ids, mask, _, args = _encoder_setup(case, 0)
    _note_own_part(lambda: _run_encoder(Encoder, case, 0)[:2],
                   lambda weights: ref.encoder(weights, ids, positional_encoding(args[-1], case.d), case.num_layers,
                                               mask),
                   "Encoder", "EncoderLayer")
    _grade_encoder_training(Encoder)
    passed(f"Encoder matches the reference in {len(ENCODER_CASES)} configurations (graded with the reference "
           "EncoderLayer); its dropout acts in training mode only, and its layers run in training mode")


def _grade_encoder_case(Encoder, index: int, case: Case) -> None:  # noqa: N803
    ids, mask, _, args = _encoder_setup(case, index)
    with with_parts(Encoder, EncoderLayer=reference_layers.EncoderLayer):
        weights, output, again = quietly_run(lambda: _run_encoder(Encoder, case, index))
    name = f"Encoder output ({case.label()}; built with the reference EncoderLayer, so Encoder.call is at fault)"
    expect_same_at_inference(output, again, name, STACK_AT_INFERENCE)
    inputs = (weights, ids, positional_encoding(args[-1], case.d), case.num_layers, mask)
    skip = ("only_first_layer",) if case.num_layers == 1 else ()
    skip += ("no_mask",) if mask is None else ()
    wrong = results(mistakes.ENCODER, *inputs, eps=case.eps, where="Encoder", skip=skip)
    expect_close(output, ref.encoder(*inputs, eps=case.eps), name, mistakes=wrong, **TOL)


ENCODER_TRAINING = Case(8, 2, 16, 2, 6, masks="padding", num_layers=2)


def _stack_sites(stack: str, num_layers: int, *, decoder: bool) -> dict[str, tuple[str, ...]]:
    """The stack's own dropout (no weight silences it) and every dropout site of its layers."""
    sites: dict[str, tuple[str, ...]] = {"dropout": ()}
    for i in range(num_layers):
        prefix = f"{stack}[{i}]."
        sites.update({prefix + site: keys for site, keys in block_sites(prefix, decoder=decoder).items()})
    return sites


def _grade_stack_training(Stack, kind: str, case: Case, index: int, config: dict, args: tuple, run) -> None:  # noqa: N803
    """With the reference layers, the stack's own dropout acts; with probes as its layers, they see training.

    `kind` is "Encoder" or "Decoder"; `run(training, stack)` calls a stack built from `args` on the case."""
    block, decoder = f"{kind}Layer", kind == "Decoder"
    with with_parts(Stack, **{block: BLOCKS[block]}), quiet():
        stack = make_layer(Stack, *args, dropout_rate=0.5, layernorm_eps=case.eps)
    with quiet():
        run(False, stack)
        variables = variables_of(stack, layer_variables, kind.lower(), config)
        weights = set_seeded(variables, seed=seed_of(index))
    name = f"{kind} output ({case.label()}; built with the reference {block})"
    sites = _stack_sites("dec_layers" if decoder else "enc_layers", case.num_layers, decoder=decoder)
    expect_dropout_acts(run(False, stack), run(True, stack), name, what=kind.lower(), advice=STACK_ADVICE)
    expect_each_site_acts(variables, weights, lambda training: run(training, stack), sites, name,
                          {"dropout": STACK_DROPOUT.format(stack=kind)})
    with with_parts(Stack, **{block: BLOCK_PROBES[block]}), quiet():
        probed = make_layer(Stack, *args, dropout_rate=0.5, layernorm_eps=case.eps)
    expect_probe_flags(run(True, probed), f"{kind} output ({case.label()}; built with probes as layers)",
                       f"{kind.lower()} layers", "Call each layer with training=training")


def _grade_encoder_training(Encoder) -> None:  # noqa: N803
    case, index = ENCODER_TRAINING, len(ENCODER_CASES)
    ids, mask, config, args = _encoder_setup(case, index)

    def run(training: bool, encoder):
        return call_layer(encoder, to_tensor(ids, "int32"), training=training, mask=to_tensor(mask),
                          hint=POSITION_HINT)

    _grade_stack_training(Encoder, "Encoder", case, index, config, args, run)


# ----------------------------------------------------------------------------------------------
# Decoder (graded with the reference DecoderLayer)

DECODER_CASES = [
    Case(8, 2, 16, 2, 4, 4, masks="both", num_layers=2),
    Case(12, 3, 8, 3, 5, 7, masks="target_padding", num_layers=1),
    Case(16, 4, 16, 1, 1, 2, masks="none", num_layers=2),
    Case(8, 1, 8, 2, 6, 3, masks="padding", num_layers=2),
]


def _decoder_setup(case: Case, index: int):
    """(ids, enc_output, look_ahead_mask, padding_mask, weight config, constructor arguments) of a decoder case."""
    rng = draw(700 + index)
    vocab, max_positions = 13 + index, case.target + 2
    ids = token_ids(rng, case.batch, case.target, vocab)
    enc_output = rng.standard_normal((case.batch, case.source, case.d))
    look_ahead, padding = decoder_masks(case, ids, token_ids(rng, case.batch, case.source, 9))
    config = {"num_layers": case.num_layers, **case.block_config(), "target_vocab_size": vocab}
    args = (case.num_layers, case.d, case.heads, case.fc, vocab, max_positions)
    return ids, enc_output, look_ahead, padding, config, args


def _run_decoder(Decoder, case, index):  # noqa: N803
    """(weights, first result, second result) of the learner's Decoder on a case."""
    ids, enc_output, look_ahead, padding, config, args = _decoder_setup(case, index)
    decoder = make_layer(Decoder, *args, dropout_rate=0.5, layernorm_eps=case.eps)
    kwargs = dict(training=False, look_ahead_mask=to_tensor(look_ahead), padding_mask=to_tensor(padding),
                  hint=POSITION_HINT)
    call_layer(decoder, to_tensor(ids, "int32"), to_tensor(enc_output), **kwargs)
    weights = seed_layer(decoder, "decoder", config, seed=seed_of(index))
    return weights, *[call_layer(decoder, to_tensor(ids, "int32"), to_tensor(enc_output), **kwargs)
                      for _ in range(2)]


def grade_decoder(Decoder) -> None:  # noqa: N803
    for index, case in enumerate(DECODER_CASES):
        _grade_decoder_case(Decoder, index, case)
    case = DECODER_CASES[0]
    ids, enc_output, look_ahead, padding, _, args = _decoder_setup(case, 0)
    _note_own_part(lambda: (lambda run: (run[0], run[1][0]))(_run_decoder(Decoder, case, 0)),
                   lambda weights: ref.decoder(weights, ids, enc_output, positional_encoding(args[-1], case.d),
                                               case.num_layers, look_ahead, padding)[0],
                   "Decoder", "DecoderLayer")
    _grade_decoder_training(Decoder)
    passed(f"Decoder matches the reference in {len(DECODER_CASES)} configurations (graded with the reference "
           "DecoderLayer); its dropout acts in training mode only, and its layers run in training mode")


def _grade_decoder_case(Decoder, index: int, case: Case) -> None:  # noqa: N803
    ids, enc_output, look_ahead, padding, _, args = _decoder_setup(case, index)
    with with_parts(Decoder, DecoderLayer=reference_layers.DecoderLayer):
        weights, result, again = quietly_run(lambda: _run_decoder(Decoder, case, index))
    what = "(x, attention_weights)"
    output, attention = _pair(result, "Decoder", what)
    name = f"Decoder output ({case.label()}; built with the reference DecoderLayer, so Decoder.call is at fault)"
    expect_same_at_inference(output, _pair(again, "Decoder", what)[0], name, STACK_AT_INFERENCE)
    inputs = (weights, ids, enc_output, positional_encoding(args[-1], case.d), case.num_layers, look_ahead, padding)
    expected, expected_attention = ref.decoder(*inputs, eps=case.eps)
    wrong = results(mistakes.DECODER, *inputs, eps=case.eps, where="Decoder",
                    skip=absent_mask_mistakes(look_ahead, padding))
    expect_close(output, expected, name, mistakes=wrong, **TOL)
    _expect_attention_dict(attention, expected_attention, f"Decoder ({case.label()})")


DECODER_TRAINING = Case(8, 2, 16, 2, 5, 4, masks="both", num_layers=2)


def _grade_decoder_training(Decoder) -> None:  # noqa: N803
    case, index = DECODER_TRAINING, len(DECODER_CASES)
    ids, enc_output, look_ahead, padding, config, args = _decoder_setup(case, index)

    def run(training: bool, decoder):
        return _pair(call_layer(decoder, to_tensor(ids, "int32"), to_tensor(enc_output), training=training,
                                look_ahead_mask=to_tensor(look_ahead), padding_mask=to_tensor(padding),
                                hint=POSITION_HINT), "Decoder", "(x, attention_weights)")[0]

    _grade_stack_training(Decoder, "Decoder", case, index, config, args, run)


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
    _grade_transformer_training(Transformer)
    passed(f"Transformer matches the reference in {len(TRANSFORMER_CASES)} configurations (graded with the "
           "reference Encoder and Decoder), and runs both in training mode")


def _grade_transformer_case(Transformer, index: int, case: Case) -> None:  # noqa: N803
    rng = draw(800 + index)
    input_vocab, target_vocab = 11 + index, 6 + index
    max_in, max_out = case.source + 2, case.target + 3
    inputs = token_ids(rng, case.batch, case.source, input_vocab)
    targets = token_ids(rng, case.batch, case.target, target_vocab)
    look_ahead, padding = decoder_masks(case, targets, inputs)
    config = {"num_layers": case.num_layers, **case.block_config(), "input_vocab_size": input_vocab,
              "target_vocab_size": target_vocab}
    kwargs = dict(training=False, enc_padding_mask=to_tensor(padding), look_ahead_mask=to_tensor(look_ahead),
                  dec_padding_mask=to_tensor(padding))

    def run():
        model = make_layer(Transformer, case.num_layers, case.d, case.heads, case.fc, input_vocab, target_vocab,
                           max_in, max_out, dropout_rate=0.5, layernorm_eps=case.eps)
        call_layer(model, to_tensor(inputs, "int32"), to_tensor(targets, "int32"), **kwargs)
        weights = seed_layer(model, "transformer", config, seed=seed_of(index))
        return weights, [call_layer(model, to_tensor(inputs, "int32"), to_tensor(targets, "int32"), **kwargs)
                         for _ in range(2)]

    with with_parts(Transformer, Encoder=reference_layers.Encoder, Decoder=reference_layers.Decoder):
        weights, (result, again) = quietly_run(run)
    what = "(logits, attention_weights)"
    logits, attention = _pair(result, "Transformer", what)
    name = (f"Transformer logits ({case.label()}; built with the reference Encoder and Decoder, so "
            "Transformer.call is at fault)")
    logits_array = to_array(logits, name)
    if logits_array.shape == (case.batch, case.target, case.d) and case.d != target_vocab:
        raise CheckFailed(f"{name} have the decoder's shape {logits_array.shape}: apply self.final_layer to get "
                          f"one logit per target-vocabulary word, ({case.batch}, {case.target}, {target_vocab})")
    expect_shape(logits_array, (case.batch, case.target, target_vocab), name)
    expect_same_at_inference(logits, _pair(again, "Transformer", what)[0], name, TRANSFORMER_AT_INFERENCE)
    arguments = (weights, inputs, targets, positional_encoding(max_in, case.d), positional_encoding(max_out, case.d),
                 case.num_layers, padding, look_ahead, padding)
    expected, expected_attention = ref.transformer(*arguments, eps=case.eps)
    skip = ["no_encoder_mask"] if padding is None else []
    skip += ["decoder_masks_swapped"] if look_ahead is None and padding is None else []
    wrong = results(mistakes.TRANSFORMER, *arguments, eps=case.eps, where="Transformer", skip=skip)
    expect_close(logits_array, expected, name, mistakes=wrong, **TOL)
    _expect_attention_dict(attention, expected_attention, f"Transformer ({case.label()})")


# The probes' decoder output is (its training flag) + 2 x (the encoder output's mean, the encoder's flag).
TRANSFORMER_FLAGS = {0.0: "neither the encoder nor the decoder runs in training mode: pass training=training to both",
                     1.0: "the encoder never runs in training mode: call self.encoder with training=training",
                     2.0: "the decoder never runs in training mode: call self.decoder with training=training"}


def _grade_transformer_training(Transformer) -> None:  # noqa: N803
    """Built with probes as Encoder and Decoder, the logits in training mode say which of them saw training."""
    case = TRANSFORMER_CASES[0]
    rng = draw(800 + len(TRANSFORMER_CASES))
    inputs, targets = token_ids(rng, case.batch, case.source, 11), token_ids(rng, case.batch, case.target, 7)
    config = {**case.block_config(), "target_vocab_size": 7}
    with with_parts(Transformer, Encoder=probes.EncoderProbe, Decoder=probes.DecoderProbe), quiet():
        model = make_layer(Transformer, case.num_layers, case.d, case.heads, case.fc, 11, 7, case.source + 2,
                           case.target + 3, dropout_rate=0.5, layernorm_eps=case.eps)

    def run(training: bool):
        return _pair(call_layer(model, to_tensor(inputs, "int32"), to_tensor(targets, "int32"), training=training),
                     "Transformer", "(logits, attention_weights)")[0]

    with quiet():
        run(False)
        weights = set_seeded(variables_of(model, layer_variables, "final_layer", config), seed=seed_of(810))
    name = f"Transformer logits ({case.label()}; built with probes as Encoder and Decoder)"
    logits = to_array(run(True), name)
    kernel, bias = weights["final_layer.kernel"], weights["final_layer.bias"]
    expected = {flag: np.broadcast_to(flag * kernel.sum(axis=0) + bias, (case.batch, case.target, len(bias)))
                for flag in (3.0, *TRANSFORMER_FLAGS)}
    for flag, value in expected.items():
        if logits.shape == value.shape and np.allclose(logits, value, **TOL):
            if flag in TRANSFORMER_FLAGS:
                raise CheckFailed(f"{name}: called with training=True, {TRANSFORMER_FLAGS[flag]}")
            return
    raise CheckFailed(f"{name}: called with training=True, the logits are not final_layer applied to the decoder's "
                      "output: pass training=training to the encoder and the decoder, and nothing else changes")
