"""Results from papers that the course quotes, each with the paper and the table it comes from.

The notebooks and the README never type these numbers: their tables and sentences are figure blocks rendered from
here (bench/notebook_blocks.py), and a test refuses a cited decimal figure written outside a block, so a figure cannot
drift from its source or lose it. Add a row here, with its table, before a figure enters the course.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BERT = "Devlin et al., 2019"  # BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding
DISTILBERT = "Sanh et al., 2019"  # DistilBERT, a distilled version of BERT: smaller, faster, cheaper and lighter


@dataclass(frozen=True)
class Result:
    """One row of a paper's table: the system as the paper names it, what it is, and its scores."""

    system: str
    encoder: str
    scores: dict[str, float] = field(hash=False)
    paper: str
    table: str
    note: str = ""  # what sets the row apart, when its name alone does not say

    @property
    def source(self) -> str:
        """The citation with the table, as the prose gives it: "Devlin et al., 2019, Table 2"."""
        return f"{self.paper}, {self.table}"


# SQuAD v1.1, official development set: exact match and F1 of single models.
SQUAD_V1_DEV = (
    Result("BERT-base", "12 layers, hidden 768", {"EM": 80.8, "F1": 88.5}, BERT, "Table 2"),
    Result("DistilBERT", "6 layers, hidden 768", {"EM": 77.7, "F1": 85.8}, DISTILBERT, "Table 2"),
    Result("DistilBERT (D)", "6 layers, hidden 768", {"EM": 79.1, "F1": 86.9}, DISTILBERT, "Table 2",
           note="distilled a second time during SQuAD fine-tuning, with a fine-tuned BERT-base as teacher"),
)

# CoNLL-2003 English NER, entity F1: BERT-base fine-tuned whole, averaged over 5 restarts.
CONLL_FINE_TUNED = Result("BERT-base", "12 layers, hidden 768, cased", {"dev F1": 96.4, "test F1": 92.4}, BERT,
                          "Table 7")

# The same table's feature-based study: BERT-base frozen, the named layers' vectors fed to a two-layer BiLSTM;
# dev F1. The course's probe (course_lib.ner.probe) uses these names for its own combinations.
CONLL_FEATURES = Result(
    "BERT-base, feature-based", "12 layers, hidden 768, cased",
    {
        "first layer (embeddings)": 91.0,
        "last hidden layer": 94.9,
        "sum of all layers (BERT: weighted)": 95.5,
        "second-to-last hidden layer": 95.6,
        "sum of the last four (BERT: weighted)": 95.9,
        "concatenation of the last four": 96.1,
    },
    BERT, "Table 7")

ALL = (*SQUAD_V1_DEV, CONLL_FINE_TUNED, CONLL_FEATURES)


def quoted_values() -> set[str]:
    """Every published score as the prose writes it (one decimal), for the test that finds one typed by hand."""
    return {f"{value:.1f}" for result in ALL for value in result.scores.values()}
