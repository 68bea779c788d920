"""Command line: ``python -m minifx compare FILE.py:NAME [--input-shape 2,3 ...] [--convert]``."""

from __future__ import annotations

import sys

USAGE = "usage: python -m minifx compare FILE.py:NAME [--input-shape 2,3 ...] [--convert]"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command != "compare":
        print(f"error: unknown command {command!r}\n{USAGE}", file=sys.stderr)
        return 2
    from minifx.compare import main as compare_main

    return compare_main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
