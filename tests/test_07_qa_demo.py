"""Assignment 07, section 7.7's seeded draw (course_lib.qa.demo): deterministic, from the test split (SQuAD dev)
only, with SQuAD's own answers; the marks it records hold no SQuAD text; the report numbers every question."""

from __future__ import annotations

import json
from collections import namedtuple

import pytest

from autograde.reference.qa.metrics import squad_em_f1
from course_lib.qa import demo, squad_v1
from course_lib.qa.squad import Answer, QAExample

Span = namedtuple("Span", "text start end")  # what outcomes and miss_kind read of a reader's Prediction


@pytest.fixture(scope="module")
def dev():
    return squad_v1.load_split("test")


def example(title, context, number, answers=((0, 3),)):
    return QAExample(id=f"{title}-{number}", title=title, context=context, question=f"Question {number}?",
                     answers=tuple(Answer(context[start:end], start) for start, end in answers))


def test_the_draw_is_fixed_by_its_seed_and_from_the_test_split_only(dev):
    drawn = demo.from_test_split()
    assert drawn == demo.from_test_split() == demo.draw(dev, seed=demo.SEED)
    assert drawn != demo.draw(dev, seed=demo.SEED + 1), "another seed should draw other paragraphs"
    # The seed was fixed before any reader read these paragraphs: a changed seed or draw would choose others.
    assert [paragraph[0].id for paragraph in drawn] == [
        "5725de30ec44d21400f3d6ed", "56e1aff7cd28a01900c67a68", "5726eb4b5951b619008f826b"]
    dev_ids = {e.id: e for e in dev}
    for paragraph in drawn:
        for question in paragraph:
            assert dev_ids[question.id] == question, "the question and its answers are the dev file's own"


def test_paragraphs_come_from_different_articles_with_their_first_questions(dev):
    drawn = demo.from_test_split()
    assert len(drawn) == demo.PARAGRAPHS
    assert len({paragraph[0].title for paragraph in drawn}) == demo.PARAGRAPHS
    for paragraph in drawn:
        whole = [e for e in dev if (e.title, e.context) == (paragraph[0].title, paragraph[0].context)]
        assert paragraph == whole[:demo.QUESTIONS]


def test_golds_are_squads_answers_each_text_once():
    question = example("A", "Rome was not built in a day.", 1, answers=((0, 4), (0, 4), (0, 15)))
    assert demo.golds(question) == ["Rome", "Rome was not bu"]


def test_the_draw_on_a_small_set():
    examples = [example(title, f"{title} paragraph {p}", f"{p}{q}") for title in "ABCD" for p in range(3)
                for q in range(4)]
    drawn = demo.draw(examples, seed=1, paragraphs=4, questions=2)
    assert sorted(paragraph[0].title for paragraph in drawn) == list("ABCD")
    assert all(len(paragraph) == 2 and paragraph[0].id.endswith("0") for paragraph in drawn)
    assert drawn == demo.draw(list(examples), seed=1, paragraphs=4, questions=2)
    with pytest.raises(ValueError, match="4 articles: too few to draw 5"):
        demo.draw(examples, paragraphs=5)
    with pytest.raises(ValueError, match="at least one paragraph"):
        demo.draw(examples, questions=0)


@pytest.mark.parametrize("start, end, kind", [
    (10, 10, "empty"), (8, 22, "longer"), (12, 16, "shorter"), (5, 12, "overlapping"), (0, 5, "elsewhere"),
    (10, 20, "longer"),  # the gold span itself, with a wrong mark (another metric) still "holds one whole"
])
def test_a_miss_is_placed_against_the_gold_spans(start, end, kind):
    answers = [Answer("x" * 10, 10), Answer("x" * 4, 30)]
    assert demo.miss_kind(Span("", start, end), answers) == kind


def test_outcomes_mark_each_answer_and_hold_no_squad_text():
    context = "The Rhine ends in the North Sea near Rotterdam."
    questions = [example("Rhine", context, 1, answers=((18, 31),)),
                 example("Rhine", context, 2, answers=((37, 46), (32, 46)))]
    answers = [Span("the North Sea", 18, 31), Span("Sea near Rotterdam", 28, 46)]
    rows = demo.outcomes(questions, answers, squad_em_f1)
    assert [(row["em"], row["miss"], row["kind"]) for row in rows] == [(1.0, "", "other"), (0.0, "longer", "other")]
    assert rows[1]["f1"] == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))  # "sea near rotterdam" vs "near rotterdam"
    text = json.dumps(rows)
    assert "Rotterdam" not in text and "Question" not in text, "a recorded row must not quote SQuAD's text"
    shown = demo.report([questions], answers, rows).splitlines()
    assert shown[1] == " 1 ✓ Question 1?"
    assert shown[4] == "     answer 'Sea near Rotterdam', SQuAD 'Rotterdam' | 'near Rotterdam', F1 0.80 (longer)"
    assert shown[-1] == "1 of 2 exactly right, mean F1 90.0"
