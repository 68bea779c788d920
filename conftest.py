"""Run every lesson as a test.

A lesson is a Markdown page in ``lessons/``. Each fenced block whose info
string is exactly ``python`` runs, in page order, in one namespace per page.
A fenced block with the info string ``output`` right after a python block
holds what that block must print; the test compares the two. Blocks fenced
as ``py`` are shown, never run (source included for reading, or code that is
not meant to run).

Lesson tests carry the marker of their chapter, read from the file name
(``lessons/ch03_ir.md`` is ``ch03``), so ``pytest -m ch03`` runs the chapter's
tests and its lesson together.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest
from hypothesis import settings
from sybil import Example, Region, Sybil
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

# In CI, hypothesis draws the same examples on every run (fixed seed, no saved
# database), so a result is reproducible from the log; locally it explores.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

CHAPTER_FILE = re.compile(r"^(ch\d\d)_")
_fences = FencedCodeBlockLexer(language=r"python|output")


def _strip_lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


class LessonBlockParser:
    """Pairs each python block with the output block that follows it, if any."""

    def __call__(self, document):
        regions = list(_fences(document))
        for index, region in enumerate(regions):
            if region.lexemes["language"] != "python":
                continue
            expected = None
            following = regions[index + 1] if index + 1 < len(regions) else None
            if (
                following is not None
                and following.lexemes["language"] == "output"
                and not document.text[region.end : following.start].strip()
            ):
                expected = str(following.lexemes["source"])
            source = region.lexemes["source"]
            first_line = document.text.count("\n", 0, region.start) + 1
            yield Region(
                region.start,
                region.end,
                parsed=(str(source), first_line, expected),
                evaluator=self.evaluate,
            )

    @staticmethod
    def evaluate(example: Example) -> str | None:
        source, first_line, expected = example.parsed
        # Pad with blank lines so that a traceback points at the lesson's own line.
        code = compile("\n" * first_line + source, example.path, "exec")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(code, example.namespace)
        if expected is None:
            return None
        if _strip_lines(printed.getvalue()) != _strip_lines(expected):
            return (
                f"block at line {first_line} printed:\n{printed.getvalue()}\n"
                f"but the lesson shows:\n{expected}"
            )
        return None


def _fresh_namespace(namespace: dict) -> None:
    namespace["__name__"] = "__lesson__"


pytest_collect_file = Sybil(
    parsers=[LessonBlockParser()],
    patterns=["ch*.md", "index.md"],
    path="lessons",
    setup=_fresh_namespace,
).pytest()


def pytest_collection_modifyitems(items):
    for item in items:
        path = Path(str(item.path))
        if path.parent.name == "lessons":
            match = CHAPTER_FILE.match(path.name)
            if match:
                item.add_marker(getattr(pytest.mark, match.group(1)))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "book: the book's own machinery: setup.sh, the lessons' rules, their figures"
    )
