"""Building blocks from earlier assignments, provided to the later ones.

Assignment 01 asks for `positional_encoding`, assignment 02 for the masks and
`scaled_dot_product_attention`, assignment 04 for `EncoderLayer`; later notebooks import these versions
so that a mistake made earlier never blocks the work that follows. The conventions are those of assignment 02:
a mask value 1 means "may attend", 0 means "blocked".

Each answer is marked with the assignment it answers (`@answer_to`). Here the mark changes nothing. The
students' kit (`make student-kit GIVE=01,02`, autograde/student_kit/) keeps the answers of the assignments
it hands out and replaces every other marked body with `raise not_handed_out(...)`: the module still imports,
so a later notebook runs up to the first use of a missing block, which says where to get it.
"""

from __future__ import annotations

import numpy as np

from course_lib.checking import NotImplementedYet, plain_message


class NotHandedOut(NotImplementedYet):
    """A building block whose assignment is not yet due: the student's course kit holds a stub in its place.

    A NotImplementedError, like an unfinished exercise, so the checks pass it on with its message."""

    def _render_traceback_(self) -> list[str]:
        yellow, bold, plain = "\x1b[33m", "\x1b[1m", "\x1b[0m"
        # Raised in a layer's call, the message arrives wrapped in Keras's call context.
        return [f"{yellow}{bold}Not in your course kit yet{plain}\n{plain_message(str(self))}"]


def answer_to(stem: str, *, name: str | None = None, hint: str = ""):
    """Mark a function (or a layer's `call`) as the answer to assignment `stem`: nothing changes here.

    `name` is what the learner knows it by (default: the function's name), `hint` what they need to know to
    use their own version in its place. The kit builder reads `stem` from the source (so it is a literal) and
    passes the same arguments to `not_handed_out` in the stub.
    """

    def mark(function):
        return function

    return mark


def not_handed_out(stem: str, *, name: str, hint: str = "") -> NotHandedOut:
    """The error raised by the stub of a building block that the student's course kit does not hold yet."""
    number = stem.split("_", 1)[0]
    return NotHandedOut(
        f"{name} is the answer to assignment {stem}: your course kit gets it once {number} is due, when your "
        f"instructor hands out a kit update (make student-kit GIVE={number}). Until then, paste your own {name} "
        f"from {stem}.ipynb into a cell of this notebook, below the imports, and run that cell."
        + (f" {hint}" if hint else ""))


@answer_to("01_positional_encoding")
def positional_encoding(positions: int, d_model: int):
    """Sinusoidal encoding (1, positions, d_model) float32: sine on even, cosine on odd dimensions."""
    import tensorflow as tf

    position = np.arange(positions)[:, np.newaxis]
    pair = np.arange(d_model)[np.newaxis, :] // 2
    angles = position / np.power(10000.0, 2 * pair / d_model)
    angles[:, 0::2] = np.sin(angles[:, 0::2])
    angles[:, 1::2] = np.cos(angles[:, 1::2])
    return tf.constant(angles[np.newaxis], dtype=tf.float32)


@answer_to("02_scaled_dot_product_attention")
def create_padding_mask(token_ids):
    """1.0 for real tokens, 0.0 for padding (id 0): (batch, seq) -> (batch, 1, seq)."""
    import tensorflow as tf

    return tf.cast(tf.math.not_equal(token_ids, 0), tf.float32)[:, tf.newaxis, :]


@answer_to("02_scaled_dot_product_attention")
def create_look_ahead_mask(sequence_length: int):
    """Ones on and below the diagonal: position i sees positions 0..i. Shape (1, L, L)."""
    import tensorflow as tf

    return tf.linalg.band_part(tf.ones((sequence_length, sequence_length), tf.float32), -1, 0)[tf.newaxis]


@answer_to("02_scaled_dot_product_attention")
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k) + (1 - mask) * -1e9) v for any leading axes; returns (output, weights)."""
    import tensorflow as tf

    d_k = tf.cast(tf.shape(k)[-1], q.dtype)
    scores = tf.matmul(q, k, transpose_b=True) / tf.sqrt(d_k)
    if mask is not None:
        scores += (1.0 - tf.cast(mask, scores.dtype)) * -1e9
    weights = tf.nn.softmax(scores, axis=-1)
    return tf.matmul(weights, v), weights


# Assignment 05's BertEncoder builds its layers with activation=gelu_tanh, which 04's template does not take.
ENCODER_LAYER_HINT = ("BertEncoder (05) creates it with activation=gelu_tanh: give your __init__ an argument "
                      "activation=\"relu\" and pass it on, FullyConnected(..., activation=activation).")


# Assignment 07: extractive question answering. Token positions are those of one window
# [CLS] question [SEP] context-piece [SEP] [PAD]...; character offsets are (start, end), end exclusive.


@answer_to("07_qa")
def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):
    """(first, last) token, inclusive, of the characters [char_start, char_end) among the context tokens
    (sequence id 1); None when the window's context does not hold the whole span."""
    context = [i for i, sequence in enumerate(sequence_ids) if sequence == 1]
    if not context or char_start < offsets[context[0]][0] or char_end > offsets[context[-1]][1]:
        return None
    first = next(i for i in context if offsets[i][1] > char_start)
    last = next(i for i in reversed(context) if offsets[i][0] < char_end)
    return (first, last) if first <= last else None


@answer_to("07_qa")
def make_windows(question_ids, context_ids, context_offsets, max_length, stride, *, answer=None, cls_id=101,
                 sep_id=102, pad_id=0):
    """[CLS] question [SEP] piece [SEP], padded to max_length, for overlapping pieces of the context: consecutive
    pieces share `stride` tokens. With `answer` (char_start, char_end) each window gets the answer's token
    positions, or (0, 0), the [CLS] position, when the piece does not hold the whole answer."""
    room = max_length - len(question_ids) - 3
    if room < 1:
        raise ValueError(f"a question of {len(question_ids)} tokens leaves no room for the context in "
                         f"{max_length} tokens")
    if not 0 <= stride < room:
        raise ValueError(f"stride {stride} must be at least 0 and smaller than the room for the context ({room})")
    windows, start = [], 0
    while True:
        piece = list(context_ids[start:start + room])
        head = [cls_id, *question_ids, sep_id]
        ids = head + piece + [sep_id]
        padding = max_length - len(ids)
        sequence_ids = [None] + [0] * len(question_ids) + [None] + [1] * len(piece) + [None] * (1 + padding)
        offsets = [None] * len(head) + [tuple(o) for o in context_offsets[start:start + len(piece)]]
        window = {"input_ids": ids + [pad_id] * padding,
                  "token_type_ids": [0] * len(head) + [1] * (len(piece) + 1) + [0] * padding,
                  "attention_mask": [1] * len(ids) + [0] * padding,
                  "sequence_ids": sequence_ids,
                  "offsets": offsets + [None] * (max_length - len(offsets)),
                  "context_start": start}
        if answer is not None:
            found = char_span_to_token_span(window["offsets"], sequence_ids, *answer)
            window["start_position"], window["end_position"] = found or (0, 0)
        windows.append(window)
        if start + room >= len(context_ids):
            return windows
        start += room - stride


@answer_to("07_qa")
def best_span(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20):
    """The n_best valid spans over all windows, best first: dicts with window, start, end (inclusive) and score,
    the sum of the start and end logits. Valid: both ends in the context, start <= end, at most
    max_answer_length tokens. Ties go to the earlier window, start and end."""
    start_logits, end_logits = np.atleast_2d(start_logits), np.atleast_2d(end_logits)
    context_mask = np.atleast_2d(np.asarray(context_mask, dtype=bool))
    spans = []
    for window in range(start_logits.shape[0]):
        positions = np.flatnonzero(context_mask[window])
        for start in positions:
            for end in positions[(positions >= start) & (positions < start + max_answer_length)]:
                score = float(start_logits[window, start]) + float(end_logits[window, end])
                spans.append((-score, window, int(start), int(end)))
    spans.sort()
    return [{"window": window, "start": start, "end": end, "score": -score}
            for score, window, start, end in spans[:n_best]]


@answer_to("07_qa")
def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, punctuation removed, articles removed, whitespace collapsed."""
    import re
    import string

    punctuation = set(string.punctuation)
    text = "".join(character for character in text.lower() if character not in punctuation)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


@answer_to("07_qa")
def squad_em_f1(prediction, gold_answers):
    """(exact match, token F1) of `prediction` against the best of `gold_answers`, after SQuAD's
    normalisation; no gold answer means the right prediction is the empty string."""
    from collections import Counter

    golds = [gold_answers] if isinstance(gold_answers, str) else list(gold_answers) or [""]
    predicted = normalize_answer(prediction).split()
    best_em = best_f1 = 0.0
    for gold in golds:
        expected = normalize_answer(gold).split()
        best_em = max(best_em, float(predicted == expected))
        if not predicted or not expected:
            best_f1 = max(best_f1, float(predicted == expected))
            continue
        same = sum((Counter(predicted) & Counter(expected)).values())
        if same:
            precision, recall = same / len(predicted), same / len(expected)
            best_f1 = max(best_f1, 2 * precision * recall / (precision + recall))
    return best_em, best_f1


def _encoder_layer_class():
    import keras

    from course_lib.transformer.layers import FullyConnected

    class EncoderLayer(keras.layers.Layer):
        """Assignment 04's encoder layer (post-norm), with the feed-forward activation as an argument.

        Attribute names are those of the assignment: mha, ffn, layernorm1, layernorm2, dropout_ffn.
        """

        def __init__(self, embedding_dim, num_heads, fully_connected_dim, dropout_rate=0.1, layernorm_eps=1e-6,
                     activation="relu", **kwargs):
            super().__init__(**kwargs)
            self.mha = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embedding_dim // num_heads,
                                                       dropout=dropout_rate)
            self.ffn = FullyConnected(embedding_dim=embedding_dim, fully_connected_dim=fully_connected_dim,
                                      activation=activation)
            self.layernorm1 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
            self.layernorm2 = keras.layers.LayerNormalization(epsilon=layernorm_eps)
            self.dropout_ffn = keras.layers.Dropout(dropout_rate)

        def compute_mask(self, inputs, previous_mask=None):
            return None  # `mask` is an attention mask, not a Keras mask of the output

        @answer_to("04_transformer", name="EncoderLayer", hint=ENCODER_LAYER_HINT)
        def call(self, x, training=None, mask=None):
            """x (batch, seq, embedding_dim); mask broadcastable to (batch, seq, seq), 1 = attend."""
            attention = self.mha(x, x, x, attention_mask=mask, training=training)
            out1 = self.layernorm1(x + attention)
            ffn_output = self.dropout_ffn(self.ffn(out1), training=training)
            return self.layernorm2(out1 + ffn_output)

    return EncoderLayer


def __getattr__(name):
    # Built on first use, so that importing this module does not import Keras (and its stderr logging)
    # before `env.setup()` has quieted it.
    if name == "EncoderLayer":
        globals()[name] = _encoder_layer_class()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
