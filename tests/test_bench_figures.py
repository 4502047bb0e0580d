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
    assert rendered.endswith("| 85.7 |\n<!-- end figures -->\nafter")
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
