"""int8 ResNet-18: tensor's int8 kernels against float tensor, torch's int8 and float torch.

Four contestants run chapter 7's ResNet-18 (``tests/ch07/ch07_models.py``,
the same weights in both libraries) on the same random images:

- ``tensor fp32``: the float tensor model;
- ``tensor int8``: quantized by minifx (prepare_fx, calibration, convert_fx),
  running in tensor.nn.quantized's numba kernels (the fast layer's, by default:
  ``tensor/backend/fast/qgemm.py``; ``TENSOR_FAST=0`` times the taught ones);
- ``torch fp32``: the float torch model;
- ``torch int8``: quantized by torch.ao's own prepare_fx / convert_fx with the
  x86 engine (fbgemm / oneDNN, with VNNI or AVX2 int8 instructions).

Each measurement runs in a fresh process (numba's and torch's thread pools
would fight over the cores in one), the contestants take turns round after
round so that all see the same machine load, and the table reports medians
and the ratio to ``torch int8``. The CPU's model and its SIMD extensions are
printed with it, and the int8 kernel ``tensor`` ran (AMX, VNNI or portable),
so that the ratios can be read against the instructions each side had. A
second table gives the accuracy of each
int8 model against its own float model (cosine similarity of the logits and
top-1 agreement, on random images). Both tables go to
``lessons/_generated/quantization_table.md``, which the chapter 10 lesson
includes.

    .venv/bin/python benchmarks/quantization.py                  # the default sizes
    .venv/bin/python benchmarks/quantization.py --rounds 5 --shapes 1x64,8x64
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before numba or torch load libgomp

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "lessons" / "_generated" / "quantization_table.md"
CONTESTANTS = ("tensor fp32", "tensor int8", "torch fp32", "torch int8")
CALIBRATION_BATCHES = 4


def _images(batch: int, size: int, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, 3, size, size)).astype(np.float32)


def _models(lib_name: str, int8: bool, batch: int, size: int):
    """(float model, model to time) for one library; int8 models calibrated on 4 batches."""
    sys.path.insert(0, str(ROOT))  # a script: the checkout is not on its path
    from tests.ch07.ch07_models import twins

    ours, theirs = twins(width=64)
    calibration = [_images(batch, size, seed=100 + i) for i in range(CALIBRATION_BATCHES)]
    if lib_name == "tensor":
        import tensor
        from minifx.quantization import convert_fx, get_default_qconfig_mapping, prepare_fx

        if not int8:
            return ours, ours
        prepared = prepare_fx(ours, get_default_qconfig_mapping(), (tensor.zeros(1, 3, 8, 8),))
        for images in calibration:
            prepared(tensor.from_numpy(images))
        return ours, convert_fx(prepared)
    import torch

    torch.backends.quantized.engine = "x86"
    if not int8:
        return theirs, theirs
    import warnings

    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's deprecation notices
        mapping = get_default_qconfig_mapping("x86")
        prepared = prepare_fx(theirs, mapping, (torch.zeros(1, 3, 8, 8),))
        for images in calibration:
            prepared(torch.from_numpy(images))
        return theirs, convert_fx(prepared)


def worker(contestant: str, batch: int, size: int, repeat: int) -> dict:
    """Time one contestant in this process; for int8 ones, also measure accuracy."""
    import numpy as np

    lib_name, precision = contestant.split()
    float_model, model = _models(lib_name, precision == "int8", batch, size)
    if lib_name == "tensor":
        import tensor

        wrap, unwrap = tensor.from_numpy, lambda t: t.numpy()
    else:
        import torch

        wrap, unwrap = torch.from_numpy, lambda t: t.detach().numpy()
        torch.set_grad_enabled(False)
    x = wrap(_images(batch, size, seed=1))
    for _ in range(2):  # warm-up: numba loads (or compiles) its kernels
        model(x)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        model(x)
        times.append(time.perf_counter() - start)
    result = {"median": statistics.median(times)}
    if lib_name == "tensor" and precision == "int8":
        result["kernel"] = getattr(tensor.backend.int8(), "PATH", "taught (TENSOR_FAST=0)")
    if precision == "int8":
        cosines, agree = [], []
        for seed in range(4):
            images = wrap(_images(8, size, seed=200 + seed))
            a, b = unwrap(float_model(images)), unwrap(model(images))
            cosines += list((a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1))
            agree += list(a.argmax(1) == b.argmax(1))
        result["cosine_min"] = float(min(cosines))
        result["top1"] = float(np.mean(agree))
    return result


def run(contestant: str, batch: int, size: int, repeat: int) -> dict:
    command = [sys.executable, __file__, "--worker", contestant, "--shape", f"{batch}x{size}",
               "--repeat", str(repeat)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def cpu_description() -> str:
    """The CPU's model and which of the int8 instructions' extensions it has."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        model = next(line.split(":", 1)[1].strip() for line in lines
                     if line.startswith("model name"))
        flags = set(next(line.split(":", 1)[1].split() for line in lines
                         if line.startswith("flags")))
    except (OSError, StopIteration):  # not Linux: the model only
        pass
    names = {"AVX2": "avx2", "AVX-512": "avx512f", "AVX-512 VNNI": "avx512_vnni",
             "AMX-INT8": "amx_int8"}
    has = ", ".join(f"{name} {'yes' if flag in flags else 'no'}" for name, flag in names.items())
    return f"{model} ({has})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="1x64,8x64,1x224",
                        help="batch x image size pairs, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--shape", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        batch, size = map(int, args.shape.split("x"))
        print(json.dumps(worker(args.worker, batch, size, args.repeat)))
        return

    shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",")]
    cpu = cpu_description()
    print(f"CPU: {cpu}")
    rows, accuracy = [], {}
    for batch, size in shapes:
        medians: dict[str, list[float]] = {c: [] for c in CONTESTANTS}
        for round_ in range(args.rounds):
            order = CONTESTANTS[round_ % 4:] + CONTESTANTS[: round_ % 4]  # take turns
            for contestant in order:
                result = run(contestant, batch, size, args.repeat)
                medians[contestant].append(result["median"])
                if "top1" in result:
                    accuracy[contestant] = result
        ms = {c: 1000 * statistics.median(v) for c, v in medians.items()}
        rows.append((batch, size, ms))
        times = ", ".join(f"{c} {t:.1f} ms" for c, t in ms.items())
        ratio = ms["tensor int8"] / ms["torch int8"]
        print(f"batch {batch}, {size}x{size}: {times}; tensor int8 / torch int8 = {ratio:.2f}")

    lines = [
        "| input | tensor fp32 | tensor int8 | torch fp32 | torch int8 "
        "| tensor int8 / torch int8 | tensor int8 / tensor fp32 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for batch, size, ms in rows:
        lines.append(
            f"| {batch} x 3 x {size} x {size} | {ms['tensor fp32']:.1f} ms "
            f"| {ms['tensor int8']:.1f} ms | {ms['torch fp32']:.1f} ms | {ms['torch int8']:.1f} ms "
            f"| {ms['tensor int8'] / ms['torch int8']:.2f} "
            f"| {ms['tensor int8'] / ms['tensor fp32']:.2f} |"
        )
    lines += [
        "",
        "| int8 model | cosine similarity to its float model (min over 32 images) "
        "| top-1 agreement |",
        "|---|---:|---:|",
    ]
    for contestant in ("tensor int8", "torch int8"):
        result = accuracy[contestant]
        lines.append(f"| {contestant} | {result['cosine_min']:.4f} | {100 * result['top1']:.0f}% |")
    cores = os.cpu_count()
    lines += ["", f"CPU: {cpu}. `tensor`'s int8 kernel: {accuracy['tensor int8']['kernel']}; "
              "torch's: its x86 engine (FBGEMM and oneDNN).", "",
              f"Medians of {args.rounds} rounds x {args.repeat} runs, each contestant in its "
              f"own process, {cores} cores of a shared machine: read the ratios, not the "
              "milliseconds. Written by `benchmarks/quantization.py`."]
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nwrote {TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
