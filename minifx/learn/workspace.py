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
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .exercises import CHAPTERS, EXERCISES, Exercise, chapter_exercises
from .stubs import function_source, is_stub, replace_function, same_code, stub_source

ENV_VAR = "MINIFX_WORKSPACE"
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
    later = CHAPTERS[CHAPTERS.index(chapter) + 1 :]
    report = []
    for exercise in EXERCISES:
        state = status(exercise, workspace, reference)
        if state == "missing":
            raise LearnError(f"{exercise.id}: {exercise.qualname} is no longer in "
                             f"{workspace / exercise.file}; restore it (the reference is "
                             f"`python -m minifx learn solution {exercise.id}`)")
        if exercise.chapter == chapter:
            if state == "reference":
                set_function(workspace, exercise, stub(exercise, reference))
                report.append(f"{exercise.id}  to do      {exercise.title}")
            else:
                report.append(f"{exercise.id}  {state:<9}  {exercise.title}  (kept)")
        elif exercise.chapter in later and state == "to do":
            set_function(workspace, exercise, solution(exercise, reference))
        elif exercise.chapter not in later and state == "to do":
            report.append(f"{exercise.id}  to do      {exercise.title}  "
                          f"(from {exercise.chapter}: its stub stays)")
    return report


def stubbed_ids(workspace: Path, chapter: str | None = None) -> list[str]:
    """The exercises that are stubs in the workspace (of one chapter, or all)."""
    pool = chapter_exercises(chapter) if chapter else EXERCISES
    return [e.id for e in pool if status(e, workspace) == "to do"]
