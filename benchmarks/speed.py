"""Benchmark: what a user of `tensor` gets, against torch eager, torch.compile and NumPy.

    .venv/bin/python benchmarks/speed.py --quick     # every case, a few minutes
    .venv/bin/python benchmarks/speed.py             # more rounds and repeats
    .venv/bin/python benchmarks/speed.py --groups overhead compiled   # some groups only

Every *side* (tensor on its numba kernels, torch eager as it comes, torch
with ``THP_MEM_ALLOC_ENABLE=1``, plain NumPy) runs in a process of its own,
the way a user runs one of them: two libraries in one process share (and
fight over) the same two cores, OpenMP runtime and allocator. The processes
alternate, round after round, in rotating order, so that a busy moment of
the machine hits every side. Inside a process each case is timed as the
median of many calls (small ones in batches), after a warm-up; the table
gives the median over rounds, and the ratio tensor / torch.

Before timing, each case records a fingerprint of its result (the sum of
its elements in float64); the parent checks that every side agrees, so a
fast wrong answer cannot hide in the table.

The tables are printed and written, as Markdown, to
``lessons/_generated/speed_<group>.md``; the lessons include them.
``benchmarks/kernels.py`` is an older, in-process second opinion.
"""

from __future__ import annotations

import argparse
import functools
import json
import operator
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "lessons" / "_generated"

# side -> (library it imports, extra environment)
SIDES = {
    "tensor": ("tensor", {}),
    "torch": ("torch", {}),
    "torch THP": ("torch", {"THP_MEM_ALLOC_ENABLE": "1"}),
    "numpy": ("numpy", {}),
}
SIZES = (10**5, 10**6, 10**7)
SCALAR_SIZES = (10**3, 10**4, 10**5, 10**6, 10**7)
UNARY = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "gelu")
BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "gt")
POSITIVE = ("log", "sqrt", "rsqrt", "pow")  # ops given positive inputs


# ---- timing -------------------------------------------------------------------
# Seconds each case runs unmeasured before it is timed. A core that has been idle
# (while the previous case's inputs were made, or the process started) runs a
# worker thread's share slowly for a while: measured in one process, a 1e5 add
# took 24 us right after a 1 s pause and settled at 15 us after 0.3 s. torch's
# OpenMP threads meet the same; the first case of a process read 10 to 20%
# slow for both libraries. Every side gets the same warm-up.
WARM_UP = 0.1


def median_seconds(fn, budget: float, min_samples: int = 5, warm_up: float = WARM_UP) -> float:
    """Median seconds per call of ``fn``, calls batched so a sample lasts >= 200 us,
    after ``warm_up`` seconds of unmeasured calls."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    for _ in range(int(min(warm_up / once, 1e5))):
        fn()
    batch = max(1, int(2e-4 / once))
    samples = int(min(200, max(min_samples, budget / (once * batch))))
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - start) / batch)
    return statistics.median(times)


def fingerprint(value) -> float:
    import numpy as np

    if hasattr(value, "detach"):
        value = value.detach()
    return float(np.asarray(value.numpy() if hasattr(value, "numpy") else value,
                            dtype=np.float64).sum())


# ---- each library, spelled the same way -----------------------------------------
class Lib:
    """The few things the cases need, for ``tensor``, ``torch`` or NumPy."""

    def __init__(self, name: str) -> None:
        import numpy as np

        self.name = name
        self.np = np
        if name == "numpy":
            self.mod = np
            self.F = None
        else:
            self.mod = __import__(name)
            self.F = self.mod.nn.functional

    def array(self, a):
        return a if self.name == "numpy" else self.mod.from_numpy(a)

    def unary(self, op):
        np = self.np
        if self.name != "numpy":
            if op in ("relu", "gelu"):
                return getattr(self.F, op)
            return getattr(self.mod, op)
        return {
            "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
            "rsqrt": lambda x: 1 / np.sqrt(x), "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
            "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0), "gelu": None,
        }[op]

    def binary(self, op):
        if self.name != "numpy":
            return getattr(self.mod, op)
        return {"add": self.np.add, "sub": self.np.subtract, "mul": self.np.multiply,
                "div": self.np.divide, "pow": self.np.power, "maximum": self.np.maximum,
                "minimum": self.np.minimum, "gt": self.np.greater}[op]

    def reduce(self, op):
        return {"sum all": lambda x: x.sum(), "mean all": lambda x: x.mean(),
                "amax all": (lambda x: x.max()) if self.name == "numpy" else
                (lambda x: self.mod.amax(x)),
                "sum dim -1": lambda x: x.sum(-1),
                "argmax dim -1": (lambda x: x.argmax(-1))}[op]

    def softmax(self, x):
        if self.name == "numpy":
            e = self.np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
        return self.mod.softmax(x, dim=-1)

    def layer_norm(self, x, w, b):
        if self.name == "numpy":
            mu = x.mean(-1, keepdims=True)
            var = ((x - mu) ** 2).mean(-1, keepdims=True)
            return (x - mu) / self.np.sqrt(var + 1e-5) * w + b
        return self.F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def data(shape, positive=False, seed=0):
    """Random float32 data at a 64-byte aligned address. Every library reads it in place
    (``from_numpy``). Where malloc happens to put an array decides whether a
    vector loop's loads straddle cache lines, which moved a row's time from
    one process to the next by far more than the noise."""
    import numpy as np

    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    a = np.abs(a) + 0.5 if positive else a
    raw = np.empty(a.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    aligned = raw[start:start + a.nbytes].view(np.float32).reshape(a.shape)
    aligned[...] = a
    return aligned


def size_name(n: int) -> str:
    return f"1e{len(str(n)) - 1}"


# ---- the groups of cases -----------------------------------------------------------
# Each group is run by ``run_group(group, lib, quick)`` in a worker process and
# yields (case, column, seconds, fingerprint).
def overhead_cases(lib: Lib, quick: bool):
    """Per-op overhead: a thousand elements, where the call costs more than the work."""
    n = 1000
    x, y = lib.array(data(n)), lib.array(data(n, seed=1))
    p = lib.array(data(n, positive=True))
    cases = {
        "add x + y": lambda: x + y,
        "mul x * y": lambda: x * y,
        "x * 2.0": lambda: x * 2.0,
        "x + 1.0": lambda: x + 1.0,
        "2.0 * x": lambda: 2.0 * x,
        "x / 3.0": lambda: x / 3.0,
        "sum": lambda: x.sum(),
        "mean": lambda: x.mean(),
        "relu": lambda: lib.unary("relu")(x),
        "sigmoid": lambda: lib.unary("sigmoid")(x),
        "sqrt": lambda: lib.unary("sqrt")(p),
        "x > 0.0": lambda: x > 0.0,
        "softmax (10, 100)": (lambda s: lambda: lib.softmax(s))(
            lib.array(data((10, 100)))),
        "matmul (32, 32)": (lambda a: lambda: a @ a)(lib.array(data((32, 32)))),
    }
    for name, fn in cases.items():
        yield f"{name}, 1e3", fn


def scalar_cases(lib: Lib, quick: bool):
    """Python-scalar operands against a tensor operand of the same size."""
    for n in SCALAR_SIZES:
        x, y = lib.array(data(n)), lib.array(data(n, seed=1))
        yield f"x * y, {size_name(n)}", lambda x=x, y=y: x * y
        yield f"x * 2.0, {size_name(n)}", lambda x=x: x * 2.0
        yield f"x + 1.0, {size_name(n)}", lambda x=x: x + 1.0


def size_cases(lib: Lib, quick: bool):
    """Every elementwise op, the reductions, softmax and layer_norm at 1e5 to 1e7."""
    for n in SIZES:
        s = size_name(n)
        a, b = data(n), data(n, seed=1)
        pa, pb = data(n, positive=True), data(n, positive=True, seed=1)
        for op in UNARY:
            fn = lib.unary(op)
            if fn is not None:
                x = lib.array(pa if op in POSITIVE else a)
                yield f"{op}, {s}", lambda fn=fn, x=x: fn(x)
        for op in BINARY:
            fn = lib.binary(op)
            x, y = (lib.array(pa), lib.array(pb)) if op in POSITIVE else (
                lib.array(a), lib.array(b))
            yield f"{op}, {s}", lambda fn=fn, x=x, y=y: fn(x, y)
        # A number as the exponent, as users write it: 2.5 runs pow, 2 a multiplication.
        x = lib.array(pa)
        yield f"x ** 2.5, {s}", lambda x=x: x ** 2.5
        yield f"x ** 2, {s}", lambda x=x: x ** 2
        rows = lib.array(a.reshape(-1, 1000))
        for op in ("sum all", "mean all", "amax all", "sum dim -1", "argmax dim -1"):
            fn = lib.reduce(op)
            yield f"{op}, {s}", lambda fn=fn, x=rows: fn(x)
        yield f"softmax (n/1000, 1000), {s}", lambda x=rows: lib.softmax(x)
        w, bias = lib.array(data(1000, positive=True, seed=2)), lib.array(data(1000, seed=3))
        yield f"layer_norm (n/1000, 1000), {s}", lambda x=rows, w=w, b=bias: lib.layer_norm(
            x, w, b)


def conv_cases(lib: Lib, quick: bool):
    if lib.name == "numpy":
        return
    F = lib.F
    for name, xs, ws, stride, pad in (
        ("conv2d 3x3 (1,64,56,56)", (1, 64, 56, 56), (64, 64, 3, 3), 1, 1),
        ("conv2d k7 s2 stem (1,3,224,224)", (1, 3, 224, 224), (64, 3, 7, 7), 2, 3),
        ("conv2d k7 s2 stem (8,3,224,224)", (8, 3, 224, 224), (64, 3, 7, 7), 2, 3),
    ):
        x, w = lib.array(data(xs)), lib.array(data(ws) * 0.1)
        yield name, lambda x=x, w=w, stride=stride, pad=pad: F.conv2d(x, w, None, stride, pad)


def model_cases(lib: Lib, quick: bool):
    if lib.name == "numpy":
        return
    sys.path.insert(0, str(HERE))
    from nn_models import fill_weights, resnet50, vit_block

    for name, build, shape in (
        ("ResNet-50", lambda: resnet50(lib.mod.nn), (3, 224, 224)),
        ("ViT-B block", lambda: vit_block(lib.mod.nn, lib.F), (197, 768)),
    ):
        model = build().eval()
        fill_weights(model, lib.mod)
        for batch in (1, 8):
            x = lib.array(data((batch, *shape)))
            if lib.name == "torch":
                import torch

                def run(model=model, x=x):
                    with torch.no_grad():
                        return model(x)
            else:
                def run(model=model, x=x):
                    return model(x)
            yield f"{name}, batch {batch}", run


def chain(lib: Lib):
    def fn(x):
        return ((lib.mod.sigmoid(x) * -1) * 2) + 1

    return fn


def affine_chain(lib: Lib):
    """The chain without its sigmoid: nothing but memory traffic, so it shows how
    near the copy bandwidth a fused kernel gets when its arithmetic is free."""
    def fn(x):
        return ((x * -1) * 2) + 1

    return fn


def softmax_primitives(lib: Lib):
    """Softmax as a user writes it from primitives: two reductions, three elementwise ops."""
    def fn(x):
        m = x.amax(-1, keepdim=True)
        e = (x - m).exp()
        return e / e.sum(-1, keepdim=True)

    return fn


def layer_norm_primitives(lib: Lib):
    def fn(x, w, b):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / lib.mod.sqrt(var + 1e-5) * w + b

    return fn


# Each compiled workload: (builder of the function, inputs at n elements). The
# reductions work on rows of 1000, as in the sizes table.
WORKLOADS = {
    "chain": (chain, lambda lib, n: (lib.array(data(n)),)),
    "affine chain": (affine_chain, lambda lib, n: (lib.array(data(n)),)),
    "softmax from primitives": (softmax_primitives,
                                lambda lib, n: (lib.array(data((n // 1000, 1000))),)),
    "layer_norm from primitives": (layer_norm_primitives, lambda lib, n: (
        lib.array(data((n // 1000, 1000))), lib.array(data(1000, positive=True, seed=2)),
        lib.array(data(1000, seed=3)))),
}


def compiled_cases(lib: Lib, quick: bool):
    """Each workload eager and compiled (minifx numba / torch.compile), after warm-up."""
    if lib.name == "numpy":
        return
    for workload, (build, make) in WORKLOADS.items():
        fn = build(lib)
        if lib.name == "tensor":
            import minifx

            compiled = minifx.compile(fn, backend="numba")
        else:
            import torch

            compiled = torch.compile(fn, backend="inductor")
        for n in SIZES:
            args = make(lib, n)
            case = f"{workload}, {size_name(n)}"
            if lib.name == "tensor":
                import numpy as np

                # The copy the table divides by, timed seconds before the kernel in the
                # same process: this shared machine's memory bandwidth moves with its
                # neighbours' load (a copy of 1e7 floats read 19 to 38 GB/s across runs).
                source, out = data(n), np.empty(n, np.float32)
                yield f"copy before {case}", ("bytes", 8 * n,
                                               lambda o=out, a=source: prange_copy()(o, a))
                big_out, big = memory_copy_arrays()
                yield f"memory copy before {case}", (
                    "bytes", 8 * big.size, lambda o=big_out, a=big: prange_copy()(o, a))
            yield case, lambda args=args, fn=fn: fn(*args)
            start = time.perf_counter()
            try:
                compiled(*args)
            except Exception as error:  # noqa: BLE001  (reported, not hidden)
                yield case, error
                continue
            yield f"compile time {workload}, {size_name(n)}", ("compiled",
                                                               time.perf_counter() - start)
            yield case, ("compiled", lambda args=args, c=compiled: c(*args))


@functools.cache
def prange_copy():
    """``out[:] = a`` as a numba ``prange`` loop: the copy the bandwidth figures use."""
    import numba

    @numba.njit(parallel=True, nogil=True)
    def copy(out, a):
        for i in numba.prange(a.size):
            out[i] = a[i]

    return copy


def last_level_cache_bytes(caches: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int:
    """The size of this machine's largest cache (Linux reports it under /sys), 32 MiB if unknown."""
    sizes = []
    for index in caches.glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KM")) * scale)
    return max(sizes, default=32 << 20)


@functools.cache
def memory_copy_arrays():
    """(out, source) for the copy that measures memory, not cache: STREAM's rule, each
    array four times the largest cache, so no part of it is still cached when it is
    read again."""
    import numpy as np

    n = memory_copy_elements()
    return np.empty(n, np.float32), np.full(n, 0.5, np.float32)


def memory_copy_elements() -> int:
    """float32 elements in each array of the memory copy: 4 x the cache's bytes / 4 bytes."""
    return last_level_cache_bytes()


def memory_copy_name() -> str:
    mib = 4 * last_level_cache_bytes() >> 20
    return f"copy, memory (two arrays of {mib} MiB, 4x the largest cache)"


def bandwidth_cases(lib: Lib, quick: bool):
    """A parallel copy and a triad (numba prange, preallocated): the machine's bandwidth."""
    if lib.name != "tensor":
        return
    import numba
    import numpy as np

    copy = prange_copy()

    @numba.njit(parallel=True, nogil=True)
    def triad(out, a, b, s):
        for i in numba.prange(a.size):
            out[i] = a[i] + s * b[i]

    from tensor.backend.kernels import scalar

    @numba.njit(parallel=True, nogil=True, error_model="numpy", fastmath={"contract"})
    def chain_arithmetic(out, a):
        """The chain's own loop at its best: prange, preallocated output. How fast the
        arithmetic (sigmoid's exp and division) lets any kernel of it go."""
        for i in numba.prange(a.size):
            out[i] = ((scalar.sigmoid(a[i]) * np.float32(-1.0)) * np.float32(2.0)) \
                + np.float32(1.0)

    big_out, big = memory_copy_arrays()
    yield memory_copy_name(), (
        "bytes", 8 * big.size, lambda o=big_out, a=big: copy(o, a))
    for n in SIZES:
        a, b, out = data(n), data(n, seed=1), np.empty(n, np.float32)
        yield f"copy, {size_name(n)}", ("bytes", 8 * n, lambda o=out, a=a: copy(o, a))
        yield f"triad, {size_name(n)}", ("bytes", 12 * n,
                                         lambda o=out, a=a, b=b: triad(o, a, b, np.float32(3)))
        yield f"chain arithmetic, {size_name(n)}", ("bytes", 8 * n,
                                                    lambda o=out, a=a: chain_arithmetic(o, a))


GROUPS = {
    "overhead": overhead_cases,
    "scalars": scalar_cases,
    "sizes": size_cases,
    "conv": conv_cases,
    "models": model_cases,
    "bandwidth": bandwidth_cases,  # before "compiled": its table uses the copy bandwidth
    "compiled": compiled_cases,
}
# Which sides a group runs on.
GROUP_SIDES = {
    "overhead": ("tensor", "torch", "numpy"),
    "scalars": ("tensor", "torch", "torch THP", "numpy"),
    "sizes": ("tensor", "torch", "torch THP", "numpy"),
    "conv": ("tensor", "torch", "torch THP"),
    "models": ("tensor", "torch", "torch THP"),
    "compiled": ("tensor", "torch", "torch THP"),
    "bandwidth": ("tensor",),
}


# ---- the worker: one side, one group, one process ------------------------------
def worker(side: str, group: str, quick: bool) -> None:
    lib = Lib(SIDES[side][0])
    budget = {"models": 1.0, "conv": 0.4}.get(group, 0.15) * (1 if quick else 3)
    results = []
    for case, item in GROUPS[group](lib, quick):
        column = side
        extra = {}
        if isinstance(item, Exception):
            results.append({"case": case, "column": f"{side} compiled",
                            "error": f"{type(item).__name__}: {str(item)[:300]}"})
            continue
        if isinstance(item, tuple) and item[0] == "bytes":
            _, extra["bytes"], item = item
        elif isinstance(item, tuple) and isinstance(item[1], float):
            results.append({"case": case, "column": f"{side} {item[0]}", "seconds": item[1]})
            continue
        elif isinstance(item, tuple):
            column = f"{side} {item[0]}"
            item = item[1]
        value = item()
        seconds = median_seconds(item, budget, 3 if group == "models" else 5)
        results.append({"case": case, "column": column, "seconds": seconds,
                        "check": fingerprint(value), **extra})
    print(json.dumps(results))


# ---- the parent: rounds of alternating processes ------------------------------------
def run_worker(side: str, group: str, quick: bool, env_extra: dict) -> list:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **SIDES[side][1], **env_extra)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", side, group]
    done = subprocess.run(cmd + (["--quick"] if quick else []), env=env, cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"worker {side}/{group} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def collect(group: str, rounds: int, quick: bool, env_extra: dict) -> dict:
    """{(case, column): [one result per round]} for one group."""
    sides = GROUP_SIDES[group]
    table: dict = {}
    for r in range(rounds):
        order = sides[r % len(sides):] + sides[:r % len(sides)]
        for side in order:
            start = time.perf_counter()
            for row in run_worker(side, group, quick, env_extra):
                table.setdefault((row["case"], row["column"]), []).append(row)
            print(f"  {group}: round {r + 1}/{rounds}, {side} "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)
    return table


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def med(rows: list | None, key: str = "seconds") -> float | None:
    values = [r[key] for r in rows or [] if key in r]
    return statistics.median(values) if values else None


def check(group: str, table: dict) -> list[str]:
    """Cases whose result differs between sides (fingerprints more than 1e-3 apart)."""
    problems = []
    cases = dict.fromkeys(case for case, _ in table)
    for case in cases:
        prints = {col: med(rows, "check") for (c, col), rows in table.items()
                  if c == case and med(rows, "check") is not None}
        if len(prints) < 2:
            continue
        values = list(prints.values())
        scale = max(1.0, *(abs(v) for v in values))
        if max(values) - min(values) > 1e-3 * scale:
            problems.append(f"{group}: {case}: results differ between sides {prints}")
    return problems


# Targets from issue 14: (group, case predicate, column pair, limit)
def target_for(group: str, case: str) -> float | None:
    if group == "overhead" and case.split(",")[0] in ("add x + y", "x * 2.0", "sum"):
        return 2.0
    if group in ("scalars", "sizes") and (", 1e5" in case or ", 1e6" in case):
        return 1.2
    if group == "models" and "batch 1" in case:
        return 1.0
    if group == "conv" and case.startswith("conv2d 3x3"):
        return 1.2
    return None


def ratio(a, b) -> str:
    return f"{a / b:.2f}" if a is not None and b else ""


def simple_table(group: str, table: dict, busy: bool = False) -> list[str]:
    sides = GROUP_SIDES[group]
    has_thp = "torch THP" in sides
    head = ["case", *sides, "tensor / torch"] + (["tensor / torch THP"] if has_thp else [])
    # Python-scalar operands against a tensor operand: the issue asks them as fast.
    against_tensor = group == "scalars"
    if against_tensor:
        head.append("tensor / tensor x * y")
    head.append("target")
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 2) + "|---|"]
    for case in dict.fromkeys(c for c, _ in table):
        t = {side: med(table.get((case, side))) for side in sides}
        r = t["tensor"] / t["torch"] if t["tensor"] and t["torch"] else None
        cells = [case, *(fmt(t[s]) for s in sides), ratio(t["tensor"], t["torch"])]
        if has_thp:
            cells.append(ratio(t["tensor"], t["torch THP"]))
        if against_tensor:
            size = case.split(", ")[1]
            cells.append(ratio(t["tensor"], med(table.get((f"x * y, {size}", "tensor")))))
        goal = target_for(group, case)
        if goal is None:
            cells.append("")
        elif busy:
            cells.append(f"<= {goal} (not judged)")
        else:
            cells.append(f"<= {goal}" + ("" if r and r <= goal else " missed"))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def gbs(rows: list) -> float:
    """GB/s of a "bytes" case: the bytes it moves over its median time."""
    return rows[0]["bytes"] / med(rows) / 1e9


def gbs_beside(table: dict, case: str) -> float | None:
    """GB/s of a copy timed in the compiled group's own process, if it was."""
    rows = table.get((case, "tensor"))
    return gbs(rows) if rows else None


def share_of(moved: float | None, copy: float | None) -> str:
    return f"{moved / copy:.0%} ({copy:.1f})" if moved and copy else ""


def bandwidth(found: dict) -> dict:
    """{"copy, 1e6": GB/s, ...} from the bandwidth group, if it ran."""
    return {case: gbs(rows) for (case, _), rows in found.get("bandwidth", {}).items()}


# Issue 14's targets for the compiled chain: (limit on minifx / torch eager, on
# minifx / torch.compile, least share of the memory copy), by size; None where
# it names none.
CHAIN_TARGETS = {10**5: (None, 1.0, None), 10**6: (0.5, 1.0, 0.7), 10**7: (None, 1.0, 0.7)}


def chain_verdict(n: int, eager: float | None, inductor: float | None,
                  share: float | None, busy: bool) -> str:
    """The target cell of a chain row: each limit the issue sets at this size, and
    whether it was met."""
    most_eager, most_inductor, least_share = CHAIN_TARGETS[n]
    parts = []
    for label, value, limit, met in (
            (f"torch eager <= {most_eager}", eager, most_eager, operator.le),
            (f"torch.compile <= {most_inductor}", inductor, most_inductor, operator.le),
            (f"memory copy >= {least_share or 0:.0%}", share, least_share, operator.ge)):
        if limit is not None:
            missed = not busy and (value is None or not met(value, limit))
            parts.append(label + (" missed" if missed else ""))
    return "; ".join(parts) + (" (not judged)" if busy and parts else "")


def compiled_table(table: dict, gbs_of: dict, busy: bool = False) -> list[str]:
    copy_gbs = {case.split(", ")[1]: gbs for case, gbs in gbs_of.items()
                if case.startswith("copy, 1e")}
    memory_gbs = gbs_of.get(memory_copy_name())
    head = ["case", "tensor eager", "minifx numba", "torch eager", "torch THP eager",
            "torch.compile", "torch.compile THP", "minifx / torch eager",
            "minifx / torch.compile", "minifx GB/s", "% of memory copy (GB/s)",
            "% of same-size copy (GB/s)", "target"]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 2) + "|---|"]
    errors = []
    for workload in WORKLOADS:
        for n in SIZES:
            s = size_name(n)
            case = f"{workload}, {s}"
            get = {col: med(table.get((case, col))) for col in (
                "tensor", "tensor compiled", "torch", "torch THP", "torch compiled",
                "torch THP compiled")}
            for col in ("tensor compiled", "torch compiled"):
                for row in table.get((case, col), []):
                    if "error" in row:
                        errors.append(f"{col} at {s}: {row['error']}")
            ours = get["tensor compiled"]
            # Each workload reads its input once and writes its result once (float32).
            moved = 8 * n / ours / 1e9 if ours else None
            same = gbs_beside(table, f"copy before {case}") or copy_gbs.get(s)
            memory = gbs_beside(table, f"memory copy before {case}") or memory_gbs
            eager = get["torch"] and ours and ours / get["torch"]
            inductor = get["torch compiled"] and ours and ours / get["torch compiled"]
            share = moved / memory if moved and memory else None
            verdict = (chain_verdict(n, eager, inductor, share, busy)
                       if workload == "chain" else "")
            lines.append("| " + " | ".join([
                case, fmt(get["tensor"]), fmt(ours), fmt(get["torch"]), fmt(get["torch THP"]),
                fmt(get["torch compiled"]), fmt(get["torch THP compiled"]),
                ratio(ours, get["torch"]), ratio(ours, get["torch compiled"]),
                f"{moved:.1f}" if moved else "", share_of(moved, memory), share_of(moved, same),
                verdict]) + " |")
    lines += ["", "| first call (trace + compile) | minifx numba | torch.compile (Inductor) |",
              "|---|---:|---:|"]
    for workload in WORKLOADS:
        for n in SIZES:
            case = f"compile time {workload}, {size_name(n)}"
            ours = table.get((case, "tensor compiled"), [])
            theirs = table.get((case, "torch compiled"), [])
            cold = fmt(theirs[0]["seconds"]) if theirs else ""
            warm = fmt(med(theirs[1:])) if len(theirs) > 1 else ""
            lines.append(f"| {workload}, {size_name(n)} | {fmt(med(ours))} | {cold} cold cache"
                         + (f", {warm} warm cache" if warm else "") + " |")
    lines += ["", "At 1e5 both compile from scratch. At the larger sizes minifx traces again "
              "and finds the kernel's source already compiled; Inductor recompiles once with "
              "a dynamic size, then reuses that graph. The cold Inductor figure is the first "
              "round's, with an empty cache directory; later rounds find its on-disk cache."]
    lines += ["", "Both copies are numba's `prange` copy into a preallocated output, timed in "
              "the same process seconds before the compiled call: the memory bandwidth of "
              "this shared machine moves with its neighbours' load. The memory copy moves "
              "arrays four times the size of the largest cache, STREAM's rule, so it "
              "measures main memory; the same-size copy moves the case's own size, which at "
              "1e5 and 1e6 stays in the cache. The target is the memory copy's."]
    if gbs_of:
        lines += ["", "| bandwidth (numba prange, preallocated output; bytes read + written) "
                  "| GB/s |", "|---|---:|"]
        lines += [f"| {case} | {gbs:.1f} |" for case, gbs in gbs_of.items()]
    if errors:
        lines += ["", *(f"- {e}" for e in errors)]
    return lines


def machine_busy() -> bool:
    """Was other work sharing the cores (load average above half their number)?"""
    return os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1)


def machine_load() -> str:
    """One sentence on how busy the machine was: timings from a shared machine are noisy."""
    load = os.getloadavg()[0]
    cores = os.cpu_count() or 1
    if machine_busy():
        verdict = ("other work shared the cores, so the targets are not judged: torch's "
                   "OpenMP threads lose the most to it")
    else:
        verdict = "the machine was otherwise quiet"
    return f"Load average when the run began: {load:.1f} on {cores} cores ({verdict})."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds, short budgets")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--groups", nargs="+", choices=list(GROUPS), default=list(GROUPS))
    parser.add_argument("--worker", nargs=2, metavar=("SIDE", "GROUP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker, args.quick)
        return
    rounds = args.rounds or (2 if args.quick else 5)
    groups = [g for g in GROUPS if g in args.groups]
    if "compiled" in groups and "bandwidth" not in groups:
        groups.insert(groups.index("compiled"), "bandwidth")  # the compiled table uses it
    start = time.perf_counter()
    busy = machine_busy()
    env_extra = {"TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="speed-inductor-")}
    note = (f"Medians of {rounds} rounds, each side in its own process, written by "
            f"`benchmarks/speed.py{' --quick' if args.quick else ''}`. {machine_load()}")
    OUT.mkdir(parents=True, exist_ok=True)
    found: dict = {}
    problems = []
    for group in groups:  # each table is written as soon as its group is done
        table = found[group] = collect(group, rounds, args.quick, env_extra)
        if group == "bandwidth":
            continue
        problems += check(group, table)
        lines = (compiled_table(table, bandwidth(found), busy) if group == "compiled"
                 else simple_table(group, table, busy))
        (OUT / f"speed_{group}.md").write_text("\n".join([note, "", *lines]) + "\n")
        print(f"\n## {group}\n\n" + "\n".join(lines) + "\n", flush=True)
    for p in problems:
        print("MISMATCH", p)
    print(f"\nwrote lessons/_generated/speed_*.md in {time.perf_counter() - start:.0f} s")
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
