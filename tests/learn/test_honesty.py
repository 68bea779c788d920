"""Every exercise is checked by its chapter's tests, and ``check`` says so per exercise.

- With all of chapter N's stubs in place, chapter N's exercise tests fail.
- For each exercise alone, its stub makes at least one of its tests fail.
  Both run in one child process (tests/learn/honesty_child.py) that swaps the
  stubs into the reference code, so no copy of ``tensor`` recompiles its
  numba kernels; about a minute and a half in all.
- End to end, through real files: ``start ch03`` on a fresh workspace,
  ``check ch03`` names every exercise as failing, the ``solution`` of each is
  pasted over its stub, and ``check ch03`` reports all passed. This is also
  the proof that the tests import the workspace and not the checkout: only
  there are the functions stubs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minifx.learn import workspace as ws
from minifx.learn.exercises import CHAPTERS, EXERCISES, chapter_exercises

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != ws.ENV_VAR}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def stubbed_runs(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("honesty") / "results.json"
    # about two hundred pytest sessions in one process: check's child sets the heap of
    # the earlier ones aside as each starts (pytest collects the garbage at each end)
    addopts = " ".join(filter(None, [os.environ.get("PYTEST_ADDOPTS"),
                                     "-p tests.learn.check_child"]))
    done = subprocess.run([sys.executable, "-m", "tests.learn.honesty_child", str(out)],
                          cwd=ROOT, env=_env(PYTEST_ADDOPTS=addopts), capture_output=True,
                          text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text())


def _explain(run: dict) -> str:
    return f"pytest exit code {run['exit_code']}; first failure {run['first_failure']}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_all_stubs_of_a_chapter_fail_its_tests(stubbed_runs, chapter):
    run = stubbed_runs[chapter]
    assert run["exit_code"] == 1 and run["first_failure"], _explain(run)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_each_stub_alone_fails_one_of_its_tests(stubbed_runs, exercise):
    run = stubbed_runs[exercise.id]
    assert run["exit_code"] == 1 and run["first_failure"], _explain(run)
    test = run["first_failure"][0].split("[")[0]  # a parametrized test's id, as check reads it
    assert any(test == t or test.startswith(t + "::") for t in exercise.tests), test


def _learn(*argv: str, workspace: Path, cwd: Path) -> subprocess.CompletedProcess:
    # The numpy backend: a fresh copy of tensor would otherwise compile its numba
    # kernels first (a minute); chapter 3's tests do not depend on the backend.
    env = _env(**{ws.ENV_VAR: str(workspace), "TENSOR_BACKEND": "numpy"})
    return subprocess.run([sys.executable, "-m", "minifx", "learn", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_start_check_paste_solutions_check_again(tmp_path):
    workspace, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    elsewhere.mkdir()
    started = _learn("start", "ch03", workspace=workspace, cwd=elsewhere)
    assert started.returncode == 0, started.stderr

    first = _learn("check", "ch03", workspace=workspace, cwd=elsewhere)
    assert first.returncode == 1, first.stdout + first.stderr
    lines = first.stdout.splitlines()
    for exercise in chapter_exercises("ch03"):
        line = next(x for x in lines if x.startswith(f"{exercise.id}  "))
        assert exercise.qualname in line and exercise.title in line and "FAILED" in line, line
    assert "NotImplementedError: ch03." in first.stdout  # the stubs ran, not the checkout

    for exercise in chapter_exercises("ch03"):
        shown = _learn("solution", exercise.id, workspace=workspace, cwd=elsewhere)
        assert shown.returncode == 0, shown.stderr
        path = workspace / exercise.file
        text = path.read_text()
        assert text.count(ws.stub(exercise)) == 1
        path.write_text(text.replace(ws.stub(exercise), shown.stdout))

    second = _learn("check", "ch03", workspace=workspace, cwd=elsewhere)
    assert second.returncode == 0, second.stdout + second.stderr
    for exercise in chapter_exercises("ch03"):
        assert f"{exercise.id}  {exercise.qualname}: {exercise.title}: passed" in second.stdout
    assert second.stdout.rstrip().endswith("all passed")
