"""How capture costs grow with graph size: time per node for 1,000 to 100,000 nodes.

For each size, a model whose forward is a chain of ``n`` elementwise
operations is traced (``symbolic_trace``), then its GraphModule is
recompiled, printed (``str(graph)``) and deep-copied. Each step is timed
several times and the median is divided by the node count; linear growth
shows up as a flat time per node across sizes.

    .venv/bin/python benchmarks/capture.py [--sizes 1000,10000,100000] [--repeat 3]

The torch.fx side is added by registering another entry in ``SIDES``.
"""

from __future__ import annotations

import argparse
import copy
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

import minifx  # noqa: E402
import tensor  # noqa: E402
import tensor.nn as nn  # noqa: E402


class Chain(nn.Module):
    """``n`` elementwise operations in a row (add, mul, relu, repeat)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def forward(self, x):
        for _ in range(self.n // 3):
            x = x + 1.0
            x = x * 0.5
            x = tensor.relu(x)
        for _ in range(self.n % 3):
            x = x + 1.0
        return x


def minifx_side(n: int) -> dict[str, Callable[[], object]]:
    """The four timed steps for minifx on a chain of ``n`` nodes."""
    model = Chain(n)
    gm = minifx.symbolic_trace(model)
    return {
        "symbolic_trace": lambda: minifx.symbolic_trace(model),
        "recompile": gm.recompile,
        "str(graph)": lambda: str(gm.graph),
        "deepcopy": lambda: copy.deepcopy(gm),
    }


# name -> function building the timed steps for a size; the torch adapter adds "torch.fx".
SIDES: dict[str, Callable[[int], dict[str, Callable[[], object]]]] = {"minifx": minifx_side}


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``fn``; the cyclic GC is paused while timing, as timeit does."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return statistics.median(times)


def run(sizes: list[int], repeat: int, sides: list[str]) -> list[tuple[str, str, int, float]]:
    """Rows of (side, step, nodes, microseconds per node)."""
    rows = []
    for side in sides:
        for n in sizes:
            steps = SIDES[side](n)
            for step, fn in steps.items():
                rows.append((side, step, n, median_seconds(fn, repeat) / n * 1e6))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sides", default=",".join(SIDES))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = run(sizes, args.repeat, args.sides.split(","))
    print(f"{'side':<10}{'step':<16}" + "".join(f"{n:>12,}" for n in sizes) + "   growth")
    for side in args.sides.split(","):
        for step in dict.fromkeys(r[1] for r in rows if r[0] == side):
            per_node = [r[3] for r in rows if r[0] == side and r[1] == step]
            growth = per_node[-1] / per_node[0]
            print(f"{side:<10}{step:<16}" + "".join(f"{t:>10.2f}us" for t in per_node)
                  + f"   x{growth:.2f}")
    print(f"(microseconds per node, median of {args.repeat} runs, cyclic GC paused while timing;"
          " growth = last size / first size, 1.0 is linear)")


if __name__ == "__main__":
    main()
