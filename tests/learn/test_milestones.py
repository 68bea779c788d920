"""``learn milestone``: the learner's code on ResNet-50, on unseen torch programs, on
a compiled chain and on torchvision's quantizable models.

Each milestone passes on a workspace whose chapters were handed out and
solved, and fails, showing the lines that differ, when one exercise has a bug.
ch08's verdict also asks for a speed-up; its tests set the bar to 0 (timing
is the benchmarks' business) and test the judging apart, on given times.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from minifx.learn import cli, milestones
from minifx.learn import workspace as ws
from minifx.learn.exercises import chapter_exercises, find_exercise


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> Path:
    """A workspace where chapters 1 to 10 were handed out, then solved."""
    workspace = tmp_path_factory.mktemp("milestones") / "ws"
    for chapter in ("ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09",
                    "ch10"):
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


def test_ch08_passes_on_solved_code_and_fails_when_nothing_fuses(solved, monkeypatch):
    monkeypatch.setattr(milestones, "SPEEDUP", 0.0)
    passed, report = milestones.run("ch08", solved)
    assert passed and report.endswith("milestone ch08: PASSED"), report
    assert "= fused_sigmoid_tanh_mul_add(gate, proj)" in report and "x as fast" in report
    # find_groups that groups nothing: right values, but five calls and no kernel.
    passed, report = _with_bug(solved, "ch08.11", "if last not in forms or last in taken:",
                               "if True:", "ch08")
    assert not passed and report.endswith("milestone ch08: FAILED"), report
    assert "should be one fused kernel: your code makes 5 calls, 0 of them fused" in report
    assert "tensor.sigmoid(gate)" in report  # the learner's code, shown


def test_ch08_speed_is_judged_on_the_medians():
    passed, lines = milestones.judge_speed([2e-3, 9e-3, 2e-3], [1e-3, 1e-3, 5e-3], 1.25, [])
    assert passed and lines == ["a call on 1024 x 1024 inputs, medians of 3 rounds: eager "
                                "tensor 2.00 ms, yours 1.00 ms: 2.00x as fast"]
    passed, lines = milestones.judge_speed([2e-3] * 3, [1.7e-3] * 3, 1.25, ["code"])
    assert not passed and lines[0] == "code" and "1.18x as fast" in lines[1]
    assert lines[2] == "the milestone asks for at least 1.25x"


def test_ch10_passes_on_solved_code_and_names_a_wrong_zero_point(solved):
    passed, report = milestones.run("ch10", solved)
    assert passed and report.endswith("milestone ch10: PASSED"), report
    assert "quantizable_resnet18: 54 nodes as torch.ao's, the same qparams" in report
    passed, report = _with_bug(solved, "ch10.1", "zero_point = quant_min - np.rint(",
                               "zero_point = quant_min + 1 - np.rint(", "ch10")
    assert not passed and report.endswith("milestone ch10: FAILED"), report
    assert "quantizable_resnet18: your qparams differ from torch.ao's:" in report


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
    (["milestone", "ch99"], "unknown milestone 'ch99': milestones are ch02, ch06, ch08, ch10"),
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
