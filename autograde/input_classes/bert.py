"""The inputs assignment 05's graded functions must handle (autograde/input_classes/__init__.py), in notebook order."""

from __future__ import annotations

import numpy as np

from autograde.input_classes import KERAS_LAYER, InputClass
from autograde.reference.bert import inputs as ref

# BertEmbedding and BertEncoder are left out: their hidden checks build and call the Keras layer classes, and the
# recorder of autograde.input_classes follows a class's construction and forward calls only for torch modules.
# load_bert_weights is left out too: it is given models, not data, and its check loads the checkpoint twice (seconds).

# ----------------------------------------------------------------------------------------------
# build_bert_inputs(tokens_a, tokens_b, max_len, *, cls_id, sep_id, pad_id)


def _lengths(a) -> tuple[int, int]:
    """(tokens of A, tokens of B; 0 for one sentence)."""
    return len(a["tokens_a"]), 0 if a["tokens_b"] is None else len(a["tokens_b"])


def _room(a) -> int:
    return a["max_len"] - ref.special_token_count(a["tokens_b"] is not None)


def _kept(a) -> tuple[int, int]:
    """How many tokens of A and of B the right answer keeps."""
    token_ids = ref.build_bert_inputs(a["tokens_a"], a["tokens_b"], a["max_len"], cls_id=a["cls_id"],
                                      sep_id=a["sep_id"], pad_id=a["pad_id"])[0]
    seps = list(np.flatnonzero(np.asarray(token_ids) == a["sep_id"]))
    return seps[0] - 1, (seps[1] - seps[0] - 1 if len(seps) > 1 else 0)


def _pair(a) -> bool:
    return a["tokens_b"] is not None and _room(a) >= 0


def _cut(which: int, other_cut: bool):
    """A pair of which sentence `which` (0: A, 1: B) is cut, and the other one too or not."""
    def drawn(a) -> bool:
        if not _pair(a):
            return False
        lost = [n - k for n, k in zip(_lengths(a), _kept(a), strict=True)]
        return lost[which] > 0 and (lost[1 - which] > 0) == other_cut
    return drawn


def _types(kind):
    return lambda a: isinstance(a["tokens_a"], kind) and (a["tokens_b"] is None or isinstance(a["tokens_b"], kind))


INPUTS = (
    InputClass("pair_padded", "a pair with room to spare: padding", lambda a: _pair(a) and sum(_lengths(a)) < _room(a)),
    InputClass("pair_exact_fit", "a pair that fills max_len exactly",
               lambda a: _pair(a) and sum(_lengths(a)) == _room(a)),
    InputClass("only_a_cut", "a pair of which only A is cut", _cut(0, other_cut=False)),
    InputClass("only_b_cut", "a pair of which only B is cut", _cut(1, other_cut=False)),
    InputClass("both_cut", "a pair of which both sentences are cut", _cut(0, other_cut=True)),
    InputClass("tie_cut", "both cut from equally long sentences",
               lambda a: _cut(0, True)(a) and len(set(_lengths(a))) == 1),
    InputClass("odd_room_a_shorter", "both cut, an odd number of places, A not the longer (where the tokenizers "
               "library differs)",
               lambda a: _cut(0, True)(a) and _room(a) % 2 == 1 and _lengths(a)[0] <= _lengths(a)[1]),
    InputClass("pair_no_room", "a pair with no room for any word: [CLS] [SEP] [SEP]",
               lambda a: _pair(a) and _room(a) == 0),
    InputClass("single_padded", "one sentence with padding",
               lambda a: a["tokens_b"] is None and 0 <= len(a["tokens_a"]) < _room(a)),
    InputClass("single_cut", "one sentence cut", lambda a: a["tokens_b"] is None and len(a["tokens_a"]) > _room(a) > 0),
    InputClass("single_no_room", "one sentence with no room for any word: [CLS] [SEP]",
               lambda a: a["tokens_b"] is None and _room(a) == 0),
    InputClass("empty_b", "an empty B: a pair, [CLS] A [SEP] [SEP]", lambda a: _pair(a) and _lengths(a)[1] == 0),
    InputClass("empty_a", "an empty A", lambda a: _room(a) >= 0 and _lengths(a)[0] == 0),
    InputClass("pair_too_small", "max_len below 3 for a pair (ValueError)", lambda a: a["tokens_b"] is not None
               and _room(a) < 0),
    InputClass("single_too_small", "max_len below 2 for one sentence (ValueError)",
               lambda a: a["tokens_b"] is None and _room(a) < 0),
    InputClass("lists", "the sentences as lists", _types(list)),
    InputClass("int64_arrays", "the sentences as int64 arrays",
               lambda a: _types(np.ndarray)(a) and a["tokens_a"].dtype == np.int64),
    InputClass("int32_arrays", "the sentences as int32 arrays",
               lambda a: _types(np.ndarray)(a) and a["tokens_a"].dtype == np.int32),
    InputClass("bert_ids", "BERT's special ids 101, 102, 0",
               lambda a: (a["cls_id"], a["sep_id"], a["pad_id"]) == (101, 102, 0)),
    InputClass("other_ids", "other special ids, a pad_id that is not 0",
               lambda a: a["pad_id"] != 0 and a["cls_id"] != 101 and a["sep_id"] != 102),
)

# ----------------------------------------------------------------------------------------------
# mask_tokens(token_ids, rng, *, mask_id, vocab_size, special_ids, select_rate, mask_rate, random_rate)

DEFAULT_RATES = (0.15, 0.8, 0.1)


def _rates(a) -> tuple:
    return a["select_rate"], a["mask_rate"], a["random_rate"]


def _ids(a) -> np.ndarray:
    return np.asarray(a["token_ids"])


MASKING = (
    InputClass("batch", "a batch (batch, seq)", lambda a: _ids(a).ndim == 2),
    InputClass("one_sequence", "one sequence (seq,)", lambda a: _ids(a).ndim == 1),
    InputClass("int64_ids", "int64 ids", lambda a: _ids(a).dtype == np.int64),
    InputClass("int32_ids", "int32 ids", lambda a: _ids(a).dtype == np.int32),
    InputClass("default_rates", "the default rates 0.15, 0.8, 0.1", lambda a: _rates(a) == DEFAULT_RATES),
    InputClass("other_rates", "other rates", lambda a: _rates(a) != DEFAULT_RATES),
    InputClass("small_vocabulary", "a vocabulary of a few dozen ids (few ids to draw at random)",
               lambda a: a["vocab_size"] <= 100),
    InputClass("padding", "padding among the ids", lambda a: bool(np.any(_ids(a) == 0)) and 0 in a["special_ids"]),
    InputClass("other_special_ids", "special ids besides [CLS], [SEP] and [PAD] in the text ([UNK])",
               lambda a: len(set(np.unique(_ids(a))) & {int(i) for i in a["special_ids"]}) > 3),
)

CLASSES = {"build_bert_inputs": INPUTS, "mask_tokens": MASKING}

UNLISTED = {  # exercises whose classes this proof cannot show drawn, and why
    "BertEmbedding": KERAS_LAYER,
    "BertEncoder": KERAS_LAYER,
    "load_bert_weights": ("its check loads the shipped checkpoint twice (about 4 s): it draws the checkpoint and "
                          "small backbones of 2 layers and 3 segments, left out of the proof for the suite's time"),
}
