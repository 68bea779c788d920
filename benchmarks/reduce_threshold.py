"""Benchmark: from what size should a reduction or an elementwise op use a second thread?

    .venv/bin/python benchmarks/reduce_threshold.py          # 3 rounds
    .venv/bin/python benchmarks/reduce_threshold.py --rounds 5

`tensor`'s reductions have a serial and a parallel kernel for each of their
two contiguous shapes: a whole array (``reduce_chunks_*``, partial sums per
chunk) and the rows of a 2-d array (``reduce_rows*``). Waking numba's threads
costs tens of microseconds, so below some size the serial kernel wins. This
script times both kernels of both shapes at sizes from 3e4 to 4e6 elements,
each variant in a fresh process (the way a user's first call meets idle
threads), alternating, and reports the median over rounds, the ratio parallel
/ serial, and the smallest size from which parallel wins at every larger size.
``PARALLEL_CHUNKS_MIN`` and ``PARALLEL_ROWS_MIN`` in
tensor/backend/_kernels/reduce.py are set from that line.

The elementwise ops split differently: ``numba_backend.in_ranges`` hands
half of the output to a persistent worker thread (woken by a lock) and
computes the other half itself. The ``add`` columns time a float32 add into
a preallocated output on one thread and split that way, which sets
``PARALLEL_MIN`` and ``_SPLIT`` in tensor/backend/numba_backend.py.

The table is written to ``lessons/_generated/reduce_threshold.md``.
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
OUT = ROOT / "lessons" / "_generated" / "reduce_threshold.md"
SIZES = [1 << k for k in range(15, 25)]  # 32768 ... 16777216
VARIANTS = ("chunks serial", "chunks parallel", "rows serial", "rows parallel",
            "add serial", "add parallel")
SHAPES = ("chunks", "rows", "add")


def worker(variant: str) -> None:
    import numpy as np

    sys.path.insert(0, str(HERE))
    from speed import median_seconds

    from tensor.backend._kernels import reduce as rd

    shape, mode = variant.split()
    results = {}
    for n in SIZES:
        a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        if shape == "add":
            from tensor.backend import numba_backend as nb
            from tensor.backend._kernels import elementwise as ew

            kernel, b, o = ew.zip_kernel(nb._SCALAR["add"]), a[::-1].copy(), np.empty_like(a)
            length, unit = np.array([n], np.int64), np.ones(1, np.int64)

            def part(lo, hi, kernel=kernel, o=o, a=a, b=b, length=length, unit=unit):
                kernel(o, lo, hi, length, a, 0, unit, b, 0, unit)

            def run(part=part, n=n, k=2 if mode == "parallel" else 1):
                nb.in_ranges(part, n, k)
        elif shape == "chunks":
            partial = np.empty(rd.partial_count(n), np.float32)
            kernel = rd.reduce_chunks_parallel if mode == "parallel" else rd.reduce_chunks_serial

            def run(kernel=kernel, partial=partial, a=a):
                kernel(0, partial, a)
        else:
            rows = a.reshape(-1, 1024)
            out = np.empty(rows.shape[0], np.float32)
            kernel = rd.reduce_rows if mode == "parallel" else rd.reduce_rows_serial

            def run(kernel=kernel, out=out, rows=rows):
                kernel(0, out, rows)
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
    lines = [f"Medians of {args.rounds} rounds, each kernel in its own process, written by "
             "`benchmarks/reduce_threshold.py` (a float32 sum: whole, or rows of 1024; a "
             "float32 add into a preallocated output, on one thread or split in two). " + load,
             "", "| elements | " + " | ".join(
                 f"{shape} serial | {shape} parallel | parallel / serial" for shape in SHAPES)
             + " |",
             "|---:" + "|---:|---:|---:" * len(SHAPES) + "|"]
    ratios: dict = {shape: {} for shape in SHAPES}
    for n in SIZES:
        cells = [f"{n:,}"]
        for shape in SHAPES:
            s = statistics.median(found[f"{shape} serial"][n])
            p = statistics.median(found[f"{shape} parallel"][n])
            ratios[shape][n] = p / s
            cells += [fmt(s), fmt(p), f"{p / s:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for shape in SHAPES:
        wins = [n for n in SIZES if all(ratios[shape][m] < 1 for m in SIZES if m >= n)]
        first = f"{min(wins):,} elements" if wins else "no size measured"
        lines.append(f"- {shape}: parallel wins from {first} on.")
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
