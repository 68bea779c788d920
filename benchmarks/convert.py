"""Benchmark: torch models converted to tensor (chapter 11) against torch eager.

Plain Python, no test runner:

    .venv/bin/python benchmarks/convert.py            # ResNet-50 at 224x224, the small ViT
    .venv/bin/python benchmarks/convert.py --quick    # ResNet-50 at 64x64, fewer calls

For each model (ResNet-50 as torchvision lays it out, from
benchmarks/torch_models.py, and the small ViT of tests/ch11/ch11_models.py)
and each batch size (1 and 8), the script starts one process per side, in
turns (torch, tensor, tensor, torch, ...), so that numba's threads and
torch's never contend in one process and a slow moment of the shared machine
hits both sides. The tensor process builds the torch model from the same
seed, converts it with ``minifx.convert.torch_to_tensor``, checks that its
output agrees with torch's, and then times only the converted model. Each
process warms up once and times a few calls; the table gives the median over
all calls of all rounds, per side, and the ratio tensor / torch. It is printed
and written, as Markdown, to lessons/_generated/convert_table.md, which the
chapter 11 lesson includes.
"""

from __future__ import annotations

import os

# Idle OpenMP threads that spin would steal the 2 cores from the other side's
# process; let them sleep (read when torch and numba load their runtimes).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "lessons" / "_generated" / "convert_table.md"
MODELS = ("resnet50", "small_vit")
# Timed calls per process: a ResNet-50 call takes seconds on tensor, a small
# ViT call milliseconds, where many calls are needed for a stable median.
CALLS = {"resnet50": 3, "small_vit": 40}


def build(model: str, batch: int, image: int):
    """The torch model and its input, from a fixed seed (the same in every process)."""
    sys.path.insert(0, str(ROOT))  # a script: the checkout is not on its path
    from tests.ch11.ch11_models import resnet_50, small_vit

    if model == "resnet50":
        return resnet_50(image=image, batch=batch)
    return small_vit(batch=batch)


def worker(side: str, model: str, batch: int, image: int, calls: int) -> list[float]:
    """Time ``calls`` forward passes of one side (after one warm-up call)."""
    import torch

    torch_model, (x,) = build(model, batch, image)
    if side == "torch":
        def run():
            with torch.no_grad():
                return torch_model(x)
    else:
        from minifx.convert import check_conversion

        report = check_conversion(torch_model, (x,))  # also warms up numba's kernels
        if not report.agree:
            raise SystemExit(f"the converted {model} does not agree with torch:\n{report}")
        converted = report.converted
        from minifx.convert.table import conversion_table
        from minifx.convert.values import ValueConverter

        ours = ValueConverter(conversion_table()).tensor(x)

        def run():
            return converted(ours)

    run()
    seconds = []
    for _ in range(calls):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return seconds


def time_side(side: str, model: str, batch: int, image: int, calls: int) -> list[float]:
    """Run one worker process and read its timings."""
    done = subprocess.run(
        [sys.executable, __file__, "--worker", side, "--model", model, "--batch", str(batch),
         "--image", str(image), "--calls", str(calls)],
        capture_output=True, text=True, cwd=ROOT,
    )
    if done.returncode:
        raise SystemExit(f"the {side} process failed:\n{done.stderr}{done.stdout}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(model: str, batch: int, image: int, calls: int, rounds: int) -> dict:
    times: dict[str, list[float]] = {"torch": [], "tensor": []}
    for round_number in range(rounds):
        order = ("torch", "tensor") if round_number % 2 == 0 else ("tensor", "torch")
        for side in order:
            times[side] += time_side(side, model, batch, image, calls)
    torch_ms = 1e3 * statistics.median(times["torch"])
    tensor_ms = 1e3 * statistics.median(times["tensor"])
    return {"model": model, "batch": batch, "torch_ms": torch_ms, "tensor_ms": tensor_ms,
            "ratio": tensor_ms / torch_ms, "calls": len(times["torch"])}


def table(rows: list[dict], image: int, rounds: int) -> str:
    names = {"resnet50": f"ResNet-50, {image}x{image}", "small_vit": "small ViT, 32x32"}
    lines = [
        "| model | batch | torch eager (ms) | tensor, converted (ms) | tensor / torch |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {names[row['model']]} | {row['batch']} | {row['torch_ms']:.1f} | "
            f"{row['tensor_ms']:.1f} | {row['ratio']:.2f} |")
    per_model = ", ".join(f"{row['calls']} for {names[row['model']].split(',')[0]}"
                          for row in rows if row["batch"] == 1)
    lines += [
        "",
        f"Medians over all timed calls of each side ({per_model}), from {rounds} "
        f"processes per side run in turns after one warm-up call each; "
        f"{os.cpu_count()} cores of a shared machine, so read the ratios, not the milliseconds; "
        f"Python {platform.python_version()}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="ResNet-50 at 64x64, fewer calls")
    parser.add_argument("--worker", choices=("torch", "tensor"), help=argparse.SUPPRESS)
    parser.add_argument("--model", choices=MODELS, help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--image", type=int, default=None, help="ResNet-50's input size")
    parser.add_argument("--calls", type=int, default=None,
                        help="timed calls per process (default: 3 for ResNet-50, 40 for the ViT)")
    parser.add_argument("--rounds", type=int, default=2, help="processes per side")
    args = parser.parse_args(argv)
    image = args.image or (64 if args.quick else 224)
    if args.worker:
        calls = args.calls or CALLS[args.model]
        print(json.dumps(worker(args.worker, args.model, args.batch, image, calls)))
        return
    rows = []
    for model in MODELS:
        calls = args.calls or (CALLS[model] // 2 if args.quick else CALLS[model])
        for batch in (1, 8):
            row = measure(model, batch, image, calls, args.rounds)
            print(f"{model:10s} batch {batch}: torch {row['torch_ms']:9.1f} ms   "
                  f"tensor {row['tensor_ms']:9.1f} ms   tensor/torch {row['ratio']:6.2f}",
                  flush=True)
            rows.append(row)
    text = table(rows, image, args.rounds)
    print()
    print(text)
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(text)
    print(f"written to {TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
