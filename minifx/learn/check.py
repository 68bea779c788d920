"""``check chNN``: run a chapter's tests against the workspace, report per exercise.

An exercise's verdict depends on its own code only. The tests run in one
child process (tests/learn/check_child.py) with ``MINIFX_WORKSPACE`` set, so
they import the workspace's packages, in steps:

- one step per exercise of the chapter: the exercise's own tests, while every
  *other* exercise of the workspace (of any chapter) runs from the reference
  code. A bug is then reported under the exercise that has it and no other,
  and a half-done exercise never blocks the next one;
- a last step, once every exercise passes: the chapter's other tests and its
  lesson, with the chapter's exercises all the learner's and every other
  chapter's from the reference.

Each failure is shown in a few lines: its message with the values of the
failing ``assert`` (helper modules are rewritten too, see tests/__init__.py);
a lesson block's message starts with the lines that differ.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .exercises import EXERCISES, Exercise, chapter_exercises, find_exercise
from .workspace import ENV_VAR, REFERENCE, record_check, require, solution, status

MESSAGE_LINES = 8
LESSON_LINES = 12
LINE_WIDTH = 160
STUB_MESSAGE = re.compile(r"\b(ch\d\d\.\d+): ")
REST = "rest"


@dataclass
class Outcome:
    test: str  # tests/ch03/test_node.py::test_name
    failed: bool
    message: str = ""
    where: str = ""  # file:line of the failing line, when pytest knows it


def module_name(file: str) -> str:
    """``minifx/node.py`` -> ``minifx.node``; a package's ``__init__.py`` -> the package."""
    return file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _lessons(chapter: str, reference: Path) -> list[str]:
    return [str(p.relative_to(reference))
            for p in sorted((reference / "lessons").glob(f"{chapter}_*.md"))]


def plan(chapter: str, workspace: Path, reference: Path = REFERENCE) -> dict:
    """The child's steps: each exercise alone, then the chapter's other tests and lesson.

    A step lists the exercises that run from the reference while it runs: those
    not under check whose workspace code is not already the reference.
    """
    own = chapter_exercises(chapter)
    differs = [e for e in EXERCISES if status(e, workspace, reference) not in (
        "reference", "missing")]

    def swaps(kept: list[Exercise]) -> list[dict]:
        return [{"module": module_name(e.file), "qualname": e.qualname,
                 "source": solution(e, reference)} for e in differs if e not in kept]

    steps = [{"label": e.id, "args": ["-m", chapter, *e.tests], "swaps": swaps([e])}
             for e in own]
    steps.append({"label": REST, "args": ["-m", chapter, f"tests/{chapter}",
                                          *_lessons(chapter, reference)],
                  "exclude": [t for e in own for t in e.tests], "swaps": swaps(own),
                  "when_all_passed": True})
    return {"chapter": chapter, "steps": steps}


def run_tests(chapter: str, workspace: Path, reference: Path = REFERENCE
              ) -> tuple[dict[str, list[Outcome] | str], int, str]:
    """Run the plan against ``workspace``: outcomes per step (or the step's error text),
    the child's exit code and its output."""
    require(workspace)
    with tempfile.TemporaryDirectory(prefix="minifx-check-") as tmp:
        plan_path, out = Path(tmp) / "plan.json", Path(tmp) / "out.json"
        plan_path.write_text(json.dumps(plan(chapter, workspace, reference)))
        env = {**os.environ, ENV_VAR: str(workspace),
               "NUMBA_CACHE_DIR": str(kernel_cache(workspace))}
        done = subprocess.run([sys.executable, "-m", "tests.learn.check_child", str(plan_path),
                               str(out)], cwd=reference, env=env, capture_output=True,
                              text=True)
        results = json.loads(out.read_text()) if out.exists() else {}
    steps: dict[str, list[Outcome] | str] = {}
    for label, result in results.items():
        if "skipped" in result:
            continue
        if "error" in result:
            steps[label] = result["error"]
        else:
            steps[label] = [Outcome(test, o["failed"], o.get("message", ""), o.get("where", ""))
                            for test, o in result["outcomes"].items()]
    return steps, done.returncode, done.stdout + done.stderr


def kernel_cache(workspace: Path) -> Path:
    """Where numba keeps the workspace's compiled kernels: one folder per version of them.

    numba checks a cached kernel against its own file only, not against the
    files of the functions it inlined (``row_start`` in strides.py is inlined
    into the kernels of elementwise.py). Keyed by all the kernel sources, a
    change to any of them compiles afresh instead of running a stale kernel.
    """
    digest = hashlib.sha1()
    for path in sorted((workspace / "tensor").rglob("*.py")):
        if "backend" in path.parts:
            digest.update(str(path.relative_to(workspace)).encode())
            digest.update(path.read_bytes())
    return workspace / ".numba_cache" / digest.hexdigest()[:12]


def _belongs(outcome: Outcome, selector: str) -> bool:
    test = outcome.test.split("[")[0]
    return test == selector or test.startswith(selector + "::")


def short(message: str, keep: int = MESSAGE_LINES) -> list[str]:
    """The first few lines of a failure message, each cut to a readable width."""
    lines = [line.rstrip() for line in message.strip().splitlines() if line.strip()]
    cut = [line if len(line) <= LINE_WIDTH else line[: LINE_WIDTH - 3] + "..."
           for line in lines[:keep]]
    if len(lines) > keep:
        cut.append("...")
    return cut


def _failure(outcome: Outcome) -> list[str]:
    lesson = outcome.test.startswith("lessons/")
    lines = short(outcome.message, LESSON_LINES if lesson else MESSAGE_LINES)
    if outcome.where and not lesson:
        lines.append(f"at {outcome.where}")
    return ["    " + line for line in lines]


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


def exercise_report(exercise: Exercise, outcomes: list[Outcome] | str
                    ) -> tuple[bool, list[str]]:
    """(passed, lines) for one exercise from the outcomes of its own step."""
    head = f"{exercise.id}  {exercise.qualname}: {exercise.title}"
    if isinstance(outcomes, str):
        return False, [f"{head}: FAILED, its tests could not run", f"    {outcomes}"]
    mine = [o for o in outcomes if any(_belongs(o, s) for s in exercise.tests)]
    broken = [o for o in outcomes if o.failed and o not in mine]  # collection errors
    if not mine:
        lines = [f"{head}: FAILED, none of its tests ran ({', '.join(exercise.tests)})"]
        return False, lines + (_failure(broken[0]) if broken else [])
    failed = [o for o in mine if o.failed]
    if not failed:
        return True, [f"{head}: passed ({len(mine)} tests)"]
    first = failed[0]
    lines = [f"{head}: FAILED {len(failed)} of {len(mine)} tests, first {first.test}"]
    other = _blocking_stub(first.message)
    if other is not None and other is not exercise:
        lines.append(f"    blocked by {other.id} {other.qualname}, still a stub: solve it first")
    return False, lines + _failure(first)


def check(chapter: str, workspace: Path, reference: Path = REFERENCE) -> tuple[bool, str]:
    """Run and report: (every exercise and every other test passed, the report's text)."""
    exercises = chapter_exercises(chapter)
    steps, code, output = run_tests(chapter, workspace, reference)
    if not steps:
        tail = "\n".join(output.strip().splitlines()[-12:])
        return False, f"{chapter}: the tests did not run (exit code {code}):\n{tail}"
    count = sum(len(o) for o in steps.values() if not isinstance(o, str))
    lines = [f"{chapter}: {count} tests against {workspace}, each exercise with the "
             "others from the reference"]
    wrong = []
    for exercise in exercises:
        passed, report = exercise_report(exercise, steps.get(exercise.id, []))
        if not passed:
            wrong.append(exercise.id)
        lines += report
    record_check(workspace, {e.id: e.id not in wrong for e in exercises})
    rest = steps.get(REST, [])
    if REST not in steps:
        lines.append(f"the other tests of {chapter} and its lesson run once every exercise "
                     "passes")
    others = [rest] if isinstance(rest, str) else [o for o in rest if o.failed]
    if others:
        lines.append(f"other tests of {chapter} and its lesson (your code of all its "
                     f"exercises together): {len(others)} failed")
        for outcome in others[:3]:
            if isinstance(outcome, str):
                lines.append(f"    {outcome}")
            else:
                lines.append(f"  {outcome.test}")
                lines += _failure(outcome)
    if wrong:
        them = "it" if len(wrong) == 1 else "them"
        lines.append(f"not yet: {', '.join(wrong)} FAILED; fix {them}, then run "
                     f"`python -m minifx learn check {chapter}` again")
    elif others:
        lines.append("not yet: every exercise passes its own tests, but the tests above "
                     "fail with your exercises together")
    else:
        lines.append("all passed")
    return not wrong and not others, "\n".join(lines)
