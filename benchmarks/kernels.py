"""Benchmark: the numba kernels of `tensor` against torch eager and the NumPy path.

Plain Python, no test runner:

    .venv/bin/python benchmarks/kernels.py            # every case, about 5 minutes
    .venv/bin/python benchmarks/kernels.py --quick    # fewer repeats, no ResNet-50
    .venv/bin/python benchmarks/kernels.py --threads 1  # torch, numba, BLAS on 1 thread

Every case calls the public `tensor` API on the numba backend, the same call
on the NumPy backend, and torch eager, interleaved (one call of each in turn,
so a slow moment of the shared machine hits all three), and reports the
median of each and the ratio tensor/torch. torch, numba and BLAS run on the
same number of threads. The table is also written, as Markdown, to
lessons/_generated/kernels_table.md, which the chapter 0 lesson includes.
"""

from __future__ import annotations

import os

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
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

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


def blas_setup(threads: int) -> str:
    found = _openblas()
    if found is None:
        return "BLAS: not OpenBLAS (thread count left to the library)"
    lib, prefix, suffix = found
    getattr(lib, f"{prefix}set_num_threads{suffix}")(threads)
    core = getattr(lib, f"{prefix}get_corename{suffix}")
    core.restype = ctypes.c_char_p
    env = os.environ.get("OPENBLAS_CORETYPE", "unset")
    return f"BLAS: OpenBLAS kernel {core().decode()} (OPENBLAS_CORETYPE={env}), {threads} threads"


# ---- timing ------------------------------------------------------------------
def interleaved(fns: dict, budget: float, min_runs: int = 5, max_runs: int = 40) -> dict:
    """Median seconds of each function, calling them in turn."""
    for fn in fns.values():  # warm up: compile, allocate, fault pages in
        fn()
    start = time.perf_counter()
    for fn in fns.values():
        fn()
    one_round = time.perf_counter() - start
    runs = int(min(max_runs, max(min_runs, budget / max(one_round, 1e-9))))
    times = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


# ---- the cases ---------------------------------------------------------------
def cases(quick: bool):
    """(name, target ratio, make(lib) -> zero-argument callable) for every case.

    ``make`` receives either the ``tensor`` module or ``torch`` and builds
    its inputs with that library, so both run the same code.
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
            out.append((f"{op} {n:.0e} float32", 1.2 if n >= 10**6 else None, elementwise(op, n)))
    for op in ("sigmoid", "exp", "tanh"):
        out.append((f"{op} 1e6", 1.2, unary(op, 10**6)))

    big = arr(4096, 4096)
    out.append(("sum all (4096, 4096)", 1.2, lambda lib: (lambda x: lambda: x.sum())(
        from_np(lib, big))))
    out.append(("sum dim -1 (4096, 4096)", 1.2, lambda lib: (lambda x: lambda: x.sum(-1))(
        from_np(lib, big))))
    sm = arr(1024, 1024)
    out.append(("softmax dim -1 (1024, 1024)", 1.5, lambda lib: (
        lambda x: lambda: lib.softmax(x, dim=-1))(from_np(lib, sm))))
    for n in (256, 512, 1024):
        a, b = arr(n, n), arr(n, n)
        out.append((f"matmul {n}", 1.2, lambda lib, a=a, b=b: (
            lambda x, y: lambda: lib.matmul(x, y))(from_np(lib, a), from_np(lib, b))))

    def conv(xs, ws, stride, pad):
        x, w = arr(*xs), arr(*ws) * 0.1

        def make(lib):
            F = lib.nn.functional
            tx, tw = from_np(lib, x), from_np(lib, w)
            return lambda: F.conv2d(tx, tw, None, stride, pad)

        return make

    out.append(("conv2d (1,64,56,56) k3 p1", 1.5, conv((1, 64, 56, 56), (64, 64, 3, 3), 1, 1)))
    out.append(("conv2d (8,3,224,224) k7 s2 p3", 1.5, conv((8, 3, 224, 224), (64, 3, 7, 7), 2, 3)))

    bx = arr(8, 64, 56, 56)
    stats = [np.abs(arr(64)) + 0.5 for _ in range(4)]

    def bn(lib):
        F = lib.nn.functional
        x = from_np(lib, bx)
        m, v, w, b = (from_np(lib, s) for s in stats)
        return lambda: F.batch_norm(x, m, v, w, b, False, 0.1, 1e-5)

    out.append(("batch_norm eval (8,64,56,56)", 1.0, bn))
    px = arr(8, 64, 112, 112)
    out.append(("max_pool2d 3x3 s2 p1 (8,64,112,112)", 1.0, lambda lib: (
        lambda x: lambda: lib.nn.functional.max_pool2d(x, 3, 2, 1))(from_np(lib, px))))
    lx, lw, lb = arr(64, 512, 768), arr(768), arr(768)

    def ln(lib):
        x, w, b = from_np(lib, lx), from_np(lib, lw), from_np(lib, lb)
        return lambda: lib.nn.functional.layer_norm(x, (768,), w, b, 1e-5)

    out.append(("layer_norm (64,512,768)", 1.5, ln))
    out.append(("add on 1 element (per-op overhead)", 2.0, elementwise("add", 1)))
    if not quick:
        out.append(("ResNet-50 forward, batch 1, 224x224", 1.2, resnet50_case()))
    return out


# ---- ResNet-50, the same code for tensor.nn and torch.nn ---------------------
def resnet50(nn):
    """torchvision's ResNet-50 layout, written against an ``nn`` namespace."""

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            return self.relu(y + identity)

    class ResNet50(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
            layers, cin = [], 64
            for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
                stage = []
                for i in range(blocks):
                    stage.append(Bottleneck(cin, width, stride if i == 0 else 1))
                    cin = width * 4
                layers.append(nn.Sequential(*stage))
            self.layer1, self.layer2, self.layer3, self.layer4 = layers
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(2048, 1000)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    return ResNet50()


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
    with torch.no_grad():
        expected = theirs(torch.from_numpy(image)).numpy()
    got = ours(tensor.from_numpy(image)).numpy()
    err = float(np.abs(got - expected).max())
    print(f"ResNet-50: max |tensor - torch| = {err:.2e}")

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
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no ResNet-50")
    parser.add_argument("--no-jit", action="store_true", help="skip the JIT cost subprocesses")
    args = parser.parse_args()

    import numba
    import torch

    import tensor

    torch.set_num_threads(args.threads)
    numba.set_num_threads(args.threads)
    print(blas_setup(args.threads))
    print(f"threads: torch {torch.get_num_threads()}, numba {numba.get_num_threads()}; "
          f"numba threading layer set on first parallel call")
    budget = 0.3 if args.quick else 1.5

    rows = []
    header = f"{'case':40s} {'tensor':>11s} {'numpy path':>11s} {'torch':>11s} {'ratio':>6s} target"
    print(header)
    for name, target, make in cases(args.quick):
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

        med = interleaved(
            {"numba": on("numba", fn_numba), "numpy": on("numpy", fn_numpy), "torch": fn_torch},
            budget,
        )
        ratio = med["numba"] / med["torch"]
        mark = "" if target is None else (f"<= {target}" + ("" if ratio <= target else "  MISS"))
        print(f"{name:40s} {fmt(med['numba']):>11s} {fmt(med['numpy']):>11s} "
              f"{fmt(med['torch']):>11s} {ratio:6.2f} {mark}", flush=True)
        rows.append((name, med, ratio, target))
    tensor.backend.set_backend("numba")

    jit = [] if args.no_jit else jit_costs()
    for name, seconds in jit:
        print(f"{name:60s} {seconds:7.2f} s")
    write_table(rows, jit, args.threads)
    print(f"wrote {TABLE.relative_to(ROOT)}")


def write_table(rows, jit, threads: int) -> None:
    lines = [
        f"Medians on this machine, {threads} threads for torch, numba and BLAS "
        "(written by `benchmarks/kernels.py`).",
        "",
        "| case | tensor (numba) | tensor (NumPy path) | torch eager | tensor/torch | target |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, med, ratio, target in rows:
        goal = "" if target is None else f"<= {target}" + ("" if ratio <= target else " (missed)")
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
