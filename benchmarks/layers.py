"""Benchmark: what each layer of ``tensor``'s backend costs or buys, and a before/after.

    .venv/bin/python benchmarks/layers.py --quick
    .venv/bin/python benchmarks/layers.py --before ../old-checkout --groups overhead sizes

Columns, each a process of its own running ``benchmarks/speed.py``'s cases for
the tensor side (so the same cases as the speed tables):

- ``fast``: this checkout as it comes (the fast layer on);
- ``kernels``: this checkout with ``TENSOR_FAST=0``, the kernels layer alone;
- ``before`` (with ``--before DIR``): another checkout of the project, for a
  change's before-and-after table.

The processes alternate round after round in rotating order, as in
``speed.py``, so that a busy moment of the machine hits every column; the
table gives medians over rounds, and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SPEED = HERE / "speed.py"
GROUPS = ("overhead", "scalars", "sizes", "conv", "models")


def run(column: str, checkout: Path, group: str, quick: bool) -> dict[str, float]:
    """{case: seconds} of the tensor side of ``group``, run from ``checkout``."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    if column == "kernels":
        env["TENSOR_FAST"] = "0"
    cmd = [sys.executable, str(SPEED), "--worker", "tensor", group] + (["--quick"] * quick)
    done = subprocess.run(cmd, env=env, cwd=checkout, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{column}/{group} failed:\n{done.stderr[-3000:]}")
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    return {row["case"]: row["seconds"] for row in rows if "seconds" in row}


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout, for a before column")
    parser.add_argument("--groups", nargs="+", choices=GROUPS, default=list(GROUPS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    columns = {"fast": ROOT, "kernels": ROOT}
    if args.before:
        columns = {"before": args.before.resolve(), **columns}
    names = list(columns)
    for group in args.groups:
        times: dict[tuple[str, str], list[float]] = {}
        for r in range(args.rounds):
            for column in names[r % len(names):] + names[:r % len(names)]:
                for case, seconds in run(column, columns[column], group, args.quick).items():
                    times.setdefault((case, column), []).append(seconds)
            print(f"  {group}: round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
        head = [*names, *(["fast / before"] if args.before else []), "kernels / fast"]
        print(f"\n{group} (medians of {args.rounds} rounds)\n")
        print("| case | " + " | ".join(head) + " |")
        print("|---" + "|---:" * len(head) + "|")
        for case in dict.fromkeys(c for c, _ in times):
            t = {c: statistics.median(times[(case, c)]) if (case, c) in times else None
                 for c in names}
            cells = [fmt(t[c]) for c in names]
            if args.before:
                cells.append(f"{t['fast'] / t['before']:.2f}" if t["before"] else "")
            cells.append(f"{t['kernels'] / t['fast']:.2f}" if t["fast"] else "")
            print(f"| {case} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
