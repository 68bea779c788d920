"""A learner's walk, from ``learn start ch00`` to the last milestone, as commands.

    .venv/bin/python scripts/learner_walk.py [--to ch06] [--workspace DIR]

For each chapter in order, in a fresh workspace and from a folder outside the
checkout, as a learner types them:

1. ``learn start chNN``: the chapter's exercises become stubs;
2. ``learn check chNN``: must fail, naming every exercise of the chapter;
3. ``learn hint chNN.K`` and ``--more`` for each exercise: must answer;
4. each stub is replaced by ``learn solution chNN.K`` (standing in for the
   learner's own code, which the hints lead to);
5. ``learn check chNN``: must pass, and says so;
6. each milestone due after the chapter: ``learn milestone NAME`` must pass.

It prints one row per chapter with the time of each check, and exits non-zero
at the first command that does not do what the walk expects.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from minifx.learn import workspace as ws  # noqa: E402
from minifx.learn.exercises import CHAPTERS, chapter_exercises  # noqa: E402
from minifx.learn.milestones import MILESTONES  # noqa: E402


def learn(*argv: str, workspace: Path, cwd: Path) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, ws.ENV_VAR: str(workspace)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "minifx", "learn", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True)
    return done, time.perf_counter() - start


def expect(ok: bool, what: str, done: subprocess.CompletedProcess) -> None:
    if not ok:
        sys.exit(f"walk stopped: {what}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def walk(last: str, workspace: Path, cwd: Path) -> None:
    print("| chapter | exercises | check, stubs | check, solved | milestones |")
    print("|---|---:|---:|---:|---|")
    for chapter in CHAPTERS[: CHAPTERS.index(last) + 1]:
        exercises = chapter_exercises(chapter)
        done, _ = learn("start", chapter, workspace=workspace, cwd=cwd)
        expect(done.returncode == 0, f"start {chapter}", done)
        done, stubbed = learn("check", chapter, workspace=workspace, cwd=cwd)
        lines = done.stdout.splitlines()
        named = all(any(x.startswith(f"{e.id}  ") and "FAILED" in x for x in lines)
                    for e in exercises)
        expect(done.returncode == 1 and named, f"check {chapter} names every stub", done)
        for e in exercises:
            for more in ((), ("--more",)):
                done, _ = learn("hint", e.id, *more, workspace=workspace, cwd=cwd)
                expect(done.returncode == 0 and done.stdout.strip(), f"hint {e.id}", done)
            done, _ = learn("solution", e.id, workspace=workspace, cwd=cwd)
            expect(done.returncode == 0, f"solution {e.id}", done)
            path = workspace / e.file
            text = path.read_text()
            expect(text.count(ws.stub(e)) == 1, f"the stub of {e.id} in {path}", done)
            path.write_text(text.replace(ws.stub(e), done.stdout))
        done, solved = learn("check", chapter, workspace=workspace, cwd=cwd)
        expect(done.returncode == 0 and done.stdout.rstrip().endswith("all passed"),
               f"check {chapter} passes once solved", done)
        passed = []
        for m in (m for m in MILESTONES if m.after == chapter):
            done, took = learn("milestone", m.name, workspace=workspace, cwd=cwd)
            expect(done.returncode == 0, f"milestone {m.name}", done)
            passed.append(f"{m.name} passed ({took:.0f} s)")
        print(f"| {chapter} | {len(exercises)} | {stubbed:.1f} s | {solved:.1f} s | "
              f"{', '.join(passed)} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--to", default=MILESTONES[-1].after, choices=CHAPTERS,
                        help="the last chapter (default: the last milestone's)")
    parser.add_argument("--workspace", type=Path, help="default: a new temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="minifx-walk-") as tmp:
        workspace = (args.workspace or Path(tmp) / "workspace").resolve()
        walk(args.to, workspace, Path(tmp))
    print("the walk is done: every command did what a learner expects")


if __name__ == "__main__":
    main()
