"""The exercise table, the stubs cut from it, `start` and bad input (no child pytest)."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minifx.learn import cli, coverage
from minifx.learn import workspace as ws
from minifx.learn.exercises import (
    CHAPTERS,
    EXERCISES,
    MORE_HINTS,
    chapter_exercises,
    find_exercise,
)
from minifx.learn.stubs import function_source, is_stub, same_code
from tests.learn import switch

ROOT = Path(__file__).resolve().parents[2]


# -- the table -------------------------------------------------------------------------
def test_every_chapter_has_its_exercises():
    counts = {c: len(chapter_exercises(c)) for c in CHAPTERS}
    assert list(counts) == [f"ch{n:02d}" for n in range(13)]
    assert all(counts[f"ch{n:02d}"] >= 3 for n in range(10)), counts
    assert len(EXERCISES) >= 40


def test_ids_are_unique_and_numbered_from_one():
    for chapter in CHAPTERS:
        assert [e.number for e in chapter_exercises(chapter)] == list(
            range(1, len(chapter_exercises(chapter)) + 1))
    assert len({e.id for e in EXERCISES}) == len(EXERCISES)
    assert len({(e.file, e.qualname) for e in EXERCISES}) == len(EXERCISES)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_row_names_a_documented_function_and_its_chapters_tests(exercise):
    source = (ROOT / exercise.file).read_text()
    tree = ast.parse(_dedent(function_source(source, exercise.qualname)))
    fn = tree.body[0]
    assert ast.get_docstring(fn), f"{exercise.id}: the docstring states the task"
    assert exercise.title and exercise.hint
    for test in exercise.tests:
        path = test.split("::")[0]
        assert path.startswith(f"tests/{exercise.chapter}/"), test
        assert (ROOT / path).is_file(), test
        if "::" in test:
            assert f"def {test.split('::')[1]}(" in (ROOT / path).read_text(), test


def _dedent(text: str) -> str:
    return textwrap.dedent(text)


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_stub_keeps_signature_and_docstring_and_raises_naming_the_exercise(exercise):
    reference = ws.solution(exercise)
    stub = ws.stub(exercise)
    assert is_stub(stub) and not is_stub(reference)
    ref_fn, stub_fn = (ast.parse(_dedent(t)).body[0] for t in (reference, stub))
    assert ast.dump(ref_fn.args) == ast.dump(stub_fn.args)
    assert ast.get_docstring(ref_fn) == ast.get_docstring(stub_fn)
    assert f"raise NotImplementedError({f'{exercise.id}: {exercise.title}'!r})" in stub
    # The stub fits in its file: the file still parses, with the stub where the function was.
    text = ws.reference_text(exercise)
    stubbed = text.replace(reference, stub)
    assert stubbed != text
    assert is_stub(function_source(stubbed, exercise.qualname))


def test_the_switch_and_the_command_agree_on_the_variable():
    assert switch.ENV_VAR == ws.ENV_VAR == "MINIFX_WORKSPACE"


# -- the command -----------------------------------------------------------------------
def _run(*argv: str, env_workspace: Path | None = None, monkeypatch=None, capsys=None):
    if env_workspace is not None:
        monkeypatch.setenv(ws.ENV_VAR, str(env_workspace))
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, problem", [
    (["start", "ch99"], "unknown chapter 'ch99': chapters are ch00,"),
    (["start"], "start takes one chapter"),
    (["check", "3"], "unknown chapter '3'"),
    (["hint", "ch03.99"], "unknown exercise 'ch03.99': ch03 has ch03.1,"),
    (["solution", "ch42.1"], "unknown exercise 'ch42.1': chapters are"),
    (["check", "ch03"], "no workspace at"),
    (["list", "extra"], "list takes no arguments"),
    (["frobnicate"], "unknown learn command 'frobnicate'"),
])
def test_bad_input_is_one_clear_line(argv, problem, tmp_path, monkeypatch, capsys):
    code, out, err = _run(*argv, env_workspace=tmp_path / "none", monkeypatch=monkeypatch,
                          capsys=capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and problem in err.splitlines()[0]


def test_hint_and_solution(capsys, monkeypatch, tmp_path):
    code, out, _ = _run("hint", "ch03.10", env_workspace=tmp_path, monkeypatch=monkeypatch,
                        capsys=capsys)
    assert code == 0 and "Graph.lint" in out and find_exercise("ch03.10").hint in out
    code, out, err = _run("solution", "ch03.10", capsys=capsys)
    assert code == 0 and out == ws.solution(find_exercise("ch03.10"))
    assert out.startswith("    def lint(self) -> None:\n")
    assert "ch03.10" in err


def test_hint_more_gives_the_second_level(capsys):
    exercise = find_exercise("ch03.10")
    assert cli.main(["hint", "ch03.10", "--more"]) == 0
    out = capsys.readouterr().out
    assert exercise.hint in out and exercise.more in out
    assert cli.main(["hint", "ch03.10"]) == 0
    out = capsys.readouterr().out
    assert exercise.more not in out and "hint ch03.10 --more" in out


def test_every_exercise_has_a_second_hint():
    assert set(MORE_HINTS) == {e.qualname for e in EXERCISES}
    assert all(e.more and e.more != e.hint for e in EXERCISES)


def _no_space(text: str) -> str:
    return re.sub(r"\s+", "", text).replace("'", '"')


def _cores(line: str) -> set[str]:
    """A code line as it might be quoted: whole, without its keyword or its target."""
    line = " ".join(line.split("  #")[0].split()).replace("'", '"').rstrip(":,( ")
    cores = {line}
    for keyword in ("return", "if", "elif", "while", "raise", "yield"):
        if line.startswith(keyword + " "):
            cores.add(line.removeprefix(keyword + " "))
    if "=" in line and not re.match(r"^[^=]*[!<>=]=", line):
        cores.add(line.split("=", 1)[1].strip())
    # A bare name (an error type, a parameter) is the contract's word, not code; the
    # test is made before the spaces go, so that `a is b` still counts as code.
    return {_no_space(c) for c in cores
            if len(_no_space(c)) >= 12 and not c.split(" ", 1)[-1].isidentifier()}


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_no_hint_holds_a_line_of_the_reference(exercise):
    text = ws.reference_text(exercise)
    lines = text.splitlines()
    body = [lines[n - 1] for n in sorted(coverage.exercise_lines(exercise, text))]
    for level in (exercise.hint, exercise.more):
        hint = _no_space(level)
        quoted = [line.strip() for line in body if any(c in hint for c in _cores(line))]
        assert not quoted, f"{exercise.id}: the hint quotes the reference: {quoted}"


def test_a_hint_names_only_functions_that_exist():
    # ch02.2's hint once named a helper that did not exist.
    assert "find_proxy" in find_exercise("ch02.2").hint
    import minifx.proxy

    assert callable(minifx.proxy.find_proxy)


def test_the_command_runs_from_anywhere(tmp_path):
    done = subprocess.run([sys.executable, "-m", "minifx", "learn", "hint", "ch01.1"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Node.format_node" in done.stdout


# -- start: stubs for one chapter, the learner's code kept -------------------------------
@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.setenv(ws.ENV_VAR, str(tmp_path / "ws"))
    return tmp_path / "ws"


def _states(workspace: Path, chapter: str) -> list[str]:
    return [ws.status(e, workspace) for e in chapter_exercises(chapter)]


def test_start_stubs_one_chapter_and_keeps_the_learners_code(workspace, capsys):
    assert cli.main(["start", "ch03"]) == 0
    assert "made" in capsys.readouterr().out
    assert _states(workspace, "ch03") == ["to do"] * len(chapter_exercises("ch03"))
    assert set(_states(workspace, "ch04")) == {"reference"}
    assert not (workspace / "minifx" / "__pycache__").exists()

    # The learner writes ch03.6 their own way (same behaviour, other code).
    mine = find_exercise("ch03.6")
    own = ws.solution(mine).replace("swap = lambda n:", "swap = lambda n, old=old_input:")
    own = own.replace("if n is old_input", "if n is old")
    ws.set_function(workspace, mine, own)
    assert ws.status(mine, workspace) == "your code"

    # Moving on to ch04: ch03's exercises stay as the learner left them.
    assert cli.main(["start", "ch04"]) == 0
    assert ws.learner_code(mine, workspace) == own
    assert _states(workspace, "ch03") == [
        "your code" if e is mine else "to do" for e in chapter_exercises("ch03")]
    assert set(_states(workspace, "ch04")) == {"to do"}
    out = capsys.readouterr().out
    assert "ch03.1  to do" in out and "its stub stays" in out

    # Back to ch03: the later chapter gets its reference back, the learner's code stays.
    assert cli.main(["start", "ch03"]) == 0
    assert set(_states(workspace, "ch04")) == {"reference"}
    assert ws.learner_code(mine, workspace) == own
    assert "ch03.6  your code" in capsys.readouterr().out

    # Untouched files are the reference, byte for byte; list shows every status.
    assert (workspace / "minifx/tracer.py").read_text() == (ROOT / "minifx/tracer.py").read_text()
    assert cli.main(["list"]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert len(listing) == len(EXERCISES) + len(CHAPTERS)
    assert re.search(r"^  ch03\.6\s+your code\s+minifx/node\.py: Node\.replace_input_with",
                     "\n".join(listing), re.M)
    assert f"ch03 0/{len(chapter_exercises('ch03'))} done" in listing


def test_start_never_stubs_what_it_handed_out_before(workspace, capsys):
    ws.start("ch04", workspace)
    # The learner solves ch04.2 with exactly the reference (their own, or the solution).
    run_node = find_exercise("ch04.2")
    ws.set_function(workspace, run_node, ws.solution(run_node))
    assert ws.status(run_node, workspace) == "reference"
    assert json.loads((workspace / ws.RECORD).read_text())["handed_out"] == [
        e.id for e in chapter_exercises("ch04")]
    for chapter in ("ch05", "ch04", "ch03", "ch04"):
        ws.start(chapter, workspace)
        assert ws.status(run_node, workspace) == "reference", chapter
        assert same_code(ws.learner_code(run_node, workspace), ws.solution(run_node))
    # The other ch04 exercises, still stubs, stay stubs; list calls ch04.2 the learner's.
    assert _states(workspace, "ch04") == [
        "reference" if e is run_node else "to do" for e in chapter_exercises("ch04")]
    capsys.readouterr()
    assert cli.main(["list"]) == 0
    assert re.search(r"^  ch04\.2\s+your code\s", capsys.readouterr().out, re.M)


def test_list_counts_what_passed_the_last_check_with_the_code_it_has(workspace, capsys):
    ws.start("ch03", workspace)
    solved = find_exercise("ch03.1")
    ws.set_function(workspace, solved, ws.solution(solved))
    ws.record_check(workspace, {e.id: e is solved for e in chapter_exercises("ch03")})
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert f"ch03 1/{len(chapter_exercises('ch03'))} done" in out.splitlines()
    assert re.search(r"^  ch03\.1\s+your code, done\s", out, re.M)
    # Changed since that check: not done until the next check says so.
    ws.set_function(workspace, solved, ws.solution(solved).replace("return fn(a)",
                                                                    "return fn(a)  # mine\n"
                                                                    "        pass"))
    assert cli.main(["list"]) == 0
    assert f"ch03 0/{len(chapter_exercises('ch03'))} done" in capsys.readouterr().out


def test_start_refuses_a_folder_that_is_not_a_workspace(workspace, capsys):
    workspace.mkdir()
    (workspace / "notes.txt").write_text("mine")
    assert cli.main(["start", "ch03"]) == 2
    assert "holds no workspace" in capsys.readouterr().err


def test_a_solution_pasted_over_the_stub_is_the_reference_again(workspace):
    ws.start("ch06", workspace)
    for exercise in chapter_exercises("ch06"):
        path = workspace / exercise.file
        text = path.read_text()
        assert text.count(ws.stub(exercise)) == 1
        path.write_text(text.replace(ws.stub(exercise), ws.solution(exercise)))
        assert ws.status(exercise, workspace) == "reference"
        assert same_code(ws.learner_code(exercise, workspace), ws.solution(exercise))
    for package in ws.PACKAGES:
        for ours in (ROOT / package).rglob("*.py"):
            theirs = workspace / ours.relative_to(ROOT)
            assert theirs.read_text() == ours.read_text(), theirs


def test_workspace_is_ignored_by_git():
    assert "workspace/" in (ROOT / ".gitignore").read_text().splitlines()
    if shutil.which("git") and (ROOT / ".git").exists():
        done = subprocess.run(["git", "check-ignore", "-q", "workspace/minifx/node.py"],
                              cwd=ROOT)
        assert done.returncode == 0


def test_a_changed_kernel_source_gets_a_fresh_numba_cache(workspace):
    from minifx.learn.check import kernel_cache

    ws.start("ch01", workspace)
    before = kernel_cache(workspace)
    assert before == kernel_cache(workspace) and before.is_relative_to(workspace)
    strides = workspace / "tensor/backend/kernels/strides.py"
    strides.write_text(strides.read_text() + "\n# a learner's note\n")
    assert kernel_cache(workspace) != before
