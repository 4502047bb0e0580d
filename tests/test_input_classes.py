"""Every graded function has its allowed inputs written down (autograde/input_classes; in 01-05 a few say why not),
and its hidden check, run against the solution, draws from every one of those classes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from autograde import input_classes, registry
from autograde.course import REPO_ROOT
from autograde.judge import release_notebook
from autograde.sandbox import declared_env

STEMS = registry.stems()


@pytest.mark.parametrize("stem", STEMS)
def test_every_graded_function_lists_its_input_classes(stem):
    listed, unlisted = input_classes.classes(stem), input_classes.unlisted(stem)
    assert not set(listed) & set(unlisted)
    assert sorted([*listed, *unlisted]) == sorted(row.name for row in registry.exercises(stem))
    if stem >= "06":  # every graded function of 06-08 is listed
        assert not unlisted, unlisted
    for name, found in listed.items():
        names = [c.name for c in found]
        assert len(found) >= 3 and len(set(names)) == len(names), f"{name}: {names}"


@pytest.mark.thorough
@pytest.mark.parametrize("stem", STEMS)
def test_the_hidden_checks_draw_every_class(stem):
    setup = "".join(row.kernel_setup for row in registry.exercises(stem))
    if not setup:
        assert input_classes.missing(stem) == {}
        return
    # Another Keras backend (08's PyTorch) needs a process of its own, set up as the student's kernel is: the
    # release's declared variables, then the row's set-up code.
    env = {**os.environ, **declared_env(release_notebook(stem))}
    code = f"{setup}\nimport sys\nfrom autograde.input_classes import main\nsys.exit(main(['--verify', {stem!r}]))\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_a_class_never_drawn_is_reported(monkeypatch):
    never = input_classes.InputClass("never", "no call is of this class", lambda arguments: False)
    some = input_classes.InputClass("any", "every call", lambda arguments: True)
    monkeypatch.setattr(input_classes, "classes", lambda stem: {"squad_em_f1": (some, never)})
    assert input_classes.missing("07_qa") == {"squad_em_f1": ["never"]}
