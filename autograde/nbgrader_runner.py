"""Run nbgrader commands in a throw-away course root configured like the real course."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from autograde.course import NOT_COURSE_FILES, REPO_ROOT, SOURCE_DIRECTORY

CONFIG_TEMPLATE = """\
from autograde.nbgrader_settings import apply
apply(get_config(), {root!r}, cell_timeout={cell_timeout})
"""


def kernel_environment() -> dict[str, str]:
    """The environment for nbgrader and its kernels: this interpreter's bin first on PATH, so
    the `python3` kernel is the course's virtual environment and not whatever else is installed."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return env


def make_course_root(root: Path, assignments: list[str], *, cell_timeout: int = 300) -> Path:
    """Create `root` with the given source assignments and the course's nbgrader config."""
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    for stem in assignments:
        source = REPO_ROOT / SOURCE_DIRECTORY / stem
        if not (source / f"{stem}.ipynb").is_file():
            raise FileNotFoundError(f"no source notebook {source / (stem + '.ipynb')}")
        shutil.copytree(source, root / SOURCE_DIRECTORY / stem, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(*NOT_COURSE_FILES))
    (root / "nbgrader_config.py").write_text(
        CONFIG_TEMPLATE.format(root=str(root), cell_timeout=int(cell_timeout))
    )
    return root


def run_nbgrader(root: Path, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run `nbgrader <args>` inside `root`; raise with nbgrader's own log if it fails."""
    command = [sys.executable, "-m", "nbgrader", *args]
    result = subprocess.run(command, cwd=root, env=kernel_environment(), capture_output=True,
                            text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(
            f"`nbgrader {' '.join(args)}` failed with exit code {result.returncode}:\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result
