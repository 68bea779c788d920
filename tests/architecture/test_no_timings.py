"""No timing figures in the comments and docstrings of ``tensor`` and ``minifx``.

A figure such as "10 us" or "15% faster" is true of one machine on one day and
goes stale with the hardware; it also crowds out the reason the code is written
as it is. Comments and docstrings say why; the figures belong in benchmark
output, which the lessons include. The test reads only comments (``tokenize``)
and docstrings (``ast``), so a number in code is never flagged.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tensor", "minifx")

# What reads as a timing: a number with a unit of time, a speed ratio, a
# percentage, a bandwidth, or a figure pinned to "this machine".
TIMING = re.compile(
    r"""
      \d(?:[\d.,]*\d)?\s*(?:us|µs|ns|ms|s|sec|secs|seconds?|milliseconds?|
                            microseconds?|nanoseconds?|cycles?)\b
    | \b(?:a|half\ a|a\ third\ of\ a|tens\ of|hundreds\ of|a\ few)\s+
        (?:micro|milli|nano)seconds?\b
    | (?:\d(?:[\d.]*\d)?|two|three|four|five|six|seven|eight|nine|ten)
        \s*(?:x|times)\s+(?:faster|slower|quicker)\b
    | \b(?:twice|half)\s+as\s+(?:fast|slow|quick)\b
    | \d\s*%
    | \b(?:GB|MB|KB)/s\b
    | \bthis\ (?:shared\ )?(?:machine|host)\b
    """,
    re.VERBOSE | re.IGNORECASE,
)

# Text that matches TIMING but is no timing: (file, exact text, reason).
ALLOWED: list[tuple[str, str, str]] = [
    (
        "tensor/backend/__init__.py",
        "import on this machine",
        "which backends this machine can import (numba installed or not), not a speed",
    ),
]


def _docstrings(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(
            node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                found.append((body[0].lineno, body[0].value.value))
    return found


def _comments(source: str) -> list[tuple[int, str]]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]


def _allowed(path: str, text: str, start: int, end: int) -> bool:
    for allowed_path, snippet, _reason in ALLOWED:
        if allowed_path != path:
            continue
        at = text.find(snippet)
        while at != -1:
            if at <= start and end <= at + len(snippet):
                return True
            at = text.find(snippet, at + 1)
    return False


def timing_figures(source: str, relative: str) -> list[str]:
    """Every timing figure in the comments and docstrings of one file's source,
    as ``path:line: text``."""
    texts = _comments(source) + _docstrings(ast.parse(source))
    problems = []
    for line, text in texts:
        flat = " ".join(text.split())  # a figure may wrap across docstring lines
        for match in TIMING.finditer(flat):
            if not _allowed(relative, flat, match.start(), match.end()):
                problems.append(f"{relative}:{line}: ...{match.group(0)!r} in {flat[:90]!r}")
    return problems


def _files() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_no_timing_figures_in_comments_or_docstrings():
    problems = [
        problem
        for path in _files()
        for problem in timing_figures(
            path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix()
        )
    ]
    assert not problems, "timing figures (say why instead):\n" + "\n".join(problems)


def test_the_detector_finds_timings_and_skips_code():
    sample = (
        '"""Fast: an add takes 10 us."""\n'
        "WAIT = 5  # seconds, not a figure\n"
        "x = 3  # 15% faster this way\n"
        "y = '12 ms in a string, not a docstring'\n"
        "def f():\n"
        '    """Measured 3.5 times slower."""\n'
        "# float32 has 24 bits\n"
    )
    found = timing_figures(sample, "tensor/sample.py")
    assert len(found) == 3, found
    assert [f.split(":")[1] for f in found] == ["3", "1", "6"]


def test_every_allow_list_entry_is_still_needed():
    for path, snippet, reason in ALLOWED:
        text = (ROOT / path).read_text(encoding="utf-8")
        assert snippet in text, f"{path} no longer says {snippet!r}; drop it ({reason})"
