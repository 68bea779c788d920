"""Mutation testing of every exercise: are the mutants of its function killed by its tests?

    .venv/bin/python scripts/mutation.py                 # every exercise
    .venv/bin/python scripts/mutation.py --chapter ch03
    .venv/bin/python scripts/mutation.py --exercise ch03.8
    .venv/bin/python scripts/mutation.py --sample 2 --seed 0

The mutants are cosmic-ray's (tests/learn/mutants.py says how they are made
and judged). Per chapter it prints a table (mutants, killed, survived, known
equivalent, score) and then each survivor as file:line and the mutated line.
The score is killed / (mutants - known equivalent - incompetent). A mutant
that runs past its timeout counts as killed: an infinite loop is a bug the
tests caught. The process lowers its own priority (nice 10) and runs one
mutant at a time; the exit code is 1 when a mutant that is not known
equivalent survived.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: tests.learn
from minifx.learn.exercises import CHAPTERS, EXERCISES, find_exercise  # noqa: E402
from tests.learn.mutants import (  # noqa: E402
    INCOMPETENT,
    KILLED,
    SURVIVED,
    load_equivalents,
    mutants_of,
    preload,
    run_tests,
    sample,
)

TIMEOUT_FACTOR = 4  # a mutant may take this many times the reference's run
MIN_TIMEOUT = 60.0
FIXED_TIMEOUT = 300.0


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", choices=CHAPTERS, help="only this chapter")
    parser.add_argument("--exercise", help="only this exercise, chNN.K")
    parser.add_argument("--sample", type=int, help="at most N mutants per exercise")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    parser.add_argument("--json", type=Path, help="also write every result to this file")
    parser.add_argument("--quiet", action="store_true", help="no line per mutant")
    parser.add_argument("--no-reference", action="store_true",
                        help="do not run the reference's tests first (the CI test: the "
                             "chapters' own runs show they pass); the timeout is then "
                             f"{FIXED_TIMEOUT:.0f} s")
    return parser.parse_args(argv)


def _exercises(args: argparse.Namespace) -> list:
    if args.exercise:
        return [find_exercise(args.exercise)]
    return [e for e in EXERCISES if args.chapter in (None, e.chapter)]


def run_exercise(exercise, count: int | None, seed: int, equivalents: dict,
                 quiet: bool, reference: bool = True) -> dict:
    """Every (sampled) mutant of one exercise: its outcome, and the reference's run."""
    mutants = mutants_of(exercise)
    if count is not None:  # a sample is drawn from the mutants that must die
        mutants = sample([m for m in mutants if m.key not in equivalents], count, seed)
    row = {"exercise": exercise.id, "qualname": exercise.qualname, "file": exercise.file,
           "mutants": []}
    if not mutants:
        return row
    preload(exercise)
    timeout = FIXED_TIMEOUT
    if reference:
        outcome, seconds = run_tests(exercise, None, timeout=600)
        row["reference"] = {"outcome": outcome, "seconds": round(seconds, 2)}
        if outcome != SURVIVED:  # the reference fails its tests: no verdict on mutants
            print(f"{exercise.id}: the reference does not pass its tests ({outcome})",
                  flush=True)
            return row
        timeout = max(MIN_TIMEOUT, TIMEOUT_FACTOR * seconds)
    killers: list[str] = []  # the tests that killed mutants so far run first
    for mutant in mutants:
        outcome, seconds = run_tests(exercise, mutant.source, timeout, killers)
        why = equivalents.get(mutant.key)
        row["mutants"].append({
            "operator": mutant.operator, "line": mutant.line, "original": mutant.original,
            "mutated": mutant.mutated, "outcome": outcome, "seconds": round(seconds, 2),
            "equivalent": why})
        if not quiet:
            print(f"  {exercise.id} {exercise.file}:{mutant.line} {outcome:<18} "
                  f"{mutant.mutated}", flush=True)
    return row


def _counts(row: dict) -> dict:
    results = row["mutants"]
    killed = sum(r["outcome"].startswith(KILLED) for r in results)
    survived = [r for r in results if r["outcome"] == SURVIVED]
    equivalent = sum(r["equivalent"] is not None for r in survived)
    incompetent = sum(r["outcome"] == INCOMPETENT for r in results)
    return {"mutants": len(results), "killed": killed, "survived": len(survived) - equivalent,
            "equivalent": equivalent, "incompetent": incompetent}


def _score(c: dict) -> str:
    judged = c["mutants"] - c["equivalent"] - c["incompetent"]
    return f"{100.0 * c['killed'] / judged:5.1f}%" if judged else "    -"


def table(chapter: str, rows: list[dict]) -> str:
    """The chapter's table and its survivors."""
    head = f"{'exercise':<9} {'function':<34} {'mutants':>7} {'killed':>6} {'survived':>8} " \
           f"{'equiv':>5} {'score':>6}"
    lines = [f"== {chapter}", head]
    total = dict.fromkeys(("mutants", "killed", "survived", "equivalent", "incompetent"), 0)
    for row in rows:
        c = _counts(row)
        for k in total:
            total[k] += c[k]
        lines.append(f"{row['exercise']:<9} {row['qualname'][:34]:<34} {c['mutants']:>7} "
                     f"{c['killed']:>6} {c['survived']:>8} {c['equivalent']:>5} {_score(c):>6}")
    lines.append(f"{chapter + ' all':<9} {'':<34} {total['mutants']:>7} {total['killed']:>6} "
                 f"{total['survived']:>8} {total['equivalent']:>5} {_score(total):>6}")
    for row in rows:
        if "reference" in row and row["reference"]["outcome"] != SURVIVED:
            lines.append(f"  {row['exercise']}: its reference fails its tests, not judged")
        for r in row["mutants"]:
            if r["outcome"] == SURVIVED:
                mark = f"   [equivalent: {r['equivalent']}]" if r["equivalent"] else ""
                lines.append(f"  survived {row['exercise']} {row['file']}:{r['line']}: "
                             f"{r['mutated']}    (was: {r['original']}){mark}")
            elif r["outcome"] == INCOMPETENT:
                lines.append(f"  incompetent {row['exercise']} {row['file']}:{r['line']}: "
                             f"{r['mutated']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    os.nice(10)
    equivalents = load_equivalents()
    exercises = _exercises(args)
    results: list[dict] = []
    for chapter in dict.fromkeys(e.chapter for e in exercises):
        rows = [run_exercise(e, args.sample, args.seed, equivalents, args.quiet,
                             not args.no_reference)
                for e in exercises if e.chapter == chapter]
        results += rows
        print(table(chapter, rows), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    bad = any(r["outcome"] == SURVIVED and not r["equivalent"]
              for row in results for r in row["mutants"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
