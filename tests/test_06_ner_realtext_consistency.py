"""Assignment 06's real-text corpus: the consistency check (strings labelled two ways must be exceptions in the guide,
and no exception may be stale), on the committed corpus and on small corpora made to fail."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.ner import consistency, realtext
from course_lib.ner.annotations import justified_strings
from course_lib.ner.conll import Sentence

REPO = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course_lib.ner.annotating", "consistency", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=300)


def _sentence(text: str, where: str) -> Sentence:
    """A sentence from `[TYPE words]` markup, as the course corpus's sources are written."""
    from course_lib.ner.corpus import parse_markup

    return Sentence(*parse_markup(text), where)


SMALL = [_sentence("[LOC Paris] lies on the [LOC Seine] .", "Paris | 0"),
         _sentence("[ORG Paris] beat [ORG Lyon] in [LOC Lyon] .", "Football | 3"),
         _sentence("The [ORG Bureau of Air Commerce] grew , and the Bureau ran the centers .", "FAA | 9"),
         _sentence("Bureau staff met [LOC Paris] officials .", "FAA | 10")]


@pytest.mark.thorough
def test_the_committed_corpus_passes_the_check():
    result = _run()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    assert "0 problem(s)" in result.stdout and "[exception] 'U.S.'" in result.stdout


def test_a_string_typed_two_ways_fails_naming_it_until_the_guide_lists_it():
    report = consistency.check(SMALL, {})
    assert set(report.typed) == {"Paris", "Lyon"}
    assert report.typed["Paris"] == {"LOC": ["Paris | 0", "FAA | 10"], "ORG": ["Football | 3"]}
    assert len(report.problems) == 2 and "'Paris' is labelled LOC, ORG" in report.problems[1]
    listed = consistency.check(SMALL, {"Paris": {"LOC", "ORG"}, "Lyon": {"LOC", "ORG", "O"}})
    assert listed.problems == []  # O in a row is the course corpus's notation; only entity types count here
    wrong = consistency.check(SMALL, {"Paris": {"LOC", "PER"}, "Lyon": {"LOC", "ORG"}})
    assert wrong.problems == ["'Paris' is labelled LOC, ORG; the guide's exception lists LOC, PER"]
    assert "[NOT JUSTIFIED] 'Paris': LOC x2 (Paris | 0, FAA | 10); ORG x1 (Football | 3)" in \
        consistency.format_report(wrong)


def test_a_stale_exception_fails():
    report = consistency.check(SMALL, {"Paris": {"LOC", "ORG"}, "Lyon": {"LOC", "ORG"}, "Seine": {"LOC", "MISC"}})
    assert report.problems == ["'Seine' is an exception in the guide but is no longer labelled two ways (a stale row)"]


def test_untagged_forms_are_listed_for_reading_not_failed():
    bureau = [_sentence("The [ORG Bureau] grew , and the Bureau ran the centers .", "FAA | 9"),
              _sentence("Bureau staff met .", "FAA | 10")]
    report = consistency.check(bureau, {})
    # the second "Bureau" is a short form left untagged; a capital at a sentence's start says nothing
    assert report.problems == [] and report.untagged == {"Bureau": {"ORG": ["FAA | 9"], "O": ["FAA | 9"]}}
    assert consistency.untagged_matches(SMALL, ["Bureau", "Paris"]) == {"Bureau": ["FAA | 9"]}


def _annotations_with(tmp_path: Path, change) -> Path:
    lines = realtext.ANNOTATIONS.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines[1:], start=1):
        record = json.loads(line)
        if change(record):
            lines[number] = json.dumps(record, ensure_ascii=False)
            break
    else:
        raise AssertionError("no record to change")
    path = tmp_path / "annotations.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def corpus():
    return consistency.corpus_sentences()


@pytest.mark.thorough
def test_the_command_fails_on_a_corpus_with_a_new_string_typed_two_ways(tmp_path, capsys):
    texts = realtext.articles()

    def retype_a_person(record):
        text = texts[record["title"]][record["paragraph"]]
        for entity in record["entities"]:
            if entity[2] == "PER" and text[entity[0]:entity[1]] == "Darwin":
                entity[2] = "LOC"
                return True
        return False

    assert consistency.main(["--annotations", str(_annotations_with(tmp_path, retype_a_person))]) == 1
    assert "'Darwin' is labelled LOC, MISC, PER; the guide's exception lists MISC, PER" in capsys.readouterr().out


@pytest.mark.thorough
def test_the_guide_with_a_stale_row_fails(tmp_path, corpus):
    stale = tmp_path / "GUIDE.md"
    stale.write_text(consistency.GUIDE.read_text(encoding="utf-8") + "| `Timbuktu` | LOC, PER | a row no string "
                     "needs |\n", encoding="utf-8")
    assert consistency.check(corpus, justified_strings(stale)).problems == [
        "'Timbuktu' is an exception in the guide but is no longer labelled two ways (a stale row)"]


def test_a_guide_without_the_table_is_refused(tmp_path, capsys):
    guide = consistency.GUIDE.read_text(encoding="utf-8")
    bare = tmp_path / "BARE.md"
    bare.write_text(guide.split("## Strings with two labels")[0], encoding="utf-8")
    assert consistency.main(["--guide", str(bare)]) == 1
    assert "has no '## Strings with two labels' section" in capsys.readouterr().err


def test_every_exception_says_why():
    section = consistency.GUIDE.read_text(encoding="utf-8").split("## Strings with two labels", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert len(rows) == len(justified_strings(consistency.GUIDE)) > 0, "a string listed twice in the table"
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        assert len(cells) == 3 and len(cells[2]) > 10, f"the exception {cells[0]} needs its reason: {row}"


@pytest.mark.thorough
def test_the_audits_inconsistencies_are_fixed(corpus):
    """The audit found "U.S." MISC four times (three as a modifier), "Republican" ORG once and "New Zealand" MISC
    in "The New Zealand Government": what is left is a cut court case ("Reynolds v. / U.S."), listed in the guide."""
    report = consistency.check(corpus, justified_strings(consistency.GUIDE))
    assert report.problems == []
    assert report.typed["U.S."]["MISC"] == ["Separation_of_church_and_state_in_the_United_States | 9"]
    assert "Republican" not in report.typed and "New Zealand" not in report.typed
