"""``check chNN``: run a chapter's tests against the workspace, report per exercise.

An exercise's verdict depends on its own code only. The tests run in a
child process (tests/learn/check_child.py) with ``MINIFX_WORKSPACE`` set, so
they import the workspace's packages, in steps:

- one step per exercise of the chapter: the exercise's own tests, while every
  *other* exercise of the workspace (of any chapter) runs from the reference
  code. A bug is then reported under the exercise that has it and no other,
  and a half-done exercise never blocks the next one;
- a last step, once every exercise passes: the chapter's other tests and its
  lesson, with the chapter's exercises all the learner's and every other
  chapter's from the reference. Its files are shared with a second child that
  runs beside the first from the start, each file going to the child that
  would end sooner by the times the last check took (``times.txt``).

Each failure is shown in a few lines: its message with the values of the
failing ``assert`` (helper modules are rewritten too, see tests/__init__.py);
a lesson block's message starts with the lines that differ.

A step that passed is remembered in the workspace (``.check_cache/``), under a
digest of everything its verdict depends on: the exercise's own code, every
other line of the workspace's packages with each other exercise cut to its
signature and docstring (they run from the reference, whatever their body),
every file of the reference checkout (its packages, tests, lessons and
tooling), the interpreter, the installed packages and the variables that steer
the run. A later ``check`` runs only the steps whose digest is new, so a
learner who edits one exercise re-runs that exercise's tests (and the
chapter's other tests), and any change to the tests or the reference runs
everything again. A failure is never remembered: it is run afresh each time.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
import site
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .exercises import EXERCISES, Exercise, chapter_exercises, find_exercise
from .stubs import ExerciseNotFound, FunctionSpan, _find, is_stub, same_code
from .workspace import ENV_VAR, PACKAGES, REFERENCE, LearnError, record_check, require

MESSAGE_LINES = 8
LESSON_LINES = 12
LINE_WIDTH = 160
STUB_MESSAGE = re.compile(r"\b(ch\d\d\.\d+): ")
REST = "rest"
CACHE = ".check_cache"  # in the workspace: one file per step that passed
CACHE_KEEP = 2000  # the most recently used steps kept there
CACHE_FORMAT = "check-cache-1"
# The reference's files a step may read: its packages, tests, lessons and tooling.
REFERENCE_TREES = ("tensor", "minifx", "tests", "book", "lessons", "benchmarks", "scripts")
# The variables that steer a run (the backend, numba, hypothesis's profile, imports);
# NUMBA_CACHE_DIR only says where compiled kernels are kept.
ENV_PREFIXES = ("TENSOR_", "NUMBA_", "MINIFX_", "HYPOTHESIS", "PYTHON", "TORCH_", "OMP_",
                "MKL_", "OPENBLAS_", "KMP_")
ENV_NAMES = ("CI", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
ENV_IGNORED = ("NUMBA_CACHE_DIR",)


@dataclass
class Outcome:
    test: str  # tests/ch03/test_node.py::test_name
    failed: bool
    message: str = ""
    where: str = ""  # file:line of the failing line, when pytest knows it


def module_name(file: str) -> str:
    """``minifx/node.py`` -> ``minifx.node``; a package's ``__init__.py`` is the package
    (``tensor/backend/reference/__init__.py`` -> ``tensor.backend.reference``)."""
    return file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _lessons(chapter: str, reference: Path) -> list[str]:
    return [str(p.relative_to(reference))
            for p in sorted((reference / "lessons").glob(f"{chapter}_*.md"))]


def _span(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> FunctionSpan:
    """``stubs.function_span`` of a function already found in a parsed file."""
    start = min([fn.lineno] + [d.lineno for d in fn.decorator_list]) - 1
    first = fn.body[0]
    doc = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
           and isinstance(first.value.value, str))
    line = lines[first.lineno - 1]
    return FunctionSpan(start=start, body=first.end_lineno if doc else first.lineno - 1,
                        end=fn.end_lineno, indent=line[: len(line) - len(line.lstrip())])


@functools.lru_cache(maxsize=256)
def _spans(text: str, exercises: tuple[Exercise, ...]) -> dict[str, FunctionSpan]:
    """Where each exercise's function sits in one file: one parse for all of them (and
    none when the same text comes again, as the files a learner did not touch do)."""
    tree, lines = ast.parse(text), text.splitlines(keepends=True)
    found = {}
    for exercise in exercises:
        try:
            found[exercise.id] = _span(_find(tree, exercise.qualname), lines)
        except ExerciseNotFound:
            pass
    return found


class Survey:
    """The workspace and the reference read once: each exercise's code, status and place.

    ``status`` and ``solutions`` agree with ``workspace.status`` and
    ``workspace.solution`` (a test checks it); each file is parsed once for all
    its exercises, where those call ``stubs.function_span`` once per function.
    """

    def __init__(self, workspace: Path, reference: Path = REFERENCE) -> None:
        self.workspace, self.reference = workspace, reference
        self.texts: dict[str, str] = {}  # file -> the workspace's text
        self.places: dict[str, dict[str, FunctionSpan]] = {}  # file -> id -> span
        self.solutions: dict[str, str] = {}  # id -> the reference's function
        self.status: dict[str, str] = {}
        by_file: dict[str, tuple[Exercise, ...]] = {}
        for exercise in EXERCISES:
            by_file[exercise.file] = (*by_file.get(exercise.file, ()), exercise)
        for file, exercises in by_file.items():
            ref_text = (reference / file).read_text()
            ref_lines = ref_text.splitlines(keepends=True)
            ref_spans = _spans(ref_text, exercises)
            for e in exercises:
                if e.id not in ref_spans:
                    raise ExerciseNotFound(e.qualname)
                span = ref_spans[e.id]
                self.solutions[e.id] = "".join(ref_lines[span.start:span.end])
            path = workspace / file
            if not path.is_file():
                self.status.update((e.id, "missing") for e in exercises)
                continue
            text = path.read_text()
            try:
                spans = _spans(text, exercises)
            except SyntaxError as e:
                raise LearnError(f"{path} line {e.lineno}: {e.msg}; fix it first") from None
            self.texts[file], self.places[file] = text, spans
            lines = text.splitlines(keepends=True)
            for e in exercises:
                span = spans.get(e.id)
                code = None if span is None else "".join(lines[span.start:span.end])
                self.status[e.id] = self._status(code, self.solutions[e.id])
        # the files without exercises count whole, the same for every step
        plain = hashlib.sha256()
        for path in _files(*(workspace / p for p in PACKAGES)):
            file = path.relative_to(workspace).as_posix()
            plain.update(file.encode() + b"\0")
            plain.update(b"" if file in self.places else path.read_bytes())
            plain.update(b"\0")
        self._plain = plain.hexdigest()

    @staticmethod
    def _status(code: str | None, solution: str) -> str:
        if code is None:
            return "missing"
        if code == solution:
            return "reference"
        if is_stub(code):
            return "to do"
        return "reference" if same_code(code, solution) else "your code"

    def differs(self) -> list[Exercise]:
        """The exercises whose workspace code is not the reference's (they are swapped)."""
        return [e for e in EXERCISES if self.status[e.id] not in ("reference", "missing")]

    def packages_digest(self, kept: set[str]) -> str:
        """A digest of the workspace's packages as a step with ``kept`` runs them.

        The exercises in ``kept`` count with their code. Every other exercise
        runs from the reference (swapped in when its code differs, the same code
        when it does not), so only the lines the swap keeps count: its
        decorators, signature and docstring.
        """
        digest = hashlib.sha256(self._plain.encode())
        for file in sorted(self.places):
            digest.update(f"\0{file}\0{self._canonical(file, kept)}".encode())
        return digest.hexdigest()

    def _canonical(self, file: str, kept: set[str]) -> str:
        lines = self.texts[file].splitlines(keepends=True)
        cut = sorted((span.start, span.body, span.end, i) for i, span in
                     self.places[file].items() if i not in kept)
        if any(a[2] > b[0] for a, b in zip(cut, cut[1:])):  # one inside another: keep all
            return self.texts[file]
        out, at = [], 0
        for _start, body, end, exercise_id in cut:
            out += lines[at:body]
            out.append(f"<{exercise_id}: the reference runs here>\n")
            at = end
        return "".join(out + lines[at:])


def plan(chapter: str, workspace: Path, reference: Path = REFERENCE,
         survey: Survey | None = None) -> dict:
    """The child's steps: each exercise alone, then the chapter's other tests and lesson.

    A step lists the exercises that run from the reference while it runs: those
    not under check whose workspace code is not already the reference. It also
    carries its ``key``: the digest of what its verdict depends on.
    """
    survey = survey or Survey(workspace, reference)
    own = chapter_exercises(chapter)
    differs = survey.differs()
    base = _base_digest(workspace, reference)

    def swaps(kept: list[Exercise]) -> list[dict]:
        return [{"module": module_name(e.file), "qualname": e.qualname,
                 "source": survey.solutions[e.id]} for e in differs if e not in kept]

    def key(step: dict, kept: list[Exercise]) -> str:
        text = json.dumps({k: step.get(k) for k in ("label", "args", "exclude")})
        packages = survey.packages_digest({e.id for e in kept})
        return hashlib.sha256(f"{base}\0{text}\0{packages}".encode()).hexdigest()[:32]

    steps = []
    for e in own:
        step = {"label": e.id, "args": ["-m", chapter, *e.tests], "swaps": swaps([e])}
        steps.append({**step, "key": key(step, [e])})
    rest = {"label": REST, "args": ["-m", chapter, f"tests/{chapter}",
                                    *_lessons(chapter, reference)],
            "exclude": [t for e in own for t in e.tests], "swaps": swaps(own),
            "when_all_passed": True}
    steps.append({**rest, "key": key(rest, own)})
    return {"chapter": chapter, "steps": steps}


def _files(*folders: Path) -> list[Path]:
    """Every file under ``folders``, sorted; no caches, nothing hidden."""
    found = []
    for folder in folders:
        for root, dirs, names in os.walk(folder):
            dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
            found += [Path(root, n) for n in names
                      if not n.startswith(".") and not n.endswith(".pyc")]
    return sorted(found)


def _base_digest(workspace: Path, reference: Path) -> str:
    """What every step's verdict depends on besides the workspace's packages."""
    digest = hashlib.sha256(CACHE_FORMAT.encode())
    digest.update(f"{sys.version}\0{sys.executable}\0{workspace}\0".encode())
    for folder in sorted(set(site.getsitepackages() + [site.getusersitepackages()])):
        if os.path.isdir(folder):  # the installed distributions, with their versions
            digest.update("\0".join(sorted(os.listdir(folder))).encode())
    env = {k: v for k, v in os.environ.items() if k not in ENV_IGNORED and (
        k in ENV_NAMES or k.startswith(ENV_PREFIXES))}
    digest.update(json.dumps(sorted(env.items())).encode())
    # what sits beside the packages in the workspace can shadow an import
    digest.update("\0".join(sorted(
        p.name for p in workspace.iterdir()
        if p.name not in (CACHE, ".numba_cache", "learn.json"))).encode())
    roots = [p for p in reference.iterdir() if p.is_file() and not p.name.startswith(".")]
    for path in sorted(roots) + _files(*(reference / t for t in REFERENCE_TREES)):
        digest.update(str(path.relative_to(reference)).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


# How the child starts: (its arguments, environment, working folder) -> (exit code, output).
Launch = Callable[[list[str], dict[str, str], Path], tuple[int, str]]


def spawn(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Start the child (tests/learn/check_child.py) as a new process."""
    done = subprocess.run([sys.executable, "-m", "tests.learn.check_child", *args], cwd=cwd,
                          env=env, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


class _Beside:
    """A second child, started now, that runs while this process waits for the first."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path, log: Path) -> None:
        self.log = log.open("w+")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.learn.check_child", *args], cwd=cwd, env=env,
            stdout=self.log, stderr=subprocess.STDOUT, text=True)

    def wait(self) -> tuple[int, str]:
        code = self.process.wait()
        self.log.seek(0)
        output = self.log.read()
        self.log.close()
        return code, output

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self.log.close()


# ---- the last step, in two halves ------------------------------------------------
# The chapter's other tests take most of a check. Their files are shared between the
# child that runs the exercises' steps and a second child that starts at once beside
# it, so the machine's two cores share them. How long each file took is remembered.
TIMES = "times.txt"  # in the cache folder: "seconds<TAB>test file or step" per line
# Until a workspace has its own, the times the reference took on a solved workspace
# (a copy of its times.txt, with # comments): a learner's first check of a chapter
# then splits as well as the next ones. Only the proportions matter.
FIRST_TIMES = "tests/learn/check_times.txt"
UNTIMED = 1.0  # the seconds assumed for an exercise's step not timed yet
UNTIMED_BYTES = 5000  # and for a test file not timed yet, one per so many bytes of it
NO_TESTS = 5  # pytest's exit code when a run collects no test


def _times(path: Path) -> dict[str, float]:
    try:
        lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
        return {name: float(seconds) for seconds, name in (line.split("\t", 1) for line in lines)}
    except (OSError, ValueError):  # none yet, or a file this version cannot read: guess
        return {}


def _save_times(cache: Path, times: dict[str, float]) -> None:
    cache.mkdir(exist_ok=True)
    partial = cache / f"{TIMES}.{os.getpid()}.part"
    partial.write_text("".join(f"{t:.3f}\t{name}\n" for name, t in sorted(times.items())))
    partial.replace(cache / TIMES)


def _halves(rest: dict, chapter: str, reference: Path, times: dict[str, float],
            head_start: float) -> tuple[dict | None, dict | None]:
    """The last step as two steps over halves of its files: each file, slowest first,
    joins the half that would end sooner. The first half runs after the exercises'
    steps (``head_start`` seconds), the second beside them. Either may be None."""
    folder = reference / "tests" / chapter
    files = sorted(str(p.relative_to(reference)) for p in folder.rglob("test_*.py"))
    files += _lessons(chapter, reference)
    # a file not timed yet: guessed from its size, which says little but beats nothing
    guess = {f: times.get(f, (reference / f).stat().st_size / UNTIMED_BYTES) for f in files}
    loads, halves = [head_start, 0.0], [[], []]
    for file in sorted(files, key=lambda f: -guess[f]):
        i = loads.index(min(loads))
        halves[i].append(file)
        loads[i] += guess[file]
    first, second = ({**rest, "args": ["-m", chapter, *sorted(half)]} if half else None
                     for half in halves)
    return first, second


def _write_plan(tmp: Path, name: str, full: dict, steps: list[dict]) -> tuple[list[str], Path]:
    """The child's arguments for a plan of ``steps`` (its file, and the file the child
    writes its results to), and the latter."""
    plan_path, out = tmp / f"{name}.json", tmp / f"{name}.out"
    plan_path.write_text(json.dumps({**full, "steps": steps}))
    return [str(plan_path), str(out)], out


def _read(out: Path) -> dict:
    return json.loads(out.read_text()) if out.exists() else {}


def _merged(parts: list[dict]) -> dict:
    """The halves' results as the one result of the last step."""
    for part in parts:
        if "error" in part or "skipped" in part:
            return part
    codes = [p["exit_code"] for p in parts if p["exit_code"] != NO_TESTS]
    return {"exit_code": max(codes, default=NO_TESTS),
            "outcomes": {k: v for p in parts for k, v in p["outcomes"].items()},
            "seconds": {k: v for p in parts for k, v in p.get("seconds", {}).items()}}


def _run_children(full: dict, exercises: list[dict], first: dict | None,
                  second: dict | None, env: dict[str, str], tmp: Path, reference: Path,
                  launch: Launch) -> tuple[dict[str, dict], int, str]:
    """Run the exercises' steps and ``first`` in one child, ``second`` in another (beside
    it with ``spawn``, else after it): (results by label, exit code, output). The last
    step's halves come back as one result; it is skipped when an exercise failed."""
    main_steps = exercises + ([first] if first else [])
    beside = None
    if second and main_steps and launch is spawn:
        args, out_second = _write_plan(tmp, "second", full, [second])
        beside = _Beside(args, env, reference, tmp / "second.log")
    ran, code, output = {}, 0, ""
    if main_steps:
        args, out = _write_plan(tmp, "first", full, main_steps)
        try:
            code, output = launch(args, env, reference)
        except BaseException:  # Ctrl-C: the second child must not run on alone
            if beside:
                beside.stop()
            raise
        ran = _read(out)
    if not second:
        return ran, code, output
    if (main_steps and not ran) or not all(_passed(ran.get(s["label"], {}))
                                           for s in exercises):
        if beside:
            beside.stop()
        if ran:
            ran[REST] = {"skipped": "an earlier step failed"}
        return ran, code, output
    if beside:
        code_second, output_second = beside.wait()
    else:
        args, out_second = _write_plan(tmp, "second", full, [second])
        code_second, output_second = launch(args, env, reference)
    result = _read(out_second).get(REST) or {
        "error": "the tests did not run: " + " ".join(output_second.split()[-40:])}
    ran[REST] = _merged(([ran[REST]] if first else []) + [result])
    return ran, max(code, code_second), output + output_second


def run_tests(chapter: str, workspace: Path, reference: Path = REFERENCE,
              launch: Launch = spawn) -> tuple[dict[str, list[Outcome] | str], int, str]:
    """Run the plan against ``workspace``: outcomes per step (or the step's error text),
    the child's exit code and its output. A step that passed before with the same
    digest is not run again (the module's docstring says what the digest covers).
    ``launch`` starts the child; the tests pass one that forks it from a process that
    has imported the test tools already. With ``spawn`` the second half of the last
    step runs in a second child beside the first; with any other ``launch``, after it."""
    require(workspace)
    full = plan(chapter, workspace, reference)
    cache = workspace / CACHE
    known = {s["label"]: _recall(cache, s["key"]) for s in full["steps"]}
    to_run = [s for s in full["steps"] if known[s["label"]] is None]
    exercises = [s for s in to_run if s["label"] != REST]
    times = _times(cache / TIMES)
    first = second = None
    if any(s["label"] == REST for s in to_run):
        guess = {**_times(reference / FIRST_TIMES), **times}
        head_start = sum(guess.get(s["label"], UNTIMED) for s in exercises)
        first, second = _halves(full["steps"][-1], chapter, reference, guess, head_start)
    ran: dict[str, dict] = {}
    code, output = 0, ""
    if to_run:
        env = {**os.environ, ENV_VAR: str(workspace),
               "NUMBA_CACHE_DIR": str(kernel_cache(workspace))}
        with tempfile.TemporaryDirectory(prefix="minifx-check-") as tmp:
            ran, code, output = _run_children(full, exercises, first, second, env, Path(tmp),
                                              reference, launch)
        if not ran:  # the child died before it wrote a verdict
            return {}, code, output
        for step in to_run:
            if _passed(ran.get(step["label"], {})):
                _remember(cache, step["key"], ran[step["label"]])
        for label, result in ran.items():  # the rest by file; an exercise's step whole
            if label == REST:
                times.update(result.get("seconds", {}))
            elif "wall" in result:
                times[label] = result["wall"]
        _save_times(cache, times)
    results = {s["label"]: known[s["label"]] or ran.get(s["label"], {"skipped": "not run"})
               for s in full["steps"]}
    if known[REST] is not None and not all(_passed(r) for label, r in results.items()
                                           if label != REST):
        results[REST] = {"skipped": "an earlier step failed"}  # as the child decides
    steps: dict[str, list[Outcome] | str] = {}
    for label, result in results.items():
        if "skipped" in result:
            continue
        if "error" in result:
            steps[label] = result["error"]
        else:
            steps[label] = [Outcome(test, o["failed"], o.get("message", ""), o.get("where", ""))
                            for test, o in result["outcomes"].items()]
    return steps, code, output


def _passed(result: dict) -> bool:
    return result.get("exit_code") == 0 and not any(
        o["failed"] for o in result.get("outcomes", {}).values())


def _recall(cache: Path, key: str) -> dict | None:
    path = cache / f"{key}.json"
    try:
        result = json.loads(path.read_text())
        os.utime(path)  # recently used: kept longest
    except (OSError, ValueError):
        return None
    return result if _passed(result) else None


def _remember(cache: Path, key: str, result: dict) -> None:
    cache.mkdir(exist_ok=True)
    partial = cache / f"{key}.{os.getpid()}.part"
    partial.write_text(json.dumps(result))
    partial.replace(cache / f"{key}.json")
    entries = sorted(cache.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for old in entries[: max(0, len(entries) - CACHE_KEEP)]:
        old.unlink(missing_ok=True)


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


def check(chapter: str, workspace: Path, reference: Path = REFERENCE,
          launch: Launch = spawn) -> tuple[bool, str]:
    """Run and report: (every exercise and every other test passed, the report's text)."""
    exercises = chapter_exercises(chapter)
    steps, code, output = run_tests(chapter, workspace, reference, launch)
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
