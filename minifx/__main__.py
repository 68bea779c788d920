"""Command line: ``python -m minifx compare FILE.py:NAME|MODULE:NAME [options]`` and
``python -m minifx learn ...`` (``--help`` lists them)."""

from __future__ import annotations

import os
import sys

from minifx.compare import main as compare_main
from minifx.learn.cli import main as learn_main

USAGE = (
    "usage: python -m minifx compare FILE.py:NAME|MODULE:NAME"
    " [--input-shape 2,3[:DTYPE] ...] [--diff] [--convert]\n"
    "       python -m minifx learn list | start chNN | check chNN | hint chNN.K [--more]"
    " | solution chNN.K | coverage | milestone [NAME]"
)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "learn":
        return learn_main(rest)
    if command != "compare":
        print(f"error: unknown command {command!r}\n{USAGE}", file=sys.stderr)
        return 2
    return compare_main(rest)


def run(argv: list[str]) -> int:
    """``main``, ending quietly when the reader of the output goes away (``| head``).

    Writing into a pipe whose reader has closed raises BrokenPipeError; the
    output is no longer wanted, so there is nothing to report. stdout is then
    pointed at /dev/null, so that Python's own flush at exit cannot fail again.
    The exit status is a shell's for a process ended by SIGPIPE.
    """
    try:
        status = main(argv)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13  # SIGPIPE


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
