import argparse
import sys

from autograde.expected import check, generator_stems, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograde.expected",
                                     description="Write (or --check) the visible checks' expected values.")
    parser.add_argument("stems", nargs="*", help="assignment stems (default: every one with a generator)")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    args = parser.parse_args(argv)
    known = generator_stems()
    unknown = sorted(set(args.stems) - set(known))
    if unknown:
        parser.error(f"no generator for {', '.join(unknown)}; known: {', '.join(known)}")
    failed = False
    for stem in args.stems or known:
        if args.check:
            problems = check(stem)
            failed |= bool(problems)
            print(f"{stem}: " + ("up to date" if not problems else "differs:\n  " + "\n  ".join(problems[:20])))
        else:
            print(f"wrote {write(stem)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
