"""Mutation testing of the exercises: cosmic-ray's mutants of one function, run by its tests.

For each exercise, the mutants are those that cosmic-ray's operators make
inside the exercise's function body (the docstring and signature are the
learner's hand-out, not code to get wrong). cosmic-ray numbers a mutation by
its occurrence in a file; here each operator walks the function's own text,
so a mutant is named by its line and what changed, and a change elsewhere in
the file does not rename it.

A mutant is judged the way ``learn check`` judges a learner's function: its
code replaces the running function's (tests/learn/check_child.py ``swap``)
and the exercise's own ``tests`` run, with the chapter marker, in a forked
child. The parent has imported the packages and the test modules once, so a
mutant costs its tests' run, not an import of numba, torch and minifx.

- killed: a test failed, or the child died (a crash), or it ran past the
  timeout (an infinite loop counts as killed, as in cosmic-ray);
- survived: every test passed;
- incompetent: the mutant could not be put in place (it does not compile).

The known-equivalent mutants (no test can tell them from the reference) are
listed once, each with a sentence, in tests/learn/mutation_equivalent.json.
"""

from __future__ import annotations

import gc
import json
import os
import random
import signal
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cosmic_ray import plugins
from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code

from minifx.learn.exercises import Exercise
from minifx.learn.stubs import function_source, function_span

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENT_FILE = Path(__file__).with_name("mutation_equivalent.json")
KILLED, SURVIVED, INCOMPETENT = "killed", "survived", "incompetent"


@dataclass(frozen=True)
class Mutant:
    exercise: str  # "ch03.8"
    operator: str  # cosmic-ray's name, "core/ReplaceComparisonOperator_Eq_NotEq"
    line: int  # 1-based line in the exercise's file
    original: str  # that line of the reference, stripped
    mutated: str  # the same line in the mutant, stripped
    source: str  # the whole mutated function, as in the file

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What names a mutant in the equivalents file (no line number: lines move)."""
        return (self.exercise, self.operator, self.original, self.mutated)


def _operators() -> Iterator[tuple[str, object]]:
    """Every cosmic-ray core operator that needs no per-project arguments (the variable
    replacer and inserter are told which variables to use; we have none to name)."""
    for name in plugins.operator_names():
        cls = plugins.get_operator(name)
        if not cls.arguments():
            yield name, cls()


def mutants_of(exercise: Exercise, root: Path = ROOT) -> list[Mutant]:
    """All mutants of the exercise's function body, in line order."""
    source = (root / exercise.file).read_text()
    file_span = function_span(source, exercise.qualname)
    text = textwrap.dedent(function_source(source, exercise.qualname))
    indent = len(function_source(source, exercise.qualname).splitlines()[0]) - len(
        text.splitlines()[0])
    name = exercise.qualname.split(".")[-1]
    span = function_span(text, name)
    tree = get_ast(text)
    lines = text.splitlines()
    found: list[Mutant] = []
    for op_name, operator in _operators():
        positions = [start for node in ast_nodes(tree)
                     for start, _ in operator.mutation_positions(node)]
        for occurrence, (line, _col) in enumerate(positions):
            if not span.body < line <= span.end:
                continue
            mutated = mutate_code(text, operator, occurrence)
            if mutated is None or mutated == text:
                continue
            new_lines = mutated.splitlines()
            changed = next((i for i, (a, b) in enumerate(zip(lines, new_lines)) if a != b),
                           line - 1)
            found.append(Mutant(
                exercise=exercise.id, operator=op_name,
                line=file_span.start + changed + 1, original=lines[changed].strip(),
                mutated=new_lines[changed].strip() if changed < len(new_lines) else "",
                source=textwrap.indent(mutated, " " * indent)))
    found.sort(key=lambda m: (m.line, m.operator, m.mutated))
    return found


def sample(mutants: list[Mutant], count: int | None, seed: int) -> list[Mutant]:
    """A fixed sample of ``count`` mutants (all when ``count`` is None), in line order."""
    if count is None or count >= len(mutants):
        return list(mutants)
    chosen = random.Random(f"{seed}:{mutants[0].exercise}").sample(range(len(mutants)), count)
    return [mutants[i] for i in sorted(chosen)]


def load_equivalents(path: Path = EQUIVALENT_FILE) -> dict[tuple[str, str, str, str], str]:
    """The known-equivalent mutants: key -> the sentence that says why."""
    rows = json.loads(path.read_text())
    return {(r["exercise"], r["operator"], r["original"], r["mutated"]): r["why"] for r in rows}


def pytest_args(exercise: Exercise) -> list[str]:
    """What ``check`` runs for the exercise, stopping at the first failure."""
    return ["-m", exercise.chapter, *exercise.tests, "-x", "-q", "--no-header",
            "-p", "no:cacheprovider", "--tb=no", "-W", "ignore"]


def preload(exercise: Exercise) -> None:
    """Import what the tests need in this (the parent) process, once, where that is safe.

    Nothing here may start numba's threading layer: its OpenMP layer ends any
    child forked from a process that has started it, and importing tensor's
    numba backend, or any module of its kernels, starts it. So tensor is
    imported here on the NumPy backend, and each child switches to the
    backend a plain run would pick (``_child``). The exercise's module and
    test modules (some of which compute while they load, with NumPy here) are
    imported here only when a forked probe shows that doing so leaves the
    layer unstarted; otherwise (the kernels' own exercises, the compiler's)
    each child imports them itself.
    """
    import importlib
    import sys

    if "tensor" not in sys.modules:
        chosen = os.environ.get("TENSOR_BACKEND")
        os.environ["TENSOR_BACKEND"] = "numpy"
        try:
            importlib.import_module("tensor")
        finally:
            if chosen is None:
                del os.environ["TENSOR_BACKEND"]
            else:
                os.environ["TENSOR_BACKEND"] = chosen
    # torch._dynamo: what torch.testing's comparisons and torch.fx's errors import lazily
    for name in ("pytest", "torch", "torch.fx", "torch.testing", "torch._dynamo", "minifx",
                 "hypothesis"):
        importlib.import_module(name)
    if _layer_started():
        raise RuntimeError("numba's threading layer was started before the mutants run, "
                           "so no child can be forked")
    gc.freeze()  # see below; the collection of the tests here is a pytest session too
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the probe
        code = 2
        try:
            _import_tests(exercise)
            code = 1 if _layer_started() else 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        _import_tests(exercise)
    # What is loaded now is set aside, in this process and in every child forked from
    # it: pytest collects the garbage several times as a child's session ends, and
    # would walk torch and the test modules each time.
    gc.freeze()


def _layer_started() -> bool:
    import numba

    try:
        numba.threading_layer()
    except ValueError:  # not started
        return False
    return True


def _import_tests(exercise: Exercise) -> None:
    """Import the exercise's module, and its test modules as pytest collects them."""
    import importlib

    import pytest

    importlib.import_module(module_name(exercise.file))
    with open(os.devnull, "w") as quiet:
        saved = os.dup(1), os.dup(2)
        os.dup2(quiet.fileno(), 1)
        os.dup2(quiet.fileno(), 2)
        try:
            pytest.main([*pytest_args(exercise), "--collect-only"])
        finally:
            for fd, copy in zip((1, 2), saved):
                os.dup2(copy, fd)
                os.close(copy)


def module_name(file: str) -> str:
    """``minifx/node.py`` -> ``minifx.node``; a package's ``__init__.py`` is the package
    (``tensor/backend/reference/__init__.py`` -> ``tensor.backend.reference``): importing
    ``tensor.backend.reference.__init__`` would make a second module, and a mutant put
    there would never run."""
    return file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


class _KillersFirst:
    """A pytest plugin for the child: the tests that killed earlier mutants run first
    (as pytest's --failed-first would), and the first failing test is written down."""

    def __init__(self, killers: list[str], report: str) -> None:
        self.killers, self.report = killers, report

    def pytest_collection_modifyitems(self, items: list) -> None:
        rank = {nodeid: i for i, nodeid in enumerate(self.killers)}
        items.sort(key=lambda item: rank.get(item.nodeid, len(rank)))  # stable: file order

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed and not os.path.getsize(self.report):
            with open(self.report, "w") as f:
                f.write(report.nodeid)


def _child(exercise: Exercise, source: str | None, killers: list[str], report: str) -> int:
    """In the forked child: put the mutant in place, run the tests, give pytest's code."""
    import pytest

    import tensor.backend
    from tests.learn.check_child import swap

    os.setpgid(0, 0)  # its own process group, so a timeout ends whatever it started
    tensor.backend.set_backend(tensor.backend._default_name())
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    if source is not None:
        try:
            swap(module_name(exercise.file), exercise.qualname, source)
        except Exception:
            return 99
    return int(pytest.main(pytest_args(exercise), plugins=[_KillersFirst(killers, report)]))


def run_tests(exercise: Exercise, source: str | None, timeout: float,
              killers: list[str] | None = None) -> tuple[str, float]:
    """(outcome, seconds) of the exercise's tests on ``source`` (None: the reference).

    ``killers`` (the tests that killed earlier mutants, most recent first) run
    first; the test that kills this mutant is put at its front.
    """
    killers = killers if killers is not None else []
    started = time.monotonic()
    with tempfile.NamedTemporaryFile("r", prefix="minifx-mutant-") as report:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 3
            try:
                code = _child(exercise, source, killers, report.name)
            finally:
                os._exit(code)
        outcome = _wait(pid, timeout)
        killer = report.read().strip()
    if killer:
        if killer in killers:
            killers.remove(killer)
        killers.insert(0, killer)
    return outcome, time.monotonic() - started


def _wait(pid: int, timeout: float) -> str:
    started = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - started > timeout:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return "killed (timeout)"
        time.sleep(0.02)
    if os.WIFSIGNALED(status):
        return f"killed (signal {os.WTERMSIG(status)})"
    code = os.WEXITSTATUS(status)
    if code == 0:
        return SURVIVED
    if code == 1:
        return KILLED
    if code == 99:
        return INCOMPETENT
    return f"killed (pytest exit {code})"
