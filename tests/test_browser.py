"""What learners and instructors see in a real browser (headless Chromium, tests/browser.py).

- Each student notebook, opened in `make lab`'s JupyterLab and run with Run > Run All Cells, stops at its first
  exercise's check cell, which says in one sentence that the function is not implemented yet; no cell before
  it shows an error. The rest then runs in the same kernel, errors allowed: every error is the learner's
  unfinished work (NotImplementedError, NotImplementedYet). This is the one run of each student notebook.
- A feedback page from `make grade` typesets its equations with the MathJax copy beside it, with every request
  for anything but a local file refused.
- The class report of a graded batch opens offline with its plots; `make formgrader` is tried with a graded
  course in tests/test_course_gradebook.py.

Each test saves a full-page screenshot in screenshots/ (git-ignored) for a person to look at.
"""

from __future__ import annotations

import re
from contextlib import ExitStack
from pathlib import Path

import pytest
from browser import SCREENSHOTS, only_from, screenshot
from graded_batches import graded_batch
from jupyter_client import BlockingKernelClient
from jupyter_core.paths import jupyter_runtime_dir
from lab_server import lab_server

from course_lib.selfcheck import UNFINISHED

from conftest import REPO, notebook_group

# They start Jupyter servers and kernels: not part of `make test-quick`. One pytest-xdist worker runs the lab's
# and the formgrader's, so that one browser and one `make lab` serve every notebook. (Each test names its group:
# pytest-xdist would join a module's group and a test's own into a third.)
pytestmark = pytest.mark.notebooks
ONE_BROWSER = pytest.mark.xdist_group("browser")

# The student notebooks, as `make lab` copies them into the working folder: notebooks/<stem>/<stem>.ipynb.
STUDENT_NOTEBOOKS = sorted(path.parent.name for path in (REPO / "notebooks").glob("*/*.ipynb")
                           if path.stem == path.parent.name)
SECONDS = 1000  # playwright counts in milliseconds

# JupyterLab 4: the notebook toolbar's kernel indicator, and a cell's input prompt ("[ ]:", "[*]:", "[3]:").
INDICATOR = ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator"
STOPPED = """() => {
    const indicator = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
    const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-InputPrompt')].map(p => p.textContent);
    return indicator !== null && indicator.dataset.status === 'idle'
        && prompts.some(p => /\\[\\d+\\]/.test(p)) && !prompts.some(p => p.includes('*'));
}"""
# Numbers (from 1) of the first n cells that show an error or stderr output (JupyterLab draws both in red).
RED_BOXES = """n => [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')].slice(0, n)
    .map((cell, i) => cell.querySelector('[data-mime-type="application/vnd.jupyter.stderr"]') ? i + 1 : 0)
    .filter(Boolean)"""
# the notebook's scrolling element
NOTEBOOK = "document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer')"


def grading(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """`make lab` on a working folder of its own; the kernels it starts inherit COURSE_FAST=1 and no network.

    Not the tests' MPLBACKEND=Agg (conftest.py): the kernels draw figures inline, as a learner's do."""
    with ExitStack() as stack:
        with pytest.MonkeyPatch.context() as patch:  # only while the server starts: it keeps its environment
            patch.delenv("MPLBACKEND", raising=False)
            server = stack.enter_context(lab_server("lab", work=tmp_path_factory.mktemp("lab") / "work"))
        yield server


def kernel_session(lab, path: str, page, timeout: float = 120) -> dict:
    """The server's session of the notebook at `path` once its kernel is idle and the page is connected to it."""
    deadline = timeout * SECONDS
    while deadline > 0:
        for session in lab.get_json("/api/sessions"):
            kernel = session.get("kernel") or {}
            if session["path"] == path and kernel.get("execution_state") == "idle" and kernel.get("connections"):
                return session
        page.wait_for_timeout(500)
        deadline -= 500
    raise AssertionError(f"no idle kernel connected to {path} after {timeout:.0f} s: {lab.get_json('/api/sessions')}")


def run_the_rest(session: dict, cells: list[dict], start: int) -> list[tuple[int, str, str]]:
    """Run the code cells from `start` on in the session's kernel, one at a time, errors allowed (as nbclient's
    allow_errors does); (cell number, exception name, message) for every error."""
    kernel_id = session["kernel"]["id"]
    connection = next(Path(jupyter_runtime_dir()).glob(f"kernel-{kernel_id}*.json"), None)
    assert connection, f"no connection file of kernel {kernel_id} in {jupyter_runtime_dir()}"
    client = BlockingKernelClient(connection_file=str(connection))
    client.load_connection_file()
    client.start_channels()
    found = []
    try:
        client.wait_for_ready(timeout=60)
        for index in range(start, len(cells)):
            cell = cells[index]
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            reply = client.execute_interactive(source, store_history=True, allow_stdin=False, stop_on_error=False,
                                               timeout=600, output_hook=lambda message: None)
            if reply["content"]["status"] == "error":
                found.append((index + 1, reply["content"]["ename"], reply["content"]["evalue"][:200]))
    finally:
        client.stop_channels()
    return found


@ONE_BROWSER
@pytest.mark.parametrize("stem", STUDENT_NOTEBOOKS)
def test_run_all_stops_at_the_first_check_saying_not_implemented(chromium, lab, stem):
    path = f"{stem}/{stem}.ipynb"
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    session = None
    try:
        refused = only_from(page, lab.url)
        # reset: a workspace of its own, so the notebooks opened by earlier tests are not reopened
        page.goto(f"{lab.url}/lab/tree/{path}?reset&token={lab.token}")
        session = kernel_session(lab, path, page)
        page.wait_for_selector(f'{INDICATOR}[data-status="idle"]', timeout=60 * SECONDS)

        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        page.wait_for_function(STOPPED, timeout=600 * SECONDS, polling=500)
        page.keyboard.press("Control+s")
        page.wait_for_selector(".lm-TabBar-tab.jp-mod-current:not(.jp-mod-dirty)", timeout=30 * SECONDS)

        # The whole notebook in one screenshot: the notebook scrolls inside the Lab, so the window grows to it.
        height = page.evaluate(f"() => {NOTEBOOK}.scrollHeight")
        page.set_viewport_size({"width": 1280, "height": min(height + 200, 32000)})
        page.evaluate(f"() => {{ {NOTEBOOK}.scrollTop = 0; }}")
        # the windowed notebook has drawn its top cells: scrolled to the top, and two frames painted since
        page.wait_for_function(f"() => {NOTEBOOK}.scrollTop === 0", timeout=30 * SECONDS)
        page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        shot = screenshot(page, f"{stem}_run_all")

        cells = lab.get_json(f"/api/contents/{path}")["content"]["cells"]
        check = next(i for i, cell in enumerate(cells) if grading(cell).get("grade"))
        function = grading(cells[check])["grade_id"].removeprefix("test_")
        failed = [(i, output) for i, cell in enumerate(cells) for output in cell.get("outputs", [])
                  if output["output_type"] == "error"]
        assert failed, f"{stem}: Run All Cells ran through without an error: are the solutions cleared? ({shot})"
        first, error = failed[0]
        assert first >= check, (
            f"{stem}: cell {first + 1} raised {error['ename']}: {error['evalue'][:300]}, before the first exercise's "
            f"check (cell {check + 1}) ({shot})")
        assert first == check, f"{stem}: the check cell {check + 1} ran without an error ({shot})"
        # course_lib.checking.NotImplementedYet: one sentence naming the function
        sentence = f"{function} is not implemented yet"
        assert sentence in error["evalue"], (
            f"{stem}: the first check raised {error['ename']}: {error['evalue'][:300]!r} ({shot})")
        skipped = [i + 1 for i, cell in enumerate(cells[:check])
                   if cell["cell_type"] == "code" and cell.get("execution_count") is None]
        assert not skipped, f"{stem}: cells {skipped} did not run before the first check ({shot})"

        # What the learner sees: the check cell's output is the sentence, with no traceback.
        check_cell = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(check)
        check_cell.screenshot(path=str(SCREENSHOTS / f"{stem}_first_check.png"))  # the message, close up
        text = check_cell.locator(".jp-OutputArea").inner_text()
        assert "Not implemented yet" in text and sentence in text, f"{stem}: the check cell shows {text!r} ({shot})"
        assert "Traceback" not in text and "File " not in text, f"{stem}: the check cell shows a traceback ({shot})"
        red = page.evaluate(RED_BOXES, check + 1)  # errors and stderr, drawn alike
        assert red and red[-1] == check + 1, f"{stem}: the check cell's message is not drawn as an error ({shot})"
        assert red == [check + 1], f"{stem}: cells {red[:-1]} show an error or stderr before the first check ({shot})"
        assert not refused, f"{stem}: the Lab asked for things off the server (refused): {refused}"

        # Run All stopped at the check. The rest of the notebook runs in the same kernel, errors allowed: every
        # error of the whole notebook is the learner's unfinished work (CONTRIBUTING.md), and there is one.
        found = [(first + 1, error["ename"], error["evalue"][:200]), *run_the_rest(session, cells, check + 1)]
        other = [e for e in found if e[1] not in UNFINISHED]
        assert not other, f"{stem} student notebook raised errors other than NotImplementedError: {other}"
    finally:
        if session is not None:
            lab.request(f"/api/sessions/{session['id']}", method="DELETE")  # its kernel stops too
        context.close()


FEEDBACK_STEM = "01_positional_encoding"
# MathJax 2.7's HTML-CSS output: a typeset display equation is a span.MathJax_Display holding a span.MathJax.
TYPESET = ".MathJax_Display .MathJax"
MATHJAX_DONE = ("() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 "
                "&& !MathJax.Hub.queue.running")


@pytest.fixture(scope="module")
def feedback_page():
    """The feedback page of the answered 01 notebook, from its grading batch (tests/graded_batches.py)."""
    page = graded_batch(FEEDBACK_STEM).out / "feedback" / "answered" / f"{FEEDBACK_STEM}.html"
    assert page.is_file(), f"grading the answered {FEEDBACK_STEM} made no feedback page"
    return page


# On the worker that grades 01's batch (its notebook's group), so that the batch is graded once.
@pytest.mark.xdist_group(notebook_group(FEEDBACK_STEM))
def test_feedback_page_typesets_equations_offline(chromium, feedback_page):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    try:
        refused = only_from(page, "file://")
        page.goto(feedback_page.as_uri())
        page.wait_for_selector(TYPESET, timeout=60 * SECONDS)
        page.wait_for_function(MATHJAX_DONE, timeout=60 * SECONDS)
        shot = screenshot(page, "feedback_offline")
        assert not refused, f"the feedback page asked for files off this machine (refused): {refused}"
        errors = page.locator(".MathJax_Error, .merror").count()
        assert errors == 0, f"MathJax could not typeset {errors} equation(s) ({shot})"
        prose = "\n".join(page.locator(".text_cell_render").all_inner_texts())
        raw = sorted(set(re.findall(r"\$\$|\\[A-Za-z]+", prose)))
        assert not raw, f"TeX left as text in the rendered prose: {raw} ({shot})"
        assert "Math Processing Error" not in prose, shot
    finally:
        page.close()


# On the same worker as the feedback page: the class report of 01's batch (answered, blank, one wrong).
@pytest.mark.xdist_group(notebook_group(FEEDBACK_STEM))
def test_class_report_opens_offline_with_its_plots(chromium):
    batch = graded_batch(FEEDBACK_STEM)
    report = batch.out / "report.html"
    assert report.is_file(), f"grading {FEEDBACK_STEM} made no class report"
    page = chromium.new_page(viewport={"width": 1100, "height": 900})
    try:
        refused = only_from(page, "file://")
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        shot = screenshot(page, "class_report")
        plots = page.locator("svg")
        assert plots.count() >= 2, f"the report shows {plots.count()} plots ({shot})"
        for plot in plots.all():
            box = plot.bounding_box()
            assert box and box["width"] > 100 and box["height"] > 50, f"a plot is not drawn: {box} ({shot})"
        text = page.inner_text("body")
        assert "one_wrong" in text and batch.wrong_row.name in text, f"the wrong exercise's mistake is missing ({shot})"
        assert not refused, f"the report asked for files off this machine (refused): {refused}"
    finally:
        page.close()
