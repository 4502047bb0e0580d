"""Figures from papers: one table names each paper and table, and the prose quotes them only through figure blocks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course_lib import published
from course_lib.qa import budgets

REPO = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"<!-- figures: [\w-]+ -->.*?<!-- end figures -->", re.S)
CITATION = re.compile(r"et al\.|\b[A-Z][a-z]+ and [A-Z][a-z]+,? \(?\d{4}|\bTable \d")
# A score as papers print them (one decimal, 50.0 to 99.9); not a section, version or exercise number.
SCORE = re.compile(r"(?<![\w.§-])(?<!section )(?<!exercise )(?<!v)([5-9]\d\.\d)(?![\d.]\d)")


def prose() -> list[tuple[str, str]]:
    """(where, paragraph) for every paragraph of the course's prose, figure blocks cut out."""
    texts = []
    for path in sorted(REPO.glob("solutions/*/*.ipynb")):
        for number, cell in enumerate(json.loads(path.read_text())["cells"]):
            if cell["cell_type"] == "markdown":
                texts.append((f"{path.relative_to(REPO)}, cell {number}", "".join(cell["source"])))
    for path in [*REPO.glob("*.md"), *REPO.glob("course_lib/**/*.md"), *REPO.glob("bench/*.md")]:
        texts.append((str(path.relative_to(REPO)), path.read_text()))
    return [(where, paragraph) for where, text in texts for paragraph in BLOCK.sub("", text).split("\n\n")]


def test_every_published_result_names_its_paper_and_table():
    for result in published.ALL:
        assert re.fullmatch(r"[A-Z][\w-]+ et al\., \d{4}", result.paper), result
        assert re.fullmatch(r"Table \d+", result.table), result
        assert result.scores and all(0 < value <= 100 for value in result.scores.values()), result


def test_no_published_figure_is_typed_by_hand_in_the_prose():
    """A paper's score beside a citation, outside a figure block, was typed by hand: quote course_lib.published."""
    values = published.quoted_values()
    typed = [(where, score) for where, paragraph in prose() if CITATION.search(paragraph)
             for score in SCORE.findall(paragraph) if score in values or "et al." in paragraph]
    assert not typed, ("figures from papers written outside a figure block (add the row to course_lib/published.py "
                       f"and quote it through bench/notebook_blocks.py): {typed}")


@pytest.mark.parametrize("paragraph, found", [
    ("BERT-base reaches 88.5 F1 (Devlin et al., 2019).", ["88.5"]),
    ("See section 7.4 and SQuAD v1.1 (Rajpurkar et al., 2016).", []),
    ("Table 2 of the paper gives 79.1.", ["79.1"]),
])
def test_the_guard_finds_a_typed_score_and_only_a_score(paragraph, found):
    assert (SCORE.findall(paragraph) if CITATION.search(paragraph) else []) == found


def test_the_squad_table_names_each_reader_by_its_row_and_source():
    table = budgets.figures_markdown({}).splitlines()
    assert table[2:] == [
        "| BERT-base (Devlin et al., 2019, Table 2) | 12 layers, hidden 768 | on GPUs or TPUs | 80.8 | 88.5 |",
        "| DistilBERT (Sanh et al., 2019, Table 2) | 6 layers, hidden 768 | on GPUs or TPUs | 77.7 | 85.8 |",
        "| DistilBERT (D): distilled a second time during SQuAD fine-tuning, with a fine-tuned BERT-base as teacher "
        "(Sanh et al., 2019, Table 2) | 6 layers, hidden 768 | on GPUs or TPUs | 79.1 | 86.9 |",
    ]


def test_the_probe_compares_with_the_papers_feature_based_rows():
    from course_lib.ner import probe

    assert probe.LECTURE_TABLE is published.CONLL_FEATURES.scores
    assert set(probe.LECTURE_TABLE) == set(probe.COMBINATIONS)
