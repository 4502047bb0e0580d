"""The class report: what a graded batch says about the class, to decide what to explain again.

    python -m autograde.report OUT                       # OUT/report.html and OUT/mistakes.csv
    python -m autograde.report OUT1 OUT2 ... --to FILE   # several assignments on one page; the CSV is FILE.csv

It reads what `autograde.grade` wrote into OUT: grades.csv and grades_by_cell.csv (required: a missing or
malformed one is an error naming it, exit code 2), timing.csv and grading.json (optional: what they lack is "not
recorded"). The page is one self-contained HTML file (inline SVG plots, no network); per assignment: what to teach
again, the score histogram, the share of students who passed each exercise, each exercise's mistakes by number of
students and what could not be judged, the flagged submissions and the grading time.

Messages are grouped into mistakes by `group` (autograde/mistakes/messages.py): a message holding a message of the
catalogues in autograde/mistakes/ is that named mistake; a crash of the learner's code is grouped by its exception
type; any other message by its text without the case label ("[batch 2, mask ...]") or the call ("f(3, 4) is wrong: ")
in front and with its sample values as "#" (`hide_samples`). Those are the teaching mistakes. An exercise that could
not be judged (not implemented yet, undefined, an invalid or missing notebook, timed out, a dead kernel, not graded)
is one group of its kind, apart; so is whatever a flagged submission (a status with "flagged:") got wrong: neither
counts as something to teach again, and teaching shares are over the students judged on the exercise, flagged ones
left out.

mistakes.csv has one row per exercise and mistake (exercises in notebook order; per exercise the teaching mistakes,
the most frequent first, then the not judged, then the flagged):
    assignment        the assignment stem
    exercise          the exercise (the function or class the learner writes, as autograde.registry names it)
    grade_id          its test cell's grade id, as in grades_by_cell.csv
    mistake           the catalogue mistake's name, "get_angles raised IndexError", the grouped message with sample
                      values as "#"; why it was not judged ("not implemented yet", "invalid notebook", ...); or
                      "flagged submission"
    students          how many students made it
    share             a fraction from 0 to 1: for a teaching row, students / students judged on the exercise (who
                      passed or made a teaching mistake, flagged ones left out); else students / students in the batch
    example_students  up to 5 of them, separated by spaces
    example_message   one of their messages, as the student read it
    kind              "teaching", "not judged" or "flagged"
"""

from __future__ import annotations

import argparse
import csv
import html
import io
import json
import os
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

from autograde import registry
from autograde.mistakes.messages import TEACHING, group
from course_lib.notebooks import exercise_name

GRADES = ("student", "assignment", "score", "max_score", "status")
CELLS = ("student", "assignment", "grade_id", "score", "max_score", "message")
CSV_COLUMNS = ["assignment", "exercise", "grade_id", "mistake", "students", "share", "example_students",
               "example_message", "kind"]  # kind last: readers of the columns before it by position still work
SHOWN = 5  # student ids listed per mistake before "and N more"
KINDS = {"named": "named mistake", "error": "the code raised", "other": "message"}  # the teaching ones, as shown
FLAGGED = "flagged submission"  # the one group of a flagged student's failures: its answers may not be their own
E = html.escape


class ReportError(Exception):
    """An OUT folder the report cannot be made from; the message names the file."""


@dataclass
class Batch:
    out: Path
    assignment: str
    grades: list[dict]
    cells: list[dict]
    timing: dict[str, float] | None  # None: not recorded
    info: dict  # grading.json

    @property
    def students(self) -> list[str]:
        return list(dict.fromkeys([g["student"] for g in self.grades] + [c["student"] for c in self.cells]))


@dataclass
class Group:
    kind: str  # a key of KINDS
    mistake: str  # its name in mistakes.csv
    what: str  # what it says: a named mistake's message, else the mistake
    example: str
    students: list[str] = field(default_factory=list)


@dataclass
class Exercise:
    name: str
    grade_id: str
    points: float
    passed: list[str] = field(default_factory=list)  # every student with full points, flagged ones too
    groups: list[Group] = field(default_factory=list)  # teaching mistakes (most frequent first), not judged, flagged
    judged: list[str] = field(default_factory=list)  # who passed or made a teaching mistake, flagged ones left out
    flagged: list[str] = field(default_factory=list)  # the flagged students, who passed or not

    def of(self, *kinds: str) -> list[Group]:
        return [g for g in self.groups if g.kind in kinds]


def _csv(path: Path, columns: tuple[str, ...]) -> list[dict]:
    if not path.is_file():
        raise ReportError(f"{path} is missing: is {path.parent} a folder `make grade` wrote?")
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            lacking = [c for c in columns if c not in (reader.fieldnames or ())]
            if lacking:
                raise ReportError(f"{path} is malformed: it has no column {', '.join(lacking)}")
            rows = []
            for row in reader:
                try:
                    row["score"], row["max_score"] = float(row["score"]), float(row["max_score"])
                except (TypeError, ValueError):  # TypeError: a short row's missing fields are None
                    raise ReportError(f"{path} is malformed: line {reader.line_num}: score and max_score must be "
                                      "numbers") from None
                rows.append({**row, columns[-1]: row[columns[-1]] or ""})
    except (csv.Error, UnicodeDecodeError) as error:
        raise ReportError(f"{path} is malformed: {error}") from None
    return rows


def load(out: Path) -> Batch:
    """The batch graded into `out`; ReportError when a required CSV is missing or malformed."""
    grades, cells = _csv(out / "grades.csv", GRADES), _csv(out / "grades_by_cell.csv", CELLS)
    try:  # the optional files: a damaged one counts as not recorded rather than stopping the report
        info = json.loads((out / "grading.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        info = {}
    try:
        with open(out / "timing.csv", newline="", encoding="utf-8") as handle:
            timing = {row["student"]: float(row["seconds"]) for row in csv.DictReader(handle)}
    except (OSError, csv.Error, KeyError, TypeError, ValueError):
        timing = None
    info = info if isinstance(info, dict) else {}
    assignment = info.get("assignment") or next((g["assignment"] for g in grades), out.name)
    return Batch(out, str(assignment), grades, cells, timing, info)


def flagged(batch: Batch) -> set[str]:
    """The students whose status flags their submission for a human to read."""
    return {g["student"] for g in batch.grades if "flagged:" in g["status"]}


def exercises(batch: Batch) -> list[Exercise]:
    """Each graded exercise with who passed, who made which teaching mistake (the most frequent first), who could not
    be judged and why, and which flagged students failed it."""
    rows = {row.test_id: row for row in registry.exercises(batch.assignment)}
    present = list(dict.fromkeys(c["grade_id"] for c in batch.cells))
    order = [t for t in rows if t in present or not present] + [t for t in present if t not in rows]
    cells = {(c["student"], c["grade_id"]): c for c in batch.cells}
    status = {g["student"]: g["status"] for g in batch.grades}
    suspect = flagged(batch)
    made = []
    for grade_id in order:
        points = rows[grade_id].points if grade_id in rows else max(
            c["max_score"] for c in batch.cells if c["grade_id"] == grade_id)
        exercise = Exercise(exercise_name(grade_id, {t: r.name for t, r in rows.items()}), grade_id, points)
        groups: dict[tuple[str, str], Group] = {}
        for student in batch.students:
            cell = cells.get((student, grade_id))
            if student in suspect:
                exercise.flagged.append(student)
            if cell and cell["score"] >= cell["max_score"]:
                exercise.passed.append(student)
                exercise.judged += [student] * (student not in suspect)
                continue
            # No row: the grader itself failed on the submission (a "grader error" status says how).
            kind, mistake, what = (group(cell["message"], batch.assignment) if cell
                                   else ("not judged", "no result", "no result"))
            if student in suspect:  # its answer may not be the student's work: not the class's mistake
                kind, mistake, what = "flagged", FLAGGED, FLAGGED
            elif kind in TEACHING:
                exercise.judged.append(student)
            example = cell["message"] if cell else status.get(student, "")
            groups.setdefault((kind, mistake), Group(kind, mistake, what, example)).students.append(student)
        apart = {"not judged": 1, "flagged": 2}  # after the teaching mistakes, in this order
        exercise.groups = sorted(groups.values(), key=lambda g: (apart.get(g.kind, 0), -len(g.students), g.mistake))
        made.append(exercise)
    return made


def _svg(figure, alt: str) -> str:
    """The figure as inline SVG labelled and captioned `alt`, without XML prologue, metadata or namespace URLs."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    text = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", buffer.getvalue().partition("<svg")[2])  # HTML knows SVG
    return f'<figure><svg role="img" aria-label="{E(alt)}"{text}<figcaption>{E(alt)}</figcaption></figure>'


def _plots(batch: Batch, done: list[Exercise], total: float) -> str:
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    def axes(height: float):  # a figure on its own Agg canvas: pyplot's global state is left alone
        figure = Figure(figsize=(4.6, height), layout="constrained")
        FigureCanvasAgg(figure)
        return figure, figure.add_subplot()

    # Text stays text (no font files needed to show it), an id's "$" is no maths, ids stay the same run to run.
    with matplotlib.rc_context({"svg.fonttype": "none", "text.parse_math": False, "svg.hashsalt": "report",
                                "font.size": 9}):
        figure, ax = axes(2.6)
        edges = [b - 0.5 for b in range(int(total) + 2)] if total <= 40 else [total * i / 20 for i in range(21)]
        ax.hist([g["score"] for g in batch.grades], bins=edges, color="#4a6fa5", edgecolor="white")
        ax.set(xlabel=f"total score (of {total:g})", ylabel="students")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        plots = _svg(figure, f"{batch.assignment}: total scores of {len(batch.grades)} students, out of {total:g}")
        figure, ax = axes(0.6 + 0.28 * max(1, len(done)))
        shares = [len(x.passed) / max(1, len(batch.students)) for x in done]
        ax.barh([x.name for x in done], shares, color="#5b8c5a")
        ax.set(xlim=(0, 1), xlabel=f"students who passed, of all {len(batch.students)}")
        ax.invert_yaxis()  # notebook order, top to bottom
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        for y, fraction in enumerate(shares):
            ax.text(min(fraction, 0.85) + 0.01, y, f"{fraction:.0%}", va="center")
        return plots + _svg(figure, f"{batch.assignment}: share of all {len(batch.students)} students who passed each "
                                    "exercise")


def _table(head: list[str], rows: list[list[str]], numeric: tuple[int, ...] = ()) -> str:
    """A table of already escaped cells; the columns in `numeric` right-aligned."""
    body = "".join("<tr>" + "".join(f"<td{' class=n' * (i in numeric)}>{c}</td>" for i, c in enumerate(row))
                   + "</tr>" for row in rows)
    return f"<table><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr>{body}</table>"


def _who(students: list[str]) -> str:
    return " ".join(students[:SHOWN]) + (f" and {len(students) - SHOWN} more" if len(students) > SHOWN else "")


PER_JUDGED = ("The mistakes made by the largest shares of students, in the answers that were judged. A share is "
              "of the students judged on the exercise: who passed it or made a mistake in it, leaving out the flagged "
              "submissions and the answers that could not be judged (not implemented yet, an invalid or missing "
              "notebook, timed out, a dead kernel, not graded).")


def share(g: Group, x: Exercise) -> float:
    """The share of the students judged on exercise `x` who made the teaching mistake `g`."""
    return len(g.students) / max(1, len(x.judged))


def _counts(x: Exercise) -> str:
    """Who was judged on the exercise, who passed, and who was set apart."""
    made = sum(len(g.students) for g in x.of(*TEACHING))
    said = [f"{len(x.judged)} judged, {len(x.judged) - made} of them passed"]
    said += [f"{n} not judged" for n in [sum(len(g.students) for g in x.of("not judged"))] if n]
    said += [f"{len(x.flagged)} flagged, left out"] * bool(x.flagged)
    return f"<p>Students: {'; '.join(said)}.</p>"


def _section(batch: Batch, done: list[Exercise], page: Path) -> str:
    stem, count = batch.assignment, len(batch.students)
    total = max((g["max_score"] for g in batch.grades), default=0)
    scores = [g["score"] for g in batch.grades]
    median = f"median score {statistics.median(scores):g} of {total:g}" if scores else "no scores"
    parts = [f'<section id="{E(stem)}"><h2>{E(stem)}</h2><p>{count} students, {median}; from '
             f"<code>{E(str(batch.out))}</code>.</p>"]
    # What learners got wrong rather than what they left undone or may not have written: the lecture's material.
    wrong = sorted(((g, x) for x in done for g in x.of(*TEACHING)), key=lambda pair: -share(pair[0], pair[1]))
    parts.append("<h3>To explain again</h3>" + (
        f"<p>{PER_JUDGED}</p>" + _table(["exercise", "mistake", "students judged on it"], [
            [E(x.name), E(g.what), f"{len(g.students)} of {len(x.judged)} ({share(g, x):.0%})"]
            for g, x in wrong[:5]], (2,)) if wrong
        else "<p>Nothing: every answer that was judged passed.</p>" if any(x.judged for x in done)
        else "<p>No answer could be judged.</p>"))
    parts.append(_plots(batch, done, total))
    for x in done:
        parts.append(f"<h3>{E(x.name)} ({x.points:g} points)</h3>{_counts(x)}")
        if x.of(*TEACHING):
            parts.append(_table(["mistake", "students", "share of those judged", "who", "example message"], [
                [f"{E(g.mistake)}<br><span class=kind>{KINDS[g.kind]}</span>", str(len(g.students)),
                 f"{share(g, x):.0%}", E(_who(g.students)), f"<span class=msg>{E(g.example)}</span>"]
                for g in x.of(*TEACHING)], (1, 2)))
        if x.of("not judged"):
            parts.append("<h4>Not judged</h4>" + _table(["why", "students", "who", "example message"], [
                [E(g.mistake), str(len(g.students)), E(_who(g.students)), f"<span class=msg>{E(g.example)}</span>"]
                for g in x.of("not judged")], (1,)))
    rows = []
    for g in batch.grades:
        flags = [item for item in g["status"].split("; ") if item.startswith("flagged:")]
        feedback = batch.out / "feedback" / g["student"] / f"{stem}.html"  # relative: the page stays offline
        link = f' (<a href="{E(os.path.relpath(feedback, page.parent))}">feedback</a>)' * feedback.is_file()
        if flags:
            rows.append([E(g["student"]) + link, "<br>".join(E(f) for f in flags)])
    parts.append("<h3>Flagged submissions</h3>" + (
        "<p>Left out of what to explain again and of its shares: read them first.</p>"
        + _table(["student", "why"], rows) if rows else "<p>None.</p>"))
    wall, workers = batch.info.get("wall_seconds"), batch.info.get("workers") or "not recorded"
    parts.append(f"<h3>Grading time</h3><p>{count} submissions, workers: {workers}; total: " + (
        f"{wall:.0f} s, {wall / max(1, count):.1f} s per submission. " if isinstance(wall, (int, float))
        else "not recorded. "))
    if batch.timing is None:
        parts.append("Time of each submission: not recorded.</p>")
    else:
        slowest = sorted(batch.timing.items(), key=lambda item: -item[1])[:5]
        parts.append("The slowest submissions:</p>" + _table(
            ["student", "seconds"], [[E(s), f"{t:.1f}"] for s, t in slowest], (1,)))
    return "".join(parts) + "</section>"


CSS = """body{font-family:system-ui,sans-serif;max-width:64rem;margin:1.5rem auto;padding:0 1rem;color:#111;
line-height:1.4}table{border-collapse:collapse;margin:.4rem 0 1rem}th,td{border-bottom:1px solid #ccc;
padding:.25rem .5rem;text-align:left;vertical-align:top}td.n{text-align:right;white-space:nowrap}
.msg{font-family:ui-monospace,monospace;font-size:.85em;overflow-wrap:anywhere}.kind{color:#555;font-size:.85em}
figure{display:inline-block;margin:0 1rem 1rem 0;vertical-align:top}svg{max-width:100%;height:auto}
figcaption{font-size:.85em;color:#444}h2{border-bottom:2px solid #333;margin-top:2.5rem}
@media print{body{max-width:none;margin:0}section+section{break-before:page}tr,figure,h3{break-inside:avoid}}"""


def write(batches: list[Batch], page: Path, table: Path) -> Path:
    """Write the HTML page and the mistakes CSV of these batches; return the page."""
    done = [(b, exercises(b)) for b in batches]
    stems = E(", ".join(b.assignment for b in batches))
    links = "".join(f'<li><a href="#{E(b.assignment)}">{E(b.assignment)}</a>' for b in batches)
    body = (f"<ul>{links}</ul>" if len(batches) > 1 else "") + "".join(_section(b, x, page) for b, x in done)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Class report: {stems}'
                    f"</title><style>{CSS}</style></head><body><h1>Class report</h1>{body}</body></html>\n",
                    encoding="utf-8")
    with open(table, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for batch, listed in done:
            writer.writerows([batch.assignment, x.name, x.grade_id, g.mistake, len(g.students),
                              f"{share(g, x) if g.kind in TEACHING else len(g.students) / len(batch.students):.3f}",
                              " ".join(g.students[:SHOWN]), g.example, "teaching" if g.kind in TEACHING else g.kind]
                             for x in listed for g in x.groups)
    return page


def write_report(out: Path) -> Path:
    """OUT/report.html and OUT/mistakes.csv from the batch graded into `out`; return the page."""
    out = Path(out)
    return write([load(out)], out / "report.html", out / "mistakes.csv")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outs", nargs="+", type=Path, metavar="OUT", help="a folder `make grade` wrote")
    parser.add_argument("--to", type=Path, metavar="FILE", help="the page (default OUT/report.html); the CSV goes "
                                                                "beside it as FILE.csv; required with several OUT")
    args = parser.parse_args(argv)
    if len(args.outs) > 1 and not args.to:
        parser.error("several OUT folders make one page: say where with --to FILE")
    if args.to and args.to.suffix == ".csv":
        parser.error("--to names the HTML page; the CSV goes beside it as FILE.csv")
    try:
        page = write([load(out) for out in args.outs], args.to, args.to.with_suffix(".csv")) if args.to \
            else write_report(args.outs[0])
    except ReportError as error:
        print(f"cannot write the report: {error}", file=sys.stderr)
        return 2
    print(f"class report: {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
