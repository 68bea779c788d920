"""Benchmark: the numba kernels of `tensor` against torch eager and the NumPy path.

A second opinion, in one process. The main benchmark is benchmarks/speed.py,
which runs each library in a process of its own, the way a user runs it;
here the three share one process (and its cores, OpenMP runtime and
allocator), interleaved, with OMP_WAIT_POLICY=PASSIVE, which slows torch's
thread wake-ups. Its small cases and its models read differently for that.

Plain Python, no test runner:

    .venv/bin/python benchmarks/kernels.py            # every case, about 5 minutes
    .venv/bin/python benchmarks/kernels.py --quick    # fewer repeats, no ResNet-50
    .venv/bin/python benchmarks/kernels.py --threads 1  # torch, numba, BLAS on 1 thread
    .venv/bin/python benchmarks/kernels.py --threads 1 2  # one table per thread count

The environment of this machine may set OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE (older OpenBLAS builds need them on some processors); they
make NumPy's current OpenBLAS run an older, slower kernel. The script
therefore runs itself again without those two variables, in this process
alone, and prints which kernel OpenBLAS then picks; `--keep-blas-env` keeps
the environment as it is. Tests and CI never touch them.

Every case first checks that `tensor` (both paths) computes what torch
computes, then times it. It calls the public `tensor` API on the numba
backend, the same call on the NumPy backend, and torch eager, interleaved
(one call of each in turn, in rotating order, so a slow moment of the
shared machine hits all three), and reports the
median of each and the ratio tensor/torch. torch, numba and BLAS run on the
same number of threads. The table is also written, as Markdown, to
lessons/_generated/kernels_table.md, which the chapter 0 lesson includes.
"""

from __future__ import annotations

import os
import sys

# Variables that pin OpenBLAS to one kernel. They are read when NumPy loads
# OpenBLAS, so the benchmark replaces itself (exec) with a copy of itself
# that runs without them, before anything imports NumPy.
BLAS_PINS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
KEEP_BLAS_ENV = "--keep-blas-env"
UNSET_NOTE = "TENSOR_BENCH_UNSET"  # what the exec removed, for the report
if KEEP_BLAS_ENV not in sys.argv and any(name in os.environ for name in BLAS_PINS):
    clean = {k: v for k, v in os.environ.items() if k not in BLAS_PINS}
    clean[UNSET_NOTE] = " ".join(f"{k}={os.environ[k]}" for k in BLAS_PINS if k in os.environ)
    os.execve(sys.executable, [sys.executable, *sys.argv], clean)

# OpenBLAS workers spin for a while after each call and slow down whatever
# runs next; let them sleep almost at once. Must be set before NumPy loads.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
# The same for OpenMP (torch's threads and numba's share one libgomp once
# torch is loaded): idle threads that spin steal the cores from whichever
# library runs next in the interleaved loop, on a machine with few cores.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import ctypes  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from nn_models import resnet50  # noqa: E402  (benchmarks/ is the script's folder)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TABLE = ROOT / "lessons" / "_generated" / "kernels_table.md"


# ---- BLAS: which kernel runs, and on how many threads ------------------------
def _openblas():
    """NumPy's OpenBLAS as a ctypes library, or None."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    for path in paths:
        lib = ctypes.CDLL(path)
        for prefix in ("scipy_openblas_", "openblas_", ""):
            for suffix in ("64_", ""):
                name = f"{prefix}get_corename{suffix}" if prefix else "openblas_get_corename"
                if hasattr(lib, name):
                    return lib, prefix, suffix
    return None


def blas_kernel() -> str:
    """The kernel name OpenBLAS picked (``SkylakeX``, ``Haswell``...), or what BLAS this is."""
    found = _openblas()
    if found is None:
        return "not OpenBLAS"
    lib, prefix, suffix = found
    core = getattr(lib, f"{prefix}get_corename{suffix}")
    core.restype = ctypes.c_char_p
    return f"OpenBLAS {core().decode()}"


def blas_threads(threads: int) -> None:
    found = _openblas()
    if found is not None:
        lib, prefix, suffix = found
        getattr(lib, f"{prefix}set_num_threads{suffix}")(threads)


def blas_environment() -> str:
    if os.environ.get(UNSET_NOTE):
        return f"unset by this script (was {os.environ[UNSET_NOTE]})"
    pins = [f"{k}={os.environ[k]}" for k in BLAS_PINS if k in os.environ]
    return ", ".join(pins) if pins else "no OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE set"


# ---- timing ------------------------------------------------------------------
def interleaved(fns: dict, budget: float, min_runs: int = 5, max_runs: int = 40) -> dict:
    """Median seconds of each function, calling them in turn.

    The order rotates from round to round, so that each function follows
    each other one equally often: a call can leave the next one slower (on
    two threads, whatever ran right after a torch convolution lost 3 ms to it).
    """
    for fn in fns.values():  # warm up: compile, allocate, fault pages in
        fn()
    start = time.perf_counter()
    for fn in fns.values():
        fn()
    one_round = time.perf_counter() - start
    runs = int(min(max_runs, max(min_runs, budget / max(one_round, 1e-9))))
    times = {name: [] for name in fns}
    names = list(fns)
    for run in range(runs):
        for k in range(len(names)):
            name = names[(run + k) % len(names)]
            t0 = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


# ---- the cases ---------------------------------------------------------------
# Tolerances of the correctness check that precedes the timing: torch's
# float32 defaults, except where a long sum makes the order of additions show.
TORCH_DEFAULTS = None
LONG_SUMS = (1e-4, 1e-3)


def cases(quick: bool):
    """(name, target ratio, make(lib) -> zero-argument callable, tolerance) for every case.

    ``make`` receives either the ``tensor`` module or ``torch`` and builds
    its inputs with that library, so both run the same code. ``tolerance``
    is (rtol, atol) for the check against torch, or None for torch's defaults.
    """
    rng = np.random.default_rng(0)

    def arr(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def from_np(lib, a):
        return lib.from_numpy(a)

    out = []

    def elementwise(op, n):
        a, b = arr(n), arr(n)

        def make(lib):
            x, y = from_np(lib, a), from_np(lib, b)
            fn = getattr(lib, op)
            return lambda: fn(x, y)

        return make

    def unary(op, n):
        a = arr(n)

        def make(lib):
            x = from_np(lib, a)
            fn = getattr(lib, op)
            return lambda: fn(x)

        return make

    for op in ("add", "mul"):
        for n in (10**5, 10**6, 10**7):
            target = 1.2 if n >= 10**6 else None
            out.append((f"{op} {n:.0e} float32", target, elementwise(op, n), TORCH_DEFAULTS))
    for op in ("sigmoid", "exp", "tanh"):
        out.append((f"{op} 1e6", 1.2, unary(op, 10**6), TORCH_DEFAULTS))

    big = arr(4096, 4096)
    out.append(("sum all (4096, 4096)", 1.2, lambda lib: (lambda x: lambda: x.sum())(
        from_np(lib, big)), LONG_SUMS))
    out.append(("sum dim -1 (4096, 4096)", 1.2, lambda lib: (lambda x: lambda: x.sum(-1))(
        from_np(lib, big)), LONG_SUMS))
    sm = arr(1024, 1024)
    out.append(("softmax dim -1 (1024, 1024)", 1.5, lambda lib: (
        lambda x: lambda: lib.softmax(x, dim=-1))(from_np(lib, sm)), TORCH_DEFAULTS))
    for n in (256, 512, 1024):
        a, b = arr(n, n), arr(n, n)
        out.append((f"matmul {n}", 1.2, lambda lib, a=a, b=b: (
            lambda x, y: lambda: lib.matmul(x, y))(from_np(lib, a), from_np(lib, b)), LONG_SUMS))

    def conv(xs, ws, stride, pad):
        x, w = arr(*xs), arr(*ws) * 0.1

        def make(lib):
            F = lib.nn.functional
            tx, tw = from_np(lib, x), from_np(lib, w)
            return lambda: F.conv2d(tx, tw, None, stride, pad)

        return make

    out.append(("conv2d (1,64,56,56) k3 p1", 1.5,
                conv((1, 64, 56, 56), (64, 64, 3, 3), 1, 1), LONG_SUMS))
    out.append(("conv2d (8,3,224,224) k7 s2 p3", 1.5,
                conv((8, 3, 224, 224), (64, 3, 7, 7), 2, 3), LONG_SUMS))

    bx = arr(8, 64, 56, 56)
    stats = [np.abs(arr(64)) + 0.5 for _ in range(4)]

    def bn(lib):
        F = lib.nn.functional
        x = from_np(lib, bx)
        m, v, w, b = (from_np(lib, s) for s in stats)
        return lambda: F.batch_norm(x, m, v, w, b, False, 0.1, 1e-5)

    out.append(("batch_norm eval (8,64,56,56)", 1.0, bn, TORCH_DEFAULTS))
    px = arr(8, 64, 112, 112)
    out.append(("max_pool2d 3x3 s2 p1 (8,64,112,112)", 1.0, lambda lib: (
        lambda x: lambda: lib.nn.functional.max_pool2d(x, 3, 2, 1))(from_np(lib, px)),
        TORCH_DEFAULTS))
    lx, lw, lb = arr(64, 512, 768), arr(768), arr(768)

    def ln(lib):
        x, w, b = from_np(lib, lx), from_np(lib, lw), from_np(lib, lb)
        return lambda: lib.nn.functional.layer_norm(x, (768,), w, b, 1e-5)

    out.append(("layer_norm (64,512,768)", 1.5, ln, TORCH_DEFAULTS))
    out.append(("add on 1 element (per-op overhead)", 2.0, elementwise("add", 1), TORCH_DEFAULTS))
    if not quick:
        out.append(("ResNet-50 forward, batch 1, 224x224", 1.2, resnet50_case(), LONG_SUMS))
    return out


def resnet50_case():
    import torch

    import tensor

    torch.manual_seed(0)
    theirs = resnet50(torch.nn).eval()
    ours = resnet50(tensor.nn).eval()
    ours.load_state_dict(
        {k: tensor.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    )
    image = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)

    def make(lib):
        if lib is torch:
            x = torch.from_numpy(image)

            def run():
                with torch.no_grad():
                    return theirs(x)

            return run
        x = tensor.from_numpy(image)
        return lambda: ours(x)

    return make


# ---- JIT cost ----------------------------------------------------------------
PROBE = """
import time
t0 = time.perf_counter()
import numpy as np
import tensor
import tensor.nn.functional as F
tensor.backend.set_backend("numba")
x = tensor.from_numpy(np.ones((2, 3, 8, 8), np.float32))
v = tensor.from_numpy(np.ones(3, np.float32))
for op in ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu"):
    getattr(tensor, op)(x)
F.gelu(x)
for op in ("add", "sub", "mul", "div", "pow", "maximum", "gt", "lt", "eq"):
    getattr(tensor, op)(x, x)
tensor.where(x > 0, x, x); tensor.clamp(x, min=0.0, max=1.0)
x.sum(); x.sum(-1); x.mean(1); x.amax(1); x.amin(1); x.argmax(1)
tensor.softmax(x, -1); tensor.log_softmax(x, -1); tensor.matmul(x, x)
F.conv2d(x, tensor.from_numpy(np.ones((4, 3, 3, 3), np.float32)), None, 1, 1)
F.batch_norm(x, v, v, v, v, False, 0.1, 1e-5); F.layer_norm(x, (8,))
F.max_pool2d(x, 2); F.avg_pool2d(x, 2); F.adaptive_avg_pool2d(x, 1)
F.linear(x, tensor.from_numpy(np.ones((5, 8), np.float32)))
print(time.perf_counter() - t0)
"""


def subprocess_seconds(code: str, env: dict) -> float:
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def jit_costs() -> list[tuple[str, float]]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as cache:
        fresh = dict(env, NUMBA_CACHE_DIR=cache)
        cold = subprocess_seconds(PROBE, fresh)
        warm = min(subprocess_seconds(PROBE, fresh) for _ in range(3))
    torch_import = (
        "import time\nt = time.perf_counter()\nimport torch\nprint(time.perf_counter() - t)"
    )
    torch_s = min(subprocess_seconds(torch_import, env) for _ in range(3))
    return [
        ("import tensor + every hot op once, empty cache (cold JIT)", cold),
        ("import tensor + every hot op once, warm cache", warm),
        ("import torch", torch_s),
    ]


# ---- main --------------------------------------------------------------------
def check_against_torch(name, tolerance, results) -> None:
    """Our result on each path must equal torch's (assert_close) before it is timed."""
    from tensor.testing import assert_close

    rtol, atol = tolerance if tolerance else (None, None)
    for path in ("numba", "numpy"):
        assert_close(results[path], results["torch"], rtol=rtol, atol=atol,
                     msg=f"{name}: the {path} path differs from torch")


def run_cases(threads: int, quick: bool) -> list:
    import numba
    import torch

    import tensor

    torch.set_num_threads(threads)
    numba.set_num_threads(threads)
    blas_threads(threads)
    print(f"\n{threads} thread(s) for torch ({torch.get_num_threads()}), "
          f"numba ({numba.get_num_threads()}) and BLAS")
    budget = 0.3 if quick else 1.5
    print(f"{'case':40s} {'tensor':>11s} {'numpy path':>11s} {'torch':>11s} {'ratio':>6s} target")
    rows = []
    for name, target, make, tolerance in cases(quick):
        tensor.backend.set_backend("numba")
        fn_numba = make(tensor)
        tensor.backend.set_backend("numpy")
        fn_numpy = make(tensor)
        fn_torch = make(torch)

        def on(backend, fn):
            def run():
                tensor.backend.set_backend(backend)
                return fn()

            return run

        fns = {"numba": on("numba", fn_numba), "numpy": on("numpy", fn_numpy), "torch": fn_torch}
        check_against_torch(name, tolerance, {path: fn() for path, fn in fns.items()})
        med = interleaved(fns, budget)
        ratio = med["numba"] / med["torch"]
        mark = "" if target is None else (f"<= {target}" + ("" if ratio <= target else "  MISS"))
        print(f"{name:40s} {fmt(med['numba']):>11s} {fmt(med['numpy']):>11s} "
              f"{fmt(med['torch']):>11s} {ratio:6.2f} {mark}", flush=True)
        rows.append((name, med, ratio, target))
    tensor.backend.set_backend("numba")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[os.cpu_count()],
                        help="thread counts to run every case on (one table each)")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no ResNet-50")
    parser.add_argument("--no-jit", action="store_true", help="skip the JIT cost subprocesses")
    parser.add_argument(KEEP_BLAS_ENV, action="store_true",
                        help="keep OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE as they are set")
    args = parser.parse_args()

    import numba  # noqa: F401  (loads before torch, as in a program that imports tensor)
    import torch  # noqa: F401

    kernel = blas_kernel()
    print(f"BLAS: {kernel} ({blas_environment()})")
    print(f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}, "
          f"OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']}")
    tables = [(threads, run_cases(threads, args.quick)) for threads in args.threads]

    jit = [] if args.no_jit else jit_costs()
    for name, seconds in jit:
        print(f"{name:60s} {seconds:7.2f} s")
    write_table(tables, jit, kernel)
    print(f"wrote {TABLE.relative_to(ROOT)}")


def write_table(tables, jit, kernel: str) -> None:
    lines = [
        "Medians on this machine, written by `benchmarks/kernels.py` "
        f"(BLAS: {kernel}).",
    ]
    for threads, rows in tables:
        lines += [
            "",
            f"**{threads} thread{'s' if threads > 1 else ''}** for torch, numba and BLAS:",
            "",
            "| case | tensor (numba) | tensor (NumPy path) | torch eager | tensor/torch | target |",
            "| --- | ---: | ---: | ---: | ---: | --- |",
        ]
        for name, med, ratio, target in rows:
            goal = "" if target is None else f"<= {target}"
            goal += "" if target is None or ratio <= target else " (missed)"
            lines.append(
                f"| {name} | {fmt(med['numba'])} | {fmt(med['numpy'])} | {fmt(med['torch'])} "
                f"| {ratio:.2f} | {goal} |"
            )
    if jit:
        lines += ["", "| start-up | seconds |", "| --- | ---: |"]
        lines += [f"| {name} | {seconds:.2f} |" for name, seconds in jit]
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
