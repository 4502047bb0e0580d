"""Other implementations of assignment 07's text-side exercises (see autograde/variants/__init__.py): from characters
to tokens, windows over a long context, SQuAD's scores. Each wrong one makes one of the mistakes named in
autograde/mistakes/qa (tests/test_07_qa_*.py check that both checks name it); each right one is written another way
than the solution. Whole cells (`source=`), so that they do not depend on the solution cell's wording."""

from autograde.mistakes.qa import metrics, spans, windows
from autograde.variants import named, right, wrong

SPANS = [
    wrong("char_span_to_token_span", "question tokens searched too", source=(
        "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
        "    context = [i for i, s in enumerate(sequence_ids) if s == 1]\n"
        "    if not context or char_start < offsets[context[0]][0] or char_end > offsets[context[-1]][1]:\n"
        "        return None\n"
        "    tokens = [i for i, s in enumerate(sequence_ids) if s is not None]  # question and context\n"
        "    first = next(i for i in tokens if offsets[i][1] > char_start)\n"
        "    last = next(i for i in reversed(tokens) if offsets[i][0] < char_end)\n"
        "    return first, last\n"), message=named(spans.SPANS, "question_searched")),
    wrong("char_span_to_token_span", "last index exclusive", source=(
        "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
        "    context = [i for i, s in enumerate(sequence_ids) if s == 1]\n"
        "    if not context or char_start < offsets[context[0]][0] or char_end > offsets[context[-1]][1]:\n"
        "        return None\n"
        "    first = next(i for i in context if offsets[i][1] > char_start)\n"
        "    last = next(i for i in reversed(context) if offsets[i][0] < char_end)\n"
        "    return first, last + 1\n"), message=named(spans.SPANS, "end_exclusive")),
    wrong("char_span_to_token_span", "a cut answer's part returned", source=(
        "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
        "    inside = [i for i, s in enumerate(sequence_ids)\n"
        "              if s == 1 and offsets[i][1] > char_start and offsets[i][0] < char_end]\n"
        "    return (inside[0], inside[-1]) if inside else None\n"), message=named(spans.SPANS, "partial_span")),
    wrong("char_span_to_token_span", "the first token found by an exact start", source=(
        "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
        "    context = [i for i, s in enumerate(sequence_ids) if s == 1]\n"
        "    if not context or char_start < offsets[context[0]][0] or char_end > offsets[context[-1]][1]:\n"
        "        return None\n"
        "    first = None\n"
        "    for i in context:\n"
        "        if offsets[i][0] == char_start:\n"
        "            first = i\n"
        "    last = max(i for i in context if offsets[i][0] < char_end)\n"
        "    return None if first is None else (first, last)\n"), message=named(spans.SPANS, "start_exact")),
    wrong("char_span_to_token_span", "character positions returned", source=(
        "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
        "    context = [i for i, s in enumerate(sequence_ids) if s == 1]\n"
        "    if not context or char_start < offsets[context[0]][0] or char_end > offsets[context[-1]][1]:\n"
        "        return None\n"
        "    return char_start, char_end\n"), message=named(spans.SPANS, "characters")),
    wrong("char_span_to_token_span", "an answer ending the window's context refused (>= for >)", source=(
        "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
        "    context = [i for i, s in enumerate(sequence_ids) if s == 1]\n"
        "    if not context or char_start < offsets[context[0]][0] or char_end >= offsets[context[-1]][1]:\n"
        "        return None\n"
        "    first = next(i for i in context if offsets[i][1] > char_start)\n"
        "    last = next(i for i in reversed(context) if offsets[i][0] < char_end)\n"
        "    return first, last\n"), message=named(spans.SPANS, "last_token_missed")),
    wrong("char_span_to_token_span", "the tokenizers course's two while loops: an answer starting on a space gets the "
          "token before it", source=(
        "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
        "    start = 0\n"
        "    while start < len(sequence_ids) and sequence_ids[start] != 1:\n"
        "        start += 1\n"
        "    if start == len(sequence_ids):\n"
        "        return None\n"
        "    end = start\n"
        "    while end + 1 < len(sequence_ids) and sequence_ids[end + 1] == 1:\n"
        "        end += 1\n"
        "    if offsets[start][0] > char_start or offsets[end][1] < char_end:\n"
        "        return None\n"
        "    first = start\n"
        "    while first <= end and offsets[first][0] <= char_start:\n"
        "        first += 1\n"
        "    last = end\n"
        "    while last >= start and offsets[last][1] >= char_end:\n"
        "        last -= 1\n"
        "    return first - 1, last + 1\n"), message="the answer starts on whitespace"),
    right("char_span_to_token_span", "NumPy: the context's starts and ends as arrays, argmax of a mask", source=(
        "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
        "    positions = np.array([i for i, s in enumerate(sequence_ids) if s == 1], dtype=int)\n"
        "    if positions.size == 0:\n"
        "        return None\n"
        "    starts = np.array([offsets[i][0] for i in positions])\n"
        "    ends = np.array([offsets[i][1] for i in positions])\n"
        "    if char_start < starts[0] or char_end > ends[-1]:\n"
        "        return None\n"
        "    first = positions[np.argmax(ends > char_start)]\n"
        "    last = positions[len(starts) - 1 - np.argmax(starts[::-1] < char_end)]\n"
        "    return int(first), int(last)\n")),
]

# A plain make_windows with {marks} for the wrong variants to change: the loop, the window's lists, the positions.
WINDOWS_TEMPLATE = (
    "def make_windows(question_ids, context_ids, context_offsets, max_length, stride, *, answer=None, cls_id=101,\n"
    "                 sep_id=102, pad_id=0):\n"
    "    room = max_length - len(question_ids) - 3\n"
    "{refuse}"
    "    head = len(question_ids) + 2\n"
    "    windows, start = [], 0\n"
    "    while {loop}:\n"
    "        piece = list(context_ids[start:start + room])\n"
    "        tokens = [cls_id] + list(question_ids) + [sep_id] + piece + [sep_id]\n"
    "        padding = {padding}\n"
    "        window = {{\n"
    "            'input_ids': tokens + [pad_id] * padding,\n"
    "            'token_type_ids': {types},\n"
    "            'attention_mask': [1] * len(tokens) + [0] * padding,\n"
    "            'sequence_ids': [None] + [0] * len(question_ids) + [None] + [1] * len(piece)\n"
    "                            + [None] * (padding + 1),\n"
    "            'offsets': [None] * head + [tuple(o) for o in context_offsets[start:start + len(piece)]]\n"
    "                       + [None] * (padding + 1),\n"
    "            'context_start': start,\n"
    "        }}\n"
    "        if answer is not None:\n"
    "            span = char_span_to_token_span(window['offsets'], window['sequence_ids'], answer[0], answer[1])\n"
    "            window['start_position'], window['end_position'] = {positions}\n"
    "        windows.append(window)\n"
    "        {advance}\n"
    "    return windows\n")
REFUSE = ("    if room < 1:\n"
          "        raise ValueError('the question leaves no room for the context')\n"
          "    if stride < 0 or stride >= room:\n"
          "        raise ValueError('stride must be in [0, room)')\n")
PLAIN = {"refuse": REFUSE, "loop": "True", "padding": "max_length - len(tokens)",
         "types": "[0] * head + [1] * (len(piece) + 1) + [0] * padding", "positions": "span or (0, 0)",
         "advance": "if start + room >= len(context_ids):\n            break\n        start += room - stride"}


def windows_source(**changes: str) -> str:
    """The plain make_windows with some of its marks changed."""
    return WINDOWS_TEMPLATE.format(**{**PLAIN, **changes})


GLOBAL_SPAN = (  # the answer's tokens in the whole context, then positions made from them
    "def make_windows(question_ids, context_ids, context_offsets, max_length, stride, *, answer=None, cls_id=101,\n"
    "                 sep_id=102, pad_id=0):\n"
    "    room = max_length - len(question_ids) - 3\n"
    "    if room < 1 or not 0 <= stride < room:\n"
    "        raise ValueError(f'room {room}, stride {stride}: need room >= 1 and 0 <= stride < room')\n"
    "    head = len(question_ids) + 2\n"
    "    if answer is not None:\n"
    "        first = min(i for i, o in enumerate(context_offsets) if o[1] > answer[0])\n"
    "        last = max(i for i, o in enumerate(context_offsets) if o[0] < answer[1])\n"
    "    windows, start = [], 0\n"
    "    while True:\n"
    "        piece = list(context_ids[start:start + room])\n"
    "        tokens = [cls_id] + list(question_ids) + [sep_id] + piece + [sep_id]\n"
    "        padding = max_length - len(tokens)\n"
    "        window = {\n"
    "            'input_ids': tokens + [pad_id] * padding,\n"
    "            'token_type_ids': [0] * head + [1] * (len(piece) + 1) + [0] * padding,\n"
    "            'attention_mask': [1] * len(tokens) + [0] * padding,\n"
    "            'sequence_ids': [None] + [0] * len(question_ids) + [None] + [1] * len(piece)\n"
    "                            + [None] * (padding + 1),\n"
    "            'offsets': [None] * head + [tuple(o) for o in context_offsets[start:start + len(piece)]]\n"
    "                       + [None] * (padding + 1),\n"
    "            'context_start': start,\n"
    "        }\n"
    "        if answer is not None:\n"
    "            inside = start <= first and last < start + len(piece)\n"
    "            window['start_position'], window['end_position'] = {positions}\n"
    "        windows.append(window)\n"
    "        if start + room >= len(context_ids):\n"
    "            return windows\n"
    "        start += room - stride\n")


def global_span_source(positions: str) -> str:
    return GLOBAL_SPAN.replace("{positions}", positions)


WINDOWS = [
    wrong("make_windows", "the stride taken as the step", source=windows_source(
        advance="if start + room >= len(context_ids):\n            break\n        start += stride"),
          message=named(windows.WINDOWS, "stride_as_step")),
    wrong("make_windows", "no overlap: the next piece starts after the previous one", source=windows_source(
        advance="if start + room >= len(context_ids):\n            break\n        start += room"),
          message=named(windows.WINDOWS, "no_overlap")),
    wrong("make_windows", "the last piece dropped (the loop stops before it)", source=windows_source(
        loop="start + room < len(context_ids)", advance="start += room - stride"),
          message=named(windows.WINDOWS, "last_dropped")),
    wrong("make_windows", "no [SEP] after the piece", source=windows_source().replace(
        "[sep_id] + piece + [sep_id]", "[sep_id] + piece").replace(
        "[1] * (len(piece) + 1) + [0] * padding", "[1] * len(piece) + [0] * padding").replace(
        "[None] * (padding + 1)", "[None] * padding"), message=named(windows.WINDOWS, "no_final_sep")),
    wrong("make_windows", "no padding", source=windows_source(padding="0"),
          message=named(windows.WINDOWS, "no_padding")),
    wrong("make_windows", "token type ids all 0", source=windows_source(types="[0] * max_length"),
          message=named(windows.WINDOWS, "type_ids_zero")),
    wrong("make_windows", "the [SEP] after the piece of type 0", source=windows_source(
        types="[0] * head + [1] * len(piece) + [0] * (padding + 1)"),
          message=named(windows.WINDOWS, "type_ids_final_sep")),
    wrong("make_windows", "a cut answer's part marked in the window", source=windows_source(
        positions="(lambda inside: (inside[0], inside[-1]) if inside else (0, 0))([\n"
                  "                p for p, o in enumerate(window['offsets'])\n"
                  "                if o is not None and o[1] > answer[0] and o[0] < answer[1]])"),
          message=named(windows.WINDOWS, "answer_clipped")),
    wrong("make_windows", "positions in the piece, not shifted by [CLS] question [SEP]", source=global_span_source(
        "(first - start, last - start) if inside else (0, 0)"), message=named(windows.WINDOWS, "not_shifted")),
    wrong("make_windows", "positions over the whole context", source=global_span_source(
        "(first + head, last + head) if inside else (0, 0)"), message=named(windows.WINDOWS, "whole_context")),
    wrong("make_windows", "an absent answer at (-1, -1)", source=windows_source(positions="span or (-1, -1)"),
          message=named(windows.WINDOWS, "absent_minus_one")),
    right("make_windows", "the answer's tokens found once in the whole context, positions from them",
          source=global_span_source("(first - start + head, last - start + head) if inside else (0, 0)")),
    right("make_windows", "the piece starts listed first; NumPy arrays for the ids, the types and the mask", source=(
        "def make_windows(question_ids, context_ids, context_offsets, max_length, stride, *, answer=None, cls_id=101,\n"
        "                 sep_id=102, pad_id=0):\n"
        "    room = max_length - len(question_ids) - 3\n"
        "    if room < 1:\n"
        "        raise ValueError('no room')\n"
        "    if not 0 <= stride < room:\n"
        "        raise ValueError('stride out of range')\n"
        "    starts = [0]\n"
        "    while starts[-1] + room < len(context_ids):\n"
        "        starts.append(starts[-1] + room - stride)\n"
        "    head = len(question_ids) + 2\n"
        "    windows = []\n"
        "    for start in starts:\n"
        "        n = min(room, len(context_ids) - start)\n"
        "        used = head + n + 1\n"
        "        ids = np.full(max_length, pad_id)\n"
        "        ids[:used] = [cls_id, *question_ids, sep_id, *context_ids[start:start + n], sep_id]\n"
        "        types = np.zeros(max_length, dtype=int)\n"
        "        types[head:used] = 1\n"
        "        mask = (np.arange(max_length) < used).astype(int)\n"
        "        sequence_ids = [None] * max_length\n"
        "        offsets = [None] * max_length\n"
        "        for k in range(len(question_ids)):\n"
        "            sequence_ids[1 + k] = 0\n"
        "        for k in range(n):\n"
        "            sequence_ids[head + k] = 1\n"
        "            offsets[head + k] = (int(context_offsets[start + k][0]), int(context_offsets[start + k][1]))\n"
        "        window = {'input_ids': ids, 'token_type_ids': types, 'attention_mask': mask,\n"
        "                  'sequence_ids': sequence_ids, 'offsets': offsets, 'context_start': start}\n"
        "        if answer is not None:\n"
        "            span = char_span_to_token_span(offsets, sequence_ids, *answer)\n"
        "            window['start_position'], window['end_position'] = (0, 0) if span is None else span\n"
        "        windows.append(window)\n"
        "    return windows\n")),
]

NORMALIZE = (
    "import re\n"
    "import string\n"
    "from collections import Counter\n"
    "\n"
    "\n"
    "def normalize(text):\n"
    "    text = {lower}\n"
    "    text = {punctuation}\n"
    "    text = {articles}\n"
    "    return ' '.join(text.split())\n"
    "\n"
    "\n")
SQUAD = {"lower": "text.lower()", "punctuation": "''.join(ch for ch in text if ch not in string.punctuation)",
         "articles": "re.sub(r'\\b(a|an|the)\\b', ' ', text)"}
SCORER = (
    "def squad_em_f1(prediction, gold_answers):\n"
    "    golds = {golds}\n"
    "    ems, f1s = [], []\n"
    "    for gold in golds:\n"
    "        p, g = normalize(prediction).split(), normalize(gold).split()\n"
    "        ems.append({exact})\n"
    "        {f1}\n"
    "    return {best}(ems), {best}(f1s)\n")
F1 = ("if not p or not g:\n"
      "            f1s.append(float(p == g))\n"
      "            continue\n"
      "        common = sum((Counter(p) & Counter(g)).values())\n"
      "        f1s.append(0.0 if common == 0 else 2 * common / (len(p) + len(g)))")
PLAIN_SCORER = {"golds": "list(gold_answers) or ['']", "exact": "float(p == g)", "f1": F1, "best": "max"}


def metric_source(normalize: dict | None = None, **changes: str) -> str:
    """The plain SQuAD scorer with some of its steps changed."""
    return NORMALIZE.format(**{**SQUAD, **(normalize or {})}) + SCORER.format(**{**PLAIN_SCORER, **changes}) + \
        ("\n\ndef mean(values):\n    return sum(values) / len(values)\n" if changes.get("best") == "mean" else "")


METRICS = [
    wrong("squad_em_f1", "articles kept", source=metric_source({"articles": "text"}),
          message=named(metrics.METRICS, "articles_kept")),
    wrong("squad_em_f1", "punctuation kept", source=metric_source({"punctuation": "text"}),
          message=named(metrics.METRICS, "punctuation_kept")),
    wrong("squad_em_f1", "case kept", source=metric_source({"lower": "text"}),
          message=named(metrics.METRICS, "case_kept")),
    wrong("squad_em_f1", "F1 over characters", source=metric_source(f1=F1.replace(
        "p, g = ", "p, g = ").replace("Counter(p) & Counter(g)", "Counter(' '.join(p)) & Counter(' '.join(g))")
        .replace("(len(p) + len(g))", "(len(' '.join(p)) + len(' '.join(g)))")),
          message=named(metrics.METRICS, "characters")),
    wrong("squad_em_f1", "the mean over the gold answers", source=metric_source(best="mean"),
          message=named(metrics.METRICS, "mean_over_golds")),
    wrong("squad_em_f1", "a set of shared words", source=metric_source(f1=F1.replace(
        "sum((Counter(p) & Counter(g)).values())", "len(set(p) & set(g))")),
          message=named(metrics.METRICS, "set_overlap")),
    wrong("squad_em_f1", "F1 of two empty texts 0.0", source=metric_source(f1=F1.replace(
        "f1s.append(float(p == g))", "f1s.append(0.0)")), message=named(metrics.METRICS, "empty_f1_zero")),
    wrong("squad_em_f1", "no gold answer scored (0.0, 0.0)", source=metric_source(golds="list(gold_answers)").replace(
        "    return max(ems), max(f1s)\n", "    return max(ems, default=0.0), max(f1s, default=0.0)\n"),
          message=named(metrics.METRICS, "no_gold_zero")),
    wrong("squad_em_f1", "exact match on the raw texts", source=metric_source(exact="float(prediction == gold)"),
          message=named(metrics.METRICS, "exact_raw")),
    wrong("squad_em_f1", "punctuation replaced by spaces", source=metric_source(
        {"punctuation": "''.join(' ' if ch in string.punctuation else ch for ch in text)"}),
          message=named(metrics.METRICS, "punctuation_as_space")),
    wrong("squad_em_f1", "exact match from the gold answer with the best F1 (the first of a tie)",
          source=metric_source().replace("    return max(ems), max(f1s)\n",
                                         "    best = f1s.index(max(f1s))\n    return ems[best], f1s[best]\n"),
          message=named(metrics.METRICS, "exact_of_best_f1")),
    wrong("squad_em_f1", "exact match from the gold answer with the best F1 (the last of a tie)",
          source=metric_source().replace("    return max(ems), max(f1s)\n", (
              "    best_em, best_f1 = 0.0, -1.0\n"
              "    for em, f1 in zip(ems, f1s):\n"
              "        if f1 >= best_f1:\n"
              "            best_em, best_f1 = em, f1\n"
              "    return best_em, best_f1\n")),
          message=named(metrics.METRICS, "exact_of_best_f1")),
    right("squad_em_f1", "as SQuAD's script scores: exact match a bool, F1 an int where it is 0 or 1 by rule", source=(
        "import re\n"
        "import string\n"
        "from collections import Counter\n"
        "\n"
        "\n"
        "def normalized_words(text):\n"
        "    kept = ''.join(ch for ch in text.lower() if ch not in set(string.punctuation))\n"
        "    return re.sub(r'\\b(a|an|the)\\b', ' ', kept).split()\n"
        "\n"
        "\n"
        "def exact(prediction, gold):\n"
        "    return normalized_words(prediction) == normalized_words(gold)\n"
        "\n"
        "\n"
        "def token_f1(prediction, gold):\n"
        "    p, g = normalized_words(prediction), normalized_words(gold)\n"
        "    if not p or not g:\n"
        "        return int(p == g)\n"
        "    same = sum((Counter(p) & Counter(g)).values())\n"
        "    if same == 0:\n"
        "        return 0\n"
        "    precision, recall = same / len(p), same / len(g)\n"
        "    return 2 * precision * recall / (precision + recall)\n"
        "\n"
        "\n"
        "def squad_em_f1(prediction, gold_answers):\n"
        "    golds = list(gold_answers) or ['']\n"
        "    return max(exact(prediction, g) for g in golds), max(token_f1(prediction, g) for g in golds)\n")),
    right("squad_em_f1", "a regular expression for the punctuation, precision and recall spelled out", source=(
        "import re\n"
        "import string\n"
        "from collections import Counter\n"
        "\n"
        "PUNCTUATION = re.compile('[' + re.escape(string.punctuation) + ']')\n"
        "\n"
        "\n"
        "def squad_em_f1(prediction, gold_answers):\n"
        "    def words(text):\n"
        "        text = PUNCTUATION.sub('', text.lower())\n"
        "        return re.sub(r'\\b(a|an|the)\\b', ' ', text).split()\n"
        "\n"
        "    def f1(p, g):\n"
        "        if not p or not g:\n"
        "            return float(p == g)\n"
        "        common = sum((Counter(p) & Counter(g)).values())\n"
        "        if common == 0:\n"
        "            return 0.0\n"
        "        precision, recall = common / len(p), common / len(g)\n"
        "        return 2 * precision * recall / (precision + recall)\n"
        "\n"
        "    golds = [words(g) for g in gold_answers] or [[]]\n"
        "    p = words(prediction)\n"
        "    return max(float(p == g) for g in golds), max(f1(p, g) for g in golds)\n")),
    right("squad_em_f1", "str.translate, the articles filtered word by word, NumPy floats", source=(
        "import string\n"
        "from collections import Counter\n"
        "\n"
        "\n"
        "def squad_em_f1(prediction, gold_answers):\n"
        "    table = str.maketrans('', '', string.punctuation)\n"
        "\n"
        "    def words(text):\n"
        "        return [w for w in text.lower().translate(table).split() if w not in ('a', 'an', 'the')]\n"
        "\n"
        "    p = words(prediction)\n"
        "    scores = np.zeros((2, max(1, len(gold_answers))))\n"
        "    for k, gold in enumerate(list(gold_answers) or ['']):\n"
        "        g = words(gold)\n"
        "        scores[0, k] = p == g\n"
        "        shared = Counter(p) & Counter(g)\n"
        "        if not p or not g:\n"
        "            scores[1, k] = p == g\n"
        "        elif shared:\n"
        "            scores[1, k] = 2 * sum(shared.values()) / (len(p) + len(g))\n"
        "    return scores[0].max(), scores[1].max()\n")),
]

VARIANTS = SPANS + WINDOWS + METRICS
