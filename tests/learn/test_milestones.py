"""``learn milestone``: the learner's code on ResNet-50 and on unseen torch programs.

Each milestone passes on a workspace whose chapters were handed out and
solved, and fails, showing the lines that differ, when one exercise has a bug.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from minifx.learn import cli, milestones
from minifx.learn import workspace as ws
from minifx.learn.exercises import chapter_exercises, find_exercise


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> Path:
    """A workspace where chapters 1 to 6 were handed out, then solved."""
    workspace = tmp_path_factory.mktemp("milestones") / "ws"
    for chapter in ("ch01", "ch02", "ch03", "ch04", "ch05", "ch06"):
        ws.start(chapter, workspace)
        for exercise in chapter_exercises(chapter):
            ws.set_function(workspace, exercise, ws.solution(exercise))
    return workspace


@pytest.fixture(autouse=True)
def numpy_backend(monkeypatch):
    # A fresh copy of tensor would compile its numba kernels first; tracing needs none.
    monkeypatch.setenv("TENSOR_BACKEND", "numpy")


def _with_bug(workspace: Path, exercise_id: str, old: str, new: str, name: str,
              seed: int | None = None) -> tuple[bool, str]:
    exercise = find_exercise(exercise_id)
    reference = ws.solution(exercise)
    assert reference.count(old) == 1
    ws.set_function(workspace, exercise, reference.replace(old, new))
    try:
        return milestones.run(name, workspace, seed)
    finally:
        ws.set_function(workspace, exercise, reference)


def test_ch02_passes_on_solved_code_and_names_the_difference_of_a_bug(solved):
    passed, report = milestones.run("ch02", solved)
    assert passed, report
    assert report.endswith("milestone ch02: PASSED") and "ResNet-50" in report
    # Leaf modules traced through: the graph differs, and the report shows where first.
    passed, report = _with_bug(
        solved, "ch02.5", "if not self.is_leaf_module(m, module_qualified_name):",
        "if True:", "ch02")
    assert not passed and report.endswith("milestone ch02: FAILED"), report
    lines = report.splitlines()
    assert lines[1] == "your graph of ResNet-50 differs from the reference's:"
    assert "-    %conv1 : [num_users=1] = call_module[target=conv1]" in report


def test_ch06_passes_on_solved_code_and_fails_on_a_bug(solved):
    passed, report = milestones.run("ch06", solved, seed=11)
    assert passed, report
    assert f"{milestones.PROGRAMS} random programs" in report
    # Frees forgotten for nodes nobody reads: torch.fx frees them, so the code differs.
    passed, report = _with_bug(solved, "ch06.7", "if not node.users:", "if False:", "ch06",
                               seed=11)
    assert not passed and "differs from torch.fx's" in report, report
    assert "the program: Plan(" in report and "seed 11" in report


def test_ch02_reports_where_the_learners_code_raised(solved):
    exercise = find_exercise("ch02.5")
    reference = ws.solution(exercise)
    ws.set_function(solved, exercise, ws.stub(exercise))
    try:
        passed, report = milestones.run("ch02", solved)
    finally:
        ws.set_function(solved, exercise, reference)
    assert not passed
    assert "your code raised while tracing ResNet-50" in report
    assert "NotImplementedError: ch02.5" in report


@pytest.mark.parametrize("argv, problem", [
    (["milestone", "ch99"], "unknown milestone 'ch99': milestones are ch02, ch06"),
    (["milestone", "ch06", "--seed", "x"], "--seed takes a whole number"),
    (["milestone", "ch02", "ch06"], "milestone takes one name"),
])
def test_bad_milestone_input_is_one_clear_line(argv, problem, capsys):
    assert cli.main(argv) == 2
    assert problem in capsys.readouterr().err


def test_milestone_without_a_name_lists_them(capsys):
    assert cli.main(["milestone"]) == 0
    out = capsys.readouterr().out
    assert all(m.name in out and m.what in out for m in milestones.MILESTONES)
