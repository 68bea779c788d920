"""minifx against torch.fx on the same torch modules: capture costs side by side.

Three torch models are captured by both tracers: a chain of 1,000 and one of
10,000 elementwise operations, and a ResNet-50 (written here in plain
``torch.nn``, bottleneck blocks 3-4-6-3, as torchvision lays it out). For each
one the script times ``symbolic_trace`` (which generates and compiles the
code once), ``recompile``, their sum, ``str(graph)`` and ``copy.deepcopy`` of
the GraphModule, and prints the medians and the ratio minifx / torch.fx (below
1.0 means minifx is faster; the target for tracing and deepcopy is 0.5).

    .venv/bin/python benchmarks/capture_torch.py [--repeat 5] [--sizes 1000,10000]

Before timing, it checks that both tracers produced the same graph text, so
the two sides do the same work.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))

import torch  # noqa: E402
import torch.fx  # noqa: E402
from torch import nn  # noqa: E402

import minifx  # noqa: E402
from benchmarks.capture import median_seconds  # noqa: E402


class TorchChain(nn.Module):
    """``n`` elementwise operations in a row (add, mul, relu, repeat)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def forward(self, x):
        for _ in range(self.n // 3):
            x = x + 1.0
            x = x * 0.5
            x = torch.relu(x)
        for _ in range(self.n % 3):
            x = x + 1.0
        return x


# --8<-- [start:resnet50]
class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        width = planes
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inplanes != planes * self.expansion:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes * self.expansion, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * self.expansion),
            )

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet50(nn.Module):
    def __init__(self, layers=(3, 4, 6, 3), num_classes: int = 1000) -> None:
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * Bottleneck.expansion, num_classes)

    def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        layers = [Bottleneck(self.inplanes, planes, stride)]
        self.inplanes = planes * Bottleneck.expansion
        layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))
# --8<-- [end:resnet50]


def steps(fx, model: nn.Module) -> dict[str, Callable[[], object]]:
    """The timed steps for one tracer (``minifx`` or ``torch.fx``) on ``model``."""
    gm = fx.symbolic_trace(model)

    def trace_and_recompile():
        fx.symbolic_trace(model).recompile()

    return {
        "symbolic_trace": lambda: fx.symbolic_trace(model),
        "recompile": gm.recompile,
        "trace+recompile": trace_and_recompile,
        "str(graph)": lambda: str(gm.graph),
        "deepcopy": lambda: copy.deepcopy(gm),
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


def models(sizes: list[int]) -> dict[str, nn.Module]:
    found: dict[str, nn.Module] = {f"chain {n:,}": TorchChain(n) for n in sizes}
    found["resnet50"] = ResNet50().eval()
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'model':<14}{'nodes':>7}  {'step':<16}{'minifx':>11}{'torch.fx':>11}{'ratio':>8}")
    for name, model in models(sizes).items():
        ours, theirs = minifx.symbolic_trace(model), torch.fx.symbolic_trace(model)
        if str(ours.graph) != str(theirs.graph):
            raise SystemExit(f"{name}: minifx and torch.fx graphs differ; timing would mislead")
        nodes = len(list(ours.graph.nodes))
        mine, reference = steps(minifx, model), steps(torch.fx, model)
        for step in mine:
            a, b = interleaved_medians(mine[step], reference[step], args.repeat)
            times = f"{a * 1e3:>9.2f}ms{b * 1e3:>9.2f}ms{a / b:>8.2f}"
            print(f"{name:<14}{nodes:>7}  {step:<16}{times}")
    print(f"(median of {args.repeat} runs, cyclic GC paused while timing; "
          "ratio = minifx / torch.fx, below 1.0 is faster)")


if __name__ == "__main__":
    main()
