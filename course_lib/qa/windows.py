"""Assignment 07, a long context in windows: the visible check of `make_windows`, its diagnostics (shared with the
hidden check in autograde.checks.qa.windows) and `plot_windows`, the notebook's picture of the windows.

The check's questions and paragraphs are tokenized by the course's tokenizer when the expected values are generated
(`course_lib/expected/07_qa.json`, from autograde/expected/qa/windows.py): the ids and offsets given to make_windows,
the tokens (for the messages), the reference's windows and those of the named mistakes. `make_windows` is checked
with a stand-in for the learner's `char_span_to_token_span` that answers from that file for the windows the reference
and the named mistakes make (the learner's own one answers for any other), so a mistake there costs its own points.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from course_lib.calls import describe, expect_unchanged, judge_all, named, within
from course_lib.checking import CheckFailed, call_learner, parts_replaced, passed
from course_lib.expected import load as load_expected
from course_lib.qa.spans import ORESUND, is_index
from course_lib.qa.window_arguments import TIME_LIMIT, crash_hint_for, expect_refused, refused_because, room

STEM = "07_qa"
LIST_KEYS = ("input_ids", "token_type_ids", "attention_mask", "sequence_ids", "offsets")
ANSWER_KEYS = ("start_position", "end_position")
PIECES = ("each piece holds room = max_length - len(question_ids) - 3 context tokens, the next piece starts "
          "room - stride tokens later (consecutive pieces share `stride` tokens), and the last piece ends with the "
          "context's last token")
RULES = {
    "input_ids": "a window is [CLS] question [SEP] piece [SEP], then [PAD] up to max_length, with the ids cls_id, "
                 "sep_id and pad_id",
    "token_type_ids": "token type ids are 0 on [CLS] question [SEP], 1 on the piece and the [SEP] after it, 0 on the "
                      "padding",
    "attention_mask": "the attention mask is 1 on every real token, [CLS] and [SEP] included, 0 on the padding",
    "sequence_ids": "sequence ids are None on [CLS], [SEP] and [PAD], 0 on the question, 1 on the piece",
    "offsets": "a context token keeps its (start, end) from context_offsets; every other position gets None",
}


def plain_window(window: Mapping) -> dict:
    """A well-formed window (the reference's, a mistake's) as plain Python data, for comparisons."""
    plain = {key: [int(value) for value in window[key]] for key in LIST_KEYS[:3]}
    plain["sequence_ids"] = [None if value is None else int(value) for value in window["sequence_ids"]]
    plain["offsets"] = [None if pair is None else (int(pair[0]), int(pair[1])) for pair in window["offsets"]]
    plain["context_start"] = int(window["context_start"])
    plain.update({key: int(window[key]) for key in ANSWER_KEYS if key in window})
    return plain


def stored_window(window: Mapping) -> dict:
    """A plain window for the expected values' file (-1 stands for None)."""
    stored = {key: window[key] for key in (*LIST_KEYS[:3], "context_start", *ANSWER_KEYS) if key in window}
    stored["sequence_ids"] = [-1 if value is None else value for value in window["sequence_ids"]]
    stored["offsets"] = [[-1, -1] if pair is None else list(pair) for pair in window["offsets"]]
    return stored


def stored_like(windows: list[dict], right: list[dict]) -> list[dict]:
    """A named mistake's plain windows for the file, each written as its differences from the right window that
    starts at the same context token ({"like": that window's number, key: value, ...}), if there is one."""
    starts = {window["context_start"]: number for number, window in enumerate(right)}
    made = []
    for window in windows:
        stored = stored_window(window)
        like = starts.get(window["context_start"])
        if like is not None:
            base = stored_window(right[like])
            stored = {"like": like, **{key: value for key, value in stored.items() if base.get(key) != value}}
        made.append(stored)
    return made


def read_stored(window: Mapping, right=()) -> dict:
    """The plain window a `stored_window` (or, with the right stored windows, a `stored_like`) was made from."""
    if "like" in window:
        window = {**right[int(window["like"])], **{key: value for key, value in window.items() if key != "like"}}
    plain = {key: [int(value) for value in window[key]] for key in LIST_KEYS[:3]}
    plain["sequence_ids"] = [None if value < 0 else int(value) for value in window["sequence_ids"]]
    plain["offsets"] = [None if start < 0 else (int(start), int(end)) for start, end in window["offsets"]]
    plain.update({key: int(window[key]) for key in ("context_start", *ANSWER_KEYS) if key in window})
    return plain


# ----------------------------------------------------------------------------------------------
# Shared diagnostics


def _values(value, where: str, read) -> list:
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    if isinstance(value, (str, bytes, Mapping, set)) or not hasattr(value, "__len__") \
            or (isinstance(value, np.ndarray) and value.ndim == 0):
        raise CheckFailed(f"{where} should be a list, one entry per position, got {type(value).__name__}")
    return [read(item, f"{where}[{position}]") for position, item in enumerate(value)]


def _int(value, where: str) -> int:
    if not is_index(value):
        raise CheckFailed(f"{where} is {value!r}: an int is expected there")
    return int(value)


def _sequence(value, where: str):
    if value is not None and not (is_index(value) and int(value) in (0, 1)):
        raise CheckFailed(f"{where} is {value!r}: a sequence id is None, 0 or 1")
    return None if value is None else int(value)


def _pair(value, where: str):
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__") or len(value) != 2 \
            or not all(is_index(v) for v in value):
        raise CheckFailed(f"{where} is {value!r}: an offset is a pair (start, end) of ints, or None")
    return int(value[0]), int(value[1])


def read_windows(result, call: str, with_answer: bool) -> list[dict]:
    """The learner's windows as plain data (the keys the exercise asks for only), or a failure saying what is wrong
    with their form."""
    if result is None:
        raise CheckFailed(f"{call} returned None: did you forget to return the list of windows?")
    if isinstance(result, Mapping) or not isinstance(result, (list, tuple)):
        raise CheckFailed(f"{call} should return a list of windows (dicts), one per piece of the context, got "
                          f"{type(result).__name__}")
    keys = (*LIST_KEYS, "context_start", *(ANSWER_KEYS if with_answer else ()))
    windows = []
    for number, window in enumerate(result):
        where = f"{call}[{number}]"
        if not isinstance(window, Mapping):
            raise CheckFailed(f"{where} is a {type(window).__name__}: each window is a dict with the keys "
                              f"{', '.join(keys)}")
        missing = [key for key in keys if key not in window]
        if missing:
            raise CheckFailed(f"{where} has no {', '.join(map(repr, missing))}: each window has the keys "
                              f"{', '.join(keys)}" + (" (an answer was given)" if with_answer else ""))
        plain = {key: _values(window[key], f"{where}[{key!r}]", _int) for key in LIST_KEYS[:3]}
        plain["sequence_ids"] = _values(window["sequence_ids"], f"{where}['sequence_ids']", _sequence)
        plain["offsets"] = _values(window["offsets"], f"{where}['offsets']", _pair)
        for key in ("context_start", *(ANSWER_KEYS if with_answer else ())):
            plain[key] = _int(window[key], f"{where}[{key!r}]")
        windows.append(plain)
    return windows


def _role(position: int, questions: int, pieces: int, max_length: int, tokens=None) -> str:
    """What a window position holds, for the messages."""
    if position == 0:
        return "[CLS]"
    if position <= questions:
        return f"question token {position - 1}"
    if position == questions + 1:
        return "the [SEP] after the question"
    if position < questions + 2 + pieces:
        return f"a context token ({tokens[position]!r})" if tokens is not None else "a context token"
    return "the [SEP] after the piece" if position == questions + 2 + pieces else "padding"


def _show(value) -> str:
    return "None" if value is None else repr(value)


def _window_difference(got: dict, expected: dict, number: int, max_length: int, questions: int,
                       tokens) -> tuple[str, str]:
    """(what differs, the rule) in one window, key by key in the order of the exercise."""
    pieces = sum(1 for sequence in expected["sequence_ids"] if sequence == 1)
    for key in LIST_KEYS:
        if len(got[key]) != len(expected[key]):
            return (f"window {number}'s {key} has {len(got[key])} entries, expected max_length = {max_length}",
                    "every list of a window has max_length entries, the padding included")
        wrong = [p for p, (a, b) in enumerate(zip(got[key], expected[key], strict=True)) if a != b]
        if wrong:
            p = wrong[0]
            return (f"window {number}'s {key}[{p}] is {_show(got[key][p])}, expected {_show(expected[key][p])} "
                    f"(position {p} is {_role(p, questions, pieces, max_length, tokens)})", RULES[key])
    got_span = tuple(got.get(key) for key in ANSWER_KEYS)
    right = tuple(expected.get(key) for key in ANSWER_KEYS)
    why = ("its piece does not hold the whole answer, so both point at [CLS], position 0" if right == (0, 0) else
           "the answer's tokens are at these positions of the window: their place in the piece plus the "
           "len(question_ids) + 2 positions of [CLS] question [SEP]")
    return f"window {number}'s (start_position, end_position) is {got_span}, expected {right}", why


def expect_windows(result, expected, *, question_ids, context_length: int, max_length: int, stride: int,
                   with_answer: bool, mistakes=(), label: str = "", tokens=None) -> None:
    """Compare the learner's windows with `expected` (plain windows); `mistakes` are (wrong windows, explanation),
    `tokens` each expected window's tokens, for the messages."""
    call = f"[{label}] make_windows(...)" if label else "make_windows(...)"
    got = read_windows(result, call, with_answer)
    if got == expected:
        return
    size = f"max_length={max_length}, stride={stride}, {len(question_ids)} question tokens, {context_length} context " \
           "tokens"
    starts, right = [w["context_start"] for w in got], [w["context_start"] for w in expected]
    if not got:
        what = f"it returned no window, expected {len(expected)}"
        rule = ("every context gives at least one window, an empty one or one shorter than the stride too: the first "
                f"piece starts at token 0, and {PIECES}")
    elif starts != right:
        what = f"the windows start at the context tokens {starts}, expected {right}"
        rule = f"{PIECES} (here room = {room(question_ids, max_length)})"
    else:
        number = next(n for n, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b)
        what, rule = _window_difference(got[number], expected[number], number, max_length, len(question_ids),
                                        tokens[number] if tokens is not None else None)
    matching = list(dict.fromkeys(message for wrong, message in mistakes if got == wrong))
    if matching:
        raise named(f"{call} is wrong ({size}): {matching[0]}. Here {what}", len(matching))
    raise CheckFailed(f"{call} is wrong ({size}): {what}. {rule}")


# ----------------------------------------------------------------------------------------------
# The visible check

MALMO = "Malmö lies across the strait from Copenhagen, at the eastern end of the Øresund Bridge."

# Each case: a label, the question, the context, the answer's text in it (None: no answer given), max_length, stride
# and the containers of question_ids, context_ids and context_offsets.
WINDOW_CASES = [
    ("the Øresund paragraph in 9 windows, the answer whole in two of them and cut by another",
     "What does the bridge carry?", ORESUND, "a four-lane motorway", 26, 10, ("list", "list", "tuples")),
    ("no answer given, 4 windows, the last one padded", "How long is the main span?", ORESUND, None, 40, 12,
     ("tuple", "array", "lists")),
    ("a short context in one window, padded, the answer its first token",
     "Which city lies across the strait from Copenhagen?", MALMO, "Malmö", 40, 8, ("array", "list", "array")),
    ("an answer longer than the overlap, cut in every window", "What does the name join?", ORESUND,
     "Øre, an old word for a gravel beach, and sund", 22, 6, ("list", "array", "tuples")),
    ("stride 0: the pieces follow each other, the answer cut by one of them", "What does the bridge carry?", ORESUND,
     "a double-track railway", 24, 0, ("list", "list", "tuples")),
    ("an empty context: one window, its piece empty", "Who opened the bridge?", "", None, 16, 4,
     ("list", "list", "tuples")),
    ("an empty question and room for one context token: one window per token", "", MALMO, "Malmö", 4, 0,
     ("tuple", "array", "lists")),
]
# Arguments make_windows must refuse with a ValueError, for the first case's question and the first tokens of its
# context: (label, context tokens, max_length less the question's length, stride).
REFUSED_CASES = [
    ("a question that leaves no room (R = 0)", 4, 3, 0),
    ("a stride equal to R", 4, 8, 5),
    ("a negative stride", 12, 8, -1),
]


def container(values, kind: str):
    """Ids or offsets in a case's container: list, tuple, int array; offsets as tuples, lists or an int array."""
    if kind == "tuples":
        return [(int(a), int(b)) for a, b in values]
    if kind == "lists":
        return [[int(a), int(b)] for a, b in values]
    values = np.asarray(values, dtype=np.int64)
    return values if kind == "array" else {"list": list, "tuple": tuple}[kind](int(v) for v in values)


def window_key(offsets, sequence_ids, char_start, char_end) -> tuple:
    """A window's context tokens (positions and offsets) and the answer's characters, as a lookup key."""
    return (int(char_start), int(char_end), tuple((p, int(offsets[p][0]), int(offsets[p][1]))
                                                  for p, s in enumerate(sequence_ids) if s == 1))


def spans_double(entries, original):
    """A stand-in for the learner's char_span_to_token_span: the reference's answers for the windows of `entries`
    ([char_start, char_end, [[position, start, end], ...], [first, last] or []]); the learner's `original` for any
    other window."""
    table = {(int(cs), int(ce), tuple((int(p), int(s), int(e)) for p, s, e in context)):
             None if len(span) == 0 else (int(span[0]), int(span[1])) for cs, ce, context, span in entries}

    def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):
        try:
            key = window_key(offsets, sequence_ids, char_start, char_end)
        except (TypeError, ValueError, IndexError):
            key = None
        if key in table:
            return table[key]
        if original is None:
            raise CheckFailed("make_windows calls char_span_to_token_span, which is not defined: run its cell first")
        return original(offsets, sequence_ids, char_start, char_end)
    return char_span_to_token_span


def check_make_windows(make_windows) -> None:
    """make_windows on 7 tokenized questions and paragraphs (stride 0, an empty context, an empty question among
    them), with a stand-in char_span_to_token_span (your own is checked on its own); then 3 arguments it must refuse
    with a ValueError."""
    expected = load_expected(STEM, "windows", "make_windows")
    original = getattr(make_windows, "__globals__", {}).get("char_span_to_token_span")

    def judge(case):
        label, _, _, answer, max_length, stride, kinds = case
        stored = expected[label]
        inputs = [container(stored[key], kind) for key, kind in
                  zip(("question_ids", "context_ids", "context_offsets"), kinds, strict=True)]
        given = [np.copy(v) if isinstance(v, np.ndarray) else type(v)(list(p) if isinstance(p, list) else p
                                                                     for p in v) for v in inputs]
        kwargs = {} if answer is None else {"answer": (int(stored["answer"][0]), int(stored["answer"][1]))}
        with parts_replaced(make_windows, char_span_to_token_span=spans_double(stored["spans"], original)):
            try:
                result = call_learner(within(make_windows, TIME_LIMIT), *given, max_length, stride, **kwargs)
            except CheckFailed as failure:
                hint = crash_hint_for(str(failure), label, inputs[0], max_length, stride)
                raise CheckFailed(f"[{label}] {failure}" + (f": {hint}" if hint else "")) from None
        for argument, before, after in zip(("question_ids", "context_ids", "context_offsets"), inputs, given,
                                           strict=True):
            expect_unchanged("make_windows", argument, before, after, label)
        windows = [read_stored(window) for window in stored["expected"]]
        mistakes = [([read_stored(window, stored["expected"]) for window in entry["value"]], entry["message"])
                    for entry in stored["mistakes"].values()]
        expect_windows(result, windows, question_ids=inputs[0], context_length=len(inputs[1]), max_length=max_length,
                       stride=stride, with_answer=answer is not None, mistakes=mistakes, label=label,
                       tokens=stored["tokens"])

    judge_all(WINDOW_CASES, judge)
    first = expected[WINDOW_CASES[0][0]]
    for label, tokens, extra, stride in REFUSED_CASES:
        question_ids = list(first["question_ids"])
        args = (question_ids, list(first["context_ids"][:tokens]),
                [tuple(pair) for pair in first["context_offsets"][:tokens]], len(question_ids) + extra, stride)
        try:
            outcome = {"result": describe(call_learner(within(make_windows, TIME_LIMIT), *args))}
        except CheckFailed as failure:
            outcome = {"raised": f"[{label}] {failure}"}
        expect_refused(outcome, refused_because(question_ids, args[3], stride), label)
    passed(f"make_windows cuts {len(WINDOW_CASES)} tokenized paragraphs into overlapping windows, with the answer's "
           f"positions, and refuses {len(REFUSED_CASES)} impossible cuts with a ValueError")


# ----------------------------------------------------------------------------------------------
# The notebook's picture

COLOURS = {"piece": "#c6dbef", "edge": "#4c72b0", "shared": "#6a9bd1", "answer": "#dd8452", "band": "#fdd0a2"}


def _answer_tokens(window: Mapping, first_context: int) -> tuple[int, int] | None:
    """The context indices of the answer in a window that holds it, else None."""
    span = (window.get("start_position", 0), window.get("end_position", 0))
    if span == (0, 0):
        return None
    start = int(window["context_start"])
    return start + int(span[0]) - first_context, start + int(span[1]) - first_context


def _touched(start: int, window: Mapping, answer) -> list[int]:
    """The context indices of a window's tokens that overlap the characters `answer` (char_start, char_end)."""
    context = [p for p, sequence in enumerate(window["sequence_ids"]) if sequence == 1]
    offsets = window["offsets"]
    return [start + k for k, p in enumerate(context) if offsets[p][1] > answer[0] and offsets[p][0] < answer[1]]


def plot_windows(windows, tokens=None, *, answer=None, title: str | None = None, ax=None, max_labels: int = 90):
    """Draw make_windows' windows over the context: one row per window (the first on top), a bar over the context
    tokens it holds, darker where it shares them with the window above; the answer in orange in each window that
    holds it whole, and with `answer` (char_start, char_end) a light band over the answer's tokens, so that the
    windows that cut it show. `tokens` are the context's tokens (labels of the x axis). Returns the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    rows = []
    for window in windows:
        sequence_ids = list(window["sequence_ids"])
        pieces = sum(1 for sequence in sequence_ids if sequence == 1)
        first_context = sequence_ids.index(1) if pieces else 0
        rows.append((int(window["context_start"]), pieces, _answer_tokens(window, first_context), window))
    length = max([start + pieces for start, pieces, _, _ in rows] + [len(tokens) if tokens is not None else 0])
    if ax is None:
        _, ax = plt.subplots(figsize=(min(16.0, max(7.0, 0.16 * length + 2)), 1.2 + 0.45 * len(rows)))
    band = None
    if answer is not None:
        touched = [index for start, _, _, window in rows for index in _touched(start, window, answer)]
        band = (min(touched), max(touched)) if touched else None
    held = [row[2] for row in rows if row[2] is not None]
    band = band or (held[0] if held else None)
    if band is not None:
        ax.axvspan(band[0] - 0.5, band[1] + 0.5, color=COLOURS["band"], alpha=0.6, zorder=0)
    previous_end = None
    for number, (start, pieces, inside, _) in enumerate(rows):
        y = number
        ax.add_patch(Rectangle((start - 0.5, y - 0.35), pieces, 0.7, facecolor=COLOURS["piece"],
                               edgecolor=COLOURS["edge"], linewidth=1.2, zorder=1))
        if previous_end is not None and previous_end > start:
            ax.add_patch(Rectangle((start - 0.5, y - 0.35), min(previous_end - start, pieces), 0.7,
                                   facecolor=COLOURS["shared"], alpha=0.7, edgecolor="none", zorder=2))
        ax.add_patch(Rectangle((start - 0.5, y - 0.35), pieces, 0.7, facecolor="none", edgecolor=COLOURS["edge"],
                               linewidth=1.2, zorder=3))
        if inside is not None:
            ax.add_patch(Rectangle((inside[0] - 0.5, y - 0.25), inside[1] - inside[0] + 1, 0.5,
                                   facecolor=COLOURS["answer"], edgecolor="#8c4a1c", linewidth=1.2, zorder=4))
        ax.text(start + pieces - 0.2, y, f" {start}..{start + pieces - 1}", va="center", ha="left", fontsize=8,
                color="#333333", zorder=5)
        previous_end = start + pieces
    ax.set_xlim(-1, length + max(4, length * 0.08))
    ax.set_ylim(len(rows) - 0.4, -0.6)
    ax.set_yticks(range(len(rows)), labels=[f"window {n}" + (" \N{CHECK MARK}" if row[2] is not None else "")
                                            for n, row in enumerate(rows)])
    for label, row in zip(ax.get_yticklabels(), rows, strict=True):
        label.set_fontweight("bold" if row[2] is not None else "normal")
    if tokens is not None and len(tokens) <= max_labels:
        ax.set_xticks(range(len(tokens)), labels=[str(token) for token in tokens], rotation=90, fontsize=7)
    else:
        ax.set_xlabel("context token")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="y", length=0)
    if title is None and rows:
        shared = rows[0][0] + rows[0][1] - rows[1][0] if len(rows) > 1 else 0
        size = len(rows[0][3]["input_ids"])
        title = f"{len(rows)} windows of {size} tokens over {length} context tokens; consecutive windows share {shared}"
    ax.set_title(title or "", pad=26)
    legend = [Patch(facecolor=COLOURS["piece"], edgecolor=COLOURS["edge"], label="context tokens in the window"),
              Patch(facecolor=COLOURS["shared"], alpha=0.7, label="shared with the window above")]
    if held:
        legend.append(Patch(facecolor=COLOURS["answer"], edgecolor="#8c4a1c", label="the answer, whole in the window"))
    if band is not None:
        legend.append(Patch(facecolor=COLOURS["band"], alpha=0.6, label="the answer's tokens"))
    ax.legend(handles=legend, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(legend), frameon=False,
              fontsize=8)
    return ax
