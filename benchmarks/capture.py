"""What capture costs: minifx per node, and minifx against torch.fx side by side.

Four parts, each a table:

``per-node``: a ``tensor`` model whose forward is a chain of ``n`` elementwise
operations (1,000 to 100,000) is traced (``symbolic_trace``), then its
GraphModule is recompiled, printed (``str(graph)``) and deep-copied. The
median of each step is divided by the node count: linear growth shows up as
a flat time per node across sizes (growth = last size / first size).

``torch``: the same steps, and ``symbolic_trace`` followed by ``recompile``,
for minifx and torch.fx on the same torch modules (chains of 1,000 and 10,000
operations and a ResNet-50 written in plain ``torch.nn``), run in turns so
that both see the same machine load. It prints both medians and the ratio
minifx / torch.fx (below 1.0 is faster; the target for trace+recompile and
deepcopy is 0.5). Two rows explain the rest: ``deepcopy, no tensors`` copies
the module with its parameters and buffers shared (a ResNet-50's deepcopy is
mostly copying 100 MB of weights, which both must do), and ``compile(source)``
is Python's ``compile()`` of the generated source, identical for both and
part of every symbolic_trace and recompile. Before timing, the script checks
that both produced the same graph text and the same code, so that both do the
same work.

``make_fx``: capture below the API (chapter 12). The shared ResNet-50
(``tests.models.resnet50(tensor.nn)``, batch 1, eval) traced by
``symbolic_trace`` and by ``make_fx`` in both tracing modes (``"real"`` runs
the model, ``"fake"`` computes shapes only), each with its ratio to
``symbolic_trace`` (the target for ``make_fx``, fake, is 1.5). make_fx's
GraphModule compiles its code on first use, as torch's ``_LazyGraphModule``
does; a row forces it (``then .code``). The anchor is torch's own pair on
torchvision's resnet50: ``torch.fx.symbolic_trace`` and
``torch.fx.experimental.proxy_tensor.make_fx`` (real and fake, and fake with
torch's lazy GraphModule switched on), each with its ratio to torch's
``symbolic_trace``. Each library runs in processes of its own, in turns
(``--rounds``), so that a busy moment of the shared machine hits both; the
table gives medians over all calls, and is written to
lessons/_generated/capture_make_fx.md, which chapter 12 includes. torch's
graph is ATen ops, ours the ``tensor.ops`` primitives; the two are matched
op for op in tests/ch12/test_aten_table.py.

``memory``: what shape propagation allocates (chapter 12). The shared
ResNet-50 (eval, traced by ``symbolic_trace``) on a batch of 256 images
(``--batch``) is propagated by ShapeProp on a real input, by FakeTensorProp
on a fake input (``propagate_dont_convert_inputs``), and by FakeTensorProp's
``propagate`` on a real input, which it makes fake first. Each row is
measured in fresh processes, one per instrument, so that no row's
allocations, nor a cache one of them filled, can hide another's: one takes
the growth of the process's peak resident memory over the propagation
(the peak is reset just before, through /proc/self/clear_refs) and the wall
time; the other, tracemalloc's peak, started just before the propagation
(NumPy reports its arrays to tracemalloc; the worker checks that on a
tensor of known size first). Tracing and the inputs are made before either
measurement starts, and a small batch runs first so that kernels are
compiled or loaded beforehand. The parent then checks that every pass gave
each node the shapes and dtypes ShapeProp gave it. The table is written to
lessons/_generated/capture_memory.md, which chapter 12 includes.

    .venv/bin/python benchmarks/capture.py                   # all parts
    .venv/bin/python benchmarks/capture.py --part per-node --sizes 1000,10000,100000
    .venv/bin/python benchmarks/capture.py --part torch --torch-sizes 1000,10000 --repeat 5
    .venv/bin/python benchmarks/capture.py --part make_fx --rounds 4 --repeat 9
    .venv/bin/python benchmarks/capture.py --part memory --batch 256
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MAKE_FX_TABLE = ROOT / "lessons" / "_generated" / "capture_make_fx.md"
MEMORY_TABLE = ROOT / "lessons" / "_generated" / "capture_memory.md"
sys.path.insert(0, str(ROOT))
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))

import minifx  # noqa: E402
import tensor  # noqa: E402
import tensor.nn as nn  # noqa: E402

Steps = dict[str, Callable[[], object]]


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


# -- part 1: minifx per node -------------------------------------------------
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


def minifx_steps(n: int) -> Steps:
    """The four timed steps for minifx on a chain of ``n`` nodes."""
    model = Chain(n)
    gm = minifx.symbolic_trace(model)
    return {
        "symbolic_trace": lambda: minifx.symbolic_trace(model),
        "recompile": gm.recompile,
        "str(graph)": lambda: str(gm.graph),
        "deepcopy": lambda: copy.deepcopy(gm),
    }


def per_node(sizes: list[int], repeat: int) -> None:
    """Print microseconds per node for each step and size, and the growth."""
    rows: dict[str, list[float]] = {}
    for n in sizes:
        for step, fn in minifx_steps(n).items():
            rows.setdefault(step, []).append(median_seconds(fn, repeat) / n * 1e6)
    print(f"{'minifx':<16}" + "".join(f"{n:>12,}" for n in sizes) + "   growth")
    for step, per_node_us in rows.items():
        growth = per_node_us[-1] / per_node_us[0]
        print(f"{step:<16}" + "".join(f"{t:>10.2f}us" for t in per_node_us)
              + f"   x{growth:.2f}")
    print(f"(microseconds per node, median of {repeat} runs, cyclic GC paused while timing;"
          " growth = last size / first size, 1.0 is linear)")


# -- part 2: minifx against torch.fx on torch modules ------------------------
def torch_models(sizes: list[int]) -> dict[str, Any]:
    """The torch modules both tracers capture: chains of each size and a ResNet-50."""
    from benchmarks.torch_models import ResNet50, TorchChain  # imports torch

    found: dict[str, Any] = {f"chain {n:,}": TorchChain(n) for n in sizes}
    found["resnet50"] = ResNet50().eval()
    return found


def torch_steps(fx: Any, model: Any) -> Steps:
    """The timed steps for one tracer (``minifx`` or ``torch.fx``) on ``model``."""
    gm = fx.symbolic_trace(model)
    # A memo that maps every parameter and buffer to itself: deepcopy then
    # shares them and copies everything else.
    tensors = {id(t): t for t in [*gm.parameters(), *gm.buffers()]}
    return {
        "symbolic_trace": lambda: fx.symbolic_trace(model),
        "recompile": gm.recompile,
        "trace+recompile": lambda: fx.symbolic_trace(model).recompile(),
        "str(graph)": lambda: str(gm.graph),
        "deepcopy": lambda: copy.deepcopy(gm),
        "deepcopy, no tensors": lambda: copy.deepcopy(gm, dict(tensors)),
        "compile(source)": lambda: compile(gm.code, "<benchmark>", "exec"),
    }


def interleaved_medians(a: Callable[[], object], b: Callable[[], object],
                        repeat: int) -> tuple[float, float]:
    """Median times of ``a`` and ``b``, run in turns so that both see the same machine load
    (the machine may be shared, and its load drifts)."""
    times_a, times_b = [], []
    for _ in range(repeat):
        times_a.append(median_seconds(a, 1))
        times_b.append(median_seconds(b, 1))
    return statistics.median(times_a), statistics.median(times_b)


def side_by_side(sizes: list[int], repeat: int) -> None:
    """Print minifx's and torch.fx's medians and their ratio for every model and step."""
    import torch.fx

    print(f"{'model':<14}{'nodes':>7}  {'step':<22}{'minifx':>11}{'torch.fx':>11}{'ratio':>8}")
    for name, model in torch_models(sizes).items():
        ours, theirs = minifx.symbolic_trace(model), torch.fx.symbolic_trace(model)
        if str(ours.graph) != str(theirs.graph) or ours.code != theirs.code:
            raise SystemExit(f"{name}: minifx and torch.fx differ; timing would mislead")
        nodes = len(ours.graph.nodes)
        mine, reference = torch_steps(minifx, model), torch_steps(torch.fx, model)
        for step in mine:
            a, b = interleaved_medians(mine[step], reference[step], repeat)
            times = f"{a * 1e3:>9.2f}ms{b * 1e3:>9.2f}ms{a / b:>8.2f}"
            print(f"{name:<14}{nodes:>7}  {step:<22}{times}")
    print(f"(median of {repeat} runs, cyclic GC paused while timing; "
          "ratio = minifx / torch.fx, below 1.0 is faster)")


# -- part 3: make_fx, ours and torch's, each in a process of its own -----------
SIDES = ("minifx", "torch")


def make_fx_steps() -> Steps:
    """symbolic_trace and make_fx (fake, real) of the shared ResNet-50 in ``tensor``.

    make_fx's GraphModule writes and compiles its code when first used
    (``_LazyGraphModule``); ``then .code`` forces that, so the row shows the
    capture with the code that symbolic_trace's GraphModule makes at once.
    """
    from minifx.experimental.proxy_tensor import make_fx
    from tests.models import resnet50

    model = resnet50(tensor.nn).eval()
    x = tensor.randn(1, 3, 224, 224)
    fake, real = make_fx(model, tracing_mode="fake")(x), make_fx(model, tracing_mode="real")(x)
    if str(fake.graph) != str(real.graph):
        raise SystemExit("make_fx gives one graph in fake mode and another in real mode")
    tensor.testing.assert_close(real(x), model(x))  # the graph computes the model
    return {
        "symbolic_trace": lambda: minifx.symbolic_trace(model),
        "make_fx, fake": lambda: make_fx(model, tracing_mode="fake")(x),
        "make_fx, fake, then .code": lambda: make_fx(model, tracing_mode="fake")(x).code,
        "make_fx, real": lambda: make_fx(model, tracing_mode="real")(x),
    }


def torch_make_fx_steps() -> Steps:
    """The anchor: torch.fx.symbolic_trace and torch's make_fx of torchvision's resnet50.

    torch's make_fx makes an eager GraphModule unless ``_use_lazy_graph_module``
    is on (as in torch.compile's pipeline): the ``lazy`` row is that, like for like
    with ours.
    """
    import torch
    import torch.fx
    from torch.fx._lazy_graph_module import _use_lazy_graph_module
    from torch.fx.experimental.proxy_tensor import make_fx

    from minifx.frameworks.published import make_torchvision_importable

    make_torchvision_importable()
    import torchvision

    model = torchvision.models.resnet50().eval()
    x = torch.randn(1, 3, 224, 224)

    def lazy_fake():
        with _use_lazy_graph_module(True):
            return make_fx(model, tracing_mode="fake", _allow_non_fake_inputs=True)(x)

    return {
        "symbolic_trace": lambda: torch.fx.symbolic_trace(model),
        # The parameters stay real, as in ours: torch must be told to accept them.
        "make_fx, fake": lambda: make_fx(model, tracing_mode="fake",
                                         _allow_non_fake_inputs=True)(x),
        "make_fx, fake, lazy module": lazy_fake,
        "make_fx, real": lambda: make_fx(model, tracing_mode="real")(x),
    }


def make_fx_worker(side: str, repeat: int) -> None:
    """One side's steps, ``repeat`` times each, in turns; print the times as JSON."""
    steps = (make_fx_steps if side == "minifx" else torch_make_fx_steps)()
    for fn in steps.values():  # warm up: imports, caches, numba's kernels
        fn()
    times: dict[str, list[float]] = {step: [] for step in steps}
    for _ in range(repeat):
        for step, fn in steps.items():
            times[step].append(median_seconds(fn, 1))
    print(json.dumps(times))


def make_fx_rounds(rounds: int, repeat: int) -> dict[str, dict[str, list[float]]]:
    """side -> step -> every timed call, from ``rounds`` processes per side run in turns."""
    found: dict[str, dict[str, list[float]]] = {side: {} for side in SIDES}
    for r in range(rounds):
        for side in SIDES[r % 2:] + SIDES[:r % 2]:
            done = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--make-fx-worker", side,
                 "--repeat", str(repeat)],
                capture_output=True, text=True, cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)})
            if done.returncode != 0:
                raise SystemExit(f"the {side} process failed:\n{done.stderr[-3000:]}")
            for step, times in json.loads(done.stdout.strip().splitlines()[-1]).items():
                found[side].setdefault(step, []).extend(times)
    return found


def make_fx_table(rounds: int, repeat: int) -> None:
    """Print, and write for chapter 12, each step's median and its ratio to symbolic_trace."""
    load = os.getloadavg()[0]
    found = make_fx_rounds(rounds, repeat)
    lines = ["| library | ResNet-50, batch 1 | median (ms) | / symbolic_trace |",
             "|---|---|---:|---:|"]
    for side, steps in found.items():
        who = "minifx" if side == "minifx" else "torch (torchvision's)"
        base = statistics.median(steps["symbolic_trace"])
        for step, times in steps.items():
            t = statistics.median(times)
            lines.append(f"| {who} | {step} | {t * 1e3:.2f} | {t / base:.2f} |")
    lines += ["", f"Medians of {rounds * repeat} calls per step, from {rounds} processes per "
              f"library run in turns, cyclic GC paused while timing; load average "
              f"{load:.1f} on {os.cpu_count()} cores when the run began; Python "
              f"{platform.python_version()}. Written by `benchmarks/capture.py --part make_fx`."]
    text = "\n".join(lines) + "\n"
    MAKE_FX_TABLE.parent.mkdir(parents=True, exist_ok=True)
    MAKE_FX_TABLE.write_text(text)
    print(text, end="")


# -- part 4: the memory of ShapeProp and FakeTensorProp, each in a process of its own --
# row -> (the pass, the input it is given)
MEMORY_ROWS = {
    "shape_prop": ("ShapeProp, `propagate`", "real"),
    "fake_prop": ("FakeTensorProp, `propagate_dont_convert_inputs`", "fake"),
    "fake_prop_real": ("FakeTensorProp, `propagate`", "real"),
}
INSTRUMENTS = ("rss", "tracemalloc")
WARM_UP_BATCH = 4  # enough images for every kernel path the large batch takes


def proc_status_bytes(field: str) -> int:
    """``VmRSS``, ``VmHWM`` ... of this process from /proc/self/status, in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise SystemExit(f"/proc/self/status has no {field}")


def reset_peak_rss() -> None:
    """Make the peak resident size (VmHWM) the current one (Linux, ``clear_refs`` 5)."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")
    if proc_status_bytes("VmHWM") > proc_status_bytes("VmRSS") + (1 << 20):
        raise SystemExit("the peak resident size could not be reset")


def check_tracemalloc_sees_arrays() -> None:
    """Fail unless tracemalloc counts a tensor's data (NumPy reports its arrays to it)."""
    import tracemalloc

    tracemalloc.start()
    known = tensor.ones(1024, 1024) * 2.0  # 4 MiB, from the backend's allocator
    seen = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    if seen < known.numel() * known.element_size():
        raise SystemExit(f"tracemalloc saw {seen} bytes of a 4 MiB tensor")


def shapes_of(value: Any) -> list[list[Any]]:
    """[shape, dtype] of each tensor (or TensorMetadata) in ``value``, in order."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return [[list(value.shape), str(value.dtype)]]
    if isinstance(value, (tuple, list)):
        return [found for item in value for found in shapes_of(item)]
    if isinstance(value, dict):
        return [found for item in value.values() for found in shapes_of(item)]
    return []


def propagation(row: str, batch: int) -> tuple[Callable[[], object], Any, int]:
    """The propagation ``row`` times on a fresh trace, its GraphModule, the input's bytes."""
    from minifx.passes.fake_tensor_prop import FakeTensorProp
    from minifx.passes.shape_prop import ShapeProp
    from tensor.fake import FakeTensorMode
    from tests.models import resnet50

    gm = minifx.symbolic_trace(resnet50(tensor.nn).eval())
    if row == "shape_prop":
        x = tensor.randn(batch, 3, 224, 224)
        return lambda: ShapeProp(gm).propagate(x), gm, x.numel() * x.element_size()
    if row == "fake_prop_real":
        x = tensor.randn(batch, 3, 224, 224)
        return lambda: FakeTensorProp(gm).propagate(x), gm, x.numel() * x.element_size()
    with FakeTensorMode() as mode:
        fake = tensor.empty(batch, 3, 224, 224)  # no data
    return lambda: FakeTensorProp(gm, mode).propagate_dont_convert_inputs(fake), gm, 0


def memory_worker(row: str, instrument: str, batch: int) -> None:
    """One row measured by one instrument; print peak, time and every node's shapes as JSON."""
    import tracemalloc

    check_tracemalloc_sees_arrays()
    warm_up, _, _ = propagation(row, WARM_UP_BATCH)
    warm_up()
    run, gm, input_bytes = propagation(row, batch)
    del warm_up
    gc.collect()
    if instrument == "rss":
        reset_peak_rss()
        before = proc_status_bytes("VmRSS")
        start = time.perf_counter()
        run()
        seconds = time.perf_counter() - start
        peak = proc_status_bytes("VmHWM") - before
    else:
        tracemalloc.start()
        start = time.perf_counter()
        run()
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    key = "tensor_meta" if row == "shape_prop" else "val"
    nodes = [[n.name, n.op, shapes_of(n.meta.get(key))] for n in gm.graph.nodes]
    print(json.dumps({"peak": peak, "seconds": seconds, "input": input_bytes,
                      "nodes": nodes}))


def memory_table(batch: int) -> None:
    """Print, and write for chapter 12, each row's peaks, time and agreement with ShapeProp."""
    load = os.getloadavg()[0]
    found: dict[str, dict[str, Any]] = {}
    for row in MEMORY_ROWS:
        for instrument in INSTRUMENTS:
            done = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--memory-worker", row,
                 instrument, "--batch", str(batch)],
                capture_output=True, text=True, cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)})
            if done.returncode != 0:
                raise SystemExit(f"the {row} {instrument} process failed:\n{done.stderr[-3000:]}")
            found[row, instrument] = json.loads(done.stdout.strip().splitlines()[-1])
    reference = found["shape_prop", "rss"]["nodes"]
    activations = sum(4 * math.prod(shape) for _, op, shapes in reference
                      if op not in ("placeholder", "get_attr", "output")
                      for shape, _ in shapes)
    lines = [f"| ResNet-50, batch {batch} | input | tracemalloc peak (MB) "
             "| peak RSS growth (MB) | time (s) | shapes and dtypes as ShapeProp's |",
             "|---|---|---:|---:|---:|---|"]
    for row, (name, given) in MEMORY_ROWS.items():
        rss, traced = found[row, "rss"], found[row, "tracemalloc"]
        same = sum(a == b for a, b in zip(rss["nodes"], reference, strict=True))
        if traced["nodes"] != rss["nodes"]:
            raise SystemExit(f"{row}: the two processes gave different shapes")
        lines.append(f"| {name} | {given}, {rss['input'] / 1e6:.0f} MB "
                     f"| {traced['peak'] / 1e6:,.1f} | {rss['peak'] / 1e6:,.1f} "
                     f"| {rss['seconds']:.3f} | {same} of {len(reference)} nodes |")
    lines += ["", "Two fresh processes per row, one per instrument: tracemalloc's peak from "
              "just before the propagation (each process first checks that tracemalloc sees "
              "a 4 MiB tensor), and the growth of the peak resident size (VmHWM, reset just "
              "before) over it, with the time, from the process that runs without "
              "tracemalloc. The input is made beforehand and counts in neither. ShapeProp's "
              f"run makes {activations / 1e9:.1f} GB of activations in all; the Interpreter "
              f"drops each after its last use. Load average {load:.1f} "
              f"on {os.cpu_count()} cores when the run began; Python "
              f"{platform.python_version()}. Written by `benchmarks/capture.py --part memory`."]
    text = "\n".join(lines) + "\n"
    MEMORY_TABLE.parent.mkdir(parents=True, exist_ok=True)
    MEMORY_TABLE.write_text(text)
    print(text, end="")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("all", "per-node", "torch", "make_fx", "memory"),
                        default="all")
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="chain lengths for the per-node part")
    parser.add_argument("--torch-sizes", default="1000,10000",
                        help="chain lengths for the torch part (a ResNet-50 is always added)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=4,
                        help="processes per library for the make_fx part, run in turns")
    parser.add_argument("--batch", type=int, default=256,
                        help="images per input for the memory part")
    parser.add_argument("--make-fx-worker", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--memory-worker", nargs=2, metavar=("ROW", "INSTRUMENT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.make_fx_worker:
        make_fx_worker(args.make_fx_worker, args.repeat)
        return
    if args.memory_worker:
        row, instrument = args.memory_worker
        if row not in MEMORY_ROWS or instrument not in INSTRUMENTS:
            parser.error(f"--memory-worker takes a row of {list(MEMORY_ROWS)} and an "
                         f"instrument of {list(INSTRUMENTS)}, not {row!r} {instrument!r}")
        memory_worker(row, instrument, args.batch)
        return
    if args.part in ("all", "per-node"):
        per_node([int(s) for s in args.sizes.split(",")], args.repeat)
    if args.part == "all":
        print()
    if args.part in ("all", "torch"):
        side_by_side([int(s) for s in args.torch_sizes.split(",")], args.repeat)
    if args.part == "all":
        print()
    if args.part in ("all", "make_fx"):
        make_fx_table(args.rounds, args.repeat)
    if args.part == "all":
        print()
    if args.part in ("all", "memory"):
        memory_table(args.batch)


if __name__ == "__main__":
    main()
