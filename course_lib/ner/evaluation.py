"""Assignment 06, entity-level evaluation: the visible checks of `entity_spans` and `entity_scores`, their
diagnostics (shared with the hidden checks in autograde.checks.ner.evaluation) and `format_scores`, the notebook's
table of scores.

The expected values come from the reference (`course_lib/expected/06_ner.json`); seqeval is not needed here.
`entity_scores` is checked with a stand-in for the learner's `entity_spans` that answers from that file, so a
mistake in `entity_spans` costs its own points only. The hidden checks call the learner's function in the student's
kernel and read back what it returned (a set, say) as plain data through course_lib.calls.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from course_lib.calls import expect_unchanged, named
from course_lib.checking import CheckFailed, call_learner, parts_replaced, passed
from course_lib.expected import load as load_expected

STEM = "06_ner"
FIELDS = ("precision", "recall", "f1", "support")
TOLERANCE = 1e-8
STRICT_RULE = ("under strict IOB2 an entity starts at B-X and continues over the I-X tags right after it; any other "
               "I- tag belongs to no entity")

# What 06's checks say when the learner's function changed the caller's list (course_lib.calls.expect_unchanged).
COPY_TAGS = ("(for example by appending \"O\" to a sentence): work on a copy, list(tags) + [\"O\"], never on the "
             "caller's lists")
ZERO_DIVISION = "a ratio with nothing to divide by (no predicted, or no true entity) is 0.0"


def show(tags, limit: int = 40) -> str:
    tags = [str(tag) for tag in tags]
    return repr(tags) if len(tags) <= limit else repr(tags[:limit])[:-1] + f", ... ({len(tags)} tags)]"


def span_key(tags) -> tuple[str, ...]:
    """A sentence as a lookup key: trailing "O" tags change no entity, so they are left out."""
    tags = [str(tag) for tag in tags]
    while tags and tags[-1] == "O":
        tags.pop()
    return tuple(tags)


def spans_double(table: Mapping, caller: str, diagnose=None):
    """A stand-in for the learner's entity_spans: the reference's answers for the sentences in `table`
    ({span_key: spans}); for another sentence it fails, with `diagnose(tags)`'s explanation when it has one."""
    def entity_spans(tags):
        key = span_key(tags)
        if key in table:
            return {tuple(span) for span in table[key]}
        why = diagnose(tags) if diagnose else None
        raise CheckFailed(why or f"{caller} called entity_spans({show(tags)}), which is not one of the sentences it "
                                 "was given: call entity_spans once per sentence, on that sentence's tags")
    return entity_spans


# ----------------------------------------------------------------------------------------------
# entity_spans: shared diagnostics


def _is_index(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def read_spans(result, call: str) -> set[tuple[str, int, int]]:
    """The entities in the learner's result, or a failure saying what is wrong with its form."""
    if result is None:
        raise CheckFailed(f"{call} returned None: did you forget to return the set of entities?")
    if isinstance(result, (Mapping, str)) or not isinstance(result, (set, frozenset, list, tuple)):
        raise CheckFailed(f"{call} should return a set of (type, first, last) tuples, got {type(result).__name__}")
    spans = []
    for item in result:
        size = len(item) if isinstance(item, (tuple, list)) else 0
        if size != 3:
            extra = {2: ": the type is missing", 4: ": only (type, first, last), without the sentence"}.get(size, "")
            raise CheckFailed(f"{call} holds {item!r}; each entity is a tuple (type, first, last), e.g. "
                              f"('PER', 0, 1){extra}")
        kind, first, last = item
        if not isinstance(kind, str):
            raise CheckFailed(f"{call} holds {item!r}: the type comes first, a string such as 'PER'")
        if not (_is_index(first) and _is_index(last)):
            raise CheckFailed(f"{call} holds {item!r}: first and last are word indices (int)")
        spans.append((str(kind), int(first), int(last)))
    if len(set(spans)) < len(spans):
        raise CheckFailed(f"{call} holds an entity twice: return a set")
    return set(spans)


def format_spans(spans) -> str:
    ordered = sorted((str(kind), int(first), int(last)) for kind, first, last in spans)
    return "{" + ", ".join(map(repr, sorted(ordered, key=lambda s: (s[1], s[2], s[0])))) + "}" if ordered else "set()"


def expect_spans(result, expected, tags, *, mistakes=(), label: str = "") -> None:
    """Compare the learner's entities of `tags` with `expected`; `mistakes` are (wrong spans, explanation)."""
    call = f"{label + ' ' if label else ''}entity_spans({show(tags)})"
    got, expected = read_spans(result, call), {tuple(span) for span in expected}
    if got == expected:
        return
    matching = list(dict.fromkeys(message for wrong, message in mistakes if got == {tuple(span) for span in wrong}))
    why = matching[0] if matching else None
    if why is None and any(kind[:2] in ("B-", "I-") for kind, _, _ in got):
        why = "the type is the tag without its B- or I- prefix: 'PER' for 'B-PER'"
    if why is None:
        missing, extra = expected - got, got - expected
        why = "; ".join(filter(None, [f"missing {format_spans(missing)}" if missing else "",
                                      f"not entities {format_spans(extra)}" if extra else ""]))
        why += f" ({STRICT_RULE}; last is the index of the entity's last word, included)"
    raise named(f"{call} is wrong: {why}. Expected {format_spans(expected)}, got {format_spans(got)}", len(matching))


# Sentences of tags, well formed and not; the expected entities and those of the named mistakes are generated
# by the reference (autograde/expected/ner/evaluation.py).
SPAN_CASES = [
    ("the exercise's example", ["B-PER", "I-PER", "O", "I-LOC", "B-LOC"]),
    ("an entity at the end", ["O", "B-ORG", "I-ORG", "I-ORG"]),
    ("B-X then I-Y", ["B-PER", "I-LOC", "I-LOC", "O", "B-MISC", "I-MISC"]),
    ("a stray run of I- tags", ["O", "I-MISC", "I-MISC", "I-MISC", "O", "B-LOC", "I-LOC", "O"]),
    ("adjacent entities of one type", ["B-LOC", "B-LOC", "I-LOC", "O", "B-PER"]),
    ("I- first, a type of another name, as a tuple", ("I-PER", "B-DATE", "I-DATE", "I-DATE", "O")),
    ("no entity", ["O", "O", "O"]),
    ("an empty sentence", []),
    ("types named with an underscore, hyphens, lower case and digits (a type is all after the first hyphen)",
     ["B-WORK_OF_ART", "I-WORK_OF_ART", "O", "B-WORK-OF-ART", "I-WORK-OF-ART", "B-person", "I-person", "O", "B-loc2"]),
    ("I-PERCENT after B-PER: another type", ["B-PER", "I-PERCENT", "O", "B-PERCENT", "I-PER"]),
]


def check_entity_spans(entity_spans) -> None:
    """entity_spans on 10 sentences: the example, stray I- tags, B-X I-Y, adjacent entities, one at the end, types
    of unusual names."""
    expected = load_expected(STEM, "evaluation", "entity_spans")
    for label, tags in SPAN_CASES:
        given = list(tags) if isinstance(tags, list) else tuple(tags)
        try:
            result = call_learner(entity_spans, given)
        except CheckFailed as failure:
            if failure.__cause__ is None:
                raise
            raise CheckFailed(f"{failure}: the call was entity_spans({show(tags)})") from failure.__cause__
        expect_unchanged("entity_spans", "tags", tags, given, label, advice=COPY_TAGS)
        case = expected[label]
        mistakes = [(entry["value"], entry["message"]) for entry in case["mistakes"].values()]
        expect_spans(result, case["expected"], tags, mistakes=mistakes)
    passed(f"entity_spans reads {len(SPAN_CASES)} sentences under strict IOB2, ill-formed ones included")


# ----------------------------------------------------------------------------------------------
# entity_scores: shared diagnostics


def _number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def read_scores(result, call: str) -> dict[str, dict[str, float]]:
    """The learner's scores as {key: {field: float}}, or a failure saying what is wrong with their form."""
    if result is None:
        raise CheckFailed(f"{call} returned None: did you forget to return the dict of scores?")
    if not isinstance(result, Mapping):
        raise CheckFailed(f"{call} should return a dict {{type: scores, ..., \"micro\": scores}}, got "
                          f"{type(result).__name__}")
    scores = {}
    for key, entry in result.items():
        if not isinstance(key, str):
            raise CheckFailed(f"{call} has the key {key!r}: the keys are entity types (str) and \"micro\"")
        if not isinstance(entry, Mapping):
            raise CheckFailed(f"{call}[{key!r}] should be a dict with the keys {', '.join(FIELDS)}, got "
                              f"{type(entry).__name__}")
        missing = [field for field in FIELDS if field not in entry]
        if missing:
            hint = " (name it \"f1\")" if "f1-score" in entry else ""
            raise CheckFailed(f"{call}[{key!r}] has no {', '.join(map(repr, missing))}{hint}: each entry holds "
                              f"{', '.join(FIELDS)}")
        for field in FIELDS:
            value = entry[field]
            if not _number(value):
                raise CheckFailed(f"{call}[{key!r}][{field!r}] should be a number, got {type(value).__name__}")
            if not np.isfinite(float(value)):
                raise CheckFailed(f"{call}[{key!r}][{field!r}] is {float(value)}: a ratio with nothing to divide by "
                                  "is 0.0")
        scores[key] = {field: float(entry[field]) for field in FIELDS}
    return scores


def _close(a: Mapping, b: Mapping) -> bool:
    return a.keys() == b.keys() and all(abs(a[k][f] - b[k][f]) <= TOLERANCE for k in a for f in FIELDS)


def _first_difference(got: Mapping, expected: Mapping) -> tuple[str, str]:
    """The first (key, field) where two score dicts with the same keys differ: types in order, then "micro"."""
    return next((k, f) for k in [*sorted(k for k in expected if k != "micro"), "micro"] for f in FIELDS
                if abs(got[k][f] - expected[k][f]) > TOLERANCE)


def expect_scores(result, expected, call: str, *, mistakes=(), case: str = "") -> None:
    """Compare the learner's scores with `expected`; `mistakes` are (wrong scores, explanation)."""
    got = read_scores(result, call)
    expected = {key: {field: float(entry[field]) for field in FIELDS} for key, entry in expected.items()}
    where = f" ({case})" if case else ""
    if _close(got, expected):
        return
    wrongs = [({key: {field: float(entry[field]) for field in FIELDS} for key, entry in wrong.items()}, explanation)
              for wrong, explanation in mistakes]
    matching = list(dict.fromkeys(explanation for wrong, explanation in wrongs if _close(got, wrong)))
    if matching:
        if got.keys() == expected.keys():
            key, field = _first_difference(got, expected)
            detail = f"[{key!r}][{field!r}] is {got[key][field]:.6g}, expected {expected[key][field]:.6g}"
        else:
            detail = f"the keys are {sorted(got)}, expected {sorted(expected)}"
        raise named(f"{call} is wrong: {matching[0]}; {detail}{where}", len(matching))
    missing, extra = sorted(expected.keys() - got.keys()), sorted(got.keys() - expected.keys())
    if "micro" in missing:
        raise CheckFailed(f"{call} has no \"micro\" entry: add the scores over all entity types as "
                          f"scores[\"micro\"]{where}")
    if missing or extra:
        raise CheckFailed(f"{call} has the keys {sorted(got)}, expected {sorted(expected)}: one entry per entity type "
                          f"found in the true or the predicted tags, and \"micro\"{where}")
    key, field = _first_difference(got, expected)
    hint = {"support": "the support is the number of true entities of that type",
            "f1": "F1 = 2 * precision * recall / (precision + recall), 0.0 if both are 0"}.get(
        field, "an entity counts as correct only with the same type, first and last word in the same sentence")
    raise CheckFailed(f"{call}[{key!r}][{field!r}] is {got[key][field]:.6g}, expected {expected[key][field]:.6g}: "
                      f"{hint}{where}")


# Each case: true and predicted sentences. The expected scores, those of the named mistakes and every sentence's
# entities (the stand-in entity_spans answers from them) are generated by the reference.
SCORE_CASES = [
    ("four sentences, three types", [
        ["B-PER", "I-PER", "O", "B-LOC", "O"], ["B-ORG", "I-ORG", "O", "B-PER", "O", "B-LOC"],
        ["O", "B-LOC", "I-LOC", "O"], ["B-PER", "O", "O"]], [
        ["B-PER", "I-PER", "O", "B-ORG", "O"], ["B-ORG", "O", "O", "B-PER", "O", "B-LOC"],
        ["B-PER", "I-PER", "O", "I-LOC"], ["B-PER", "O", "B-LOC"]]),
    ("nothing predicted", [["B-LOC", "O", "B-PER", "I-PER"], ["O", "B-MISC"]], [["O", "O", "O", "O"], ["O", "O"]]),
    ("a type only in the predictions", [["O", "B-PER", "O"], ["B-ORG", "O", "O"]],
     [["B-MISC", "I-PER", "O"], ["B-ORG", "B-MISC", "I-MISC"]]),
    ("every entity found, a type of another name", [["B-DATE", "I-DATE", "O", "B-LOC"], ["B-PER", "I-PER"]],
     [["B-DATE", "I-DATE", "O", "B-LOC"], ["B-PER", "I-PER"]]),
    ("no entity in either, a sentence of no words", [["O", "O"], [], ["O"]], [["O", "O"], [], ["O"]]),
    ("no sentences at all", [], []),
    ("types named with hyphens (WORK-OF-ART, creative-work)",
     [["B-WORK-OF-ART", "I-WORK-OF-ART", "O", "B-LOC"], ["O", "B-creative-work"]],
     [["B-WORK-OF-ART", "I-WORK-OF-ART", "O", "O"], ["B-creative-work", "I-creative-work"]]),
]


def check_entity_scores(entity_scores) -> None:
    """entity_scores on 7 small cases (no entity, no sentence, types of unusual names among them), with a stand-in
    entity_spans (your own is checked on its own)."""
    expected = load_expected(STEM, "evaluation", "entity_scores")
    table = {span_key(tags): spans for tags, spans in expected["spans"]}
    double = spans_double(table, "entity_scores")
    for label, true_tags, predicted_tags in SCORE_CASES:
        given = [[list(tags) for tags in sentences] for sentences in (true_tags, predicted_tags)]
        with parts_replaced(entity_scores, entity_spans=double):
            try:
                result = call_learner(entity_scores, *given)
            except CheckFailed as failure:
                hint = f": {ZERO_DIVISION}" if "ZeroDivisionError" in str(failure) else ""
                raise CheckFailed(f"[{label}] {failure}{hint}") from None
        for argument, before, after in zip(("true_tags", "predicted_tags"), (true_tags, predicted_tags), given,
                                           strict=True):
            expect_unchanged("entity_scores", argument, before, after, label, advice=COPY_TAGS)
        case = expected["cases"][label]
        mistakes = [(entry["value"], entry["message"]) for entry in case["mistakes"].values()]
        expect_scores(result, case["expected"], f"[{label}] entity_scores(true_tags, predicted_tags)",
                      mistakes=mistakes, case=f"true_tags={true_tags}, predicted_tags={predicted_tags}")
    passed(f"entity_scores gives precision, recall, F1 and support per type and micro-averaged in "
           f"{len(SCORE_CASES)} cases")


def format_scores(scores: Mapping, digits: int = 3) -> str:
    """A table of `entity_scores`' result, like seqeval's report: one row per type, then the micro average."""
    kinds = [key for key in scores if key != "micro"]
    width = max([len(str(kind)) for kind in kinds] + [len("micro avg")])
    lines = [f"{'':>{width}}  {'precision':>9}  {'recall':>9}  {'f1':>9}  {'support':>7}", ""]

    def row(name, entry) -> str:
        numbers = "  ".join(f"{float(entry[field]):>9.{digits}f}" for field in FIELDS[:3])
        return f"{name:>{width}}  {numbers}  {int(entry['support']):>7d}"

    lines += [row(kind, scores[kind]) for kind in kinds]
    if "micro" in scores:
        lines += ["", row("micro avg", scores["micro"])]
    return "\n".join(lines)
