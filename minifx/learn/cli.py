"""``python -m minifx learn list | start chNN | check chNN | hint chNN.K [--more] |
solution chNN.K | coverage | milestone [NAME]``."""

from __future__ import annotations

import sys

from . import check as checking
from . import coverage, milestones
from . import workspace as ws
from .exercises import CHAPTERS, EXERCISES, chapter_exercises, find_exercise

USAGE = """usage: python -m minifx learn COMMAND
  list              each chapter's progress, every exercise and its status
  start chNN        make or update workspace/ with chapter NN's exercises as stubs
  check chNN        run chapter NN's tests against workspace/, one line per exercise
  hint chNN.K       a hint for exercise K of chapter NN (--more: a second, closer one)
  solution chNN.K   the reference code of exercise K (paste it over the stub)
  coverage          the share of code lines inside exercises, per file and per chapter
  milestone [NAME]  run your code on something real (ch02, ch06, ch08, ch10; --seed N for ch06)
The tests run against the workspace when MINIFX_WORKSPACE names it:
  MINIFX_WORKSPACE=workspace .venv/bin/pytest -m ch03"""


def _chapter(args: list[str], command: str) -> str:
    if len(args) != 1:
        raise ws.LearnError(f"{command} takes one chapter, like `{command} ch03`")
    chapter = args[0]
    if chapter not in CHAPTERS:
        raise ws.LearnError(f"unknown chapter {chapter!r}: chapters are {', '.join(CHAPTERS)}")
    return chapter


def _exercise(args: list[str], command: str):
    if len(args) != 1:
        raise ws.LearnError(f"{command} takes one exercise, like `{command} ch03.1`")
    try:
        return find_exercise(args[0])
    except LookupError as e:
        raise ws.LearnError(str(e.args[0])) from None


def _milestone_args(args: list[str]) -> tuple[str, int | None]:
    rest, seed = list(args), None
    if "--seed" in rest:
        i = rest.index("--seed")
        try:
            seed = int(rest[i + 1])
        except (IndexError, ValueError):
            raise ws.LearnError("--seed takes a whole number, like `--seed 7`") from None
        del rest[i : i + 2]
    if len(rest) != 1:
        raise ws.LearnError("milestone takes one name, like `milestone ch02`")
    milestones.find_milestone(rest[0])
    return rest[0], seed


def list_exercises(workspace=None) -> str:
    """Every chapter's progress, then its exercises, one line each: id, status, file and
    function, title. An exercise is done when it passed your last ``check`` with the
    code it has now."""
    workspace = workspace or ws.workspace_dir()
    present = ws.exists(workspace)
    record = ws.read_record(workspace) if present else {"handed_out": [], "passed": {}}
    handed = set(record["handed_out"])
    rows = []
    for e in EXERCISES:
        state = ws.status(e, workspace)
        if present and state == "reference" and e.id in handed:
            state = "your code"  # handed out, and now the reference: the learner's
        if present and ws.is_done(e, workspace, record):
            state += ", done"
        rows.append((e, state, f"{e.file}: {e.qualname}"))
    width = max(len(r[2]) for r in rows)
    lines = []
    for chapter in CHAPTERS:
        mine = [r for r in rows if r[0].chapter == chapter]
        done = sum(r[1].endswith(", done") for r in mine)
        lines.append(f"{chapter} {done}/{len(mine)} done")
        lines += [f"  {e.id:<7} {state:<16} {where:<{width}}  {e.title}"
                  for e, state, where in mine]
    if not present:
        lines.append(f"(no workspace at {workspace} yet: `python -m minifx learn start ch00`)")
    return "\n".join(lines)


def show_chapter(chapter: str) -> None:
    """Print a chapter's exercises from the table (each lesson's "Exercises" section calls it)."""
    for e in chapter_exercises(chapter):
        print(f"{e.id}  {e.qualname} ({e.file})")
        print(f"        {e.title}")
        print(f"        checked by {', '.join(e.tests)}")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    command, args = argv[0], argv[1:]
    workspace = ws.workspace_dir()
    try:
        if command == "list":
            if args:
                raise ws.LearnError("list takes no arguments")
            print(list_exercises(workspace))
            return 0
        if command == "start":
            chapter = _chapter(args, command)
            fresh = not ws.exists(workspace)
            lines = ws.start(chapter, workspace)
            print(f"{'made' if fresh else 'updated'} {workspace} for {chapter}:")
            print("\n".join("  " + line for line in lines))
            print(f"write them, then: python -m minifx learn check {chapter}")
            return 0
        if command == "check":
            chapter = _chapter(args, command)
            passed, report = checking.check(chapter, workspace)
            print(report)
            return 0 if passed else 1
        if command == "hint":
            more = "--more" in args
            e = _exercise([a for a in args if a != "--more"], command)
            print(f"{e.id} {e.title} ({e.file}: {e.qualname})\n{e.hint}")
            if more:
                print(f"more: {e.more}")
            else:
                print(f"(closer: python -m minifx learn hint {e.id} --more)")
            return 0
        if command == "coverage":
            if args:
                raise ws.LearnError("coverage takes no arguments")
            print(coverage.report(ws.REFERENCE))
            return 0
        if command == "milestone":
            if not args:
                print(milestones.listing())
                return 0
            name, seed = _milestone_args(args)
            passed, report = milestones.run(name, workspace, seed)
            print(report)
            return 0 if passed else 1
        if command == "solution":
            e = _exercise(args, command)
            print(f"# {e.id} {e.title}: {e.file}, {e.qualname}", file=sys.stderr)
            print(ws.solution(e), end="")
            return 0
    except ws.LearnError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"error: unknown learn command {command!r}\n{USAGE}", file=sys.stderr)
    return 2

assert EXERCISES  # the table is not empty
