"""``python -m minifx ...`` as a new process, without paying for torch's import each time.

Most of a short ``python -m minifx compare`` run is Python starting and
importing torch, ``tensor`` and ``minifx``. :class:`ForkedCli` starts one
server process that imports them once (with the parts of torch a run loads
lazily); for each run it forks, and the copy does what a new
``python -m minifx`` process does: it takes the run's folder, environment and
arguments, puts the folder first on ``sys.path`` and runs ``minifx`` as
``__main__``. Its exit status, stdout and stderr come back apart, as from
``subprocess.run``.

The server imports ``tensor`` and ``minifx`` from where a new process in its
own folder finds them. A copy whose folder makes a new process find them
elsewhere (a workspace, or packages of that name in the folder) forgets the
server's and imports them afresh. A run whose environment differs from the
server's in a variable read when Python, torch or our packages start
(``FIXED_AT_START``) gets a real new process instead. Tests of what only a
real process has (a closed pipe, SIGPIPE) start one themselves.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import runpy
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import NoReturn

PRELOAD = ("numpy", "numba", "torch", "torch.fx", "torch.nn.functional", "torch.testing",
           "torch._dynamo",  # these two: what a compare run imports lazily
           "tensor", "minifx")
FIXED_AT_START = ("PYTHON", "TORCH_", "OMP_", "MKL_", "KMP_", "OPENBLAS_", "NUMBA_", "TENSOR_",
                  "MINIFX_")
OUR_PACKAGES = ("tensor", "minifx")


def _forget_ours_if_found_elsewhere() -> None:
    """In the copy: unless a new process here would import tensor and minifx from
    the files the server imported, drop them, so that the run imports them afresh."""
    ours = {n: m for n, m in sys.modules.items() if n.split(".")[0] in OUR_PACKAGES}
    for name in ours:
        del sys.modules[name]
    found = {name: importlib.util.find_spec(name) for name in OUR_PACKAGES}
    if all(spec and spec.origin == ours[name].__file__ for name, spec in found.items()):
        sys.modules.update(ours)


def _run_in_copy(request: dict, out: int, err: int) -> int:
    """In the forked copy: become ``python -m minifx ARGS`` and return its exit status."""
    import numba.core.config

    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    numba.core.config.reload_config()  # NUMBA_CACHE_DIR and the like
    sys.path[0] = os.getcwd()  # what `python -m` puts first
    _forget_ours_if_found_elsewhere()
    sys.argv = [sys.argv[0], *request["args"]]
    try:
        runpy.run_module("minifx", run_name="__main__", alter_sys=True)
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        print(done.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _fork(request: dict) -> dict:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the copy
            code = 70
            try:
                code = _run_in_copy(request, out.fileno(), err.fileno())
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read().decode(errors="replace"))
    return {"code": os.waitstatus_to_exitcode(status), "stdout": texts[0], "stderr": texts[1]}


def serve() -> NoReturn:
    """Answer one request per line of stdin (JSON: args, env, cwd) with one line of JSON."""
    for name in PRELOAD:
        importlib.import_module(name)
    for line in sys.stdin:
        sys.stdout.write(json.dumps(_fork(json.loads(line))) + "\n")
        sys.stdout.flush()
    os._exit(0)  # nothing to clean up: skip the interpreter's slow unloading of torch


class WarmServer:
    """The caller's side of a server that forks a copy of itself for each request.

    ``python -m COMMAND`` starts in ``cwd`` with the current environment and
    answers each line of JSON it reads with one line of JSON (:meth:`ask`). A
    run whose environment differs from the server's in a variable read when
    Python or a preloaded library starts (names beginning with ``fixed``) does
    not fit it (:meth:`fits`), and its caller starts a real process instead.
    """

    def __init__(self, command: list[str], cwd: Path, fixed: tuple[str, ...]) -> None:
        self.cwd, self.env, self.fixed = Path(cwd), dict(os.environ), fixed
        self.process = subprocess.Popen(
            [sys.executable, "-m", *command], cwd=cwd, env=self.env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def fits(self, env: dict[str, str]) -> bool:
        def read_at_start(e: dict[str, str]) -> dict[str, str]:
            return {k: v for k, v in e.items() if k.startswith(self.fixed)}
        return read_at_start(env) == read_at_start(self.env)

    def ask(self, request: dict) -> dict:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"{self.process.args[2:]}: the server ended "
                               f"(exit code {self.process.poll()})")
        return json.loads(answer)

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=60)


class ForkedCli(WarmServer):
    """``run(args, cwd, env)``: ``python -m minifx ARGS`` forked from one warm server."""

    def __init__(self) -> None:
        super().__init__(["tests.forked_cli"], Path(__file__).parents[1], FIXED_AT_START)

    def run(self, args: list[str], cwd: Path, env: dict[str, str]
            ) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "minifx", *args]
        if not self.fits(env):
            return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=300)
        reply = self.ask({"args": args, "env": env, "cwd": str(cwd)})
        return subprocess.CompletedProcess(command, reply["code"], reply["stdout"],
                                           reply["stderr"])


if __name__ == "__main__":
    serve()
