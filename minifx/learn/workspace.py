"""The learner's workspace: a copy of the packages with one chapter's exercises cut out.

``workspace/`` (at the checkout root, ignored by git; ``MINIFX_WORKSPACE``
names another folder) holds copies of ``tensor/`` and ``minifx/``. The tests
run against it when ``MINIFX_WORKSPACE`` is set (tests/learn/switch.py puts
it first on ``sys.path`` before anything imports the packages).

``start chNN`` edits exercise functions in place and leaves every other line
of the learner's files alone:

- an exercise of chNN that is still the reference code becomes a stub;
- an exercise the learner changed (solved, or half-way) keeps their code;
- a stub of a *later* chapter goes back to the reference (a later chapter is
  not started yet; its tests are not yours to pass yet);
- exercises of earlier chapters keep whatever the learner has.

The workspace remembers what it handed out, in ``learn.json`` beside the
packages: an exercise that was handed to the learner once is never stubbed
again, even when its body now equals the reference (the learner's own, or a
pasted ``solution``); only the code can tell those apart from an untouched
function, and it cannot. A later chapter's stub that ``start`` takes back
(the learner never wrote in it) leaves the record too. ``check`` writes there
which exercises passed, with the code that passed, for ``list``'s progress.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from .exercises import CHAPTERS, EXERCISES, Exercise, chapter_exercises, find_exercise
from .stubs import function_source, is_stub, replace_function, same_code, stub_source

ENV_VAR = "MINIFX_WORKSPACE"
RECORD = "learn.json"
PACKAGES = ("tensor", "minifx")
# The checkout the reference comes from: minifx/learn/workspace.py -> the root.
REFERENCE = Path(__file__).resolve().parents[2]


class LearnError(Exception):
    """Bad input to ``python -m minifx learn``: one line that names the problem."""


def workspace_dir(reference: Path = REFERENCE) -> Path:
    """Where the workspace is: $MINIFX_WORKSPACE if set, else ``workspace/`` in the checkout."""
    value = os.environ.get(ENV_VAR)
    return Path(value).expanduser().resolve() if value else reference / "workspace"


def exists(workspace: Path) -> bool:
    return all((workspace / p / "__init__.py").is_file() for p in PACKAGES)


def require(workspace: Path) -> None:
    if not exists(workspace):
        raise LearnError(
            f"no workspace at {workspace} yet: run `python -m minifx learn start ch00` "
            "(or the chapter you want) first")


def reference_text(exercise: Exercise, reference: Path = REFERENCE) -> str:
    return (reference / exercise.file).read_text()


def solution(exercise: Exercise, reference: Path = REFERENCE) -> str:
    """The reference code of an exercise, indented as in its file."""
    return function_source(reference_text(exercise, reference), exercise.qualname)


def stub(exercise: Exercise, reference: Path = REFERENCE) -> str:
    """The stub of an exercise: its signature and docstring, and a NotImplementedError."""
    message = f"{exercise.id}: {exercise.title}"
    return stub_source(reference_text(exercise, reference), exercise.qualname, message)


def learner_code(exercise: Exercise, workspace: Path) -> str | None:
    """The exercise's function as it is in the workspace (None: no workspace or no function)."""
    path = workspace / exercise.file
    if not path.is_file():
        return None
    try:
        return function_source(path.read_text(), exercise.qualname)
    except LookupError:
        return None
    except SyntaxError as e:
        raise LearnError(f"{path} line {e.lineno}: {e.msg}; fix it first") from None


def status(exercise: Exercise, workspace: Path, reference: Path = REFERENCE) -> str:
    """``reference``, ``to do`` (a stub), ``your code`` or ``missing`` (not in the file)."""
    if not exists(workspace):
        return "reference"
    code = learner_code(exercise, workspace)
    if code is None:
        return "missing"
    if is_stub(code):
        return "to do"
    if same_code(code, solution(exercise, reference)):
        return "reference"
    return "your code"


def read_record(workspace: Path) -> dict:
    """What the workspace handed out and what passed: ``{"handed_out": [ids], "passed":
    {id: code that passed}}``. A workspace from before the record counts every exercise
    that is a stub or the learner's code as handed out."""
    path = workspace / RECORD
    if path.is_file():
        try:
            record = json.loads(path.read_text())
        except ValueError:
            raise LearnError(f"{path} is not JSON any more; fix it or delete it") from None
        return {"handed_out": list(record.get("handed_out", [])),
                "passed": dict(record.get("passed", {}))}
    handed = [e.id for e in EXERCISES
              if exists(workspace) and status(e, workspace) in ("to do", "your code")]
    return {"handed_out": handed, "passed": {}}


def write_record(workspace: Path, record: dict) -> None:
    order = [e.id for e in EXERCISES]
    record = {"handed_out": sorted(set(record["handed_out"]), key=order.index),
              "passed": record["passed"]}
    (workspace / RECORD).write_text(json.dumps(record, indent=1) + "\n")


def handed_out(workspace: Path) -> set[str]:
    """The ids of the exercises the workspace handed to the learner."""
    return set(read_record(workspace)["handed_out"])


def is_done(exercise: Exercise, workspace: Path, record: dict | None = None) -> bool:
    """True when the exercise passed at the last ``check``, and its code is still that code."""
    record = record if record is not None else read_record(workspace)
    passed = record["passed"].get(exercise.id)
    code = learner_code(exercise, workspace)
    return passed is not None and code is not None and same_code(passed, code)


def record_check(workspace: Path, verdicts: dict[str, bool]) -> None:
    """Remember which exercises passed ``check`` (with their code), for ``list``."""
    record = read_record(workspace)
    for exercise_id, passed in verdicts.items():
        code = learner_code(find_exercise(exercise_id), workspace)
        if passed and code is not None:
            record["passed"][exercise_id] = code
        else:
            record["passed"].pop(exercise_id, None)
    write_record(workspace, record)


def _copy_packages(workspace: Path, reference: Path) -> None:
    workspace.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for package in PACKAGES:
        shutil.copytree(reference / package, workspace / package, ignore=ignore,
                        dirs_exist_ok=False)


def set_function(workspace: Path, exercise: Exercise, text: str) -> None:
    """Put ``text`` (a whole function) in place of the exercise's function in the workspace."""
    path = workspace / exercise.file
    path.write_text(replace_function(path.read_text(), exercise.qualname, text))


def start(chapter: str, workspace: Path, reference: Path = REFERENCE) -> list[str]:
    """Make or update the workspace for ``chapter``; returns one line per exercise touched."""
    if chapter not in CHAPTERS:
        raise LearnError(f"unknown chapter {chapter!r}: chapters are {', '.join(CHAPTERS)}")
    if not exists(workspace):
        if workspace.exists() and any(workspace.iterdir()):
            raise LearnError(f"{workspace} exists but holds no workspace; remove it or "
                             f"set {ENV_VAR} to an empty folder")
        _copy_packages(workspace, reference)
    record = read_record(workspace)
    handed = set(record["handed_out"])
    later = CHAPTERS[CHAPTERS.index(chapter) + 1 :]
    report = []
    for exercise in EXERCISES:
        state = status(exercise, workspace, reference)
        if state == "missing":
            raise LearnError(f"{exercise.id}: {exercise.qualname} is no longer in "
                             f"{workspace / exercise.file}; restore it (the reference is "
                             f"`python -m minifx learn solution {exercise.id}`)")
        if exercise.chapter == chapter:
            if state == "reference" and exercise.id not in handed:
                set_function(workspace, exercise, stub(exercise, reference))
                report.append(f"{exercise.id}  to do      {exercise.title}")
            else:
                shown = "your code" if state == "reference" else state
                report.append(f"{exercise.id}  {shown:<9}  {exercise.title}  (kept)")
            handed.add(exercise.id)
        elif exercise.chapter in later and state == "to do":
            set_function(workspace, exercise, solution(exercise, reference))
            handed.discard(exercise.id)
        elif exercise.chapter not in later and state == "to do":
            report.append(f"{exercise.id}  to do      {exercise.title}  "
                          f"(from {exercise.chapter}: its stub stays)")
    record["handed_out"] = sorted(handed)
    write_record(workspace, record)
    return report


def stubbed_ids(workspace: Path, chapter: str | None = None) -> list[str]:
    """The exercises that are stubs in the workspace (of one chapter, or all)."""
    pool = chapter_exercises(chapter) if chapter else EXERCISES
    return [e.id for e in pool if status(e, workspace) == "to do"]
