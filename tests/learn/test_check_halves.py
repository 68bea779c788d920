"""``check``'s last step in two halves: which files each child runs, and one verdict."""

from __future__ import annotations

import json
from pathlib import Path

from minifx.learn import check
from minifx.learn import workspace as ws
from minifx.learn.exercises import CHAPTERS, chapter_exercises

ROOT = Path(__file__).resolve().parents[2]
REST = {"label": check.REST, "args": [], "exclude": ["tests/ch03/test_x.py::t"],
        "when_all_passed": True}


def _files(step: dict | None) -> list[str]:
    return [] if step is None else step["args"][2:]


def test_the_halves_share_every_file_of_the_chapter_once():
    first, second = check._halves(REST, "ch09", ROOT, {}, head_start=0.0)
    files = _files(first) + _files(second)
    expected = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests/ch09").rglob("test_*.py"))
    assert sorted(files) == sorted(expected + ["lessons/ch09_torch.md"])
    for half in (first, second):
        assert half["args"][:2] == ["-m", "ch09"]
        assert half["exclude"] == REST["exclude"] and half["label"] == check.REST


def test_each_file_joins_the_half_that_ends_sooner_by_the_remembered_times():
    slow = "tests/ch09/test_torchvision_zoo.py"
    files = _files(check._halves(REST, "ch09", ROOT, {}, 0.0)[0])
    files += _files(check._halves(REST, "ch09", ROOT, {}, 0.0)[1])
    times = {f: 1.0 for f in files} | {slow: 100.0}
    first, second = check._halves(REST, "ch09", ROOT, times, head_start=0.0)
    assert _files(first) == [slow]  # alone: it outweighs all the others together
    # the exercises' steps come first in the first child: that head start moves it over
    first, second = check._halves(REST, "ch09", ROOT, times, head_start=200.0)
    assert first is None and slow in _files(second)


def test_the_halves_results_are_one_verdict():
    a = {"exit_code": 0, "outcomes": {"t1": {"failed": False}}, "seconds": {"f1": 1.0}}
    b = {"exit_code": 1, "outcomes": {"t2": {"failed": True}}, "seconds": {"f2": 2.0}}
    none = {"exit_code": check.NO_TESTS, "outcomes": {}, "seconds": {}}
    assert check._merged([a, b]) == {
        "exit_code": 1, "outcomes": {"t1": {"failed": False}, "t2": {"failed": True}},
        "seconds": {"f1": 1.0, "f2": 2.0}}
    assert check._merged([a, none])["exit_code"] == 0  # a half whose tests were all deselected
    assert check._merged([none, none])["exit_code"] == check.NO_TESTS
    assert check._merged([a, {"error": "boom"}]) == {"error": "boom"}


class TwoHalves:
    """A ``launch`` like tests/learn/test_attribution.py's FakeChild: every step passes
    with one test per file it names, or fails when its label is in ``failing``."""

    def __init__(self, failing: set[str] = frozenset()) -> None:
        self.failing, self.plans = failing, []

    def __call__(self, args, env, cwd):
        steps = json.loads(Path(args[0]).read_text())["steps"]
        self.plans.append(steps)
        results = {}
        for s in steps:
            failed = s["label"] in self.failing
            if s.get("when_all_passed") and any(r["exit_code"] for r in results.values()):
                results[s["label"]] = {"skipped": "an earlier step failed"}
                continue
            targets = [a for a in s["args"][2:] if a.startswith(("tests/", "lessons/"))]
            results[s["label"]] = {"exit_code": int(failed), "outcomes": {
                t: {"failed": failed, "message": "AssertionError" if failed else ""}
                for t in targets}, "seconds": {t: 0.5 for t in targets}, "wall": 2.0}
        Path(args[1]).write_text(json.dumps(results))
        return 0, ""


def _solved_ch03(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    ws.start("ch03", workspace)
    for exercise in chapter_exercises("ch03"):
        ws.set_function(workspace, exercise, ws.solution(exercise))
    return workspace


def test_both_halves_run_and_their_tests_are_reported_and_timed(tmp_path, monkeypatch):
    monkeypatch.setattr(check, "FIRST_TIMES", "no/such/file")  # split by size: both halves
    workspace = _solved_ch03(tmp_path)
    child = TwoHalves()
    steps, _, _ = check.run_tests("ch03", workspace, launch=child)
    assert len(child.plans) == 2 and child.plans[1][0]["label"] == check.REST
    halves = [s["args"][2:] for plan in child.plans for s in plan if s["label"] == check.REST]
    assert len(halves) == 2 and all(halves)
    assert sorted(o.test for o in steps[check.REST]) == sorted(halves[0] + halves[1])
    times = check._times(workspace / check.CACHE / check.TIMES)
    assert all(times[f] == 0.5 for f in halves[0] + halves[1])
    assert all(times[e.id] == 2.0 for e in chapter_exercises("ch03"))  # a step's whole time


def test_a_failed_exercise_leaves_the_second_half_unrun_and_the_rest_unreported(tmp_path):
    workspace = _solved_ch03(tmp_path)
    child = TwoHalves(failing={"ch03.2"})
    steps, _, _ = check.run_tests("ch03", workspace, launch=child)
    assert len(child.plans) == 1  # not launched after a failure (with spawn: stopped)
    assert check.REST not in steps and any(o.failed for o in steps["ch03.2"])


def test_a_times_file_that_cannot_be_read_is_a_guess_not_a_crash(tmp_path):
    (tmp_path / check.TIMES).write_text("not a time\n")
    assert check._times(tmp_path / check.TIMES) == {}
    check._save_times(tmp_path, {"tests/ch03/test_node.py": 1.25, "ch03.1": 0.5})
    assert check._times(tmp_path / check.TIMES) == {"tests/ch03/test_node.py": 1.25,
                                                    "ch03.1": 0.5}


def test_the_first_times_name_every_chapter_s_files_and_exercises():
    """The times a first check splits by (check.FIRST_TIMES) cover every test file,
    lesson and exercise: a new one must be timed there too (copy the times.txt of a
    solved workspace's check, .check_cache/times.txt)."""
    first = check._times(ROOT / check.FIRST_TIMES)
    for chapter in CHAPTERS:
        files = [str(p.relative_to(ROOT)) for p in (ROOT / "tests" / chapter).rglob("test_*.py")]
        names = files + check._lessons(chapter, ROOT) + [e.id for e in chapter_exercises(chapter)]
        assert [n for n in names if n not in first] == [], chapter


def test_a_workspace_s_own_times_win_over_the_first_times_and_only_they_are_saved(tmp_path):
    workspace = _solved_ch03(tmp_path)
    own = {"tests/ch03/test_node.py": 99.0}
    check._save_times(workspace / check.CACHE, own)
    child = TwoHalves()
    check.run_tests("ch03", workspace, launch=child)
    halves = [s["args"][2:] for plan in child.plans for s in plan if s["label"] == check.REST]
    assert halves[1] == ["tests/ch03/test_node.py"]  # its 99 s outweigh all the others
    saved = check._times(workspace / check.CACHE / check.TIMES)
    assert saved["tests/ch03/test_node.py"] == 0.5  # this check's own time replaced it
    assert all("ch03" in name for name in saved)  # no first time of another chapter copied
