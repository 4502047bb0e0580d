"""Assignment 06, data: CoNLL files read and written (malformed input named by file and line), the corpus
tokenizer and markup, the split by document, the committed splits equal to a fresh build, the corpus's size,
and every string labelled two ways justified by the data card."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter

import pytest

from course_lib.ner import ENTITY_TYPES, LABELS, conll, corpus
from course_lib.ner.conll import ConllFormatError, Sentence, iob1_to_iob2, read_conll, write_conll
from course_lib.ner.corpus import MarkupError, parse_markup, tokenize

TWO_COLUMNS = "-DOCSTART- O\n\nAmara B-PER\nOkafor I-PER\nleft O\nIberdrola B-ORG\n. O\n\nShe O\nwon O\n.  O\n"
FOUR_COLUMNS_IOB1 = ("-DOCSTART- -X- -X- O\n\n"
                     "Maribel NNP B-NP I-PER\nTorres NNP I-NP I-PER\nleft VBD B-VP O\nIberdrola NNP B-NP I-ORG\n"
                     "for IN B-PP O\nOslo NNP B-NP I-LOC\n. . O O\n\n"
                     "-DOCSTART- -X- -X- O\n\n"
                     "Dutch JJ B-NP I-MISC\nand CC O O\nBelgian JJ B-NP I-MISC\nfans NNS I-NP O\n\n"
                     "Paris NNP B-NP I-LOC\nBerlin NNP I-NP B-LOC\n")


def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


# ------------------------------------------------------------------------------------------------ CoNLL files

def test_labels_are_the_notebooks_order():
    assert ENTITY_TYPES == ("PER", "ORG", "LOC", "MISC")
    assert LABELS == ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC")


def test_two_columns_with_docstart(tmp_path):
    sentences = read_conll(write(tmp_path, "news.conll", TWO_COLUMNS))
    assert sentences == [
        Sentence(("Amara", "Okafor", "left", "Iberdrola", "."), ("B-PER", "I-PER", "O", "B-ORG", "O"), "news-1"),
        Sentence(("She", "won", "."), ("O", "O", "O"), "news-1")]
    assert len(sentences[0]) == 5


def test_four_columns_iob1_are_converted_and_documents_numbered(tmp_path):
    sentences = read_conll(write(tmp_path, "eng.train", FOUR_COLUMNS_IOB1))
    assert [s.tags for s in sentences] == [
        ("B-PER", "I-PER", "O", "B-ORG", "O", "B-LOC", "O"), ("B-MISC", "O", "B-MISC", "O"), ("B-LOC", "B-LOC")]
    assert [s.document for s in sentences] == ["eng-1", "eng-2", "eng-2"]
    assert read_conll(tmp_path / "eng.train", scheme="iob1") == sentences


def test_scheme_iob2_rejects_iob1_naming_the_line(tmp_path):
    path = write(tmp_path, "old.conll", FOUR_COLUMNS_IOB1)
    with pytest.raises(ConllFormatError, match=r"old\.conll:3: 'I-PER' begins an entity"):
        read_conll(path, scheme="iob2")
    with pytest.raises(ValueError, match="scheme"):
        read_conll(path, scheme="bio")


def test_iob1_to_iob2():
    assert iob1_to_iob2(["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG"]) == [
        "B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG"]
    iob2 = ["B-PER", "I-PER", "B-PER", "O", "B-LOC"]
    assert iob1_to_iob2(iob2) == iob2


def test_doc_headers_name_documents(tmp_path):
    text = "# doc: a-1\n-DOCSTART- O\n\nx O\n\n-DOCSTART- O\n# doc: b-7\n\ny B-LOC\n\n# doc: c-2\nz O\n"
    assert [s.document for s in read_conll(write(tmp_path, "f.conll", text))] == ["a-1", "b-7", "c-2"]
    assert read_conll(write(tmp_path, "plain.conll", "x O\n\ny O\n"))[1].document == ""


@pytest.mark.parametrize("text, line, what", [
    ("a O\nb X O\n", 2, "3 columns, but the file's first token line \\(1\\) has 2"),
    ("a O\n\nb B\n", 3, "tag 'B' is not O"),
    ("a O\nb B_PER\n", 2, "tag 'B_PER'"),
    ("a O\nb B-PERSON\n", 2, "unknown entity type 'PERSON'"),
    ("a O\n\n\tB-PER\n", 3, "empty token"),
    ("word\n", 1, "a token line needs at least 2 columns"),
])
def test_malformed_lines_name_file_and_line(tmp_path, text, line, what):
    path = write(tmp_path, "bad.conll", text)
    with pytest.raises(ConllFormatError, match=rf"bad\.conll:{line}: {what}"):
        read_conll(path, types=ENTITY_TYPES)


def test_unknown_types_are_fine_without_types(tmp_path):
    assert read_conll(write(tmp_path, "f.conll", "a B-PERSON\n"))[0].tags == ("B-PERSON",)


def test_empty_file_not_utf8_and_missing_file(tmp_path):
    with pytest.raises(ConllFormatError, match=r"empty\.conll: the file has no sentences"):
        read_conll(write(tmp_path, "empty.conll", "-DOCSTART- O\n\n\n"))
    with pytest.raises(ConllFormatError, match=r"latin\.conll:2: the file is not UTF-8"):
        read_conll(write(tmp_path, "latin.conll", "a O\nZürich B-LOC\n", encoding="latin-1"))
    with pytest.raises(FileNotFoundError, match="nowhere.conll"):
        read_conll(tmp_path / "nowhere.conll")


def test_windows_line_endings_trailing_spaces_and_byte_order_mark(tmp_path):
    text = "\ufeff-DOCSTART- O\r\n\r\nAmara B-PER  \r\nleft O\t\r\n\r\n"
    assert read_conll(write(tmp_path, "crlf.conll", text)) == [Sentence(("Amara", "left"), ("B-PER", "O"), "crlf-1")]


def test_write_format_and_round_trip(tmp_path):
    sentences = [Sentence(["Amara", "left"], ["B-PER", "O"], "news-001"), Sentence(["Hi"], ["O"], "news-001"),
                 Sentence(["Oslo", "."], ["B-LOC", "O"], "sport-002")]
    path = write_conll(tmp_path / "out.conll", sentences)
    assert path.read_text() == "-DOCSTART- O\n\nAmara B-PER\nleft O\n\nHi O\n\n-DOCSTART- O\n\nOslo B-LOC\n. O\n\n"
    assert read_conll(path) == [Sentence(s.tokens, s.tags, d) for s, d in
                                zip(sentences, ["out-1", "out-1", "out-2"], strict=True)]
    assert read_conll(write_conll(tmp_path / "ids.conll", sentences, doc_ids=True)) == sentences
    again = read_conll(tmp_path / "out.conll")
    assert read_conll(write_conll(tmp_path / "out.conll", again)) == again
    plain = [Sentence(["a"], ["O"]), Sentence(["b"], ["B-LOC"])]
    assert read_conll(write_conll(tmp_path / "plain.conll", plain)) == plain
    assert read_conll(write_conll(tmp_path / "nodoc.conll", sentences, docstart=False))[2].document == ""


def test_write_refuses_what_a_reader_would_misread(tmp_path):
    with pytest.raises(ValueError, match="'New York'"):
        write_conll(tmp_path / "x.conll", [Sentence(["New York"], ["B-LOC"])])
    with pytest.raises(ValueError, match="tag 'LOC'"):
        write_conll(tmp_path / "x.conll", [Sentence(["York"], ["LOC"])])
    with pytest.raises(ValueError, match="2 tokens but 1 tags"):
        Sentence(["a", "b"], ["O"])


@pytest.mark.thorough
def test_load_hf_fails_fast_and_clearly_offline():
    code = ("from course_lib.ner import conll\n"
            "try:\n    conll.load_hf('conll2003', 'validation')\n"
            "except conll.DatasetUnavailableError as error:\n    print('ERROR', error)\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert time.perf_counter() - started < 60
    assert result.stdout.startswith("ERROR could not load the Hugging Face dataset 'conll2003'"), result
    assert "offline" in result.stdout


def test_read_any_picks_file_or_dataset(tmp_path, monkeypatch):
    path = write(tmp_path, "mine.conll", TWO_COLUMNS)
    assert conll.read_any(path) == conll.read_any(str(path)) == read_conll(path)
    asked = []
    monkeypatch.setattr(conll, "load_hf", lambda name, split: asked.append((name, split)) or [])
    conll.read_any("conll2003", "test")
    assert asked == [("conll2003", "test")]
    with pytest.raises(FileNotFoundError):
        conll.read_any("missing_file.conll")


# ------------------------------------------------------------------------------------------------ tokenizer

@pytest.mark.parametrize("text, tokens", [
    ('"We are ready," said Okafor.', ['"', "We", "are", "ready", ",", '"', "said", "Okafor", "."]),
    ("He moved to the U.S.", ["He", "moved", "to", "the", "U.S."]),
    ("the U.K. and St. Louis", ["the", "U.K.", "and", "St.", "Louis"]),
    ("Mr. J. Smith, Mrs. Roe and Dr. Lee", ["Mr.", "J.", "Smith", ",", "Mrs.", "Roe", "and", "Dr.", "Lee"]),
    ("Acme Inc. and Bolt Ltd. and Ray Co.", ["Acme", "Inc.", "and", "Bolt", "Ltd.", "and", "Ray", "Co."]),
    ("John Jr. vs. No. 3", ["John", "Jr.", "vs.", "No.", "3"]),
    ("the answer was no.", ["the", "answer", "was", "no", "."]),
    ("written in C.", ["written", "in", "C", "."]),
    ("rose 3.5% to 1,200 in 2:06:41", ["rose", "3.5", "%", "to", "1,200", "in", "2:06:41"]),
    ("won 3-1 on 2026-03-14.", ["won", "3-1", "on", "2026-03-14", "."]),
    ("a well-known Berlin-based firm", ["a", "well-known", "Berlin-based", "firm"]),
    ("mail ana@example.org or https://example.org/a?b=1.", ["mail", "ana@example.org", "or",
                                                            "https://example.org/a?b=1", "."]),
    ("cost $1,200.50!", ["cost", "$", "1,200.50", "!"]),
    ("Kenya's coach", ["Kenya", "'s", "coach"]),
    ("the players' union", ["the", "players", "'", "union"]),
    ("I don't know", ["I", "don't", "know"]),
    ("(Peru) [sic]; yes: no?", ["(", "Peru", ")", "[", "sic", "]", ";", "yes", ":", "no", "?"]),
    ("“Quoted,” she said…", ["“", "Quoted", ",", "”", "she", "said", "…"]),
    ("wait... what", ["wait", "...", "what"]),
    ("KENYA'S WIN", ["KENYA", "'S", "WIN"]),
    ("a.m. and p.m., e.g. now", ["a.m.", "and", "p.m.", ",", "e.g.", "now"]),
    ("two—three", ["two", "—", "three"]),
    ("", []),
])
def test_tokenize(text, tokens):
    assert tokenize(text) == tokens


def test_tokens_are_substrings_in_order():
    text = 'Dr. Okafor-Smith (U.S.) paid $1,200.50 to Zürich\'s FC Basel on 2026-03-14! "Yes," she said.'
    for token, start, end in corpus.token_spans(text):
        assert text[start:end] == token


# ------------------------------------------------------------------------------------------------ markup

def test_parse_markup():
    tokens, tags = parse_markup("[PER Amara Okafor] joined [ORG Siemens] in [LOC Munich] after the "
                                "[MISC Winter Olympics].")
    assert tokens == ["Amara", "Okafor", "joined", "Siemens", "in", "Munich", "after", "the", "Winter",
                      "Olympics", "."]
    assert tags == ["B-PER", "I-PER", "O", "B-ORG", "O", "B-LOC", "O", "O", "B-MISC", "I-MISC", "O"]
    assert parse_markup("[LOC Kenya]'s lead ([LOC Peru]) at [ORG McDonald's]") == (
        ["Kenya", "'s", "lead", "(", "Peru", ")", "at", "McDonald", "'s"],
        ["B-LOC", "O", "O", "O", "B-LOC", "O", "O", "B-ORG", "I-ORG"])
    assert parse_markup("No entity here.") == (["No", "entity", "here", "."], ["O"] * 4)
    assert parse_markup("[ORG Acme Inc.] is in the [LOC U.S.]")[1] == ["B-ORG", "I-ORG", "O", "O", "O", "B-LOC"]


@pytest.mark.parametrize("line, what", [
    ("[PER Ann left", "'\\[' at column 1 is never closed"),
    ("Ann] left", "'\\]' at column 4 closes no"),
    ("[ORG Bank of [LOC Oslo]]", "'\\[' at column 14 is nested inside the entity opened at column 1"),
    ("[PERSON Ann] left", "unknown entity type 'PERSON'"),
    ("[Per Ann] left", "unknown entity type 'Per'"),
    ("[PER ] left", "empty entity"),
    ("[LOC] left", "empty entity"),
    ("it was [sic] wrong", "square brackets at column 8 that are not an entity"),
    ("a [LOC Berlin]-based firm", "the entity \\[LOC Berlin\\] at column 3 starts or ends inside the word "
                                  "'Berlin-based'"),
    ("[ORG Acme,] said", "the entity \\[ORG Acme,\\] at column 1 has ',' at its edge"),
])
def test_markup_errors_name_the_place(line, what):
    with pytest.raises(MarkupError, match=rf"^news\.txt:7: {what}"):
        parse_markup(line, where="news.txt:7")


def test_read_source_reports_every_problem_with_its_line(tmp_path):
    path = write(tmp_path, "bad.txt", "stray sentence\n# doc: news-001\nok [LOC Oslo].\n[PER bad\n\n"
                                      "# note\n# doc: news-001\nagain.\n# doc: news-002\n")
    with pytest.raises(MarkupError) as error:
        corpus.read_source(path)
    message = str(error.value)
    for line, what in [(1, "a sentence before the first"), (4, "'[' at column 1 is never closed"),
                       (6, "a line starting with '#' that is not a '# doc: <id>' header"),
                       (7, "document id 'news-001' is also used at"), (9, "document 'news-002' has no sentences")]:
        assert f"bad.txt:{line}: {what}" in message, message


def test_read_source_documents(tmp_path):
    path = write(tmp_path, "s.txt", "# doc: sport-001\n[ORG Ajax] 2 [ORG PSV] 1\n\n# doc: sport-002\nHi.\nBye.\n")
    documents = corpus.read_source(path)
    assert [(d.id, d.register, len(d.sentences)) for d in documents] == [("sport-001", "sport", 1),
                                                                        ("sport-002", "sport", 2)]
    assert documents[0].sentences[0] == Sentence(("Ajax", "2", "PSV", "1"), ("B-ORG", "O", "B-ORG", "O"), "sport-001")
    write(tmp_path, "t.txt", "# doc: sport-002\nAgain.\n")
    with pytest.raises(MarkupError, match=r"t\.txt:1: document id 'sport-002' is also used at .*s\.txt:4"):
        corpus.read_sources(tmp_path)


# ------------------------------------------------------------------------------------------------ build

SHARED = "The match ended level ."  # one sentence in two documents: the build keeps it in one split


def fixture_sources(folder):
    """Two registers of ten documents each; document 0 of each has the SHARED sentence."""
    folder.mkdir()
    for register, kind in (("news", "LOC"), ("sport", "ORG")):
        lines = []
        for n in range(10):
            lines += [f"# doc: {register}-{n:03d}", f"[{kind} Place{n}] said [PER Ann Lee{n}] won in {register}.",
                      f"Doc {register} {n} line two.", f"The [MISC Event{n}] of [LOC Town{n}] {register}."]
            if n in (0, 5):
                lines.append(SHARED)
            lines.append("")
        (folder / f"{register}.txt").write_text("\n".join(lines), encoding="utf-8")
    return folder


def test_build_splits_by_document_and_writes_the_card(tmp_path):
    source = fixture_sources(tmp_path / "source")
    report = corpus.build(source, tmp_path / "out", seed=0)
    data = corpus.load_corpus(tmp_path / "out")
    splits = json.loads((tmp_path / "out" / "splits.json").read_text())
    assert set(corpus.SPLITS) <= set(splits)
    ids = {name: splits[name] for name in corpus.SPLITS}
    for register in ("news", "sport"):
        sizes = [sum(d.startswith(register) for d in ids[name]) for name in corpus.SPLITS]
        assert sizes == [6, 2, 2], sizes  # 15% of 10 documents rounds to 2
    every_id = [d for name in corpus.SPLITS for d in ids[name]]
    assert len(every_id) == len(set(every_id)) == 20
    for name in corpus.SPLITS:  # documents come back with their ids, each in one split only
        assert list(dict.fromkeys(s.document for s in data[name])) == ids[name]
    tokens = {name: {s.tokens for s in data[name]} for name in corpus.SPLITS}
    assert not tokens["train"] & tokens["validation"] and not tokens["train"] & tokens["test"]
    assert not tokens["validation"] & tokens["test"]
    shared = tuple(SHARED.split())
    assert sum(shared in tokens[name] for name in corpus.SPLITS) == 1
    with_shared = {name for name in corpus.SPLITS for d in ("news-000", "news-005", "sport-000", "sport-005")
                   if d in ids[name]}
    assert {item["sentence"] for item in report["dropped_duplicates"]} == ({SHARED} if len(with_shared) > 1 else set())
    card = (tmp_path / "out" / "DATA_CARD.md").read_text()
    total = sum(len(data[name]) for name in corpus.SPLITS)
    entities = sum(corpus.statistics(data[name])["entities"][t] for name in corpus.SPLITS for t in ENTITY_TYPES)
    assert f"| all | {total} | " in card and f" | {entities} |" in card
    assert "| news | " in card and "| sport | " in card


def test_added_documents_go_to_train_and_validation_and_move_no_original_one(tmp_path):
    source = fixture_sources(tmp_path / "source")
    corpus.build(source, tmp_path / "before")
    (source / corpus.ADDED_DIR).mkdir()
    lines = []
    for n in range(10):
        lines += [f"# doc: news-{600 + n}", f"[ORG Club{n}] beat [ORG Rovers{n}] in [LOC City{n}].", "", ""]
    lines[-2:-2] = [SHARED]  # a sentence of an original document: the added copy is the one dropped
    (source / corpus.ADDED_DIR / "more.txt").write_text("\n".join(lines), encoding="utf-8")
    report = corpus.build(source, tmp_path / "after")
    before = json.loads((tmp_path / "before" / "splits.json").read_text())
    after = json.loads((tmp_path / "after" / "splits.json").read_text())
    assert (tmp_path / "before" / "test.conll").read_bytes() == (tmp_path / "after" / "test.conll").read_bytes()
    for name in corpus.SPLITS:
        assert [d for d in after[name] if int(d.split("-")[1]) < 600] == before[name]
    added = {name: [d for d in after[name] if int(d.split("-")[1]) >= 600] for name in corpus.SPLITS}
    assert (len(added["train"]), len(added["validation"]), len(added["test"])) == (8, 2, 0), added
    def holding_shared(folder):
        data = corpus.load_corpus(tmp_path / folder)
        return {name for name in corpus.SPLITS if tuple(SHARED.split()) in {s.tokens for s in data[name]}}

    assert holding_shared("after") == holding_shared("before")  # news-609's copy is kept only beside the original
    assert report["documents"]["test"] == len(before["test"])


def test_the_test_split_is_the_one_every_version_is_scored_on():
    """The test split is frozen (issue 22 compares before and after on it): new documents go to source/added/."""
    digest = hashlib.sha256((corpus.DATA_DIR / "test.conll").read_bytes()).hexdigest()
    assert digest == "3a4f75bb1ea070981184b0eecb61aa02581b057a35227016e19efd30d3d6bef4", (
        "test.conll changed: put new documents in source/added/ (train and validation only), so that scores on "
        "the test split stay comparable")


def test_build_is_deterministic_and_keeps_the_card_prose(tmp_path):
    source = fixture_sources(tmp_path / "source")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "DATA_CARD.md").write_text(f"# Card\n\nProse.\n\n{corpus.COUNTS_BEGIN}\nold\n"
                                                 f"{corpus.COUNTS_END}\n\nMore prose.\n")
    corpus.build(source, tmp_path / "a", seed=3)
    corpus.build(source, tmp_path / "b", seed=3)
    corpus.build(source, tmp_path / "c", seed=4)
    for name in ("train.conll", "validation.conll", "test.conll", "splits.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert json.loads((tmp_path / "a" / "splits.json").read_text())["test"] != json.loads(
        (tmp_path / "c" / "splits.json").read_text())["test"]
    card = (tmp_path / "a" / "DATA_CARD.md").read_text()
    assert card.startswith("# Card\n\nProse.\n") and card.endswith("More prose.\n") and "old" not in card


def test_load_corpus_says_how_to_build(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m course_lib.ner.corpus build"):
        corpus.load_corpus(tmp_path)


def test_statistics():
    sentences = [Sentence(["Ann", "Lee", "went", "to", "Oslo"], ["B-PER", "I-PER", "O", "O", "B-LOC"], "d-1"),
                 Sentence(["Hi"], ["O"], "d-2")]
    numbers = corpus.statistics(sentences)
    assert numbers == {"sentences": 2, "tokens": 6, "documents": 2,
                       "entities": {"PER": 1, "ORG": 0, "LOC": 1, "MISC": 0},
                       "entity_lengths": {1: 1, 2: 1}, "sentence_lengths": {1: 1, 5: 1}}


def test_inconsistent_strings():
    def sentence(markup, doc):
        return Sentence(*parse_markup(markup), doc)

    sentences = [sentence("[PER May] met [PER Ann] in [LOC Paris].", "a-1"), sentence("It rained in May.", "a-2"),
                 sentence("[ORG Paris] beat [ORG Lyon].", "b-1"), sentence("[LOC Lyon] is big.", "b-1"),
                 sentence("[ORG Paris Saint-Germain] won.", "b-2"), sentence("Ann left.", "c-1")]
    assert corpus.inconsistent_strings(sentences) == {
        "Ann": {"O": 1, "PER": 1}, "Lyon": {"LOC": 1, "ORG": 1}, "May": {"O": 1, "PER": 1},
        "Paris": {"LOC": 1, "ORG": 1}}
    assert corpus.label_occurrences(sentences)["May"] == {"PER": ["a-1"], "O": ["a-2"]}


def test_augment_changes_only_entities_and_is_seeded():
    sentences = [Sentence(*parse_markup("[PER Ann Lee] of [ORG Acme] flew to [LOC Oslo] for the [MISC Cup]."),
                          "d-1"),
                 Sentence(*parse_markup("[PER ODINGA] WINS IN [LOC KENYA]"), "d-2"),
                 Sentence(*parse_markup("Nothing to swap here."), "d-3")]
    copies = corpus.augment(sentences, random.Random(1), copies=3)
    assert copies == corpus.augment(sentences, random.Random(1), copies=3)
    assert copies != corpus.augment(sentences, random.Random(2), copies=3)
    assert len(copies) == 6 and {s.document for s in copies} == {f"d-{n}+aug{k}" for n in (1, 2) for k in (1, 2, 3)}
    for copy in copies:
        original = sentences[int(copy.document[2]) - 1]
        kept = [(t, g) for t, g in zip(copy.tokens, copy.tags, strict=True) if g == "O" or g.endswith("MISC")]
        assert kept == [(t, g) for t, g in zip(original.tokens, original.tags, strict=True)
                        if g == "O" or g.endswith("MISC")]
        assert Counter(g[2:] for g in copy.tags if g.startswith("B-")) == Counter(
            g[2:] for g in original.tags if g.startswith("B-"))
        corpus.statistics([copy])  # valid IOB2
        if copy.document.startswith("d-2"):
            assert all(t.isupper() or not t.isalpha() for t in copy.tokens), copy
        else:
            assert copy.tags[:2] == ("B-PER", "I-PER")


@pytest.mark.thorough
def test_load_corpus_augments_train_only(tmp_path):
    corpus.build(fixture_sources(tmp_path / "source"), tmp_path / "out")
    plain = corpus.load_corpus(tmp_path / "out")
    augmented = corpus.load_corpus(tmp_path / "out", augment_train=2, seed=5)
    assert augmented["validation"] == plain["validation"] and augmented["test"] == plain["test"]
    assert augmented["train"][:len(plain["train"])] == plain["train"]
    assert len(augmented["train"]) > len(plain["train"])


def test_justified_strings_reads_the_table(tmp_path):
    card = write(tmp_path, "card.md", "# Card\n\n## Strings with two labels\n\n| string | labels | why |\n"
                                      "| --- | --- | --- |\n| `Paris` | LOC, ORG | city and club |\n"
                                      "| May | PER / O | a name and the month |\n\n## Next\n\n| x | LOC | no |\n")
    assert corpus.justified_strings(card) == {"Paris": {"LOC", "ORG"}, "May": {"PER", "O"}}


# ------------------------------------------------------------------------------------------------ the corpus

@pytest.fixture(scope="module")
def corpus_documents():
    documents = corpus.read_sources(corpus.SOURCE_DIR) if corpus.SOURCE_DIR.is_dir() else []
    assert documents, (f"no corpus sources in {corpus.SOURCE_DIR}/*.txt: the corpus writers' files are missing")
    return documents


@pytest.mark.thorough
def test_committed_splits_equal_a_fresh_build(corpus_documents, tmp_path):
    corpus.build(corpus.SOURCE_DIR, tmp_path)
    for name in ("train.conll", "validation.conll", "test.conll", "splits.json"):
        committed = corpus.DATA_DIR / name
        assert committed.is_file(), f"{committed} is missing: run python -m course_lib.ner.corpus build"
        assert committed.read_bytes() == (tmp_path / name).read_bytes(), (
            f"{committed} differs from a fresh build of the sources: run python -m course_lib.ner.corpus build")

    def counts(path):
        text = path.read_text(encoding="utf-8")
        return text[text.index(corpus.COUNTS_BEGIN):text.index(corpus.COUNTS_END)]

    assert counts(corpus.DATA_DIR / corpus.CARD) == counts(tmp_path / corpus.CARD), (
        "the data card's counts are stale: run python -m course_lib.ner.corpus build")


def test_the_corpus_is_big_enough_and_every_register_is_in_every_split(corpus_documents):
    data = corpus.load_corpus()
    numbers = {name: corpus.statistics(data[name]) for name in corpus.SPLITS}
    sentences = sum(n["sentences"] for n in numbers.values())
    entities = Counter()
    for n in numbers.values():
        entities.update(n["entities"])
    assert sentences >= 3000, f"{sentences} sentences, fewer than 3,000"
    assert sum(entities.values()) >= 6000, f"{sum(entities.values())} entities, fewer than 6,000: {entities}"
    assert all(entities[t] > 0 for t in ENTITY_TYPES), entities
    registers = {document.register for document in corpus_documents}
    assert len(registers) >= 5, f"registers {sorted(registers)}: the corpus has five or more"
    for name in corpus.SPLITS:
        missing = registers - {s.document.split("-", 1)[0] for s in data[name]}
        assert not missing, f"registers {sorted(missing)} have no document in the {name} split"


def test_every_string_with_two_labels_is_justified_by_the_data_card(corpus_documents):
    problems = corpus.unjustified_strings(corpus_documents)
    lines = [f"{key!r}: " + "; ".join(f"{label} x{len(docs)} in {', '.join(sorted(set(docs)))}"
                                      for label, docs in sorted(labels.items()))
             for key, labels in problems.items()]
    assert not problems, (f"{len(problems)} string(s) labelled two ways that the table of "
                          f"{corpus.DATA_DIR / corpus.CARD} ('Strings with two labels') does not justify: fix the "
                          "sources or add a row | string | labels | why |:\n" + "\n".join(lines))
