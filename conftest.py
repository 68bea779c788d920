"""Run every lesson as a test.

A lesson is a Markdown page in ``lessons/``. Each fenced block whose info
string is exactly ``python`` runs, in page order, in one namespace per page.
A fenced block with the info string ``output`` right after a python block
holds what that block must print; the test compares the two. Blocks fenced
as ``py`` are shown, never run (source included for reading, or code that is
not meant to run). A ``figure`` block names a graph to draw; its test checks
that the graph expression gives a graph the drawer renders (the site build
draws it into the page); a ``stepper`` block's test, that its expression gives
a recorded pass. The rules live in ``book/lesson_blocks.py``, shared with
the site build (``book/mkdocs_hooks.py``).

Every block runs from a scratch working directory, and a block that writes
into the checkout fails.

Lesson tests carry the marker of their chapter, read from the file name
(``lessons/ch03_ir.md`` is ``ch03``), so ``pytest -m ch03`` runs the chapter's
tests and its lesson together. A test under ``tests/`` carries the marker named
by its folder (``tests/ch03/...`` is ``ch03``, ``tests/site/...`` is ``site``),
so no test file repeats it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import settings
from sybil import Example, Region, Sybil

from tests.learn.switch import use_workspace_if_asked

# MINIFX_WORKSPACE=<dir>: the tests import tensor and minifx from the learner's
# workspace (python -m minifx learn); this must run before anything imports them.
WORKSPACE = use_workspace_if_asked()

from book import lesson_blocks  # noqa: E402

# In CI, hypothesis draws the same examples on every run (fixed seed, no saved
# database), so a result is reproducible from the log; locally it explores. So it
# does on a learner's workspace (`learn check`): the same code gets the same verdict,
# and the kernels its examples compile are in numba's cache the next time.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI") or WORKSPACE:
    settings.load_profile("ci")

CHAPTER_FILE = re.compile(r"^(ch\d\d)_")
_guard: lesson_blocks.CheckoutGuard | None = None


def _checkout_guard() -> lesson_blocks.CheckoutGuard:
    global _guard
    if _guard is None:
        _guard = lesson_blocks.CheckoutGuard()
    return _guard


class LessonBlockParser:
    """One region per python block (with its expected output) and per figure block."""

    def __call__(self, document):
        for block in lesson_blocks.parse_blocks(document.text, document.path):
            yield Region(block.start, block.end, parsed=block, evaluator=self.evaluate)

    @staticmethod
    def evaluate(example: Example) -> str | None:
        block = example.parsed
        where = f"{Path(example.path).name} line {block.line}"
        with _checkout_guard().running(f"the block at {where}"):
            if block.language in lesson_blocks.DRAWN:  # a figure or a stepper
                lesson_blocks.check_drawn(block, example.namespace)
                return None
            printed = lesson_blocks.run_python(block, example.namespace, example.path)
        return lesson_blocks.output_mismatch(block, printed)


def _fresh_namespace(namespace: dict) -> None:
    namespace["__name__"] = "__lesson__"


pytest_collect_file = Sybil(
    parsers=[LessonBlockParser()],
    patterns=["ch*.md", "index.md"],
    path="lessons",
    setup=_fresh_namespace,
).pytest()


def pytest_sessionfinish(session):
    if _guard is not None:
        _guard.close()


TESTS = Path(__file__).resolve().parent / "tests"


def pytest_collection_modifyitems(items):
    for item in items:
        path = Path(str(item.path)).resolve()
        if path.parent.name == "lessons":
            match = CHAPTER_FILE.match(path.name)
            if match:
                item.add_marker(getattr(pytest.mark, match.group(1)))
        elif path.is_relative_to(TESTS) and len(path.relative_to(TESTS).parts) > 1:
            # tests/<folder>/...: the folder is the marker (registered, so a
            # folder without one fails under --strict-markers).
            item.add_marker(getattr(pytest.mark, path.relative_to(TESTS).parts[0]))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "book: the book's own machinery: setup.sh, the lessons' rules, their figures"
    )
