"""conv2d's algorithms side by side, on the 3x3 stride-1 shapes of ResNet-50.

    .venv/bin/python benchmarks/conv_variants.py            # im2col vs Winograd, and torch
    .venv/bin/python benchmarks/conv_variants.py --rounds 9

The two `tensor` paths (``numba_backend.WINOGRAD`` on and off; Winograd is
forced even below the backend's tile threshold, to show why it exists) run in one
process, interleaved call by call, so that machine noise hits both alike;
torch eager runs in a process of its own (it would otherwise share the
cores and the OpenMP runtime with numba). Medians over rounds; the load
average is printed with them, since other work on the machine moves every
figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SHAPES = [  # (batch, channels in, channels out, size)
    (1, 64, 64, 56), (1, 128, 128, 28), (1, 256, 256, 14), (1, 512, 512, 7),
    (8, 64, 64, 56), (8, 256, 256, 14),
]


def data(shape, seed):
    import numpy as np

    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def once(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run_tensor(rounds: int) -> dict:
    from tensor.backend.fast import backend as nb

    result = {}
    for n, c, o, s in SHAPES:
        x, w = data((n, c, s, s), 0), data((o, c, 3, 3), 1) * 0.1
        times: dict = {"im2col": [], "winograd": []}

        def conv(x=x, w=w):
            return nb.conv2d(x, w, None, (1, 1), (1, 1), (1, 1), 1)

        nb.WINOGRAD_MIN_TILES = 0  # Winograd even where the backend would not choose it
        for _ in range(3):
            for flag in (False, True):
                nb.WINOGRAD = flag
                conv()
        for _ in range(rounds * 5):
            for name, flag in (("im2col", False), ("winograd", True)):
                nb.WINOGRAD = flag
                times[name].append(once(conv))
        result[f"{n},{c},{o},{s}"] = {k: statistics.median(v) for k, v in times.items()}
    return result


def run_torch(rounds: int) -> dict:
    import torch

    result = {}
    with torch.no_grad():
        for n, c, o, s in SHAPES:
            x, w = torch.from_numpy(data((n, c, s, s), 0)), torch.from_numpy(
                data((o, c, 3, 3), 1) * 0.1)
            for _ in range(3):
                torch.nn.functional.conv2d(x, w, None, 1, 1)
            times = [once(lambda x=x, w=w: torch.nn.functional.conv2d(x, w, None, 1, 1))
                     for _ in range(rounds * 5)]
            result[f"{n},{c},{o},{s}"] = {"torch": statistics.median(times)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--side", choices=("tensor", "torch"))
    args = parser.parse_args()
    if args.side:
        fn = run_tensor if args.side == "tensor" else run_torch
        print(json.dumps(fn(args.rounds)))
        return
    merged: dict = {}
    load = os.getloadavg()[0]
    for _ in range(2):  # alternate the processes
        for side in ("tensor", "torch"):
            out = subprocess.run([sys.executable, __file__, "--side", side, "--rounds",
                                  str(args.rounds)], capture_output=True, text=True, check=True)
            for key, value in json.loads(out.stdout.splitlines()[-1]).items():
                for name, seconds in value.items():
                    merged.setdefault(key, {}).setdefault(name, []).append(seconds)
    print(f"load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end (2 cores)")
    print("| (n, c, o, size) | im2col | winograd | torch | im2col / torch | winograd / torch |")
    print("|---|---:|---:|---:|---:|---:|")
    for key, value in merged.items():
        med = {k: statistics.median(v) * 1e3 for k, v in value.items()}
        print(f"| {key} | {med['im2col']:.2f} ms | {med['winograd']:.2f} ms | "
              f"{med['torch']:.2f} ms | {med['im2col'] / med['torch']:.2f} | "
              f"{med['winograd'] / med['torch']:.2f} |")


if __name__ == "__main__":
    main()
