"""Hidden checks of `entity_spans` and `entity_scores` (assignment 06): the learner's functions against the
reference (which agrees with seqeval's strict IOB2 report, see tests/test_06_ner_evaluation.py) on seeded random
tag sequences, ill-formed ones included, with the four CoNLL types and a made-up one drawn at grading time, and on
fixed edge cases: types named with underscores, hyphens, lower case and digits, no sentence, no entity at all
(autograde/input_classes/ner.py lists the inputs each check must draw).
`entity_scores` is graded with the reference `entity_spans` in place of the learner's. Each check runs all its
cases in one request to the student's kernel, raises `CheckFailed` with a diagnosis or prints one line."""

from __future__ import annotations

import numpy as np

from autograde.checks import rng as draw
from autograde.checks.judging import call_all, judge_all
from autograde.mistakes import results
from autograde.mistakes.ner import evaluation as mistakes
from autograde.reference.ner import evaluation as ref
from autograde.remote import with_parts
from course_lib.calls import expect_unchanged, rebuild, returned
from course_lib.checking import passed, quiet
from course_lib.ner import ENTITY_TYPES
from course_lib.ner.evaluation import COPY_TAGS, ZERO_DIVISION, expect_scores, expect_spans, show

MADE_UP_TYPES = ("DATE", "EVENT", "PRODUCT", "WORK_OF_ART", "LAW", "NORP", "GPE", "FAC", "MONEY", "LANGUAGE")

# Sentences every implementation must read right: the edges of strict IOB2.
EDGE_CASES = [
    [], ["O"], ["B-PER"], ["I-PER"], ["I-PER", "I-PER"], ["B-PER", "I-PER"], ["B-PER", "B-PER"],
    ["B-PER", "I-ORG"], ["B-PER", "I-ORG", "I-ORG"], ["O", "I-LOC", "I-LOC", "B-LOC"], ["B-LOC", "O", "I-LOC"],
    ["B-MISC", "I-MISC", "B-MISC", "I-MISC", "I-MISC"], ["I-ORG", "B-ORG", "I-ORG"], ["O", "O", "B-ORG", "I-ORG"],
    # A type is any name after the first hyphen: OntoNotes' WORK_OF_ART, WNUT-17's creative-work, lower case, digits
    ["B-WORK_OF_ART", "I-WORK_OF_ART", "O", "B-NORP"],
    ["B-WORK-OF-ART", "I-WORK-OF-ART", "I-WORK-OF-ART", "O", "I-WORK-OF-ART", "B-creative-work"],
    ["O", "B-person", "I-person", "B-loc2", "I-loc2"],
    ["B-PER", "I-PERCENT", "O", "B-PERCENT", "I-PER"],
]


def kinds_for_grading(rng: np.random.Generator) -> tuple[str, ...]:
    """The CoNLL types and one made-up type, drawn anew for each grading run."""
    return (*ENTITY_TYPES, str(rng.choice(MADE_UP_TYPES)))


def random_tags(rng: np.random.Generator, length: int, kinds) -> list[str]:
    """IOB2 tags, mostly well formed: O, B-X, I-X continuing the previous tag's type, and stray I-Y."""
    tags, previous = [], "O"
    for _ in range(length):
        u = rng.random()
        if u < 0.35:
            tag = "O"
        elif u < 0.6:
            tag = "B-" + str(rng.choice(kinds))
        elif u < 0.9 and previous != "O":
            tag = "I-" + previous[2:]
        else:
            tag = "I-" + str(rng.choice(kinds))
        tags.append(tag)
        previous = tag
    return tags


def grade_entity_spans(entity_spans) -> None:
    rng = draw(611)
    kinds = kinds_for_grading(rng)
    sentences = [list(tags) for tags in EDGE_CASES]
    sentences += [random_tags(rng, int(rng.integers(0, 17)), kinds) for _ in range(300)]
    sentences = [tuple(tags) if number % 5 == 4 else tags for number, tags in enumerate(sentences)]
    labels = [f"sentence {number + 1} of {len(sentences)}" for number in range(len(sentences))]
    with quiet():
        outcomes = call_all(entity_spans, [[label, [tags]] for label, tags in zip(labels, sentences, strict=True)])

        def judge(case):
            label, tags, outcome = case
            result = returned(outcome, f"the call was entity_spans({show(tags)})" if "raised" in outcome else "")
            expect_unchanged("entity_spans", "tags", tags, rebuild(outcome["after"])[0], label, advice=COPY_TAGS)
            expect_spans(result, ref.entity_spans(tags), tags, label=f"[{label}]",
                         mistakes=results(mistakes.SPANS, tags))

        judge_all(zip(labels, sentences, outcomes, strict=True), judge)
    passed(f"entity_spans agrees with strict IOB2 on {len(sentences)} sentences (ill-formed ones, a type named "
           f"{kinds[-1]} and types with underscores, hyphens, lower case and digits included)")


def _perturbed(rng, sentences, kinds, rate: float) -> list[list[str]]:
    pool = ["O", *(f"{prefix}-{kind}" for kind in kinds for prefix in "BI")]
    return [[str(rng.choice(pool)) if rng.random() < rate else tag for tag in tags] for tags in sentences]


# (label, sentences, longest sentence, what the predictions are)
SCORE_CASES = [
    ("one sentence", 1, 10, "perturbed"),
    ("3 sentences", 3, 10, "perturbed"),
    ("10 sentences", 10, 12, "perturbed"),
    ("50 sentences", 50, 15, "perturbed"),
    ("200 sentences", 200, 20, "perturbed"),
    ("40 short sentences, the same spans in many of them", 40, 4, "perturbed"),
    ("nothing predicted", 6, 10, "all O"),
    ("no true entity", 5, 8, "no truth"),
    ("a type only in the predictions", 8, 10, "another type"),
    ("every entity found", 8, 12, "the truth"),
    ("predictions of random tags", 20, 10, "random"),
    ("no entity in either", 5, 8, "all O both"),
    ("no sentences at all", 0, 1, "nothing"),
    ("sentences of no words among others", 9, 8, "empty sentences"),
    ("types named with hyphens (WORK-OF-ART, creative-work)", 8, 10, "hyphenated types"),
]
HYPHENATED_TYPES = ("WORK-OF-ART", "creative-work")


def _score_case(rng, sentences: int, longest: int, how: str, kinds):
    if how == "hyphenated types":
        kinds = (*HYPHENATED_TYPES, kinds[0])
    true = [random_tags(rng, int(rng.integers(1, longest + 1)), kinds[:-1] if how == "another type" else kinds)
            for _ in range(sentences)]
    if how == "nothing":
        return [], []
    if how == "all O both":
        true = [["O"] * len(tags) for tags in true]
        return true, [list(tags) for tags in true]
    if how == "empty sentences":
        true = [[] if number % 3 == 1 else tags for number, tags in enumerate(true)]
    if how == "all O":
        return true, [["O"] * len(tags) for tags in true]
    if how == "the truth":
        return true, [list(tags) for tags in true]
    if how == "random":
        return true, [random_tags(rng, len(tags), kinds) for tags in true]
    if how == "no truth":
        return [["O"] * len(tags) for tags in true], true
    if how == "another type":
        return true, _perturbed(rng, true, kinds[-1:], 0.3)
    return true, _perturbed(rng, true, kinds, 0.2)


def _shown(true, predicted) -> str:
    if sum(map(len, true)) > 30:
        return ""
    return f"true_tags={true}, predicted_tags={predicted}"


def grade_entity_scores(entity_scores) -> None:
    rng = draw(621)
    kinds = kinds_for_grading(rng)
    cases = [(label, *_score_case(rng, sentences, longest, how, kinds))
             for label, sentences, longest, how in SCORE_CASES]
    with quiet(), with_parts(entity_scores, entity_spans=ref.entity_spans):
        outcomes = call_all(entity_scores, [[label, [true, predicted]] for label, true, predicted in cases])

    def judge(case):
        (label, true, predicted), outcome = case
        result = returned(outcome, ZERO_DIVISION if "ZeroDivisionError" in outcome.get("raised", "") else "")
        after = rebuild(outcome["after"])
        for argument, before, now in zip(("true_tags", "predicted_tags"), (true, predicted), after, strict=True):
            expect_unchanged("entity_scores", argument, before, now, label, advice=COPY_TAGS)
        expect_scores(result, ref.entity_scores(true, predicted), f"[{label}] entity_scores(true_tags, predicted_tags)",
                      case=_shown(true, predicted), mistakes=results(mistakes.SCORES, true, predicted))

    with quiet():
        judge_all(zip(cases, outcomes, strict=True), judge)
    passed(f"entity_scores equals the strict IOB2 report in {len(cases)} cases (per type and micro-averaged, a "
           f"type named {kinds[-1]} included)")
