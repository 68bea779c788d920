"""``check`` blames the exercise that has the bug, and no other.

On a workspace where every exercise is solved (the reference pasted over each
stub), one plausible bug is planted in one exercise at a time; ``check`` of
its chapter must then report that exercise, and only that one, as FAILED,
with the failing line's values. Each bug is a one-place edit of the
reference, so the table below fails loudly if the reference changes under it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from minifx.learn import check
from minifx.learn import workspace as ws
from minifx.learn.exercises import Exercise, chapter_exercises

CHAPTERS = ("ch01", "ch02", "ch03")

# exercise -> (text of the reference, what the bug puts in its place)
BUGS: dict[str, tuple[str, str]] = {
    "ch01.1": ('default = f"(default={self._args[0]})" if self._args else ""', 'default = ""'),
    "ch01.2": ('"    " + node.format_node()', '"  " + node.format_node()'),
    "ch01.3": ('return f"builtins.{name}"', "return name"),
    "ch02.1": ("if kind is tuple:\n            return tuple([self.create_arg(x) for x in a])",
               "if kind is tuple:\n            return a"),
    "ch02.2": ('return tracer.create_proxy("call_method", method, args, kwargs)',
               'return tracer.create_proxy("call_function", func, args, kwargs)'),
    "ch02.3": ('args.append(self._placeholder("**" + next(names)',
               'args.append(self._placeholder("*" + next(names)'),
    "ch02.4": ("if path is not None:\n                return path",
               "if path is not None:\n                return path.rpartition('.')[2]"),
    "ch02.5": ('self.create_proxy("call_module", module_qualified_name, args, kwargs)',
               'self.create_proxy("call_module", type(m).__name__, args, kwargs)'),
    "ch03.1": ("return [map_aggregate(x, fn) for x in a]",
               "return tuple(map_aggregate(x, fn) for x in a)"),
    "ch03.2": ("map_arg(self._kwargs, swap))", "self._kwargs)"),
    "ch03.3": ("for user in list(self.users):", "for user in self.users:"),
    "ch03.4": ("to_erase._update_args_kwargs((), {})", "pass"),
    "ch03.5": ("for node in reversed(self.nodes):", "for node in self.nodes:"),
    "ch03.6": ("if arg not in seen:", "if arg._erased:"),
}

EXERCISES = [e for c in CHAPTERS for e in chapter_exercises(c)]


def test_every_exercise_of_the_chapters_has_a_bug():
    assert sorted(BUGS) == sorted(e.id for e in EXERCISES)


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> Path:
    """A workspace where the exercises of CHAPTERS were handed out and then solved."""
    workspace = tmp_path_factory.mktemp("attribution") / "ws"
    for chapter in CHAPTERS:
        ws.start(chapter, workspace)
    for exercise in EXERCISES:
        ws.set_function(workspace, exercise, ws.solution(exercise))
        assert ws.status(exercise, workspace) == "reference"
    return workspace


def _line(report: str, exercise: Exercise) -> str:
    head = f"{exercise.id}  {exercise.qualname}: {exercise.title}: "
    return next(line for line in report.splitlines() if line.startswith(head))


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_check_reports_the_planted_bug_under_its_exercise_only(solved, exercise, monkeypatch):
    # The numpy backend: a fresh copy of tensor would compile its numba kernels first.
    monkeypatch.setenv("TENSOR_BACKEND", "numpy")
    reference = ws.solution(exercise)
    old, new = BUGS[exercise.id]
    assert reference.count(old) == 1, f"{exercise.id}: the bug's place moved"
    ws.set_function(solved, exercise, reference.replace(old, new))
    try:
        passed, report = check.check(exercise.chapter, solved)
    finally:
        ws.set_function(solved, exercise, reference)
    assert not passed, report
    for other in chapter_exercises(exercise.chapter):
        verdict = _line(report, other)
        if other is exercise:
            assert "FAILED" in verdict, report
        else:
            assert verdict.split(": ")[-1].startswith("passed"), report
    assert f"not yet: {exercise.id} FAILED;" in report
