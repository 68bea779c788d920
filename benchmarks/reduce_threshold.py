"""Benchmark: from what size should an op share its work with a second thread?

    .venv/bin/python benchmarks/reduce_threshold.py          # 3 rounds
    .venv/bin/python benchmarks/reduce_threshold.py --rounds 5

The numba backend shares a contiguous elementwise op, a whole-array
reduction (its chunks), a last-dim reduction, softmax and layer_norm (their
rows) with the spinning workers of ``tensor/backend/kernels/spin.py``, from
``SPIN_MIN`` element-copies on (``numba_backend.py``). This script times
three of them through the backend, as a user calls them: a float32 add, a
whole-array sum (``chunks``) and the row sums of rows of 1024 (``rows``), on
this thread alone (``SPIN_MIN`` out of reach) and shared (``SPIN_MIN`` 1),
at sizes from 8,192 to 16,777,216 elements. Each variant runs in its own
process, alternating, and the calls of a sample run back to back, so the
worker is polling, as it is in a loop of ops. It reports the medians over
rounds, the ratio shared / serial, and the smallest size from which sharing
wins at every larger size; ``SPIN_MIN`` is set from the add's line, and
``_SHARED_CHUNKS`` (how many chunks a whole-array reduction needs before it
is shared) from the sum's.

The table is written to ``lessons/_generated/reduce_threshold.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "lessons" / "_generated" / "reduce_threshold.md"
SIZES = [1 << k for k in range(13, 25)]  # 8192 ... 16777216
VARIANTS = ("chunks serial", "chunks shared", "rows serial", "rows shared",
            "add serial", "add shared")
SHAPES = ("chunks", "rows", "add")


def worker(variant: str) -> None:
    import numpy as np

    sys.path.insert(0, str(HERE))
    from speed import median_seconds

    from tensor.backend.fast import backend as nb

    shape, mode = variant.split()
    nb.SPIN_MIN = 1 if mode == "shared" else 1 << 60
    nb._SHARED_CHUNKS = 2  # a whole-array sum shared from two chunks on, to find the line
    results = {}
    for n in SIZES:
        a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        if shape == "add":
            b = a[::-1].copy()

            def run(a=a, b=b):
                nb.binary("add", a, b)
        elif shape == "chunks":

            def run(a=a):
                nb.reduce("sum", a, (), False)
        else:
            rows = a.reshape(-1, 1024)

            def run(rows=rows):
                nb.reduce("sum", rows, (1,), False)
        if n == SIZES[0]:  # a core that has been idle runs slowly for ~0.3 s: warm both up
            start = time.perf_counter()
            while time.perf_counter() - start < 0.5:
                run()
        results[n] = median_seconds(run, 0.2)
    print(json.dumps(results))


def fmt(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    sys.path.insert(0, str(HERE))
    from speed import machine_load

    load = machine_load()
    found: dict = {v: {n: [] for n in SIZES} for v in VARIANTS}
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for r in range(args.rounds):
        order = VARIANTS[r % len(VARIANTS):] + VARIANTS[:r % len(VARIANTS)]
        for variant in order:
            done = subprocess.run([sys.executable, __file__, "--worker", variant], env=env,
                                  cwd=ROOT, capture_output=True, text=True, check=True)
            for n, t in json.loads(done.stdout.strip().splitlines()[-1]).items():
                found[variant][int(n)].append(t)
            print(f"round {r + 1}/{args.rounds}: {variant}", flush=True)
    lines = [f"Medians of {args.rounds} rounds, each variant in its own process, written by "
             "`benchmarks/reduce_threshold.py` (a float32 add, a whole-array sum and row "
             "sums of rows of 1024, through the numba backend, on one thread or shared "
             "with the spinning worker). " + load,
             "", "| elements | " + " | ".join(
                 f"{shape} serial | {shape} shared | shared / serial" for shape in SHAPES)
             + " |",
             "|---:" + "|---:|---:|---:" * len(SHAPES) + "|"]
    ratios: dict = {shape: {} for shape in SHAPES}
    for n in SIZES:
        cells = [f"{n:,}"]
        for shape in SHAPES:
            s = statistics.median(found[f"{shape} serial"][n])
            p = statistics.median(found[f"{shape} shared"][n])
            ratios[shape][n] = p / s
            cells += [fmt(s), fmt(p), f"{p / s:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for shape in SHAPES:
        wins = [n for n in SIZES if all(ratios[shape][m] < 1 for m in SIZES if m >= n)]
        first = f"{min(wins):,} elements" if wins else "no size measured"
        lines.append(f"- {shape}: sharing wins from {first} on.")
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
