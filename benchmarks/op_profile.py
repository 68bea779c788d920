"""Where does a model's forward pass spend its time? A per-op profile of `tensor`.

    .venv/bin/python benchmarks/op_profile.py                 # ResNet-50, batch 1
    .venv/bin/python benchmarks/op_profile.py --model vit --batch 8

Every public function of the active backend module (``conv2d``, ``binary``,
``batch_norm``, ...) is wrapped in a timer, and the model runs a few warmed
forward passes. The table gives, per backend function (and per first
argument for ``unary``/``binary``/``reduce``, which take the op name first),
the calls per forward, the median milliseconds per forward and the share of
the total. The time outside the backend (argument checks, wrapping, module
calls) is the last row. The timers cost about a microsecond per call, so the
profile is a picture of where time goes, not a replacement for speed.py.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from nn_models import fill_weights, resnet50, vit_block  # noqa: E402

import tensor  # noqa: E402
from tensor import backend  # noqa: E402

_NAMED = ("unary", "binary", "compare", "reduce")  # functions whose first argument is an op name
_HELPERS = ("in_ranges", "in_parallel")  # called inside the others: not timed twice
BY_SHAPE = False


def describe(name: str, args: tuple) -> str:
    """The table's row for one call: the op name, and for conv2d its shapes."""
    if name in _NAMED and args and isinstance(args[0], str):
        return f"{name} {args[0]}"
    if name == "conv2d" and BY_SHAPE:
        x, w, _, stride = args[:4]
        return f"conv2d {tuple(w.shape)} s{stride[0]} on {tuple(x.shape[1:])}"
    return name


def instrument(module, totals: dict, counts: dict) -> None:
    """Replace every public function of ``module`` by a timed wrapper (in place)."""
    for name in dir(module):
        fn = getattr(module, name)
        own = getattr(fn, "__module__", "") == module.__name__
        if name.startswith("_") or name in _HELPERS or not callable(fn) or not own:
            continue

        def timed(*args, _fn=fn, _name=name, **kwargs):
            key = describe(_name, args)
            start = time.perf_counter()
            try:
                return _fn(*args, **kwargs)
            finally:
                totals[key] += time.perf_counter() - start
                counts[key] += 1

        setattr(module, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("resnet50", "vit"), default="resnet50")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--by-shape", action="store_true", help="one row per conv2d shape")
    args = parser.parse_args()
    global BY_SHAPE
    BY_SHAPE = args.by_shape

    if args.model == "resnet50":
        model, shape = resnet50(tensor.nn), (3, 224, 224)
    else:
        model, shape = vit_block(tensor.nn, tensor.nn.functional), (197, 768)
    model = model.eval()
    fill_weights(model, tensor)
    x = tensor.from_numpy(np.random.default_rng(0).standard_normal(
        (args.batch, *shape)).astype(np.float32))
    for _ in range(3):
        model(x)  # compile and warm

    plain = []
    for _ in range(args.runs):
        start = time.perf_counter()
        model(x)
        plain.append(time.perf_counter() - start)

    per_run: list[dict] = []
    walls = []
    counts: dict = defaultdict(int)
    for _ in range(args.runs):
        totals: dict = defaultdict(float)
        counts = defaultdict(int)
        instrument(backend.ops(), totals, counts)
        start = time.perf_counter()
        model(x)
        walls.append(time.perf_counter() - start)
        per_run.append(totals)
        importlib_reload_backend()

    keys = sorted({k for t in per_run for k in t},
                  key=lambda k: -statistics.median(t.get(k, 0.0) for t in per_run))
    wall = statistics.median(walls)
    print(f"{args.model}, batch {args.batch}: {statistics.median(plain) * 1e3:.2f} ms per "
          f"forward without timers, {wall * 1e3:.2f} ms with (medians of {args.runs})")
    print("| backend function | calls | ms | share |\n|---|---:|---:|---:|")
    inside = 0.0
    for k in keys:
        ms = statistics.median(t.get(k, 0.0) for t in per_run) * 1e3
        inside += ms
        print(f"| {k} | {counts.get(k, 0)} | {ms:.2f} | {ms / (wall * 1e3):.0%} |")
    rest = wall * 1e3 - inside
    print(f"| outside the backend | | {rest:.2f} | {rest / (wall * 1e3):.0%} |")


_ORIGINAL: dict = {}


def importlib_reload_backend() -> None:
    """Put the backend's own functions back (the next run wraps them afresh)."""
    module = backend.ops()
    for name, fn in _ORIGINAL.items():
        setattr(module, name, fn)


def _remember() -> None:
    module = backend.ops()
    for name in dir(module):
        if not name.startswith("_"):
            _ORIGINAL[name] = getattr(module, name)


if __name__ == "__main__":
    _remember()
    main()
