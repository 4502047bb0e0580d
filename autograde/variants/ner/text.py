"""Other implementations of assignment 06's text-side exercises (see autograde/variants/__init__.py): label
alignment, entity spans and scores, predictions back to text. Each wrong one makes one of the mistakes named in
autograde/mistakes/ner (tests/test_06_ner_*.py check that both checks name it)."""

from autograde.mistakes.ner import alignment, entities, evaluation
from autograde.variants import named, right, wrong
from course_lib.ner.evaluation import ZERO_DIVISION

ALIGNMENT = [
    wrong("align_labels_with_tokens", "every token of a word gets the word's label",
          old="            labels.append(-100)  # a continuation token of the same word",
          new="            labels.append(int(word_labels[word_id]))  # every token carries the label",
          message=named(alignment.ALIGNMENT, "every_subtoken")),
    wrong("align_labels_with_tokens", "special tokens labelled 0 (O) instead of -100",
          old="            labels.append(-100)  # [CLS], [SEP] and padding",
          new="            labels.append(0)  # [CLS], [SEP] and padding",
          message=named(alignment.ALIGNMENT, "special_as_outside")),
    wrong("align_labels_with_tokens", "the label on each word's last token", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    labels = []\n"
        "    for i, word_id in enumerate(word_ids):\n"
        "        is_last = i + 1 == len(word_ids) or word_ids[i + 1] != word_id\n"
        "        labels.append(int(word_labels[word_id]) if word_id is not None and is_last else -100)\n"
        "    return labels\n"), message=named(alignment.ALIGNMENT, "last_subtoken")),
    wrong("align_labels_with_tokens", "None turned into -1, which indexes the last word's label", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    labels, previous = [], None\n"
        "    for word_id in word_ids:\n"
        "        index = -1 if word_id is None else word_id\n"
        "        labels.append(int(word_labels[index]) if index != previous else -100)\n"
        "        previous = index\n"
        "    return labels\n"), message="[CLS], [SEP] and padding (word id None) got the"),
    wrong("align_labels_with_tokens", "[CLS] skipped, then one -100 appended to keep the length", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    labels, previous = [], None\n"
        "    for word_id in list(word_ids)[1:]:\n"
        "        if word_id is None or word_id == previous:\n"
        "            labels.append(-100)\n"
        "        else:\n"
        "            labels.append(int(word_labels[word_id]))\n"
        "        previous = word_id\n"
        "    return labels + [-100]\n"), message=named(alignment.ALIGNMENT, "shifted_left")),
    wrong("align_labels_with_tokens", "continuation tokens labelled I-X (the further exercise's convention)", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    labels, previous = [], None\n"
        "    for word_id in word_ids:\n"
        "        if word_id is None:\n"
        "            labels.append(-100)\n"
        "        else:\n"
        "            label = int(word_labels[word_id])\n"
        "            is_begin = LABELS[label].startswith('B-')\n"
        "            labels.append(LABELS.index('I-' + LABELS[label][2:]) if word_id == previous and is_begin\n"
        "                          else label)\n"
        "        previous = word_id\n"
        "    return labels\n"), message=named(alignment.ALIGNMENT, "continuation_as_inside")),
    right("align_labels_with_tokens", "NumPy: first tokens found by comparing each word id with the previous one",
          source=(
              "def align_labels_with_tokens(word_labels, word_ids):\n"
              "    word_labels = np.asarray(word_labels)\n"
              "    ids = np.array([-1 if w is None else w for w in word_ids], dtype=np.int64)\n"
              "    previous = np.concatenate([[-1], ids[:-1]])\n"
              "    first = (ids >= 0) & (ids != previous)\n"
              "    labels = np.full(len(ids), -100)\n"
              "    labels[first] = word_labels[ids[first]]\n"
              "    return labels\n")),
    right("align_labels_with_tokens", "a set of the words already labelled", source=(
        "def align_labels_with_tokens(word_labels, word_ids):\n"
        "    seen, labels = set(), []\n"
        "    for word_id in word_ids:\n"
        "        if word_id is None or word_id in seen:\n"
        "            labels.append(-100)\n"
        "        else:\n"
        "            seen.add(word_id)\n"
        "            labels.append(word_labels[word_id])\n"
        "    return labels\n")),
]

SPANS = [
    wrong("entity_spans", "last index exclusive", old="spans.add((kind, first, i - 1))",
          new="spans.add((kind, first, i))", message=named(evaluation.SPANS, "end_exclusive")),
    wrong("entity_spans", "lenient: an I- tag after O starts an entity (conlleval's default)",
          old='        if prefix == "B":\n', new='        if prefix == "B" or (prefix == "I" and kind is None):\n',
          message=named(evaluation.SPANS, "lenient")),
    wrong("entity_spans", "the entity still open at the end is lost", old='enumerate(list(tags) + ["O"])',
          new="enumerate(tags)", message=named(evaluation.SPANS, "last_lost")),
    wrong("entity_spans", "I- of any type continues an entity (B-X I-Y merged)",
          old='not (prefix == "I" and name == kind)', new='prefix != "I"',
          message=named(evaluation.SPANS, "types_merged")),
    wrong("entity_spans", "the type keeps its B- prefix", old="            kind, first = name, i",
          new="            kind, first = tag, i", message="the type is the tag without its B- or I- prefix"),
    wrong("entity_spans", "B-X right after an entity of type X continues it", source=(
        "def entity_spans(tags):\n"
        "    spans = set()\n"
        "    kind, first = None, 0\n"
        "    for i, tag in enumerate(list(tags) + ['O']):\n"
        "        prefix, _, name = tag.partition('-')\n"
        "        if kind is not None and name == kind and prefix in ('B', 'I'):\n"
        "            continue\n"
        "        if kind is not None:\n"
        "            spans.add((kind, first, i - 1))\n"
        "            kind = None\n"
        "        if prefix == 'B':\n"
        "            kind, first = name, i\n"
        "    return spans\n"), message=named(evaluation.SPANS, "b_continues")),
    wrong("entity_spans", "a stray I- dropped, but the I- tags after it kept as an entity", source=(
        "def entity_spans(tags):\n"
        "    spans = set()\n"
        "    kind, first = None, 0\n"
        "    for i, tag in enumerate(list(tags) + ['O']):\n"
        "        prefix, _, name = tag.partition('-')\n"
        "        previous = tags[i - 1] if i > 0 else 'O'\n"
        "        if kind is not None and not (prefix == 'I' and name == kind):\n"
        "            spans.add((kind, first, i - 1))\n"
        "            kind = None\n"
        "        if prefix == 'B' or (prefix == 'I' and kind is None and previous == tag):\n"
        "            kind, first = name, i\n"
        "    return spans\n"), message=named(evaluation.SPANS, "stray_run_kept")),
    right("entity_spans", "a while loop over the runs B-X I-X ...", source=(
        "def entity_spans(tags):\n"
        "    tags = list(tags)\n"
        "    spans, i = set(), 0\n"
        "    while i < len(tags):\n"
        "        if tags[i].startswith('B-'):\n"
        "            kind, last = tags[i][2:], i\n"
        "            while last + 1 < len(tags) and tags[last + 1] == 'I-' + kind:\n"
        "                last += 1\n"
        "            spans.add((kind, i, last))\n"
        "            i = last + 1\n"
        "        else:\n"
        "            i += 1\n"
        "    return spans\n")),
    right("entity_spans", "a list of spans sorted by start, the open entity closed after the loop", source=(
        "def entity_spans(tags):\n"
        "    found, current = [], None\n"
        "    for i, tag in enumerate(tags):\n"
        "        if current is not None and tag == 'I-' + current[0]:\n"
        "            current[2] = i\n"
        "            continue\n"
        "        if current is not None:\n"
        "            found.append(tuple(current))\n"
        "            current = None\n"
        "        if tag.startswith('B-'):\n"
        "            current = [tag[2:], i, i]\n"
        "    if current is not None:\n"
        "        found.append(tuple(current))\n"
        "    return sorted(found, key=lambda span: span[1])\n")),
]

SCORES = [
    wrong("entity_scores", "macro average as \"micro\"",
          old='    result["micro"] = scores(true_entities, predicted_entities)',
          new='    kinds = list(result)\n'
              '    result["micro"] = {name: sum(result[k][name] for k in kinds) / max(len(kinds), 1)\n'
              '                       for name in ("precision", "recall", "f1")}\n'
              '    result["micro"]["support"] = len(true_entities)', message=named(evaluation.SCORES, "macro")),
    wrong("entity_scores", "the sentence index forgotten (always 0)",
          old="{(sentence, *span) for span in entity_spans(true)}\n"
              "        predicted_entities |= {(sentence, *span) for span in entity_spans(predicted)}",
          new="{(0, *span) for span in entity_spans(true)}\n"
              "        predicted_entities |= {(0, *span) for span in entity_spans(predicted)}",
          message=named(evaluation.SCORES, "no_sentence_index")),
    wrong("entity_scores", "precision and recall swapped", old='return {"precision": precision, "recall": recall,',
          new='return {"precision": recall, "recall": precision,', message=named(evaluation.SCORES, "swapped")),
    wrong("entity_scores", "F1 as the mean of precision and recall",
          old="f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0",
          new="f1 = (precision + recall) / 2", message=named(evaluation.SCORES, "f1_mean")),
    wrong("entity_scores", "support counted on the predictions", old='"support": len(true)}',
          new='"support": len(predicted)}', message=named(evaluation.SCORES, "support_predicted")),
    wrong("entity_scores", "no guard against dividing by zero",
          old="precision = correct / len(predicted) if predicted else 0.0",
          new="precision = correct / len(predicted)", message=ZERO_DIVISION),
    wrong("entity_scores", "token-level counts", source=(
        "def entity_scores(true_tags, predicted_tags):\n"
        "    counts = {}\n"
        "    for true, predicted in zip(true_tags, predicted_tags):\n"
        "        for t, p in zip(true, predicted):\n"
        "            for tag, role in ((t, 'true'), (p, 'predicted')):\n"
        "                if tag != 'O':\n"
        "                    counts.setdefault(tag[2:], {'true': 0, 'predicted': 0, 'correct': 0})[role] += 1\n"
        "            if t != 'O' and t == p:\n"
        "                counts[t[2:]]['correct'] += 1\n"
        "    def scores(c, p, t):\n"
        "        precision = c / p if p else 0.0\n"
        "        recall = c / t if t else 0.0\n"
        "        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0\n"
        "        return {'precision': precision, 'recall': recall, 'f1': f1, 'support': t}\n"
        "    result = {k: scores(v['correct'], v['predicted'], v['true']) for k, v in sorted(counts.items())}\n"
        "    total = {role: sum(v[role] for v in counts.values()) for role in ('correct', 'predicted', 'true')}\n"
        "    result['micro'] = scores(total['correct'], total['predicted'], total['true'])\n"
        "    return result\n"), message=named(evaluation.SCORES, "token_level")),
    right("entity_scores", "Counters of types, F1 as 2 correct / (predicted + true)", source=(
        "def entity_scores(true_tags, predicted_tags):\n"
        "    from collections import Counter\n"
        "    true_count, predicted_count, correct_count = Counter(), Counter(), Counter()\n"
        "    for true, predicted in zip(true_tags, predicted_tags):\n"
        "        gold, guess = set(entity_spans(true)), set(entity_spans(predicted))\n"
        "        true_count.update(kind for kind, _, _ in gold)\n"
        "        predicted_count.update(kind for kind, _, _ in guess)\n"
        "        correct_count.update(kind for kind, _, _ in gold & guess)\n"
        "    def scores(c, p, t):\n"
        "        return {'precision': c / p if p else 0.0, 'recall': c / t if t else 0.0,\n"
        "                'f1': 2 * c / (p + t) if p + t else 0.0, 'support': t}\n"
        "    result = {kind: scores(correct_count[kind], predicted_count[kind], true_count[kind])\n"
        "              for kind in sorted(true_count | predicted_count)}\n"
        "    result['micro'] = scores(sum(correct_count.values()), sum(predicted_count.values()),\n"
        "                             sum(true_count.values()))\n"
        "    return result\n")),
    right("entity_scores", "a defaultdict of NumPy counts, NumPy floats in a defaultdict", source=(
        "def entity_scores(true_tags, predicted_tags):\n"
        "    from collections import defaultdict\n"
        "    counts = defaultdict(lambda: np.zeros(3))  # correct, predicted, true\n"
        "    for true, predicted in zip(true_tags, predicted_tags):\n"
        "        gold, guess = set(entity_spans(true)), set(entity_spans(predicted))\n"
        "        for kind, _, _ in gold:\n"
        "            counts[kind][2] += 1\n"
        "        for kind, _, _ in guess:\n"
        "            counts[kind][1] += 1\n"
        "        for kind, _, _ in gold & guess:\n"
        "            counts[kind][0] += 1\n"
        "    counts['micro'] = np.sum(list(counts.values()), axis=0) if counts else np.zeros(3)\n"
        "    result = defaultdict(dict)\n"
        "    for kind, (c, p, t) in counts.items():\n"
        "        precision = c / p if p else 0.0\n"
        "        recall = c / t if t else 0.0\n"
        "        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0\n"
        "        result[kind] = {'precision': precision, 'recall': recall, 'f1': f1, 'support': int(t)}\n"
        "    return result\n")),
]

ENTITIES = [
    wrong("predictions_to_entities", "a word's tag from its last token",
          old="            words[-1][1] = int(end)  # a later token extends the word",
          new="            words[-1][1:] = [int(end), id_to_label[int(label_id)]]  # a later token extends the word",
          message=named(entities.ENTITIES, "tag_from_last_token")),
    wrong("predictions_to_entities", "a word ends where its first token ends (the last word cut)",
          old="            words[-1][1] = int(end)  # a later token extends the word",
          new="            pass  # a later token extends the word", message=named(entities.ENTITIES, "word_cut")),
    wrong("predictions_to_entities", "end inclusive", old='"end": end,', new='"end": end - 1,',
          message=named(entities.ENTITIES, "end_inclusive")),
    wrong("predictions_to_entities", "special tokens taken for words",
          old="    previous = None\n    for (start, end), word_id, label_id in zip(offsets, word_ids, label_ids):\n"
              "        if word_id is None:\n            continue  # [CLS], [SEP], padding\n",
          new="    previous = -1\n    for (start, end), word_id, label_id in zip(offsets, word_ids, label_ids):\n",
          message=named(entities.ENTITIES, "special_tokens_as_words")),
    wrong("predictions_to_entities", "the entity's text rebuilt from its words joined with spaces",
          old='"text": text[start:end]}', new='"text": " ".join(text[s:e] for s, e, _ in words[first:last + 1])}',
          message=named(entities.TEXTS, "words_joined")),
    wrong("predictions_to_entities", "the tags read from LABELS, not id_to_label", old="id_to_label[int(label_id)]",
          new="LABELS[int(label_id)]", message=named(entities.ENTITIES, "labels_hard_coded")),
    wrong("predictions_to_entities", "lenient spans of its own: an I- tag after O starts an entity", source=(
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
        "        if current is not None and tag == 'I-' + current['type']:\n"
        "            current['end'] = end\n"
        "            continue\n"
        "        if current is not None:\n"
        "            current['text'] = text[current['start']:current['end']]\n"
        "            entities.append(current)\n"
        "            current = None\n"
        "        if tag != 'O':\n"
        "            current = {'type': tag[2:], 'start': start, 'end': end}\n"
        "    return entities\n"), message=named(entities.ENTITIES, "lenient")),
    right("predictions_to_entities", "dicts from word id to first token and character span", source=(
        "def predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label):\n"
        "    first_token, span_of = {}, {}\n"
        "    for i, word_id in enumerate(word_ids):\n"
        "        if word_id is None:\n"
        "            continue\n"
        "        first_token.setdefault(word_id, i)\n"
        "        start, end = offsets[i]\n"
        "        span_of[word_id] = (span_of.get(word_id, (start, end))[0], end)\n"
        "    order = sorted(first_token)\n"
        "    tags = [id_to_label[int(label_ids[first_token[w]])] for w in order]\n"
        "    entities = []\n"
        "    for kind, first, last in entity_spans(tags):\n"
        "        start, end = span_of[order[first]][0], span_of[order[last]][1]\n"
        "        entities.append({'type': kind, 'start': int(start), 'end': int(end), 'text': text[start:end]})\n"
        "    return sorted(entities, key=lambda entity: entity['start'])\n")),
    right("predictions_to_entities", "NumPy: first and last tokens of the words from the word ids", source=(
        "def predictions_to_entities(text, offsets, word_ids, label_ids, id_to_label):\n"
        "    ids = np.array([-1 if w is None else w for w in word_ids])\n"
        "    labels = np.asarray(label_ids)\n"
        "    real = np.flatnonzero(ids >= 0)\n"
        "    firsts = [i for i in real if i == 0 or ids[i - 1] != ids[i]]\n"
        "    lasts = [i for i in real if i + 1 == len(ids) or ids[i + 1] != ids[i]]\n"
        "    tags = [id_to_label[int(labels[i])] for i in firsts]\n"
        "    found = [{'type': kind, 'start': int(offsets[firsts[a]][0]), 'end': int(offsets[lasts[b]][1])}\n"
        "             for kind, a, b in entity_spans(tags)]\n"
        "    for entity in found:\n"
        "        entity['text'] = text[entity['start']:entity['end']]\n"
        "    return sorted(found, key=lambda entity: entity['start'])\n")),
]

VARIANTS = ALIGNMENT + SPANS + SCORES + ENTITIES
