"""Run each exercise's tests with its stub in place, in one process; write what failed.

``python -m tests.learn.honesty_child OUT.json`` from the checkout (started by
test_honesty.py). For every chapter it puts all the chapter's stubs in place
and runs the chapter's exercise tests; then, for every exercise alone, its
own tests. Each run stops at the first failure (``-x``): one failure is all
the check needs. OUT.json maps ``chNN`` and ``chNN.K`` to the pytest exit code
and the first failed test with its message.
"""

from __future__ import annotations

import json
import sys
import time

import pytest

from minifx.learn.exercises import CHAPTERS, Exercise, chapter_exercises
from tests.learn.swap import swap_in_stub


class FirstFailure:
    """A pytest plugin that remembers the first failed test and its message."""

    def __init__(self) -> None:
        self.failed: tuple[str, str] | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and self.failed is None:
            message = getattr(report.longrepr, "reprcrash", None)
            self.failed = (report.nodeid, message.message if message else str(report.longrepr))


def run_with_stubs(exercises: list[Exercise]) -> dict:
    tests = list(dict.fromkeys(t for e in exercises for t in e.tests))
    undo = [swap_in_stub(e) for e in exercises]
    recorder = FirstFailure()
    started = time.perf_counter()
    try:
        code = pytest.main(["-x", "-q", "--no-header", "-p", "no:cacheprovider", *tests],
                           plugins=[recorder])
    finally:
        for u in reversed(undo):
            u()
    return {"exit_code": int(code), "first_failure": recorder.failed,
            "seconds": round(time.perf_counter() - started, 2)}


def main(out: str) -> int:
    results = {}
    for chapter in CHAPTERS:
        exercises = chapter_exercises(chapter)
        results[chapter] = run_with_stubs(exercises)
        for exercise in exercises:
            results[exercise.id] = run_with_stubs([exercise])
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
