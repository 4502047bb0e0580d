"""Assignments 07 and 08, data: SQuAD files read and written (malformed records named by file and question id),
dataset names refused offline, the reading-comprehension set's build and split, the
committed files equal to a fresh build, the set's size, and the data card's tables equal to the counts."""

from __future__ import annotations

import hashlib
import json
import re
import statistics
import sys
import types

import pytest

from course_lib.qa import corpus, squad
from course_lib.qa.squad import (
    Answer,
    DatasetUnavailableError,
    QAExample,
    SquadFormatError,
    read_squad,
    squad_json,
    write_squad,
)

ZURICH = "Die Limmat fließt durch Zürich. 東京 liegt am Meer. Ça va? São Paulo 🌧 regnet."


def v2_document():
    """A small valid SQuAD v2.0 document: unicode contexts, several answers, an impossible question."""
    return {"version": "v2.0", "data": [
        {"title": "Zürich", "paragraphs": [{"context": ZURICH, "qas": [
            {"id": "z1", "question": "Durch welche Stadt fließt die Limmat?",
             "answers": [{"text": "Zürich", "answer_start": 24}, {"text": "Zürich", "answer_start": 24}],
             "is_impossible": False},
            {"id": "z2", "question": "Wo regnet es?", "answers": [{"text": "São Paulo", "answer_start": 57}],
             "is_impossible": False},
            {"id": "z3", "question": "Wie hoch ist der Turm?", "answers": [], "is_impossible": True,
             "plausible_answers": [{"text": "東京", "answer_start": 32}]},
        ]}]},
        {"title": "Moon", "paragraphs": [{"context": "The Moon orbits the Earth.", "qas": [
            {"id": "m1", "question": "What does the Moon orbit?", "answers": [{"text": "the Earth",
                                                                                "answer_start": 16}],
             "is_impossible": False}]}]},
    ]}


def v1_document():
    document = v2_document()
    for article in document["data"]:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = [qa for qa in paragraph["qas"] if not qa["is_impossible"]]
            for qa in paragraph["qas"]:
                del qa["is_impossible"]
    document["version"] = "1.1"
    return document


def dump(tmp_path, document, name="set.json"):
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document, ensure_ascii=False),
                    encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------------ reading

def test_read_v1_with_unicode_contexts(tmp_path):
    examples = read_squad(dump(tmp_path, v1_document()))
    assert [e.id for e in examples] == ["z1", "z2", "m1"]
    first = examples[0]
    assert first == QAExample("z1", "Zürich", ZURICH, "Durch welche Stadt fließt die Limmat?",
                              (Answer("Zürich", 24), Answer("Zürich", 24)))
    # answer_start counts characters, not UTF-8 bytes ("fließt" has a two-byte letter before Zürich)
    assert ZURICH[first.answers[0].start:first.answer_end] == "Zürich" and first.answer_end == 30
    assert examples[1].answers == (Answer("São Paulo", 57),) and ZURICH[57:66] == "São Paulo"
    assert not any(e.is_impossible for e in examples)


def test_read_v2_impossible_questions(tmp_path):
    examples = read_squad(dump(tmp_path, v2_document()))
    impossible = examples[2]
    assert impossible.id == "z3" and impossible.is_impossible and impossible.answers == ()
    assert impossible.answer_end is None  # plausible_answers are ignored
    assert [e.is_impossible for e in examples] == [False, False, True, False]
    document = v2_document()
    del document["data"][0]["paragraphs"][0]["qas"][2]["answers"]  # an impossible question may leave them out
    assert read_squad(dump(tmp_path, document, "short.json")) == examples


def test_byte_order_mark_and_path_as_string(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(v1_document()).encode())
    assert read_squad(str(path)) == read_squad(dump(tmp_path, v1_document()))


def mutate(document, path, value):
    """Set (or with value DELETE remove) the item at `path` (keys and indices) of the document."""
    *parents, last = path
    target = document
    for key in parents:
        target = target[key]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return document


DELETE = object()
QA = ("data", 0, "paragraphs", 0, "qas")


@pytest.mark.parametrize("path, value, what", [
    ((*QA, 0, "question"), DELETE, r"question 'z1' \(article 0 \('Zürich'\), paragraph 0\): missing field 'question'"),
    ((*QA, 1, "question"), ["Wo?"], r"question 'z2' .*: field 'question' is a list, not a string"),
    ((*QA, 1, "answers", 0, "answer_start"), "58", r"question 'z2' .*, answer 1: field 'answer_start' is a string, "
                                                   "not an integer"),
    ((*QA, 1, "answers", 0, "answer_start"), True, r"question 'z2' .*field 'answer_start' is true or false"),
    ((*QA, 1, "answers", 0, "text"), DELETE, r"question 'z2' .*, answer 1: missing field 'text'"),
    ((*QA, 0, "is_impossible"), "no", r"question 'z1' .*: field 'is_impossible' is a string, not true or false"),
    ((*QA, 0, "answers"), DELETE, r"question 'z1' .*: missing field 'answers'"),
    ((*QA, 1, "id"), "z1", r"question id 'z1' is used twice \(article 0 \('Zürich'\), paragraph 0 and article 0 "),
    (("data", 1, "paragraphs", 0, "qas", 0, "id"), "z2", r"question id 'z2' is used twice"),
    ((*QA, 1, "answers"), [], r"question 'z2' .*: the question has no answers; an answerable question needs"),
    ((*QA, 2, "answers"), [{"text": "東京", "answer_start": 32}], r"question 'z3' .*: the question is impossible but "
                                                                 r"has 1 answer\(s\)"),
    ((*QA, 1, "answers", 0, "answer_start"), 56, r"question 'z2' .*: answer 1 'São Paulo' is not at its answer_start "
                                                 r"56: the context has ' São Paul' there; the text occurs at 57"),
    ((*QA, 0, "answers", 1, "text"), "Bern", r"question 'z1' .*: answer 2 'Bern' is not at its answer_start 24: the "
                                             r"context has 'Züri' there; the text does not occur in the context"),
    ((*QA, 1, "answers", 0, "answer_start"), 500, r"question 'z2' .*: answer 1 'São Paulo' at answer_start 500 does "
                                                  r"not fit in the context \(76 characters\)"),
    ((*QA, 1, "answers", 0, "text"), "", r"question 'z2' .*: answer 1 has an empty text"),
    ((*QA, 1, "question"), "  ", r"question 'z2' .*: the question is empty"),
    ((*QA, 0, "id"), DELETE, r"article 0 \('Zürich'\), paragraph 0, question 0: missing field 'id'"),
    ((*QA, 0, "id"), 7, r"article 0 \('Zürich'\), paragraph 0, question 0: field 'id' is an integer, not a string"),
    (("data", 0, "paragraphs", 0, "context"), DELETE, r"article 0 \('Zürich'\), paragraph 0: missing field 'context'"),
    (("data", 1, "title"), DELETE, r"article 1: missing field 'title'"),
    (("data", 1, "paragraphs"), {}, r"article 1 \('Moon'\): field 'paragraphs' is an object, not a list"),
    (("data", 1), "Moon", r"article 1: expected an object with a 'title' field, got a string"),
    (("data",), DELETE, r"missing field 'data'"),
    (("version",), 2.0, r"field 'version' is a number, not a string"),
])
def test_malformed_records_name_file_question_and_problem(tmp_path, path, value, what):
    source = dump(tmp_path, mutate(v2_document(), path, value), "bad.json")
    with pytest.raises(SquadFormatError, match=rf"^{re.escape(str(source))}: {what}"):
        read_squad(source)


def test_not_a_squad_file(tmp_path):
    with pytest.raises(SquadFormatError, match=r"broken\.json: not JSON, line 2 column 1"):
        read_squad(dump(tmp_path, '{"data": [\n', "broken.json"))
    with pytest.raises(SquadFormatError, match=r"list\.json: the file holds a list, not a SQuAD object"):
        read_squad(dump(tmp_path, "[]", "list.json"))
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"data": [], "version": "Zürich"}'.encode("latin-1"))
    with pytest.raises(SquadFormatError, match=r"latin\.json: the file is not UTF-8 text"):
        read_squad(latin)
    with pytest.raises(FileNotFoundError, match=r"no SQuAD file at .*nowhere\.json"):
        read_squad(tmp_path / "nowhere.json")
    with pytest.raises(FileNotFoundError, match="nowhere.json"):
        read_squad(str(tmp_path / "nowhere.json"))
    with pytest.raises(FileNotFoundError, match="is a folder"):
        read_squad(tmp_path)
    assert squad.SquadFormatError.__mro__[1] is ValueError


# ------------------------------------------------------------------------------------------------ writing

def test_round_trip_v1_and_v2(tmp_path):
    v1 = read_squad(dump(tmp_path, v1_document()))
    assert read_squad(write_squad(v1, tmp_path / "v1.json")) == v1
    v2 = read_squad(dump(tmp_path, v2_document(), "in2.json"))
    assert read_squad(write_squad(v2, tmp_path / "v2.json", version="2.0")) == v2
    written = json.loads((tmp_path / "v2.json").read_text(encoding="utf-8"))
    assert written["version"] == "2.0"
    assert [qa["is_impossible"] for qa in written["data"][0]["paragraphs"][0]["qas"]] == [False, False, True]
    assert [a["title"] for a in written["data"]] == ["Zürich", "Moon"]


def test_write_format_is_diff_friendly_utf8(tmp_path):
    path = write_squad([QAExample("a", "Zürich", ZURICH, "Wo?", [Answer("Zürich", 24)])], tmp_path / "out.json")
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert "Zürich" in text and "\\u" not in text  # characters, not escapes
    assert text.startswith('{\n "version": "1.1",\n "data": [\n  {\n   "title": "Zürich",')
    assert text == squad_json(read_squad(path))


def test_write_groups_by_title_and_context_in_first_seen_order(tmp_path):
    def example(qid, title, context):
        return QAExample(qid, title, context, f"Q{qid}?", (Answer(context[:2], 0),))

    examples = [example("1", "B", "bb one"), example("2", "A", "aa"), example("3", "B", "bb two"),
                example("4", "B", "bb one")]
    written = json.loads(squad_json(examples))
    assert [(a["title"], [(p["context"], [q["id"] for q in p["qas"]]) for p in a["paragraphs"]])
            for a in written["data"]] == [("B", [("bb one", ["1", "4"]), ("bb two", ["3"])]), ("A", [("aa", ["2"])])]
    assert [e.id for e in read_squad(write_squad(examples, tmp_path / "g.json"))] == ["1", "4", "3", "2"]


def test_write_refuses_what_a_reader_would_reject(tmp_path):
    impossible = QAExample("x9", "T", "context", "Why?", (), is_impossible=True)
    with pytest.raises(SquadFormatError, match=r"question 'x9' \('T'\): the question is impossible .* SQuAD v1\.1 "
                                               r"cannot hold: write version=\"2\.0\""):
        write_squad([impossible], tmp_path / "x.json")
    assert read_squad(write_squad([impossible], tmp_path / "x.json", version="2.0")) == [impossible]
    with pytest.raises(SquadFormatError, match=r"question 'x1' .*: answer 1 'text' is not at its answer_start 0"):
        squad_json([QAExample("x1", "T", "context", "Why?", (Answer("text", 0),))])
    same = QAExample("x2", "T", "context", "Why?", (Answer("text", 3),))
    with pytest.raises(SquadFormatError, match=r"question id 'x2' is used twice \(example 0 and example 1\)"):
        squad_json([same, same])
    with pytest.raises(ValueError, match="version must be one of"):
        squad_json([same], version="2")


# ------------------------------------------------------------------------------------------------ dataset names

@pytest.mark.parametrize("name", ["squad", "squad_v2", "rajpurkar/squad"])
def test_a_dataset_name_offline_says_to_pass_a_local_file(monkeypatch, name):
    monkeypatch.setattr(squad, "_hub_reachable", lambda timeout=3.0: False)  # never touch the network
    with pytest.raises(DatasetUnavailableError, match=rf"'{name}' .*the course runs offline, so pass the path of a "
                                                      "local SQuAD JSON file"):
        read_squad(name)


def test_offline_mode_is_known_without_connecting(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(squad.socket, "create_connection", lambda *a, **k: pytest.fail("tried the network"))
    assert squad._hub_reachable() is False


def test_file_like_names_are_files_not_datasets(monkeypatch, tmp_path):
    monkeypatch.setattr(squad, "load_hf", lambda *a, **k: pytest.fail("took a file name for a dataset"))
    for name in ("dev-v2.0.json", "data/train.json", str(tmp_path / "squad")):
        with pytest.raises(FileNotFoundError):
            read_squad(name)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rajpurkar").mkdir()  # "rajpurkar/squad" with a local folder rajpurkar is a missing file
    with pytest.raises(FileNotFoundError):
        read_squad("rajpurkar/squad")


def test_dataset_rows_are_converted_and_checked(monkeypatch):
    rows = [{"id": "a", "title": "T", "context": "Amara walked to the kitchen.", "question": "Where is Amara?",
             "answers": {"text": ["the kitchen"], "answer_start": [16]}},
            {"id": "b", "title": "T", "context": "Amara walked to the kitchen.", "question": "Who sang?",
             "answers": {"text": [], "answer_start": []}}]
    asked = []
    fake = types.SimpleNamespace(load_dataset=lambda name, split: asked.append((name, split)) or rows)
    monkeypatch.setitem(sys.modules, "datasets", fake)
    monkeypatch.setattr(squad, "_hub_reachable", lambda timeout=3.0: True)
    examples = read_squad("squad_v2", split="train")
    assert asked == [("squad_v2", "train")]
    assert examples == [QAExample("a", "T", rows[0]["context"], "Where is Amara?", (Answer("the kitchen", 16),)),
                        QAExample("b", "T", rows[0]["context"], "Who sang?", (), is_impossible=True)]
    rows[0]["answers"]["answer_start"] = [15]
    with pytest.raises(SquadFormatError, match=r"^squad \(validation\), row 0: question 'a': answer 1 'the kitchen' "
                                               "is not at its answer_start 15"):
        read_squad("squad")


# ------------------------------------------------------------------------------------------------ corpus build

def block(title, topic, words, questions):
    """A source block whose paragraph has about `words` words and answers from its first words."""
    body = f"{title} opens this paragraph. " + " ".join(f"w{n}z" for n in range(words))  # w1z is not in w11z
    lines = [f"title: {title}", f"topic: {topic}", body]
    for k in range(questions):
        lines += [f"Q: What is fact {k} of {title}?", f"A: w{k}z" if k else f"A: {title} opens"]
    return "\n".join(lines)


def fixture_sources(folder, extra=()):
    """Two writer files: history (10 paragraphs, one long) and science (6 paragraphs, two long)."""
    folder.mkdir(exist_ok=True)
    history = [block(f"History {n}", "history", 400 if n == 7 else 60 + n, 2) for n in range(10)]
    science = [block(f"Science {n}", "Natural science", 300 if n in (2, 4) else 50, 3) for n in range(6)]
    (folder / "a.txt").write_text("\n===\n".join(history + list(extra)) + "\n", encoding="utf-8")
    (folder / "b.txt").write_text("\n===\n".join(science) + "\n", encoding="utf-8")
    return folder


def test_build_ids_splits_and_files(tmp_path):
    source = fixture_sources(tmp_path / "source")
    corpus.build(source, tmp_path / "out")
    data = corpus.load_splits(tmp_path / "out")
    splits = json.loads((tmp_path / "out" / "splits.json").read_text(encoding="utf-8"))
    assert list(splits) == [f"History {n}" for n in range(10)] + [f"Science {n}" for n in range(6)]
    test = {title for title, split in splits.items() if split == "test"}
    assert "History 7" in test  # the only long paragraph of a.txt
    assert test & {"Science 2", "Science 4"}
    assert 2 <= len([t for t in test if t.startswith("History")]) <= 3  # 20% of 10, plus the long one
    assert 1 <= len([t for t in test if t.startswith("Science")]) <= 2
    everything = data["train"] + data["test"]
    assert {e.title for e in data["test"]} == test
    assert sorted(e.id for e in everything) == sorted(
        [f"history-{n:02d}-q{k}" for n in range(1, 11) for k in (1, 2)]
        + [f"natural-science-{n:02d}-q{k}" for n in range(1, 7) for k in (1, 2, 3)])
    first = next(e for e in everything if e.id == "history-01-q1")
    assert first.title == "History 0" and first.answers[0] == Answer("History 0 opens", 0)
    assert json.loads((tmp_path / "out" / "train.json").read_text(encoding="utf-8"))["version"] == "1.1"
    assert corpus.check(source, tmp_path / "out") == []


def test_adding_a_paragraph_moves_at_most_one_old_one(tmp_path):
    before = corpus.split_paragraphs(corpus.read_sources(fixture_sources(tmp_path / "one")))
    extra = [block(f"History extra {n}", "history", 70, 1) for n in range(3)]
    after = corpus.split_paragraphs(corpus.read_sources(fixture_sources(tmp_path / "two", extra)))
    moved = [title for title in before if before[title] != after[title]]
    assert len(moved) <= 1, moved
    assert corpus.split_paragraphs(corpus.read_sources(tmp_path / "one")) == before  # deterministic


def test_added_paragraphs_go_to_train_and_validation_and_move_no_original_one(tmp_path):
    source = fixture_sources(tmp_path / "source")
    before = corpus.split_paragraphs(corpus.read_sources(source))
    (source / corpus.ADDED_DIR).mkdir()
    extra = [block(f"Added {n}", "history" if n < 6 else "sport", 400 if n == 0 else 70, 2) for n in range(9)]
    (source / corpus.ADDED_DIR / "more.txt").write_text("\n===\n".join(extra) + "\n", encoding="utf-8")
    after = corpus.split_paragraphs(corpus.read_sources(source))
    assert {title: after[title] for title in before} == before
    assert corpus.added_titles(source) == {f"Added {n}" for n in range(9)}
    added = [after[f"Added {n}"] for n in range(9)]
    assert "test" not in added and added.count("validation") == 2, added  # 20% of 6 history, 1 of 3 sport
    corpus.build(source, tmp_path / "out")
    data = corpus.load_splits(tmp_path / "out")
    assert {e.title for e in data["validation"]} == {f"Added {n}" for n in range(9) if added[n] == "validation"}
    assert all(e.id.startswith(("history-1", "sport-")) for e in data["validation"])  # numbered after the originals


def test_the_test_split_is_the_one_every_version_is_scored_on():
    """The test split is frozen (issue 22 compares before and after on it): new paragraphs go to source/added/."""
    digest = hashlib.sha256((corpus.DATA_DIR / "test.json").read_bytes()).hexdigest()
    assert digest == "e91d2cae94f2a656e019c0f13c483df24842d9a2cf40826ecc900e33ca115e01", (
        "test.json changed: put new paragraphs in source/added/ (train and validation only), so that scores on "
        "the test split stay comparable")


def test_check_names_the_first_difference(tmp_path):
    source = fixture_sources(tmp_path / "source")
    corpus.build(source, tmp_path / "out")
    train = tmp_path / "out" / "train.json"
    train.write_text(train.read_text(encoding="utf-8").replace("What is fact 1 of History 0?", "Changed?"),
                     encoding="utf-8")
    (tmp_path / "out" / "splits.json").unlink()
    card = tmp_path / "out" / corpus.CARD
    card.write_text(card.read_text(encoding="utf-8").replace("| history | ", "| histories | "), encoding="utf-8")
    problems = corpus.check(source, tmp_path / "out")
    assert len(problems) == 3, problems
    assert re.match(r"train\.json, line \d+: the committed file has '\"question\": \"Changed\?\",', a fresh build "
                    r"'\"question\": \"What is fact 1 of History 0\?\",'", problems[0]), problems
    assert problems[1].endswith("splits.json is missing")
    assert problems[2].startswith(f"{corpus.CARD} (counts), line ")
    assert corpus._main(["check", "--source", str(source), "--out", str(tmp_path / "out")]) == 1


def test_build_keeps_the_card_prose(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / corpus.CARD).write_text("# Card\n\nProse.\n\n<!-- counts: begin -->\nold\n<!-- counts: end -->\n\nEnd.\n",
                                   encoding="utf-8")
    corpus.build(fixture_sources(tmp_path / "source"), out)
    card = (out / corpus.CARD).read_text(encoding="utf-8")
    assert card.startswith("# Card\n\nProse.\n\n<!-- counts: begin -->\nPer split:") and "old" not in card
    assert card.rstrip().endswith("\nEnd.")


def test_a_title_or_context_used_twice_is_an_error(tmp_path):
    source = fixture_sources(tmp_path / "source", [block("Science 3", "history", 5, 1)])
    with pytest.raises(corpus.CorpusError, match=r"b\.txt, line \d+: the title 'Science 3' is also used at "
                                                 r".*a\.txt, line \d+"):
        corpus.read_sources(source)
    source = fixture_sources(tmp_path / "again")
    (source / "c.txt").write_text("title: Copy\ntopic: x\n" + block("Science 0", "x", 50, 1).split("\n", 2)[2],
                                  encoding="utf-8")
    with pytest.raises(corpus.CorpusError, match=r"c\.txt, line 1: the paragraph of 'Copy' is the same text as the "
                                                 r"one at .*b\.txt"):
        corpus.read_sources(source)
    with pytest.raises(FileNotFoundError, match="sources are missing"):
        corpus.render(tmp_path / "empty")


@pytest.mark.parametrize("question, kind", [
    ("Who built it?", "who"), ("Whose idea was it?", "who"), ("To whom was it sent?", "who"),
    ("What is it?", "what"), ("In what year did it end?", "what"), ("What's left?", "what"),
    ("When did it end?", "when"), ("Where is it?", "where"), ("In which town did they meet?", "which"),
    ("Why did it fail?", "why"), ("How many died?", "how many"), ("For how many years?", "how many"),
    ("How much did it cost?", "how much"), ("For how long had they fought?", "how long"),
    ("How did it work?", "how"), ("How far is it?", "how"), ("Name the river.", "other"),
    ("Was it a success?", "other"), ("Somehow, who knows?", "who"),
])
def test_question_kind(question, kind):
    assert corpus.question_kind(question) == kind


def test_statistics_counts_topics_kinds_and_words():
    context = "one two three four five"
    data = {"train": [QAExample("history-01-q1", "A", context, "Who?", (Answer("one", 0),)),
                      QAExample("history-01-q2", "A", context, "How many?", (Answer("two", 4),)),
                      QAExample("art-and-craft-03-q1", "B", "x " * 150, "Why?", (Answer("x", 0),))],
            "test": [QAExample("history-02-q1", "C", "y", "What?", (Answer("y", 0),))]}
    numbers = corpus.statistics(data)
    assert numbers["splits"] == {"train": {"paragraphs": 2, "questions": 3}, "test": {"paragraphs": 1, "questions": 1}}
    assert numbers["topics"] == {"art-and-craft": {"train": {"paragraphs": 1, "questions": 1},
                                                   "test": {"paragraphs": 0, "questions": 0}},
                                 "history": {"train": {"paragraphs": 1, "questions": 2},
                                             "test": {"paragraphs": 1, "questions": 1}}}
    assert {k: v for k, v in numbers["kinds"].items() if sum(v.values())} == {
        "who": {"train": 1, "test": 0}, "what": {"train": 0, "test": 1}, "why": {"train": 1, "test": 0},
        "how many": {"train": 1, "test": 0}}
    assert numbers["paragraph_words"] == {"train": {"min": 5, "median": 5, "max": 150, "total": 155},
                                          "test": {"min": 1, "median": 1, "max": 1, "total": 1}}
    assert numbers["word_buckets"]["0-99"] == {"train": 1, "test": 1}
    assert numbers["word_buckets"]["100-199"] == {"train": 1, "test": 0}
    with pytest.raises(ValueError, match="'story-0-1-2' is not <topic>-<NN>-q<k>"):
        corpus.topic_of(QAExample("story-0-1-2", "s", "a", "b?", (Answer("a", 0),)))


# ------------------------------------------------------------------------------------------------ the set

@pytest.fixture(scope="module")
def committed():
    paragraphs = corpus.read_sources() if corpus.SOURCE_DIR.is_dir() else []
    assert paragraphs, f"no paragraphs in {corpus.SOURCE_DIR}/*.txt: the writers' source files are missing"
    try:
        return corpus.load_splits()
    except FileNotFoundError as error:
        pytest.fail(str(error), pytrace=False)


def test_committed_files_equal_a_fresh_build(committed):
    problems = corpus.check()
    assert not problems, ("the committed reading-comprehension files differ from a fresh build of the sources "
                          "(run python -m course_lib.qa.corpus build):\n" + "\n".join(problems))


def test_no_paragraph_is_in_two_splits(committed):
    for key in ("title", "context"):
        for first, second in (("train", "test"), ("train", "validation"), ("validation", "test")):
            shared = {getattr(e, key) for e in committed[first]} & {getattr(e, key) for e in committed[second]}
            assert not shared, (f"{len(shared)} {key}(s) in both {first} and {second}, e.g. "
                                f"{sorted(shared)[0][:80]!r}")
    ids = [e.id for split in corpus.SPLITS for e in committed[split]]
    assert len(ids) == len(set(ids))


def test_every_writer_file_has_a_long_paragraph_in_test(committed):
    test = {e.title for e in committed["test"]}
    by_file = {}
    for paragraph in corpus.read_sources():
        if not corpus.is_added(paragraph):  # added paragraphs never go to test
            by_file.setdefault(paragraph.path, []).append(paragraph)
    assert by_file, "no original source files"
    for path, paragraphs in by_file.items():
        median = statistics.median(corpus.words(p.context) for p in paragraphs)
        long = [p.title for p in paragraphs if corpus.words(p.context) >= corpus.LONG_FACTOR * median]
        assert not long or test & set(long), f"none of the long paragraphs of {path} is in test: {long}"


def test_answers_are_whole_words(committed):
    """A span that starts or ends inside a word ("Malay" in "Malaysia") is the wrong occurrence: the sources
    must pick the right one with #n."""
    cut = []
    for example in [e for split in corpus.SPLITS for e in committed[split]]:
        context, answer = example.context, example.answers[0]
        if (answer.start > 0 and context[answer.start - 1].isalnum() and context[answer.start].isalnum()
                or answer.end < len(context) and context[answer.end].isalnum() and context[answer.end - 1].isalnum()):
            cut.append(f"{example.id}: {answer.text!r} in {context[max(0, answer.start - 15):answer.end + 15]!r}")
    assert not cut, f"{len(cut)} answer(s) start or end inside a word:\n" + "\n".join(cut)


def test_the_set_is_big_enough(committed):
    numbers = corpus.statistics(committed)["splits"]
    paragraphs = sum(numbers[s]["paragraphs"] for s in corpus.SPLITS)
    questions = sum(numbers[s]["questions"] for s in corpus.SPLITS)
    assert paragraphs >= 150 and questions >= 750, (
        f"the reading-comprehension set has {paragraphs} paragraphs and {questions} questions; it needs at least "
        f"150 and 750 (the writers' files in {corpus.SOURCE_DIR} are not finished)")


def test_every_question_kind_appears(committed):
    kinds = corpus.statistics(committed)["kinds"]
    missing = [kind for kind in ("who", "what", "when", "where", "how many", "which", "why")
               if not sum(kinds[kind].values())]
    assert not missing, f"no question of kind {', '.join(missing)} in the set: {kinds}"


def test_the_card_tables_equal_the_counts(committed):
    card = (corpus.DATA_DIR / corpus.CARD).read_text(encoding="utf-8")
    assert corpus.card_block(card, "counts") == corpus.counts_markdown(corpus.statistics()), (
        "the data card's counts are stale: run python -m course_lib.qa.corpus build")
    numbers = corpus.statistics()
    for topic, counts in numbers["topics"].items():  # the table, read back as numbers
        row = f"| {topic} | " + " | ".join(f"{counts[s][k]:,}" for k in ("paragraphs", "questions")
                                           for s in corpus.SPLITS) + " |"
        assert row in card, f"the card has no row {row}"


def test_the_card_is_finished():
    card = (corpus.DATA_DIR / corpus.CARD).read_text(encoding="utf-8")
    todo = [line for line in card.splitlines() if "TODO" in line]
    assert not todo, (f"{corpus.DATA_DIR / corpus.CARD} still has a TODO (fold in the writers' notes "
                      f"{corpus.SOURCE_DIR}/NOTES_*.md): {todo[0]}")
    for phrase in ("CC BY 4.0", "python -m course_lib.qa.corpus build"):
        assert phrase in card, f"the data card does not mention {phrase!r}"
    for notes in sorted(corpus.SOURCE_DIR.glob("NOTES_*.md")):
        assert notes.name in card, f"the data card does not say what {notes.name} says (name it where it does)"
