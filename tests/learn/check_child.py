"""The child process of ``learn check``: run a plan of pytest steps, each exercise on its own.

``python -m tests.learn.check_child PLAN.json OUT.json`` from the checkout, with
``MINIFX_WORKSPACE`` naming the learner's workspace (started by
minifx/learn/check.py, which writes the plan).

An exercise's verdict must depend on its own code only. So each step of the
plan names the functions that run from the reference while it runs: every
exercise but the one checked. The reference function's code is compiled in
the workspace module's globals and put in the learner's function's
``__code__``, so every reference to it (re-exports, tables, wrappers) runs the
reference; afterwards the learner's code is put back. A numba kernel is
replaced whole on its module (its machine code does not follow ``__code__``),
and a function that caches its results (a kernel factory) forgets them at each
swap. All steps run in this one process, so the packages (and numba's
kernels) load once.

This file imports nothing of minifx: the plan carries the reference sources,
because the workspace's own copy of ``minifx.learn`` may be older than the
checkout's.

``python -m tests.learn.check_child --serve`` is the same child for many
``check`` runs in a row (the attribution test makes one per planted bug): it
imports the test tools once (pytest and its plugins, torch, numba, hypothesis),
and for each run forks a copy of itself that does what a new child does. It
never imports tensor or minifx itself, so each copy imports them afresh from
the workspace as it is then. :class:`Server` starts it and is a ``launch``
for minifx.learn.check.
"""

from __future__ import annotations
import __future__

import ast
import gc
import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
import types
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from tests.forked_cli import WarmServer


def _unwrap(obj: Any) -> Any:
    if isinstance(obj, property):
        obj = obj.fget
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    return inspect.unwrap(obj)


def _plain(source: str) -> str:
    """The function's source without its decorators (they are the learner's: only the
    code is swapped), dedented."""
    tree = ast.parse(textwrap.dedent(source))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.decorator_list = []
    return ast.unparse(tree)


def _run_source(text: str, module: types.ModuleType) -> dict[str, Any]:
    """Run ``text`` in a copy of the module's globals (defaults may name them); annotations
    stay text. It is compiled under the module's own file name: numba caches a kernel
    only when it can name the file its code comes from (a factory's inner kernel too)."""
    namespace = dict(vars(module))
    flags = __future__.annotations.compiler_flag
    exec(compile(text, module.__file__, "exec", flags=flags, dont_inherit=True), namespace)
    return namespace


def _compiled(source: str, method: bool, name: str, module: types.ModuleType
              ) -> types.CodeType:
    """The code object of one function's source; a method is compiled inside a class,
    so that ``super()`` gets its ``__class__`` cell as in the real class."""
    text = _plain(source)
    if method:
        text = "class _Swapped:\n" + textwrap.indent(text, "    ")
    namespace = _run_source(text, module)
    obj = namespace["_Swapped"].__dict__[name] if method else namespace[name]
    return _unwrap(obj).__code__


def is_kernel(obj: Any) -> bool:
    """A numba kernel (a dispatcher): its compiled code does not follow ``__code__``."""
    return hasattr(obj, "py_func") and hasattr(obj, "overloads")


def forget(obj: Any) -> None:
    """A function that caches its results (``functools.cache``, a kernel factory) forgets
    them: they came from the code being replaced."""
    clear = getattr(obj, "cache_clear", None)
    if clear is not None:
        clear()


def swap(module_name: str, qualname: str, source: str) -> Callable[[], None]:
    """Run the function ``qualname`` of ``module_name`` from ``source``; returns the undo."""
    module = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    owner: Any = module
    for part in path:
        owner = getattr(owner, part)
    static = inspect.getattr_static(owner, name)
    if is_kernel(static):  # a whole new kernel, compiled from the reference, decorators and all
        setattr(owner, name, _run_source(textwrap.dedent(source), module)[name])
        return lambda: setattr(owner, name, static)
    original = _unwrap(static)
    code = _compiled(source, bool(path), name, module)
    if code.co_freevars == original.__code__.co_freevars:
        saved = original.__code__
        original.__code__ = code
        forget(static)

        def undo() -> None:
            original.__code__ = saved
            forget(static)
        return undo
    # The two disagree on their closure (one calls super(), the other does not):
    # a new function on the owner, with the cells it needs.
    cells = []
    for var in code.co_freevars:
        if var == "__class__" and isinstance(owner, type):
            cells.append(types.CellType(owner))
        elif var in original.__code__.co_freevars:
            cells.append(original.__closure__[original.__code__.co_freevars.index(var)])
        else:
            raise RuntimeError(f"{module_name}.{qualname}: cannot run the reference "
                               f"(it needs the variable {var!r} from an enclosing scope)")
    fresh = types.FunctionType(code, original.__globals__, name, original.__defaults__,
                               tuple(cells))
    fresh.__kwdefaults__ = original.__kwdefaults__
    if isinstance(static, property):
        replacement: Any = property(fresh, static.fset, static.fdel, static.__doc__)
    elif isinstance(static, (staticmethod, classmethod)):
        replacement = type(static)(fresh)
    else:
        replacement = fresh
    setattr(owner, name, replacement)
    return lambda: setattr(owner, name, static)


class Recorder:
    """A pytest plugin: every test's outcome, with the first lines of its failure."""

    def __init__(self) -> None:
        self.outcomes: dict[str, dict] = {}
        self.seconds: dict[str, float] = {}  # per test file: check balances its last step

    def pytest_configure(self, config: pytest.Config) -> None:
        from tests import HELPER_MODULES  # registered again: this time pytest's hook is in

        pytest.register_assert_rewrite(*HELPER_MODULES)

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector):
        start = time.perf_counter()
        report = yield
        if isinstance(collector, pytest.Module):  # its import, counted with its tests
            file = collector.nodeid
            self.seconds[file] = self.seconds.get(file, 0.0) + time.perf_counter() - start
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        file = report.nodeid.split("::")[0]
        self.seconds[file] = self.seconds.get(file, 0.0) + report.duration
        known = self.outcomes.get(report.nodeid)
        if report.failed:
            if known and known["failed"]:
                return
            crash = getattr(report.longrepr, "reprcrash", None)
            message = crash.message if crash else str(report.longrepr)
            where = f"{crash.path}:{crash.lineno}" if crash else ""
            self.outcomes[report.nodeid] = {"failed": True, "message": message,
                                            "where": where, "phase": report.when}
        elif known is None and report.when == "call":
            self.outcomes[report.nodeid] = {"failed": False}

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.outcomes[report.nodeid or "collection"] = {
                "failed": True, "message": str(report.longrepr)[-3000:], "where": "",
                "phase": "collect"}


class Exclude:
    """A pytest plugin: leave out the tests that belong to the exercises' own steps."""

    def __init__(self, selectors: list[str]) -> None:
        self.selectors = selectors

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        keep, drop = [], []
        for item in items:
            test = item.nodeid.split("[")[0]
            mine = any(test == s or test.startswith(s + "::") for s in self.selectors)
            (drop if mine else keep).append(item)
        items[:] = keep
        config.hook.pytest_deselected(items=drop)


def pytest_sessionstart(session: pytest.Session) -> None:
    """As a plugin (``-p tests.learn.check_child``) of a process that runs many pytest
    sessions (tests/learn/honesty_child.py), what earlier sessions loaded is set aside,
    as :func:`run_step` does: pytest's collections at each session's end walk the rest."""
    gc.freeze()


def run_step(step: dict) -> dict:
    undo = []
    try:
        for s in step["swaps"]:
            undo.append(swap(s["module"], s["qualname"], s["source"]))
    except Exception as e:  # the reference cannot run here: say so instead of a verdict
        for u in reversed(undo):
            u()
        return {"error": f"{type(e).__name__}: {e}"}
    recorder = Recorder()
    plugins: list[Any] = [recorder]
    if step.get("exclude"):
        plugins.append(Exclude(step["exclude"]))
    # pytest collects the garbage several times as each session ends; what the earlier
    # steps loaded (torch, the test modules) stays, so it is set aside first, and a
    # collection walks only what this step makes.
    gc.freeze()
    start = time.perf_counter()
    try:
        code = pytest.main([*step["args"], "-q", "--no-header", "-p", "no:cacheprovider",
                            "--tb=no"], plugins=plugins)
    finally:
        for u in reversed(undo):
            u()
    return {"exit_code": int(code), "outcomes": recorder.outcomes, "seconds": recorder.seconds,
            "wall": time.perf_counter() - start}


def main(plan_path: str, out_path: str) -> int:
    from tests.learn.switch import use_workspace_if_asked

    use_workspace_if_asked()
    with open(plan_path) as f:
        plan = json.load(f)
    results: dict[str, dict] = {}
    for step in plan["steps"]:
        if step.get("when_all_passed") and any(
                r.get("exit_code") != pytest.ExitCode.OK for r in results.values()):
            results[step["label"]] = {"skipped": "an earlier step failed"}
            continue
        results[step["label"]] = run_step(step)
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)
    return 0


# Imported once by the server: what every run needs and nothing that reads the
# workspace (tensor, minifx, the tests' own modules). torch._dynamo (eight hundred
# modules, sympy among them) is what torch imports lazily in most chapters' tests:
# torch.testing's comparisons and torch.fx's errors reach it.
PRELOAD = ("numpy", "numba", "torch", "torch.fx", "torch.testing", "torch._dynamo",
           "hypothesis", "hypothesis.strategies", "sybil", "pytest")
# Read when Python starts or a preloaded module is imported: a run whose environment
# differs in one of these gets a new process instead of a fork.
FIXED_AT_START = ("PYTHON", "TORCH_", "OMP_", "MKL_", "KMP_", "OPENBLAS_", "HYPOTHESIS")


def _preload() -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    # What pytest.main loads by itself. Imported before pytest's assertion rewriting is
    # set up, these plugins' own asserts are not rewritten (pytest warns); the tests'
    # and their helpers' are, as in a new child.
    for plugin in entry_points(group="pytest11"):
        plugin.load()
    gc.freeze()


def _run_forked(request: dict) -> tuple[int, str]:
    """Fork, and in the copy run :func:`main` as a new child would; (exit code, output)."""
    import numba.core.config

    with tempfile.TemporaryFile() as log:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the copy
            code = 70
            try:
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(log.fileno(), 1)
                os.dup2(log.fileno(), 2)
                os.chdir(request["cwd"])
                os.environ.clear()
                os.environ.update(request["env"])
                numba.core.config.reload_config()  # NUMBA_CACHE_DIR and the like
                code = main(*request["args"])
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        log.seek(0)
        output = log.read().decode(errors="replace")
    return os.waitstatus_to_exitcode(status), output


def serve() -> int:
    """Answer one request per line of stdin (JSON: args, env, cwd) with one line of JSON."""
    _preload()
    for line in sys.stdin:
        code, output = _run_forked(json.loads(line))
        sys.stdout.write(json.dumps({"code": code, "output": output}) + "\n")
        sys.stdout.flush()
    return 0


class Server(WarmServer):
    """A ``launch`` for minifx.learn.check that forks each child from one warm process.

    Started in ``cwd`` (the checkout) with the current environment; a run with
    another folder, or with another value of a variable read at start-up
    (FIXED_AT_START), gets a new process as ``check`` would start it.
    """

    def __init__(self, cwd: Path) -> None:
        super().__init__(["tests.learn.check_child", "--serve"], cwd, FIXED_AT_START)

    def __call__(self, args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
        if Path(cwd) != self.cwd or not self.fits(env):
            done = subprocess.run([sys.executable, "-m", "tests.learn.check_child", *args],
                                  cwd=cwd, env=env, capture_output=True, text=True)
            return done.returncode, done.stdout + done.stderr
        reply = self.ask({"args": args, "env": env, "cwd": str(cwd)})
        return reply["code"], reply["output"]


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1:] == ["--serve"] else main(*sys.argv[1:]))
