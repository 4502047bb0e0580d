"""tests/memory_guard.py, in a pytest run of its own with a small limit: a test that grows its process fails by name
and the run goes on; a test that swallows the MemoryError and keeps the memory ends its worker, which xdist names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

GROWS = '''
import time

def test_grows():
    hog = []
    while True:
        hog.append(bytearray(2**25))
        time.sleep(0.01)

def test_after_it():
    assert len(bytearray(2**20)) == 2**20
'''

SWALLOWS = '''
import time

def test_swallows():
    hog = []
    for _ in range(600):
        try:
            if len(hog) < 16:
                hog.append(bytearray(2**25))
            time.sleep(0.1)
        except MemoryError:
            pass
'''


def run(tmp_path: Path, source: str, *options: str) -> subprocess.CompletedProcess:
    test = tmp_path / "test_hungry.py"
    test.write_text(source)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "memory_guard", "-p", "no:cacheprovider", "-c", "/dev/null",
               "--rootdir", str(tmp_path), "--basetemp", str(tmp_path / "base"), *options, str(test)]
    environment = {"PYTHONPATH": str(REPO / "tests"), "COURSE_TEST_MEMORY_GIB": "0.4",
                   "COURSE_TEST_MEMORY_GRACE": "2", "PATH": "/usr/bin:/bin"}
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=300)


@pytest.mark.thorough
def test_a_test_that_grows_past_the_limit_fails_by_name_and_the_run_goes_on(tmp_path):
    result = run(tmp_path, GROWS)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "1 failed, 1 passed" in output, output
    assert "MemoryError: test_hungry.py::test_grows grew this pytest process to" in output, output
    assert "past its limit of 0.4 GiB (COURSE_TEST_MEMORY_GIB)" in output, output


@pytest.mark.thorough
def test_a_test_that_keeps_the_memory_ends_its_worker_which_xdist_names(tmp_path):
    result = run(tmp_path, SWALLOWS, "-n", "1", "--max-worker-restart=0")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "test_hungry.py::test_swallows still holds" in output, output
    assert "crashed while running 'test_hungry.py::test_swallows'" in output, output
