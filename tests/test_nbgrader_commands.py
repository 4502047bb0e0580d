"""INSTRUCTORS.md's block "nbgrader's own commands", run as it is written (issue 33).

The course folder is a fresh one outside the repository (COURSE_ROOT, as `make ... COURSE=dir`), whose gradebook has
never seen the assignment, and carol's notebook is cut in half. Each command must succeed without an error line or a
traceback: autograde records the assignment first and grades carol 0 with the reason, keeping her bytes beside the
stand-in; the feedback page is made; the exchange is the course folder's, not the repository's.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys

import nbformat
import pytest
from submissions import STEM, answered

from autograde.course import COURSE_ID, REPO_ROOT
from autograde.nbgrader_runner import kernel_environment, make_course_root
from autograde.unreadable import kept_name

pytestmark = [pytest.mark.grading]
SECTION = "### nbgrader's own commands"


def documented_block() -> list[str]:
    """The lines of the first bash block under SECTION in INSTRUCTORS.md, comments removed."""
    text = (REPO_ROOT / "INSTRUCTORS.md").read_text()
    assert SECTION in text, f"INSTRUCTORS.md has no section {SECTION!r}"
    block = re.search(r"```bash\n(.*?)```", text[text.index(SECTION):], flags=re.DOTALL)
    assert block, f"no bash block under {SECTION!r}"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.split("#")[0].strip()]


def test_the_documented_nbgrader_commands_work_on_a_fresh_course_folder(tmp_path):
    course = make_course_root(tmp_path / "course", [STEM])
    (course / "nbgrader_config.py").unlink()  # the configuration is autograde/'s, as the guide says
    shutil.copytree(REPO_ROOT / "notebooks" / STEM, course / "notebooks" / STEM)
    cut = nbformat.writes(answered()).encode()
    cut = cut[: len(cut) // 2]
    submitted = course / "submitted" / "carol" / STEM / f"{STEM}.ipynb"
    submitted.parent.mkdir(parents=True)
    submitted.write_bytes(cut)

    env = {key: value for key, value in kernel_environment().items() if key not in ("COURSE_EXCHANGE", "COURSE_DB_URL")}
    cwd, ran = REPO_ROOT, []
    for line in documented_block():
        words = shlex.split(line)
        if words[0] == "cd":
            cwd = (cwd / words[1]).resolve()
        elif words[0] == "export":
            name, _ = words[1].split("=", 1)
            assert name == "COURSE_ROOT", f"the block exports {name}, which this test does not know"
            env[name] = str(course)
        else:
            assert words[0] == "nbgrader", f"the block runs {line!r}, which is not an nbgrader command"
            done = subprocess.run([sys.executable, "-m", *words], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=600)
            output = done.stdout + done.stderr
            assert done.returncode == 0 and not re.search(r"\[(ERROR|CRITICAL)\]|Traceback", output), \
                f"`{line}` in {cwd}:\n{output[-4000:]}"
            ran.append((words[1], output))
    assert [name for name, _ in ran][:4] == ["autograde", "generate_feedback", "release_assignment", "collect"]

    autograde_log = ran[0][1]
    assert "could not be read (invalid notebook: not valid JSON" in autograde_log, autograde_log[-3000:]
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / '.nbgrader' / 'gradebook.db'}") as book:
        submission = book.find_submission(STEM, "carol")
        assert (submission.score, submission.max_score) == (0, 5)
    graded = course / "autograded" / "carol" / STEM
    note = nbformat.read(graded / f"{STEM}.ipynb", as_version=4).cells[0].source
    assert "(nbgrader autograde (seed" in note and "0 / 5 points" in note and "invalid notebook" in note, note
    assert (graded / kept_name(STEM)).read_bytes() == cut and submitted.read_bytes() == cut
    assert (course / "feedback" / "carol" / STEM / f"{STEM}.html").is_file()
    outbound = course / ".nbgrader" / "exchange" / COURSE_ID / "outbound" / STEM / f"{STEM}.ipynb"
    assert outbound.is_file(), f"release_assignment did not release into the course's exchange: {ran[2][1][-2000:]}"
    assert str(REPO_ROOT / ".nbgrader") not in "".join(output for _, output in ran)
