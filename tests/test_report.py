"""The class report (autograde/report.py) from small hand-made OUT folders: no grading, a few seconds."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograde import report
from autograde.mistakes.messages import catalogue, hide_samples
from autograde.mistakes.positional_encoding import GET_ANGLES
from autograde.reference import positional_encoding as ref
from course_lib import positional_encoding as visible

STEM = "01_positional_encoding"  # grade ids test_get_angles (2 points) and test_positional_encoding (3 points)
ANGLES, ENCODING = "test_get_angles", "test_positional_encoding"
NO_FLOOR = next(m for m in GET_ANGLES if m.name == "no_floor")
EVIL = "<script>alert('x')</script>"


def wrong_values(rows: int, differ: int, got: float) -> str:
    return (f"get_angles(pos of shape ({rows}, 1), k = [[0, ..., 7]], d=8) has wrong values: {differ} of {rows * 8} "
            f"entries differ; the largest difference is at index (3, 2): got {got}, expected 201.009")


def write_out(out: Path, cells: dict[str, dict[str, str | None]], *, stem: str = STEM, status: dict | None = None,
              timing: dict | None = None, info: dict | None = None) -> Path:
    """An OUT folder as `make grade` writes it: `cells[student][grade_id]` is the message, None for passed."""
    points = {ANGLES: 2, ENCODING: 3}
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "grades_by_cell.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "assignment", "grade_id", "score", "max_score", "message"])
        for student, results in cells.items():
            for grade_id, message in results.items():
                full = points.get(grade_id, 1)
                writer.writerow([student, stem, grade_id, full if message is None else 0, full,
                                 message or f"✓ {grade_id}"])
    with open(out / "grades.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "assignment", "score", "max_score", "status"])
        for student, results in cells.items():
            score = sum(points.get(g, 1) for g, m in results.items() if m is None)
            writer.writerow([student, stem, score, sum(points.get(g, 1) for g in results),
                             (status or {}).get(student, "graded")])
    if timing is not None:
        (out / "timing.csv").write_text("student,seconds\n" + "".join(f"{s},{t}\n" for s, t in timing.items()))
    (out / "grading.json").write_text(json.dumps({"assignment": stem, "seed": 1, "students": len(cells),
                                                  "workers": 2, "dask_scheduler": None, "limits": {}, **(info or {})}))
    return out


def mistakes_csv(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def batch(tmp_path) -> Path:
    catalogued = f"get_angles(pos of shape (5, 1), k = [[0, ..., 7]], d=8) is wrong: {NO_FLOOR.message}"
    cells = {
        "ada": {ANGLES: None, ENCODING: None},
        "bo": {ANGLES: wrong_values(5, 40, 23.4359), ENCODING: "positional_encoding is not implemented yet"},
        "cy": {ANGLES: wrong_values(7, 21, -1.5e-05), ENCODING: "positional_encoding is not implemented yet"},
        "dee": {ANGLES: catalogued, ENCODING: "[positional_encoding(7, 5)] positional_encoding raised ValueError: "
                                              "all input arrays must have the same shape"},
        "eve": {ANGLES: catalogued.replace("(5, 1)", "(20, 1)"),
                ENCODING: "positional_encoding did not return within 60 s (an endless loop?)"},
        EVIL: {ANGLES: f"get_angles raised TypeError: {EVIL} <b>", ENCODING: f"not graded: {EVIL}"},
        "fay": {ANGLES: wrong_values(9, 30, 3.25), ENCODING: "get_angles raised TypeError: 'int' object is not "
                                                               "subscriptable"},
    }
    status = {"bo": "graded; flagged: starts processes; extra files available to the notebook: a.py",
              EVIL: f"graded; flagged: rebinds a library function {EVIL}"}
    timing = {"ada": 12.5, "bo": 61.0, "cy": 8.0, "dee": 33.3, "eve": 90.1, EVIL: 7.0, "fay": 1.5}
    return write_out(tmp_path / "out", cells, status=status, timing=timing, info={"wall_seconds": 120.0})


def test_messages_are_grouped_into_mistakes(batch):
    page = report.write_report(batch)
    assert page == batch / "report.html"
    rows = {(r["grade_id"], r["mistake"]): r for r in mistakes_csv(batch / "mistakes.csv")}
    # Two messages that differ only in numbers are one mistake; so are two of one catalogue mistake. bo and EVIL are
    # flagged: whatever they got wrong is one row apart, counted neither as a mistake nor among those judged.
    values = [r for (g, m), r in rows.items() if g == ANGLES and "has wrong values" in m]
    assert len(values) == 1 and values[0]["students"] == "2" and values[0]["example_students"] == "cy fay"
    assert rows[(ANGLES, "no_floor")]["students"] == "2"
    assert rows[(ANGLES, "no_floor")]["share"] == f"{2 / 5:.3f}"  # of ada, cy, dee, eve and fay, judged on it
    assert rows[(ANGLES, "flagged submission")]["example_students"] == f"bo {EVIL}"
    assert rows[(ANGLES, "flagged submission")]["share"] == f"{2 / 7:.3f}"  # of the batch
    assert rows[(ENCODING, "get_angles raised TypeError")]["exercise"] == "positional_encoding"
    assert rows[(ENCODING, "get_angles raised TypeError")]["share"] == f"{1 / 3:.3f}"  # of ada, dee and fay
    assert rows[(ENCODING, "not implemented yet")]["students"] == "1"
    assert rows[(ENCODING, "not implemented yet")]["share"] == f"{1 / 7:.3f}"
    assert rows[(ENCODING, "timed out")]["example_message"].startswith("positional_encoding did not return")
    assert rows[(ENCODING, "positional_encoding raised ValueError")]["example_students"] == "dee"
    assert len(rows) == 8  # ada passed both: no row of hers
    assert list(mistakes_csv(batch / "mistakes.csv")[0]) == report.CSV_COLUMNS
    kinds = [(r["kind"], int(r["students"])) for r in mistakes_csv(batch / "mistakes.csv") if r["grade_id"] == ENCODING]
    assert kinds == [("teaching", 1), ("teaching", 1), ("not judged", 1), ("not judged", 1), ("flagged", 2)]


@pytest.mark.parametrize("message, kind, mistake", [
    (f"get_angles(pos of shape (4, 1), k = [[5, ..., 10]], d=12) is wrong: {NO_FLOOR.message} (the last case)",
     "named", "no_floor"),
    ("get_angles is not implemented yet: it still raises NotImplementedError. Replace ...", "not judged",
     "not implemented yet"),
    ("running get_angles killed the kernel (a crash, os._exit or running out of memory)", "not judged",
     "crashed the kernel or ran out of memory"),
    ("name 'get_angles' is not defined in the notebook", "not judged", "not defined in the notebook"),
    ("[batch 2, mask (2, 1, 5)] the mask is ignored: blocked positions (mask 0) get the same weight",
     "other", "the mask is ignored: blocked positions (mask #) get the same weight"),
    ("dot_score for queries (3, 4) and keys (5, 4) is wrong: use float32, not 2.5e-3", "other",
     "use float32, not #"),
    ("invalid notebook: not valid JSON (line 212, column 5: Expecting ',' delimiter)", "not judged",
     "invalid notebook"),
    ("missing: no 01_positional_encoding.ipynb in the submission", "not judged", "no notebook in the submission"),
    # Real messages of the checks: sample values hidden, formulas, names, symbolic shapes and patterns kept.
    ("get_angles(pos of shape (5, 1), k = [[0, ..., 7]], d=8) has wrong values: 40 of 40 entries differ; the largest "
     "difference is at index (1, 0): got -1.5e-05, expected 943. the angle is pos / 10000**(2*(k//2)/d)", "other",
     "get_angles(pos of shape (#, #), k = [[#, ..., #]], d=#) has wrong values: # of # entries differ; the largest "
     "difference is at index (#, #): got #, expected #. the angle is pos / 10000**(2*(k//2)/d)"),
    ("positional_encoding(1, 2) is wrong: the odd indices 1, 3, 5, ... should take the cosine, not the sine", "other",
     "the odd indices 1, 3, 5, ... should take the cosine, not the sine"),
    ("create_padding_mask for token ids of shape (2, 5) has shape (2, 1, 1, 5), expected (2, 1, 5): one axis too many: "
     "the mask is (batch, 1, seq)", "other",
     "create_padding_mask for token ids of shape (#, #) has shape (#, #, #, #), expected (#, #, #): one axis too many: "
     "the mask is (batch, 1, seq)"),
    ("[no batch axis, mask (3, 4)] the mask looks inverted: 1 must mean attend and 0 blocked, so the large negative "
     "number goes where the mask is 0, e.g. scores + (1.0 - mask) * -1e9", "other",
     "the mask looks inverted: # must mean attend and # blocked, so the large negative number goes where the mask is "
     "#, e.g. scores + (1.0 - mask) * -1e9"),
    ("split_heads for x of shape (2, 3, 8) and 2 heads is wrong: head h must get the contiguous block of features "
     "h*depth .. (h+1)*depth-1", "other", "head h must get the contiguous block of features h*depth .. (h+1)*depth-1"),
    ("char_span_to_token_span(offsets, sequence_ids, 59, 61) returned (4, 9), expected (4, 8): it is 6 tokens long "
     "(end - start + 1), more than max_answer_length = 5; not float32 but float64", "other",
     "char_span_to_token_span(offsets, sequence_ids, #, #) returned (#, #), expected (#, #): it is # tokens long "
     "(end - start + 1), more than max_answer_length = #; not float32 but float64"),
    ("[14 words] align_labels_with_tokens(word_labels, word_ids) is wrong at token 1: its label is word_labels[2] = 5 "
     "(word_ids around it [None, 2, 2, 3, ...], your labels [-100, 7, 1, -100, ...])", "other",
     "align_labels_with_tokens(word_labels, word_ids) is wrong at token #: its label is word_labels[#] = # (word_ids "
     "around it [None, #, #, #, ...], your labels [#, #, #, #, ...])"),
])
def test_group(message, kind, mistake):
    assert report.group(message)[:2] == (kind, mistake)


def test_formulas_of_the_catalogues_and_hints_stay_readable():
    """In every message of the catalogues (autograde/mistakes/) and the hints of 01's checks, no number beside an
    operator or inside a name becomes "#"."""
    encoding = visible.encoding_mistakes(ref.positional_encoding(3, 4))
    texts = [*catalogue(), visible.ANGLE_HINT, *(message for _, message in encoding)]
    assert len(texts) > 100
    garbled = [s for s in texts if re.search(r"[*/+^%<>]\s*-?#|#\s*[*/+^<>]|\w#|#\w", hide_samples(s))]
    assert not garbled
    assert hide_samples(visible.ANGLE_HINT) == visible.ANGLE_HINT


@pytest.mark.parametrize("taught", [False, True])
def test_what_was_not_judged_or_flagged_is_not_taught(tmp_path, taught):
    """The batch of issue 33: a right answer, one exercise done, a flagged submission whose functions return zeros
    and a notebook cut in half; with `taught`, one more student whose get_angles is wrong."""
    half = "invalid notebook: not valid JSON (line 212, column 5: Expecting ',' delimiter)"
    cells = {"ada": {ANGLES: None, ENCODING: None},
             "bo": {ANGLES: None, ENCODING: "positional_encoding is not implemented yet"},
             "cheat": {ANGLES: wrong_values(5, 40, 0.0),
                       ENCODING: "positional_encoding(1, 2) is wrong: the odd indices 1, 3, 5, ... should take the "
                                 "cosine, not the sine"},
             "dan": {ANGLES: half, ENCODING: half},
             **({"eve": {ANGLES: wrong_values(5, 40, 23.4359), ENCODING: None}} if taught else {})}
    status = {"cheat": "graded; flagged: rebinds the course's checks", "dan": half}
    page = report.write_report(write_out(tmp_path / "out", cells, status=status)).read_text()
    again = page.split("<h3>To explain again</h3>")[1].split("<figure>")[0]
    table = again.partition("<table>")[2]
    assert not any(word in table for word in ("cosine", "cheat", "invalid notebook", "not implemented"))
    if taught:  # a share of the 3 students judged on get_angles (ada, bo, eve), said so
        assert "A share is of the students judged on the exercise" in again and "1 of 3 (33%)" in again
        assert "has wrong values" in again
    else:
        assert "Nothing: every answer that was judged passed." in again
    encoding = page.split("<h3>positional_encoding (3 points)</h3>")[1].split("<h3>")[0]
    assert f"Students: {1 + taught} judged, {1 + taught} of them passed; 2 not judged; 1 flagged, left out." in encoding
    assert "<h4>Not judged</h4>" in encoding and "invalid notebook" in encoding and "cosine" not in encoding
    rows = {(r["grade_id"], r["mistake"]): (r["kind"], r["share"]) for r in mistakes_csv(tmp_path / "out/mistakes.csv")}
    count = len(cells)
    assert {key: kind for key, (kind, _) in rows.items() if kind != "teaching"} == {
        (ANGLES, "invalid notebook"): "not judged", (ANGLES, "flagged submission"): "flagged",
        (ENCODING, "invalid notebook"): "not judged", (ENCODING, "not implemented yet"): "not judged",
        (ENCODING, "flagged submission"): "flagged"}
    assert rows[(ENCODING, "not implemented yet")][1] == f"{1 / count:.3f}"
    assert [share for kind, share in rows.values() if kind == "teaching"] == (["0.333"] if taught else [])


def test_the_page_has_one_title(batch):
    page = report.write_report(batch).read_text()
    assert re.findall(r"<h[12]>([^<]*)</h[12]>", page) == ["Class report", STEM]
    assert "<title>Class report: 01_positional_encoding</title>" in page


def test_the_page_escapes_ids_and_messages(batch):
    page = report.write_report(batch).read_text()
    assert "<script" not in page.lower() and "<b>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page


def test_the_page_is_offline_and_has_plots(batch):
    page = report.write_report(batch).read_text()
    assert "http://" not in page and "https://" not in page and "<link" not in page.lower()
    assert all(src.startswith("data:") for src in re.findall(r"""src=["']?([^"' >]*)""", page))
    assert page.count("<svg") == 2 and page.count("<figcaption>") == 2
    assert 'aria-label="01_positional_encoding: total scores of 7 students, out of 5"' in page
    assert "@import" not in page and not re.search(r"url\((?!#)", page)  # only the plots' own clip paths


def test_flagged_slowest_and_time(batch):
    page = report.write_report(batch).read_text()
    flagged = page.split("<h3>Flagged submissions</h3>")[1].split("<h3>")[0]
    assert "bo" in flagged and "flagged: starts processes" in flagged and "extra files" not in flagged
    assert "flagged: rebinds a library function &lt;script&gt;" in flagged and "ada" not in flagged
    slowest = page.split("The slowest submissions:")[1]
    assert [s for s in re.findall(r"<td>([^<]+)</td>", slowest)] == ["eve", "bo", "dee", "ada", "cy"]
    assert "120 s, 17.1 s per submission" in page and "workers: 2" in page


def test_who_stops_at_five_and_says_how_many_more(tmp_path):
    cells = {f"s{i:02d}": {ANGLES: wrong_values(5, 40, i + 0.5), ENCODING: None} for i in range(8)}
    out = write_out(tmp_path / "out", cells)
    page = report.write_report(out).read_text()
    assert "s00 s01 s02 s03 s04 and 3 more" in page and "s05" not in page.split("and 3 more")[0][-40:]
    assert "To explain again" in page and "8 (100%)" in page


def test_missing_timing_and_wall_time_are_not_recorded(tmp_path):
    out = write_out(tmp_path / "old", {"ada": {ANGLES: None, ENCODING: "positional_encoding is not implemented yet"}})
    page = report.write_report(out).read_text()
    assert "total: not recorded" in page and "Time of each submission: not recorded" in page
    (out / "grading.json").unlink()  # older still: the assignment comes from grades.csv
    assert "<h2>01_positional_encoding</h2>" in report.write_report(out).read_text()


def test_a_student_without_cell_results_is_counted(tmp_path):
    out = write_out(tmp_path / "out", {"ada": {ANGLES: None, ENCODING: None}})
    with open(out / "grades.csv", "a", newline="") as handle:
        csv.writer(handle).writerow(["bo", STEM, 0, 5, "grader error: RuntimeError: boom"])
    report.write_report(out)
    rows = mistakes_csv(out / "mistakes.csv")
    assert {(r["grade_id"], r["mistake"], r["example_message"]) for r in rows} == {
        (g, "no result", "grader error: RuntimeError: boom") for g in (ANGLES, ENCODING)}


@pytest.mark.parametrize("damage, said", [
    (lambda out: (out / "grades_by_cell.csv").unlink(), "grades_by_cell.csv is missing"),
    (lambda out: (out / "grades.csv").write_text("student,score\nada,1\n"), "grades.csv is malformed: it has no "
                                                                             "column assignment, max_score, status"),
    (lambda out: (out / "grades.csv").write_text("student,assignment,score,max_score,status\nada,x,lots,5,ok\n"),
     "grades.csv is malformed: line 2"),
    (lambda out: (out / "grades_by_cell.csv").write_bytes(b"\xff\xfe\x00"), "grades_by_cell.csv is malformed"),
])
def test_bad_csvs_are_named(tmp_path, damage, said):
    out = write_out(tmp_path / "out", {"ada": {ANGLES: None, ENCODING: None}})
    damage(out)
    with pytest.raises(report.ReportError, match=re.escape(said)):
        report.write_report(out)


def test_cli_combines_folders_and_exits_2_on_trouble(tmp_path, capsys):
    first = write_out(tmp_path / "a", {"ada": {ANGLES: None, ENCODING: "positional_encoding is not implemented yet"}})
    second = write_out(tmp_path / "b", {"bo": {"test_dot_score": "dot_score is not implemented yet"}},
                       stem="02_scaled_dot_product_attention")
    assert report.main([str(first)]) == 0 and (first / "report.html").is_file() and (first / "mistakes.csv").is_file()
    assert report.main([str(first), str(second), "--to", str(tmp_path / "class.html")]) == 0
    page = (tmp_path / "class.html").read_text()
    assert '<section id="01_positional_encoding">' in page and '<section id="02_scaled_dot_product_attention">' in page
    assert page.count("<svg") == 4
    assert {r["assignment"] for r in mistakes_csv(tmp_path / "class.csv")} == {STEM, "02_scaled_dot_product_attention"}
    with pytest.raises(SystemExit) as exit_:  # several folders, and no page named
        report.main([str(first), str(second)])
    assert exit_.value.code == 2
    (second / "grades.csv").unlink()
    assert report.main([str(first), str(second), "--to", str(tmp_path / "again.html")]) == 2
    assert f"{second / 'grades.csv'} is missing" in capsys.readouterr().err
    assert not (tmp_path / "again.html").exists()


def test_the_module_runs_from_the_command_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograde.report", str(tmp_path / "nowhere")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "grades.csv is missing" in done.stderr
