"""The command, `python -m autograde.student_kit --out DIR [--give 01,02]` (`make student-kit`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograde import student_kit  # its docstring, the kit's overview, is the command's help
from autograde.course import REPO_ROOT
from autograde.student_kit.assemble import build
from autograde.student_kit.assignments import assignment_stems, parse_give
from autograde.student_kit.errors import KitError
from autograde.student_kit.layers import LAYERS, answer_blocks

DEFAULT_OUT = Path("dist/student-kit")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograde.student_kit", description=student_kit.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"the kit's folder; the .zip is written beside it (default: {DEFAULT_OUT})")
    parser.add_argument("--give", default="",
                        help="assignments whose building blocks in course_lib/layers.py the kit hands out, "
                             "once they are due: numbers or stems, comma-separated (e.g. 01,02; default: none)")
    args = parser.parse_args(argv)
    try:
        given = parse_give(args.give, assignment_stems())
        archive = build(args.out, given)
    except KitError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    blocks = answer_blocks((REPO_ROOT / LAYERS).read_text(encoding="utf-8"))
    withheld = sorted({b.stem for b in blocks if b.stem not in given})
    size = archive.stat().st_size / 1e6
    print(f"student kit in {args.out}/ and {args.out.parent / archive.name} ({size:.1f} MB); "
          f"building blocks handed out: {', '.join(given) or 'none'}; withheld: {', '.join(withheld) or 'none'}")
    return 0
