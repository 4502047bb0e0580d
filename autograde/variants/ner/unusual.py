"""Other implementations of assignment 06's exercises on unusual but valid inputs (autograde/input_classes/ner.py):
each wrong one is right on ordinary sentences and breaks on one class of input (a word without a token, no special
tokens, word ids in a tuple, a label id on no position, types named with hyphens or underscores, no sentence, no
entity, a dict of labels whose keys are not in order); each right one handles them in another way. The messages are
the checks' own words on the case where each breaks."""

from autograde.variants import right, wrong

ALIGNMENT = [
    wrong("align_labels_with_tokens", "words counted in order of appearance (a word without a token shifts them)",
          source=(
              "def align_labels_with_tokens(word_labels, word_ids):\n"
              "    labels, previous, word = [], None, -1\n"
              "    for word_id in word_ids:\n"
              "        if word_id is None or word_id == previous:\n"
              "            labels.append(-100)\n"
              "        else:\n"
              "            word += 1\n"
              "            labels.append(int(word_labels[word]))\n"
              "        previous = word_id\n"
              "    return labels\n"),
          message="without any token (the word ids skip them",
          visible_message="a zero-width space, which gets no token: the word ids skip it]"),
    wrong("align_labels_with_tokens", "the word labels read from an iterator, one for each new word id", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    remaining = iter(word_labels)\n"
        "    labels, previous = [], None\n"
        "    for word_id in word_ids:\n"
        "        labels.append(-100 if word_id is None or word_id == previous else int(next(remaining)))\n"
        "        previous = word_id\n"
        "    return labels\n"),
          message="without any token (the word ids skip them",
          visible_message="a zero-width space, which gets no token: the word ids skip it]"),
    wrong("align_labels_with_tokens", "the previous word ids as [None] + word_ids[:-1] (fails on a tuple)", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    return [-100 if word_id is None or word_id == previous else int(word_labels[word_id])\n"
        "            for previous, word_id in zip([None] + word_ids[:-1], word_ids)]\n"),
          message="align_labels_with_tokens raised TypeError: can only concatenate list (not \"tuple\") to list"),
    wrong("align_labels_with_tokens", "a copy of word_ids with .copy() (a tuple has none)", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    before = word_ids.copy()\n"
        "    before.insert(0, None)\n"
        "    return [-100 if word_id is None or word_id == previous else int(word_labels[word_id])\n"
        "            for previous, word_id in zip(before, word_ids)]\n"),
          message="align_labels_with_tokens raised AttributeError: 'tuple' object has no attribute 'copy'"),
    wrong("align_labels_with_tokens", "token 0 taken for [CLS] without looking at its word id", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    labels, previous = [-100], word_ids[0]\n"
        "    for word_id in word_ids[1:]:\n"
        "        labels.append(-100 if word_id is None or word_id == previous else int(word_labels[word_id]))\n"
        "        previous = word_id\n"
        "    return labels\n"),
          message="no special tokens ([CLS], [SEP]) at all", visible_message="[encoded without [CLS] and [SEP]"),
    wrong("align_labels_with_tokens", "the first and the last token set to -100 for [CLS] and [SEP]",
          old="    return labels", new="    labels[0] = labels[-1] = -100  # [CLS] and [SEP]\n    return labels",
          message="no special tokens ([CLS], [SEP]) at all", visible_message="[encoded without [CLS] and [SEP]"),
    wrong("align_labels_with_tokens", "NumPy word ids without a dtype (an empty word_ids gives floats)", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    ids = np.array([-1 if w is None else w for w in word_ids])\n"
        "    first = (ids >= 0) & (ids != np.concatenate([[-1], ids[:-1]]))\n"
        "    labels = np.full(len(ids), -100)\n"
        "    labels[first] = np.asarray(word_labels)[ids[first]]\n"
        "    return labels\n"),
          message="align_labels_with_tokens raised IndexError: arrays used as indices must be of integer"),
    right("align_labels_with_tokens", "each word's first position from a dict, its label put there", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    first = {}\n"
        "    for position, word_id in enumerate(word_ids):\n"
        "        if word_id is not None:\n"
        "            first.setdefault(word_id, position)\n"
        "    labels = [-100] * len(word_ids)\n"
        "    for word_id, position in first.items():\n"
        "        labels[position] = int(word_labels[word_id])\n"
        "    return labels\n")),
]

LOSS = [
    wrong("masked_token_loss", "one_hot with depth the largest label + 1 (a label on no position is lost)", source=(
        "def masked_token_loss(labels, logits):\n"
        "    labels = tf.cast(labels, tf.int32)\n"
        "    mask = tf.cast(tf.not_equal(labels, -100), tf.float32)\n"
        "    safe = tf.where(labels == -100, 0, labels)\n"
        "    one_hot = tf.one_hot(safe, tf.reduce_max(safe) + 1)\n"
        "    picked = tf.reduce_sum(one_hot * tf.nn.log_softmax(logits), axis=-1)\n"
        "    return tf.math.divide_no_nan(-tf.reduce_sum(picked * mask), tf.reduce_sum(mask))\n"),
          message="masked_token_loss raised InvalidArgumentError: Incompatible shapes"),
    right("masked_token_loss", "the log-softmax of each label gathered with tf.gather(batch_dims=2)", source=(
        "def masked_token_loss(labels, logits):\n"
        "    labels = tf.cast(labels, tf.int32)\n"
        "    keep = tf.cast(labels != -100, tf.float32)\n"
        "    log_p = tf.nn.log_softmax(logits, axis=-1)\n"
        "    picked = tf.gather(log_p, tf.maximum(labels, 0), batch_dims=2)\n"
        "    return -tf.reduce_sum(picked * keep) / tf.maximum(tf.reduce_sum(keep), 1.0)\n")),
]


def _spans_reading(read: str, imports: str = "") -> str:
    """entity_spans whose tags are read by `read`, code that sets prefix and name from tag."""
    return (f"{imports}def entity_spans(tags):\n"
            "    spans, kind, first = set(), None, 0\n"
            "    for i, tag in enumerate(list(tags) + ['O']):\n"
            f"{read}"
            "        if kind is not None and not (prefix == 'I' and name == kind):\n"
            "            spans.add((kind, first, i - 1))\n"
            "            kind = None\n"
            "        if prefix == 'B':\n"
            "            kind, first = name, i\n"
            "    return spans\n")


def _regex_reading(name: str) -> str:
    return ("        found = re.fullmatch(r'([BI])-(" + name + ")', tag)\n"
            "        prefix, name = found.groups() if found else ('O', '')\n")


SPANS = [
    wrong("entity_spans", "tags read with the regex ([BI])-([A-Z]+): capital letters only",
          source=_spans_reading(_regex_reading("[A-Z]+"), "import re\n"),
          message="is wrong: missing {('WORK_OF_ART', 0, 1)"),
    wrong("entity_spans", "tags read with the regex ([BI])-([A-Z_]+): no hyphen, lower case or digit",
          source=_spans_reading(_regex_reading("[A-Z_]+"), "import re\n"),
          message="is wrong: missing {('WORK-OF-ART', "),
    wrong("entity_spans", "prefix, name = tag.split('-') (a type with a hyphen has more parts)",
          source=_spans_reading("        prefix, name = tag.split('-') if tag != 'O' else ('O', '')\n"),
          message="entity_spans raised ValueError: too many values to unpack"),
    wrong("entity_spans", "the type as tag.split('-')[1] (WORK for WORK-OF-ART)",
          source=_spans_reading("        prefix, name = tag[0], tag.split('-')[1] if '-' in tag else ''\n"),
          message="not entities {('WORK', "),
    wrong("entity_spans", "I- continues an entity when it starts with I-X (I-PERCENT continues PER)",
          old='not (prefix == "I" and name == kind)', new='not tag.startswith("I-" + kind)',
          message="entity_spans(['B-PER', 'I-PERCENT', 'O', 'B-PERCENT', 'I-PER']) is wrong"),
    right("entity_spans", "tags read with the regex ([BI])-(.+): any type name",
          source=_spans_reading(_regex_reading(".+"), "import re\n")),
    right("entity_spans", "tags read with tag.split('-', 1)",
          source=_spans_reading("        prefix, name = (tag.split('-', 1) + [''])[:2]\n")),
]


KINDS = "    kinds = {entity[1] for entity in true_entities | predicted_entities}\n"
MICRO = "    result['micro'] = scores(true_entities, predicted_entities)\n"


def _scores_from(entities: str, kinds: str = KINDS, micro: str = MICRO) -> str:
    """entity_scores whose entity sets are made by `entities` (code setting true_entities and predicted_entities),
    with the types from `kinds` (code setting kinds) and the micro scores from `micro`."""
    return ("def entity_scores(true_tags, predicted_tags):\n"
            f"{entities}"
            "    def scores(true, predicted):\n"
            "        correct = len(true & predicted)\n"
            "        precision = correct / len(predicted) if predicted else 0.0\n"
            "        recall = correct / len(true) if true else 0.0\n"
            "        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0\n"
            "        return {'precision': precision, 'recall': recall, 'f1': f1, 'support': len(true)}\n"
            f"{kinds}"
            "    result = {kind: scores({e for e in true_entities if e[1] == kind},\n"
            "                           {e for e in predicted_entities if e[1] == kind})\n"
            "              for kind in sorted(kinds)}\n"
            f"{micro}"
            "    return result\n")


ENTITY_SETS = ("    true_entities = {(s, *span) for s, tags in enumerate(true_tags) for span in entity_spans(tags)}\n"
               "    predicted_entities = {(s, *span) for s, tags in enumerate(predicted_tags)\n"
               "                          for span in entity_spans(tags)}\n")

SCORES = [
    wrong("entity_scores", "the types as set.union(*...) of each sentence's (no sentences: no argument)",
          source=_scores_from(ENTITY_SETS, kinds=(
              "    kinds = set.union(*[{kind for kind, _, _ in entity_spans(tags)}\n"
              "                        for tags in list(true_tags) + list(predicted_tags)])\n")),
          message="[no sentences at all] entity_scores raised TypeError"),
    wrong("entity_scores", "the entity sets joined with functools.reduce without a start value", source=_scores_from(
        "    from functools import reduce\n"
        "    true_entities = reduce(set.union, [{(s, *span) for span in entity_spans(tags)}\n"
        "                                       for s, tags in enumerate(true_tags)])\n"
        "    predicted_entities = reduce(set.union, [{(s, *span) for span in entity_spans(tags)}\n"
        "                                            for s, tags in enumerate(predicted_tags)])\n"),
          message="[no sentences at all] entity_scores raised TypeError"),
    wrong("entity_scores", "micro summed from a NumPy table of the per-type counts (no type: no table)", source=(
        "def entity_scores(true_tags, predicted_tags):\n"
        f"{ENTITY_SETS}"
        "    kinds = sorted({entity[1] for entity in true_entities | predicted_entities})\n"
        "    table = np.array([[len({e for e in true_entities & predicted_entities if e[1] == kind}),\n"
        "                       len({e for e in predicted_entities if e[1] == kind}),\n"
        "                       len({e for e in true_entities if e[1] == kind})] for kind in kinds])\n"
        "    def scores(correct, predicted, true):\n"
        "        precision = correct / predicted if predicted else 0.0\n"
        "        recall = correct / true if true else 0.0\n"
        "        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0\n"
        "        return {'precision': float(precision), 'recall': float(recall), 'f1': float(f1),\n"
        "                'support': int(true)}\n"
        "    result = {kind: scores(*row) for kind, row in zip(kinds, table)}\n"
        "    result['micro'] = scores(*table.sum(axis=0))\n"
        "    return result\n"), message="[no entity in either"),
    wrong("entity_scores", "micro from the column sums map(sum, zip(*rows)) of the per-type counts", source=(
        "def entity_scores(true_tags, predicted_tags):\n"
        f"{ENTITY_SETS}"
        "    def scores(correct, predicted, true):\n"
        "        precision = correct / predicted if predicted else 0.0\n"
        "        recall = correct / true if true else 0.0\n"
        "        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0\n"
        "        return {'precision': precision, 'recall': recall, 'f1': f1, 'support': true}\n"
        "    result, rows = {}, []\n"
        "    for kind in sorted({entity[1] for entity in true_entities | predicted_entities}):\n"
        "        true = {e for e in true_entities if e[1] == kind}\n"
        "        predicted = {e for e in predicted_entities if e[1] == kind}\n"
        "        rows.append((len(true & predicted), len(predicted), len(true)))\n"
        "        result[kind] = scores(*rows[-1])\n"
        "    correct, predicted, true = map(sum, zip(*rows))\n"
        "    result['micro'] = scores(correct, predicted, true)\n"
        "    return result\n"), message="[no entity in either"),
    wrong("entity_scores", "the types read from the B- tags as tag.split('-')[1] (WORK for WORK-OF-ART)",
          source=_scores_from(ENTITY_SETS, kinds=(
              "    kinds = {tag.split('-')[1] for tags in list(true_tags) + list(predicted_tags) for tag in tags\n"
              "             if tag.startswith('B-')}\n")),
          message="[types named with hyphens (WORK-OF-ART, creative-work)] entity_scores(true_tags, predicted_tags) "
          "has the keys"),
    right("entity_scores", "counts in a dict of [correct, predicted, true] lists, micro as their column sums",
          source=(
              "def entity_scores(true_tags, predicted_tags):\n"
              "    counts = {}\n"
              "    for true, predicted in zip(true_tags, predicted_tags):\n"
              "        gold, guess = set(entity_spans(true)), set(entity_spans(predicted))\n"
              "        for span in gold | guess:\n"
              "            row = counts.setdefault(span[0], [0, 0, 0])\n"
              "            row[0] += span in gold and span in guess\n"
              "            row[1] += span in guess\n"
              "            row[2] += span in gold\n"
              "    def scores(correct, predicted, true):\n"
              "        precision = correct / predicted if predicted else 0.0\n"
              "        recall = correct / true if true else 0.0\n"
              "        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0\n"
              "        return {'precision': precision, 'recall': recall, 'f1': f1, 'support': true}\n"
              "    result = {kind: scores(*counts[kind]) for kind in sorted(counts)}\n"
              "    result['micro'] = scores(*[sum(row[i] for row in counts.values()) for i in range(3)])\n"
              "    return result\n")),
]


RETURN_ENTITIES = (
    "    return [{'type': kind, 'start': words[a][0], 'end': words[b][1],\n"
    "             'text': text[words[a][0]:words[b][1]]}\n"
    "            for kind, a, b in sorted(entity_spans([w[2] for w in words]), key=lambda s: s[1])]\n")


def _to_entities(loop: str, tag_of: str = "id_to_label[int(label_id)]", before: str = "") -> str:
    """predictions_to_entities whose tokens come from `loop` (a for statement over start, end, word_id, label_id),
    each word's tag from `tag_of`."""
    return ("def predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label):\n"
            f"{before}"
            "    words, previous = [], None\n"
            f"    {loop}\n"
            "        if word_id is None:\n"
            "            continue\n"
            "        if word_id != previous:\n"
            f"            words.append([int(start), int(end), {tag_of}])\n"
            "        else:\n"
            "            words[-1][1] = int(end)\n"
            "        previous = word_id\n"
            f"{RETURN_ENTITIES}")


TOKENS = "zip(offsets, word_ids, label_ids)"

ENTITIES = [
    wrong("predictions_to_entities", "token 0 skipped as [CLS] without looking at its word id",
          source=_to_entities(f"for (start, end), word_id, label_id in list({TOKENS})[1:]:"),
          message="no special tokens ([CLS], [SEP]) at all: an entity on the first word",
          visible_message="[encoded without [CLS] and [SEP]"),
    wrong("predictions_to_entities", "the first and the last token skipped as [CLS] and [SEP]",
          source=_to_entities(f"for (start, end), word_id, label_id in list({TOKENS})[1:-1]:"),
          message="no special tokens ([CLS], [SEP]) at all: an entity on the first word",
          visible_message="[encoded without [CLS] and [SEP]"),
    wrong("predictions_to_entities", "words in a list indexed by word id - the first word id", source=(
        "def predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label):\n"
        "    real = [w for w in word_ids if w is not None]\n"
        "    words = [None] * len(set(real))\n"
        "    for (start, end), word_id, label_id in zip(offsets, word_ids, label_ids):\n"
        "        if word_id is None:\n"
        "            continue\n"
        "        i = word_id - real[0]\n"
        "        if words[i] is None:\n"
        "            words[i] = [int(start), int(end), id_to_label[int(label_id)]]\n"
        "        else:\n"
        "            words[i][1] = int(end)\n"
        f"{RETURN_ENTITIES}"),
          message="the word ids skip"),
    wrong("predictions_to_entities", "words in a dict by word id, read back as first id + 0, 1, 2, ...", source=(
        "def predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label):\n"
        "    by_id = {}\n"
        "    for (start, end), word_id, label_id in zip(offsets, word_ids, label_ids):\n"
        "        if word_id is None:\n"
        "            continue\n"
        "        if word_id not in by_id:\n"
        "            by_id[word_id] = [int(start), int(end), id_to_label[int(label_id)]]\n"
        "        else:\n"
        "            by_id[word_id][1] = int(end)\n"
        "    first = min(by_id, default=0)\n"
        "    words = [by_id[first + i] for i in range(len(by_id))]\n"
        f"{RETURN_ENTITIES}"),
          message="the word ids skip"),
    wrong("predictions_to_entities", "a dict id_to_label read by the position of its values", source=_to_entities(
        f"for (start, end), word_id, label_id in {TOKENS}:", tag_of="names[int(label_id)]",
        before="    names = list(id_to_label.values()) if isinstance(id_to_label, dict) else list(id_to_label)\n"),
          message="keys not in order", visible_message="id_to_label a dict from the last id down"),
    wrong("predictions_to_entities", "its own strict reading, prefix, kind = tag.split('-') (fails on WORK-OF-ART)",
          source=(
              "def predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label):\n"
              "    words, previous = [], None\n"
              "    for (start, end), word_id, label_id in zip(offsets, word_ids, label_ids):\n"
              "        if word_id is None:\n"
              "            continue\n"
              "        if word_id != previous:\n"
              "            words.append([int(start), int(end), id_to_label[int(label_id)]])\n"
              "        else:\n"
              "            words[-1][1] = int(end)\n"
              "        previous = word_id\n"
              "    entities, current = [], None\n"
              "    for start, end, tag in words + [[0, 0, 'O']]:\n"
              "        prefix, kind = tag.split('-') if tag != 'O' else ('O', None)\n"
              "        if current is not None and prefix == 'I' and kind == current['type']:\n"
              "            current['end'] = end\n"
              "            continue\n"
              "        if current is not None:\n"
              "            current['text'] = text[current['start']:current['end']]\n"
              "            entities.append(current)\n"
              "            current = None\n"
              "        if prefix == 'B':\n"
              "            current = {'type': kind, 'start': start, 'end': end}\n"
              "    return entities\n"),
          message="predictions_to_entities raised ValueError: too many values to unpack"),
    right("predictions_to_entities", "itertools.groupby over the tokens of each word id", source=(
        "def predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label):\n"
        "    from itertools import groupby\n"
        "    tokens = [(w, start, end, label) for (start, end), w, label in zip(offsets, word_ids, label_ids)]\n"
        "    words = []\n"
        "    for word_id, group in groupby(tokens, key=lambda token: token[0]):\n"
        "        group = list(group)\n"
        "        if word_id is not None:\n"
        "            words.append((int(group[0][1]), int(group[-1][2]), id_to_label[int(group[0][3])]))\n"
        "    found = []\n"
        "    for kind, a, b in sorted(entity_spans([tag for _, _, tag in words]), key=lambda span: span[1]):\n"
        "        found.append({'type': kind, 'start': words[a][0], 'end': words[b][1],\n"
        "                      'text': text[words[a][0]:words[b][1]]})\n"
        "    return found\n")),
]

VARIANTS = ALIGNMENT + LOSS + SPANS + SCORES + ENTITIES
