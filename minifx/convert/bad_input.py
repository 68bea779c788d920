"""What the converter refuses before it traces: weights and inputs tensor cannot hold, and hooks.

``tensor`` computes on the CPU in float32 and float64, so a model on CUDA or in
float16 or bfloat16 is refused with that sentence, one line per tensor at
fault. A forward hook would be lost twice over: tracing records a module's
forward op by op (chapter 9 refuses that), and a leaf's ``tensor`` twin has
no hooks either; so every hooked module is refused, leaves included.
"""

from __future__ import annotations

from typing import Any

from .errors import Unsupported
from .table import ConversionTable
from .values import unsupported_tensor


def weight_problems(module: Any, table: ConversionTable) -> list[Unsupported]:
    """Every parameter and buffer on another device or in another dtype."""
    problems = []
    named = [("parameter", n, v) for n, v in module.named_parameters()]
    named += [("buffer", n, v) for n, v in module.named_buffers()]
    for kind, name, value in named:
        reason = unsupported_tensor(value, table)
        if reason:
            problems.append(Unsupported(f"{kind} {name}", reason, hint=_fix(value)))
    return problems


def input_problems(example_inputs: Any, table: ConversionTable) -> list[Unsupported]:
    """Every example input tensor on another device or in another dtype."""
    import torch

    inputs = example_inputs if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    problems = []
    for index, value in enumerate(inputs):
        if isinstance(value, torch.Tensor):
            reason = unsupported_tensor(value, table)
            if reason:
                problems.append(Unsupported(f"example input {index}", reason, hint=_fix(value)))
    return problems


def _fix(value: Any) -> str:
    if value.device.type != "cpu":
        return "move the model to the CPU first (model.cpu())"
    if value.is_floating_point():
        return "convert the model to float32 first (model.float())"
    return ""


def hook_problems(module: Any) -> list[Unsupported]:
    """Every module with a forward hook or pre-hook (tracing or the twin would lose it)."""
    from ..frameworks.torch_framework import _hooks_of

    problems = []
    for qualname, submodule in module.named_modules():
        hooks = _hooks_of(submodule)
        if hooks:
            where = f"submodule {qualname}" if qualname else "the root module"
            problems.append(Unsupported(
                f"{where} ({type(submodule).__name__})",
                f"it has {', '.join(hooks)}, which the converted model would not run",
                hint="remove the hook, or apply what it does in forward"))
    return problems
