"""The README's notebook table quotes the figures bench/notebook_time.py recorded, never figures typed by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import notebook_time  # noqa: E402

from autograde.course import list_assignments  # noqa: E402


def test_every_notebook_has_recorded_figures():
    figures = json.loads(notebook_time.FIGURES.read_text())
    missing = [stem for stem in list_assignments() if stem not in figures]
    assert not missing, (f"no recorded figures for {missing}: run .venv/bin/python bench/notebook_time.py "
                         f"{' '.join(missing)} --record on a quiet machine")

def test_the_readme_table_is_the_recorded_figures():
    figures = json.loads(notebook_time.FIGURES.read_text())
    text = notebook_time.README.read_text()
    assert notebook_time.readme_with_figures(text, figures) == text, (
        "README.md's times or memory differ from bench/notebook_figures.json: run .venv/bin/python "
        "bench/notebook_time.py --readme")
    for stem in figures:
        assert f"`{stem}`" in text, f"README.md's table has no row for {stem}"

@pytest.mark.parametrize("seconds, shown", [(7.6, "8 s"), (106, "1 min 46 s"), (299, "4 min 59 s"),
                                            (359, "6 min"), (330, "6 min"), (329, "5 min")])
def test_durations_read_as_the_readme_writes_them(seconds, shown):
    assert notebook_time.duration(seconds) == shown

def test_rows_are_rewritten_in_place():
    text = "intro\n| 07 | `07_qa` | a reader | 14 min | 3.7 GiB |\n| 09 | `09_x` | other | 1 s | 0.1 GiB |\n"
    machine = {"cpu": "AMD EPYC", "cores": 2, "avx2": True, "avx512": False, "bf16": False, "tensorflow": "2.21.0"}
    figures = {"07_qa": {"wall_seconds": 421.0, "peak_memory_mib": 2200, "machine": machine}}
    assert notebook_time.readme_with_figures(text, figures) == (
        "intro\n| 07 | `07_qa` | a reader | 7 min (2-core AMD EPYC, no AVX-512) | 2.1 GiB |\n"
        "| 09 | `09_x` | other | 1 s | 0.1 GiB |\n")


def test_the_instructors_timing_table_is_the_recorded_grading_figures():
    """INSTRUCTORS.md's "How long it takes" covers every assignment, from bench/grading_figures.json."""
    import grading

    figures = json.loads(grading.FIGURES.read_text())
    missing = [stem for stem in list_assignments() if stem not in figures]
    assert not missing, (f"no grading figures for {missing}: run .venv/bin/python bench/grading.py --submissions 8 "
                         f"--assignments {' '.join(missing)} --record on a quiet machine")
    text = grading.INSTRUCTORS.read_text()
    assert grading.instructors_with_figures(text, figures) == text, (
        "INSTRUCTORS.md's timing table differs from bench/grading_figures.json: run .venv/bin/python "
        "bench/grading.py --instructors")


def test_the_notebooks_figure_blocks_are_the_recorded_figures():
    """Sentences and tables of figures in the notebooks and the README are rendered from what the benches recorded."""
    import notebook_blocks

    figures = notebook_blocks.recorded_figures()
    stale = [str(path.relative_to(REPO)) for path in notebook_blocks.targets()
             if notebook_blocks.rewritten(path, figures) != path.read_text()]
    assert not stale, (f"figures in {stale} differ from the recorded ones: run .venv/bin/python "
                       "bench/notebook_blocks.py, then make release")


def test_a_block_is_rendered_between_its_markers_and_an_unknown_one_is_named():
    import notebook_blocks

    text = "before\n<!-- figures: reader-budgets -->\nold\n<!-- end figures -->\nafter"
    rendered = notebook_blocks.rewrite(text, {"reader": {}, "notebooks": {}})
    assert rendered.startswith("before\n<!-- figures: reader-budgets -->\n| reader |")
    assert rendered.endswith("| 86.9 |\n<!-- end figures -->\nafter")
    with pytest.raises(notebook_blocks.BlockError, match="'nothing', which has no renderer"):
        notebook_blocks.rewrite("<!-- figures: nothing -->\n\n<!-- end figures -->", {})
    with pytest.raises(notebook_blocks.BlockError, match="never recorded"):
        notebook_blocks.rewrite("<!-- figures: qa-pytorch-time -->\n\n<!-- end figures -->", {"notebooks": {}})


FIGURE_FILES = sorted([*REPO.glob("bench/*.json"), *REPO.glob("course_lib/*/data/*figures.json"),
                       *REPO.glob("course_lib/*/data/*curve.json")])


@pytest.mark.parametrize("path", FIGURE_FILES, ids=lambda path: str(path.relative_to(REPO)))
def test_every_figure_names_the_machine_it_was_measured_on(path):
    from course_lib.machine import require_machine

    figures = json.loads(path.read_text())
    require_machine(figures, str(path.relative_to(REPO)))
    for name, figure in figures.items():  # measurements kept from other kinds of machine name theirs too
        require_machine({f"{name}, other machine {i + 1}": other
                         for i, other in enumerate(figure.get("other_machines", []))}, str(path.relative_to(REPO)))


def test_a_figure_without_its_machine_is_refused_by_name():
    from course_lib.machine import describe, require_machine

    with pytest.raises(ValueError, match=r"x.json: figure 'default' does not say which machine measured it"):
        require_machine({"default": {"seconds": 1.0}}, "x.json")
    with pytest.raises(ValueError, match=r"figure 'default''s machine lacks avx512"):
        require_machine({"default": {"machine": {k: v for k, v in describe().items() if k != "avx512"}}}, "x.json")
    require_machine({"default": {"machine": describe()}}, "x.json")


def test_a_figure_from_another_kind_of_machine_is_kept_beside_not_written_over():
    from course_lib.machine import kept_beside

    here = {"cpu": "A", "cores": 2, "avx2": True, "avx512": False, "bf16": False, "tensorflow": "2.21.0"}
    there = {**here, "cpu": "B", "avx512": True}
    first = kept_beside(None, {"seconds": 1300, "machine": here})
    second = kept_beside(first, {"seconds": 600, "machine": there})
    assert second["seconds"] == 600 and second["other_machines"] == [first]
    third = kept_beside(second, {"seconds": 1290, "machine": here})  # the same kind again: replaces its own
    assert third["seconds"] == 1290 and third["other_machines"] == [{"seconds": 600, "machine": there}]


MACHINE = {"cpu": "AMD EPYC", "cores": 2, "avx2": True, "avx512": False, "bf16": False, "tensorflow": "2.21.0"}


def test_the_demo_misses_are_counted_by_question_word_and_named_by_number():
    """07's qa-demo-misses block: the drawn questions' tally and each miss, from the record alone (no SQuAD text)."""
    import notebook_blocks

    from course_lib.qa import demo

    assert set(notebook_blocks.DEMO_MISSES) == set(demo.MISSES), "every kind of miss the demo records has its words"
    rows = [{"id": "a", "title": "Super_Bowl_50", "kind": "what", "em": 1.0, "f1": 1.0, "miss": ""},
            {"id": "b", "title": "Super_Bowl_50", "kind": "why", "em": 0.0, "f1": 0.5, "miss": "longer"},
            {"id": "c", "title": "Warsaw", "kind": "what", "em": 0.0, "f1": 0.0, "miss": "elsewhere"},
            {"id": "d", "title": "Warsaw", "kind": "who", "em": 1.0, "f1": 1.0, "miss": ""}]
    run = {"machine": MACHINE, "recorded": {"budget": "10 min", "demo": {"seed": 2026, "questions": rows}}}
    figures = {"notebooks": {"07_qa": run}}
    assert notebook_blocks.RENDERERS["qa-demo-misses"](figures) == (
        "In the recorded run (full mode, `BUDGET = \"10 min\"`, on a 2-core AMD EPYC with AVX2, without AVX-512), "
        "the reader answered 2 of the 4 drawn questions (seed 2026) exactly as one of SQuAD's answers, with a mean "
        "F1 of 62.5. By the question's first wh-word, right of asked: *what* 1 of 2, *who* 1 of 1, *why* 0 of 1. Its "
        "misses, numbered as in the list above:\n\n"
        "- question 2 (*why*, Super Bowl 50): its span holds one of SQuAD's answers and runs past it; F1 0.50\n"
        "- question 3 (*what*, Warsaw): its span lies elsewhere in the paragraph, apart from SQuAD's answers; F1 0.00")
    run["recorded"]["demo"]["questions"] = [rows[0], rows[3]]
    assert notebook_blocks.RENDERERS["qa-demo-misses"](figures).endswith(
        "*what* 1 of 1, *who* 1 of 1. It missed none.")
    del run["recorded"]["demo"]
    with pytest.raises(notebook_blocks.BlockError, match="qa-demo-misses.*never recorded.*'demo'"):
        notebook_blocks.rewrite("<!-- figures: qa-demo-misses -->\n\n<!-- end figures -->", figures)


@pytest.mark.parametrize("course_interval, verbs", [
    ([33.0, 43.0], "overlaps validation's and does not overlap"),
    ([46.0, 50.0], "overlaps validation's and overlaps"),
    ([20.0, 30.0], "does not overlap validation's and does not overlap"),
])
def test_the_course_set_is_set_beside_squads_validation_and_test_samples(course_interval, verbs):
    import notebook_blocks

    def score(f1, questions, interval):
        return {"exact_match": f1 - 10, "f1": f1, "questions": questions, "interval": interval}

    scores = {"SQuAD validation": score(43.0, 200, [37.0, 49.0]), "SQuAD test (dev)": score(50.0, 300, [45.0, 55.0]),
              "course set, test": score(38.0, 200, course_interval)}
    figures = {"notebooks": {"07_qa": {"machine": MACHINE, "recorded": {"reading_seconds": 70.0, "scores": scores}}}}
    low, high = course_interval
    assert notebook_blocks.RENDERERS["qa-evaluation"](figures).endswith(
        f"10 points wide. The course set's 200 questions scored F1 38.0 ({low:.1f} to {high:.1f}) and SQuAD's 200 "
        f"validation questions F1 43.0 (37.0 to 49.0): the course set's interval {verbs} the test sample's.")
