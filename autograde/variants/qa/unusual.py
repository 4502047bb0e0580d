"""Implementations of assignment 07's text-side exercises (see autograde/variants/__init__.py) that are right on
ordinary inputs and differ on the unusual ones the exercises allow (autograde/input_classes/qa.py): answers that start
or end on whitespace or inside one token, characters cut into several tokens, windows of one context token or none,
an empty question or context, stride 0, room for one token, arguments to refuse, punctuation and letters outside
ASCII. Whole cells (`source=`); best_span's are in decoding.py."""

from autograde.mistakes.qa import metrics
from autograde.variants import named, right, wrong
from autograde.variants.qa.text import REFUSE, SQUAD, metric_source, windows_source

CONTEXT = (  # the window's context positions, and None when it does not hold the whole answer
    "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
    "    context = [i for i, s in enumerate(sequence_ids) if s == 1]\n"
    "    if not context or char_start < offsets[context[0]][0] or char_end > offsets[context[-1]][1]:\n"
    "        return None\n")
NO_SHARED_CHARACTERS = ("the course's Øresund paragraph has no character the tokenizer cuts into several tokens (as it "
                        "cuts a Hangul syllable), so the visible check cannot show it")

SPANS = [
    wrong("char_span_to_token_span", "a token counts when its start or its end lies in the answer", source=(
        CONTEXT +
        "    inside = [i for i in context\n"
        "              if char_start <= offsets[i][0] < char_end or char_start < offsets[i][1] <= char_end]\n"
        "    return (inside[0], inside[-1]) if inside else None\n"), message="inside a token, where no token starts"),
    wrong("char_span_to_token_span", "the tokens that hold char_start and char_end - 1 looked up", source=(
        CONTEXT +
        "    first = next(i for i in context if offsets[i][0] <= char_start < offsets[i][1])\n"
        "    last = next(i for i in context if offsets[i][0] < char_end <= offsets[i][1])\n"
        "    return first, last\n"), message="the answer starts or ends with whitespace, which no token holds"),
    wrong("char_span_to_token_span", "a map from characters to tokens, the first token of a character kept",
          source=(
              CONTEXT +
              "    owner = {}\n"
              "    for i in context:\n"
              "        for character in range(offsets[i][0], offsets[i][1]):\n"
              "            owner.setdefault(character, i)\n"
              "    first = next(i for i in context if offsets[i][1] > char_start)\n"
              "    last = owner.get(char_end - 1, max(i for i in context if offsets[i][0] < char_end))\n"
              "    return first, last\n"),
          message="last is the last context token that starts before char_end", visible_gap=NO_SHARED_CHARACTERS),
    wrong("char_span_to_token_span", "the context's first offsets read before asking whether there is one", source=(
        "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
        "    context = [i for i, s in enumerate(sequence_ids) if s == 1]\n"
        "    if char_start < offsets[context[0]][0] or char_end > offsets[context[-1]][1]:\n"
        "        return None\n"
        "    first = next(i for i in context if offsets[i][1] > char_start)\n"
        "    last = next(i for i in reversed(context) if offsets[i][0] < char_end)\n"
        "    return first, last\n"), message="this window holds no context token"),
    wrong("char_span_to_token_span", "NumPy: the context's offsets squeezed, 1-D for one context token", source=(
        "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
        "    context = np.flatnonzero(np.array([s == 1 for s in sequence_ids]))\n"
        "    if context.size == 0:\n"
        "        return None\n"
        "    pairs = np.array([offsets[i] for i in context]).squeeze()\n"
        "    if char_start < pairs[0, 0] or char_end > pairs[-1, 1]:\n"
        "        return None\n"
        "    first = int(context[np.argmax(pairs[:, 1] > char_start)])\n"
        "    last = int(context[len(context) - 1 - np.argmax(pairs[::-1, 0] < char_end)])\n"
        "    return first, last\n"), message="raised IndexError: too many indices for array"),
    wrong("char_span_to_token_span", "the context taken to begin two positions after the question's last token",
          source=(
              "def char_span_to_token_span(offsets, sequence_ids, char_start, char_end):\n"
              "    begin = len(sequence_ids) - list(sequence_ids)[::-1].index(0) + 1\n"
              "    context = [i for i in range(begin, len(sequence_ids)) if sequence_ids[i] == 1]\n"
              "    if not context or char_start < offsets[context[0]][0] or char_end > offsets[context[-1]][1]:\n"
              "        return None\n"
              "    first = next(i for i in context if offsets[i][1] > char_start)\n"
              "    last = next(i for i in reversed(context) if offsets[i][0] < char_end)\n"
              "    return first, last\n"), message="this window holds no question token"),
    right("char_span_to_token_span", "bisect over the context's ends and starts", source=(
        "import bisect\n"
        "\n"
        "\n" + CONTEXT +
        "    ends = [offsets[i][1] for i in context]\n"
        "    starts = [offsets[i][0] for i in context]\n"
        "    first = bisect.bisect_right(ends, char_start)\n"
        "    last = bisect.bisect_left(starts, char_end) - 1\n"
        "    return context[first], context[last]\n")),
]

WINDOWS = [
    wrong("make_windows", "stride 0 refused (stride < 1)", source=windows_source(
        refuse=REFUSE.replace("stride < 0 or", "stride < 1 or")), message="these arguments are allowed"),
    wrong("make_windows", "room for one token refused (room <= 1)", source=windows_source(
        refuse=REFUSE.replace("room < 1", "room <= 1")), message="these arguments are allowed"),
    wrong("make_windows", "the pieces from range(0, len(context_ids), room - stride): none for an empty context",
          source=windows_source().replace("    while True:\n",
                                          "    for start in range(0, len(context_ids), room - stride):\n"),
          message="it returned no window"),
    wrong("make_windows", "ceil((len(context_ids) - stride) / (room - stride)) windows", source=windows_source(
        loop="start < len(context_ids) - stride", advance="start += room - stride"), message="it returned no window"),
    wrong("make_windows", "[CLS] question [SEP] joined by np.concatenate: floats for an empty question",
          source=windows_source().replace(
              "tokens = [cls_id] + list(question_ids) + [sep_id] + piece + [sep_id]",
              "tokens = list(np.concatenate([[cls_id], question_ids, [sep_id]])) + piece + [sep_id]"),
          message="an int is expected there"),
    wrong("make_windows", "no ValueError for a stride out of range", source=windows_source(
        refuse=REFUSE.split("    if stride")[0]), message="where it should raise a ValueError"),
    wrong("make_windows", "no ValueError at all (a loop that never ends without room)",
          source=windows_source(refuse=""), message="expected a ValueError, because"),
    right("make_windows", "one condition refuses both; the piece starts from range(0, max(len - stride, 1), step)",
          source=(
              "def make_windows(question_ids, context_ids, context_offsets, max_length, stride, *, answer=None,\n"
              "                 cls_id=101, sep_id=102, pad_id=0):\n"
              "    question = [int(i) for i in question_ids]\n"
              "    room = max_length - len(question) - 3\n"
              "    if not 0 <= stride < room:\n"
              "        raise ValueError(f'stride {stride} is not in [0, {room})')\n"
              "    windows = []\n"
              "    for start in range(0, max(len(context_ids) - stride, 1), room - stride):\n"
              "        piece = [int(i) for i in context_ids[start:start + room]]\n"
              "        kinds = ['cls'] + ['q'] * len(question) + ['sep'] + ['c'] * len(piece) + ['end']\n"
              "        kinds += ['pad'] * (max_length - len(kinds))\n"
              "        pairs = iter(context_offsets[start:start + len(piece)])\n"
              "        window = {\n"
              "            'input_ids': [cls_id, *question, sep_id, *piece, sep_id] + [pad_id] * kinds.count('pad'),\n"
              "            'token_type_ids': [int(k in ('c', 'end')) for k in kinds],\n"
              "            'attention_mask': [int(k != 'pad') for k in kinds],\n"
              "            'sequence_ids': [{'q': 0, 'c': 1}.get(k) for k in kinds],\n"
              "            'offsets': [tuple(int(x) for x in next(pairs)) if k == 'c' else None for k in kinds],\n"
              "            'context_start': start,\n"
              "        }\n"
              "        if answer is not None:\n"
              "            span = char_span_to_token_span(window['offsets'], window['sequence_ids'], *answer)\n"
              "            window['start_position'], window['end_position'] = span or (0, 0)\n"
              "        windows.append(window)\n"
              "    return windows\n")),
]

UNICODE = "import re\nimport string\nimport unicodedata\n"

METRICS = [
    wrong("squad_em_f1", "the articles removed before the punctuation", source=metric_source().replace(
        "    text = " + SQUAD["punctuation"] + "\n    text = " + SQUAD["articles"] + "\n",
        "    text = " + SQUAD["articles"] + "\n    text = " + SQUAD["punctuation"] + "\n"),
          message=named(metrics.METRICS, "articles_before_punctuation")),
    wrong("squad_em_f1", "a hand-written list of marks: . , ; : ! ? ' \" ( ) -", source=metric_source(
        {"punctuation": "''.join(ch for ch in text if ch not in '.,;:!?\\'\"()-')"}),
          message=named(metrics.METRICS, "punctuation_kept")),
    wrong("squad_em_f1", "punctuation found by unicodedata (category P), outside ASCII too", source=metric_source(
        {"punctuation": "''.join(ch for ch in text if not unicodedata.category(ch).startswith('P'))"}).replace(
        "import re\nimport string\n", UNICODE), message=named(metrics.METRICS, "unicode_punctuation_removed")),
    wrong("squad_em_f1", "punctuation removed by the pattern [^\\w\\s]", source=metric_source(
        {"punctuation": "re.sub(r'[^\\w\\s]', '', text)"}),
          message=named(metrics.METRICS, "unicode_punctuation_removed")),
    wrong("squad_em_f1", "the text folded to ASCII (NFKD, accents and other letters dropped)", source=metric_source(
        {"lower": "unicodedata.normalize('NFKD', text.lower()).encode('ascii', 'ignore').decode()"}).replace(
        "import re\nimport string\n", UNICODE), message=named(metrics.METRICS, "non_ascii_changed")),
    wrong("squad_em_f1", "runs of ASCII whitespace collapsed, words split on ' '", source=metric_source().replace(
        "    return ' '.join(text.split())\n", "    return re.sub(r'[ \\t\\n\\r]+', ' ', text).strip()\n").replace(
        "normalize(prediction).split(), normalize(gold).split()",
        "normalize(prediction).split(' '), normalize(gold).split(' ')"),
          message=named(metrics.METRICS, "ascii_whitespace")),
    right("squad_em_f1", "a translation table of string.punctuation, words by re.split on \\s+", source=(
        "import re\n"
        "import string\n"
        "from collections import Counter\n"
        "\n"
        "DELETE = dict.fromkeys(map(ord, string.punctuation))\n"
        "\n"
        "\n"
        "def squad_em_f1(prediction, gold_answers):\n"
        "    def words(text):\n"
        "        kept = re.sub(r'\\b(?:a|an|the)\\b', ' ', text.lower().translate(DELETE))\n"
        "        return [word for word in re.split(r'\\s+', kept) if word]\n"
        "\n"
        "    predicted = words(prediction)\n"
        "    best = (0.0, 0.0)\n"
        "    for gold in list(gold_answers) or ['']:\n"
        "        expected = words(gold)\n"
        "        shared = (Counter(predicted) & Counter(expected)).total()\n"
        "        if not predicted or not expected:\n"
        "            f1 = float(predicted == expected)\n"
        "        else:\n"
        "            f1 = 2 * shared / (len(predicted) + len(expected))\n"
        "        best = (max(best[0], float(predicted == expected)), max(best[1], f1))\n"
        "    return best\n")),
]

VARIANTS = SPANS + WINDOWS + METRICS
