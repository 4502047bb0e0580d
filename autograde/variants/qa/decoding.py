"""Other implementations of best_span (assignment 07, see autograde/variants/__init__.py), as whole cells: each
brings its imports. The wrong ones are the loop below with one rule bent; the right ones are other ways to write it."""

from autograde.mistakes.qa import decoding as mistakes
from autograde.variants import named, right, wrong

SIGNATURE = "def best_span(start_logits, end_logits, context_mask, max_answer_length=30, n_best=20):\n"
ARRAYS = (
    "    start_logits = np.atleast_2d(np.asarray(start_logits, dtype=np.float64))\n"
    "    end_logits = np.atleast_2d(np.asarray(end_logits, dtype=np.float64))\n"
    "    context_mask = np.atleast_2d(np.asarray(context_mask, dtype=bool))\n")
LOOP = (
    "import numpy as np\n\n\n" + SIGNATURE + ARRAYS +
    "    found = []\n"
    "    for window in WINDOWS:\n"
    "        inside = POSITIONS\n"
    "        for start in inside:\n"
    "            for end in inside:\n"
    "                if FITS:\n"
    "                    score = SCORE\n"
    "                    found.append((-score, window, int(start), int(end)))\n"
    "    found.sort()\n"
    "    return [{'window': w, 'start': s, 'end': e, 'score': -score} for score, w, s, e in found[:n_best]]\n")
PARTS = {"WINDOWS": "range(start_logits.shape[0])", "POSITIONS": "np.flatnonzero(context_mask[window])",
         "FITS": "start <= end < start + max_answer_length",
         "SCORE": "float(start_logits[window, start] + end_logits[window, end])"}


def loop(**bent: str) -> str:
    """The plain loop with some of its parts replaced."""
    source = LOOP
    for name, text in {**PARTS, **bent}.items():
        source = source.replace(name, text)
    return source


# Every pair at once, the invalid ones set to -1e9 and left out by comparing each score with -1e9 after float().
SENTINEL = (
    "import numpy as np\n\n\n" + SIGNATURE +
    "    start_logits, end_logits = np.atleast_2d(start_logits), np.atleast_2d(end_logits)\n"
    "    context_mask = np.atleast_2d(np.asarray(context_mask, dtype=bool))\n"
    "    windows, seq = start_logits.shape\n"
    "    scores = start_logits[:, :, None] + end_logits[:, None, :]\n"
    "    positions = np.arange(seq)\n"
    "    length = positions[None, :] - positions[:, None]\n"
    "    valid = (length >= 0) & (length < max_answer_length)\n"
    "    valid = valid[None] & context_mask[:, :, None] & context_mask[:, None, :]\n"
    "    flat = np.where(valid, scores, -1e9).reshape(-1)\n"
    "    order = np.argsort(-flat, kind='stable')[:n_best]\n"
    "    spans = []\n"
    "    for index in order:\n"
    "        score = float(flat[index])\n"
    "        if score != -1e9:\n"
    "            window, rest = divmod(int(index), seq * seq)\n"
    "            spans.append({'window': window, 'start': rest // seq, 'end': rest % seq, 'score': score})\n"
    "    return spans\n")

VARIANTS = [
    right("best_span", "the plain loop, sorting (-score, window, start, end)", source=loop()),
    right("best_span", "heapq.nsmallest of (-score, window, start, end), each start's ends sliced from the mask",
          source=(
              "import heapq\n"
              "\n"
              "import numpy as np\n\n\n" + SIGNATURE + ARRAYS +
              "    spans = ((-(start_logits[w, s] + end_logits[w, e]), w, s, e)\n"
              "             for w in range(len(start_logits))\n"
              "             for s in np.flatnonzero(context_mask[w])\n"
              "             for e in s + np.flatnonzero(context_mask[w, s:s + max_answer_length]))\n"
              "    return [{'window': int(w), 'start': int(s), 'end': int(e), 'score': float(-score)}\n"
              "            for score, w, s, e in heapq.nsmallest(n_best, spans)]\n")),
    wrong("best_span", "-1e9 marks the invalid spans, compared after float(): float16 makes it -inf",
          source=SENTINEL, message="leave out the spans you masked with -inf"),
    wrong("best_span", "the ranking squeezed: a 0-d array for n_best 1", source=SENTINEL.replace(
        "[:n_best]\n", "[:n_best].squeeze()\n").replace("if score != -1e9:", "if score > -1e8:"),
          message="iteration over a 0-d array"),
    wrong("best_span", "each window searched from its first to its last context token (none: a crash)",
          source=loop(POSITIONS="range(np.flatnonzero(context_mask[window])[0],\n"
                                "                       np.flatnonzero(context_mask[window])[-1] + 1)").replace(
              "    found = []\n", "    if not context_mask.any():\n        return []\n    found = []\n"),
          message="a window here holds no context token"),
    wrong("best_span", "position 0 left out as [CLS], whatever the mask says", source=loop(
        POSITIONS="[p for p in np.flatnonzero(context_mask[window]) if p > 0]"), message="valid spans and n_best is"),
    right("best_span", "NumPy: every pair at once, invalid ones at -inf, a stable sort", source=(
        "import numpy as np\n\n\n" + SIGNATURE + ARRAYS +
        "    windows, seq = start_logits.shape\n"
        "    scores = start_logits[:, :, None] + end_logits[:, None, :]\n"
        "    positions = np.arange(seq)\n"
        "    length = positions[None, :] - positions[:, None]\n"
        "    valid = (length >= 0) & (length < max_answer_length)\n"
        "    valid = valid[None] & context_mask[:, :, None] & context_mask[:, None, :]\n"
        "    flat = np.where(valid, scores, -np.inf).reshape(-1)\n"
        "    order = np.argsort(-flat, kind='stable')[:n_best]\n"
        "    spans = []\n"
        "    for index in order:\n"
        "        if np.isfinite(flat[index]):\n"
        "            window, rest = divmod(int(index), seq * seq)\n"
        "            spans.append({'window': window, 'start': rest // seq, 'end': rest % seq,\n"
        "                          'score': float(flat[index])})\n"
        "    return spans\n")),
    right("best_span", "heapq.nlargest over a generator, float32 scores and NumPy int positions", source=(
        "import heapq\n"
        "\n"
        "import numpy as np\n\n\n" + SIGNATURE +
        "    start_logits, end_logits = np.atleast_2d(start_logits), np.atleast_2d(end_logits)\n"
        "    context_mask = np.atleast_2d(context_mask)\n"
        "    spans = ({'window': np.int64(w), 'start': s, 'end': e,\n"
        "              'score': np.float32(start_logits[w][s]) + np.float32(end_logits[w][e])}\n"
        "             for w in range(len(start_logits))\n"
        "             for s in np.flatnonzero(context_mask[w])\n"
        "             for e in np.flatnonzero(context_mask[w])\n"
        "             if s <= e < s + max_answer_length)\n"
        "    return heapq.nlargest(n_best, spans, key=lambda span: span['score'])\n")),
    wrong("best_span", "end before start allowed", source=loop(FITS="end - start < max_answer_length"),
          message=named(mistakes.SPANS, "end_before_start")),
    wrong("best_span", "max_answer_length + 1 tokens allowed", source=loop(
        FITS="start <= end <= start + max_answer_length"), message=named(mistakes.SPANS, "one_token_too_many")),
    wrong("best_span", "at most max_answer_length - 1 tokens", source=loop(
        FITS="start <= end < start + max_answer_length - 1"), message=named(mistakes.SPANS, "one_token_too_few")),
    wrong("best_span", "the context mask ignored", source=loop(POSITIONS="range(start_logits.shape[1])"),
          message=named(mistakes.SPANS, "context_mask_ignored")),
    wrong("best_span", "[CLS] allowed as the no-answer span", source=loop(
        POSITIONS="[0, *np.flatnonzero(context_mask[window])]"), message=named(mistakes.SPANS, "cls_allowed")),
    wrong("best_span", "only the first window searched", source=loop(WINDOWS="range(1)"),
          message=named(mistakes.SPANS, "first_window_only")),
    wrong("best_span", "scores as products of softmax probabilities", source=loop(
        SCORE="float(np.exp(start_logits[window, start]) / np.exp(start_logits[window]).sum()"
              " * np.exp(end_logits[window, end]) / np.exp(end_logits[window]).sum())"),
          message=named(mistakes.SPANS, "softmax_product")),
    wrong("best_span", "n_best ignored", source=loop().replace("found[:n_best]", "found"),
          message=named(mistakes.SPANS, "n_best_ignored")),
    wrong("best_span", "positions flattened over the windows", source=loop().replace(
        "'start': s, 'end': e", "'start': w * start_logits.shape[1] + s, 'end': w * start_logits.shape[1] + e"),
          message=named(mistakes.SPANS, "flattened_positions")),
    wrong("best_span", "sorted ascending", source=loop().replace("found.sort()", "found.sort(reverse=True)"),
          message=named(mistakes.SPANS, "worst_first")),
    wrong("best_span", "ties to the later window and position", source=loop().replace(
        "found.sort()", "found.sort(key=lambda span: (span[0], -span[1], -span[2], -span[3]))"),
          message=named(mistakes.SPANS, "ties_to_the_later")),
    wrong("best_span", "independent argmax of start and end", source=(
        "import numpy as np\n\n\n" + SIGNATURE + ARRAYS +
        "    spans = []\n"
        "    for window in range(start_logits.shape[0]):\n"
        "        inside = np.flatnonzero(context_mask[window])\n"
        "        if inside.size:\n"
        "            start = int(inside[np.argmax(start_logits[window, inside])])\n"
        "            end = int(inside[np.argmax(end_logits[window, inside])])\n"
        "            score = float(start_logits[window, start] + end_logits[window, end])\n"
        "            spans.append({'window': window, 'start': start, 'end': end, 'score': score})\n"
        "    return sorted(spans, key=lambda span: -span['score'])[:n_best]\n"),
          message=named(mistakes.SPANS, "independent_argmax")),
    wrong("best_span", "the caller's logits masked in place", source=loop().replace(
        ARRAYS, "    start_logits, end_logits = np.atleast_2d(start_logits), np.atleast_2d(end_logits)\n"
                "    context_mask = np.atleast_2d(np.asarray(context_mask, dtype=bool))\n"
                "    start_logits[~context_mask] = -1e9\n"), message="best_span changed its argument start_logits"),
]
