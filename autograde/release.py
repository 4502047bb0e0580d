"""Generate the student notebooks (`notebooks/`) from the instructor sources (`solutions/`).

    python -m autograde.release                 # regenerate notebooks/ in place
    python -m autograde.release --out DIR       # write the release somewhere else (tests use this)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from autograde.course import RELEASE_DIRECTORY, REPO_ROOT, list_assignments
from autograde.nbgrader_runner import make_course_root, run_nbgrader


def release(out: Path, assignments: list[str] | None = None) -> list[str]:
    """Run nbgrader's generate_assignment for each assignment and place the result in `out`."""
    assignments = assignments or list_assignments()
    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="course-release-") as tmp:
        root = make_course_root(Path(tmp), assignments)
        for stem in assignments:
            run_nbgrader(root, "generate_assignment", stem, "--force", "--log-level=WARN")
            generated = root / RELEASE_DIRECTORY / stem
            target = out / stem
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(generated, target)
    return assignments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / RELEASE_DIRECTORY,
                        help="folder that receives one sub-folder per assignment (default: notebooks/)")
    parser.add_argument("assignments", nargs="*", help="assignment stems (default: all in solutions/)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.assignments) - set(list_assignments()))
    if unknown:
        parser.error(f"no such assignment in solutions/: {', '.join(unknown)}")
    done = release(args.out, args.assignments or None)
    print(f"released {', '.join(done)} into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
