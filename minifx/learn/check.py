"""``check chNN``: run a chapter's tests against the workspace, report per exercise.

The tests run in a child pytest with ``MINIFX_WORKSPACE`` set, so they import
the workspace's packages. pytest writes a JUnit XML report; each exercise is
passed when every test of its ``tests`` passed, else the first failure is
shown in a few lines (its message, not the whole traceback).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from .exercises import Exercise, chapter_exercises, find_exercise
from .workspace import ENV_VAR, REFERENCE, require

MESSAGE_LINES = 4
LINE_WIDTH = 160
STUB_MESSAGE = re.compile(r"\b(ch\d\d\.\d+): ")


@dataclass
class Outcome:
    test: str  # tests/ch03/test_node.py::test_name
    failed: bool
    message: str = ""


def pytest_command(chapter: str, reference: Path, junit: Path) -> list[str]:
    paths = [str(p.relative_to(reference)) for p in sorted((reference / "lessons").glob(
        f"{chapter}_*.md"))]
    return [sys.executable, "-m", "pytest", "-q", "--tb=short", "-m", chapter,
            f"--junitxml={junit}", f"tests/{chapter}", *paths]


def run_tests(chapter: str, workspace: Path, reference: Path = REFERENCE
              ) -> tuple[list[Outcome], int, str]:
    """Run the chapter's tests against ``workspace``: outcomes, exit code, pytest's output."""
    require(workspace)
    with tempfile.TemporaryDirectory(prefix="minifx-check-") as tmp:
        junit = Path(tmp) / "report.xml"
        env = {**os.environ, ENV_VAR: str(workspace),
               "NUMBA_CACHE_DIR": str(kernel_cache(workspace))}
        done = subprocess.run(pytest_command(chapter, reference, junit), cwd=reference,
                              env=env, capture_output=True, text=True)
        outcomes = _read_junit(junit) if junit.exists() else []
    return outcomes, done.returncode, done.stdout + done.stderr


def kernel_cache(workspace: Path) -> Path:
    """Where numba keeps the workspace's compiled kernels: one folder per version of them.

    numba checks a cached kernel against its own file only, not against the
    files of the functions it inlined (``row_start`` in strides.py is inlined
    into the kernels of elementwise.py). Keyed by all the kernel sources, a
    change to any of them compiles afresh instead of running a stale kernel.
    """
    digest = hashlib.sha1()
    for path in sorted((workspace / "tensor").rglob("*.py")):
        if "_kernels" in path.parts or path.parent.name == "backend":
            digest.update(str(path.relative_to(workspace)).encode())
            digest.update(path.read_bytes())
    return workspace / ".numba_cache" / digest.hexdigest()[:12]


def _read_junit(path: Path) -> list[Outcome]:
    outcomes = []
    for case in ET.parse(path).iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        test = _test_path(classname, name)
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is None:
            outcomes.append(Outcome(test, False))
        else:
            message = problem.get("message") or (problem.text or "").strip()
            outcomes.append(Outcome(test, True, message))
    return outcomes


def _test_path(classname: str, name: str) -> str:
    """``tests.ch03.test_node`` + ``test_x`` -> ``tests/ch03/test_node.py::test_x``."""
    if classname.startswith("lessons.") and classname.endswith(".md"):  # a lesson's block
        return f"lessons/{classname.removeprefix('lessons.')}::{name}"
    parts = classname.split(".")
    for i in range(len(parts), 0, -1):
        candidate = "/".join(parts[:i]) + ".py"
        if (REFERENCE / candidate).is_file():
            return "::".join([candidate, *parts[i:], name])
    return f"{classname}::{name}"


def _belongs(outcome: Outcome, selector: str) -> bool:
    test = outcome.test.split("[")[0]
    return test == selector or test.startswith(selector + "::")


def short(message: str) -> list[str]:
    """The first few lines of a failure message, each cut to a readable width."""
    lines = [line.rstrip() for line in message.strip().splitlines() if line.strip()]
    cut = [line if len(line) <= LINE_WIDTH else line[: LINE_WIDTH - 3] + "..."
           for line in lines[:MESSAGE_LINES]]
    if len(lines) > MESSAGE_LINES:
        cut.append("...")
    return cut


def _blocking_stub(message: str) -> Exercise | None:
    """The exercise whose stub raised, when the message quotes a stub's words."""
    for match in STUB_MESSAGE.finditer(message):
        try:
            exercise = find_exercise(match.group(1))
        except LookupError:
            continue
        if f"{exercise.id}: {exercise.title}" in message:
            return exercise
    return None


def exercise_report(exercise: Exercise, outcomes: list[Outcome]) -> tuple[bool, list[str]]:
    """(passed, lines) for one exercise from the outcomes of its chapter's tests."""
    mine = [o for o in outcomes if any(_belongs(o, s) for s in exercise.tests)]
    head = f"{exercise.id}  {exercise.qualname}: {exercise.title}"
    if not mine:
        return False, [f"{head}: FAILED, none of its tests ran ({', '.join(exercise.tests)})"]
    failed = [o for o in mine if o.failed]
    if not failed:
        return True, [f"{head}: passed ({len(mine)} tests)"]
    first = failed[0]
    lines = [f"{head}: FAILED {len(failed)} of {len(mine)} tests, first {first.test}"]
    other = _blocking_stub(first.message)
    if other is not None and other is not exercise:
        lines.append(f"    blocked by {other.id} {other.qualname}, still a stub: solve it first")
    lines += ["    " + line for line in short(first.message)]
    return False, lines


def check(chapter: str, workspace: Path, reference: Path = REFERENCE) -> tuple[bool, str]:
    """Run and report: (every exercise and every other test passed, the report's text)."""
    exercises = chapter_exercises(chapter)
    outcomes, code, output = run_tests(chapter, workspace, reference)
    if not outcomes:
        tail = "\n".join(output.strip().splitlines()[-12:])
        return False, f"{chapter}: the tests did not run (pytest exit code {code}):\n{tail}"
    lines = [f"{chapter}: {len(outcomes)} tests against {workspace}"]
    all_passed = True
    claimed = set()
    for exercise in exercises:
        passed, report = exercise_report(exercise, outcomes)
        all_passed &= passed
        lines += report
        claimed |= {o.test for o in outcomes if any(_belongs(o, s) for s in exercise.tests)}
    others = [o for o in outcomes if o.test not in claimed and o.failed]
    if others:
        all_passed = False
        lines.append(f"other tests of {chapter}: {len(others)} failed, first {others[0].test}")
        lines += ["    " + line for line in short(others[0].message)]
    lines.append("all passed" if all_passed else "not yet: fix the first FAILED exercise, "
                 f"then run `python -m minifx learn check {chapter}` again")
    return all_passed, "\n".join(lines)
