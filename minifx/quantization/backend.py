"""What each framework quantizes and with what: the one table the passes consult.

torch.ao calls this a backend config. The passes (fuse, prepare, convert)
name no framework; they ask this table which float modules have a quantized
twin, how every other op is observed and lowered (``op_table.py``, resolved
for the framework), and which functions quantize, add, multiply and dequantize. The tensor
entry points at ``tensor.nn.intrinsic`` and ``tensor.nn.quantized``; the
torch entry at torch's own ``torch.ao.nn`` modules and ``torch.ops.quantized``,
so a converted torch model is the one torch's convert_fx builds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._framework import Framework
from .op_table import OpSet, resolve_op_table

__all__ = ["QuantBackend", "backend_for"]


@dataclass
class QuantBackend:
    """One framework's answers (see the module docstring)."""

    conv: type
    linear: type
    relu_module: type
    conv_relu: type  # fused float modules (Conv2d + ReLU), built as conv_relu(conv, relu)
    linear_relu: type
    quantized_modules: dict[type, type]  # float (or fused) module type -> quantized type
    ops: dict[str, OpSet]  # op_table's kinds, resolved for this framework
    fixed_range: dict[Any, str]  # a "fixed" op -> '0to1' or 'neg1to1'
    relu_functions: tuple[Callable, ...]
    quantize_per_tensor: Callable
    quint8: Any
    # {"add": (quantized add, quantized add_relu), "mul": (...)}, by the float function's name
    quantized_binary: dict[str, tuple[Callable, Callable]]
    scalar: Callable[[Any], Any]  # a Python number as a 0-d tensor (scale, zero point)
    quantize_weight: Callable[[Any, np.ndarray, np.ndarray], Any]  # per-channel qint8
    # (quantized type, float module, quantized weight, scale, zero point) -> quantized module
    build_quantized: Callable[..., Any]
    wrap_observer: Callable[[Any], Any] = field(default=lambda observer: observer)
    # (FloatFunctional class, its FX twin's class): prepare_fx swaps the first for the second
    float_functional: tuple[type, type] | None = None


def _tensor_backend() -> QuantBackend:
    import tensor
    import tensor.nn as nn
    import tensor.nn.functional as F
    import tensor.nn.intrinsic as nni
    import tensor.nn.quantized as nnq

    def quantize_weight(weight, scales, zero_points):
        return tensor.quantize_per_channel(
            weight.detach(), tensor.from_numpy(scales.astype(np.float64)),
            tensor.from_numpy(zero_points.astype(np.int64)), 0, tensor.qint8,
        )

    ops, fixed_range = resolve_op_table(tensor)
    return QuantBackend(
        conv=nn.Conv2d, linear=nn.Linear, relu_module=nn.ReLU,
        conv_relu=nni.ConvReLU2d, linear_relu=nni.LinearReLU,
        quantized_modules={
            nn.Conv2d: nnq.Conv2d, nni.ConvReLU2d: nnq.ConvReLU2d,
            nn.Linear: nnq.Linear, nni.LinearReLU: nnq.LinearReLU,
            nn.Dropout: nnq.Dropout, nn.Hardswish: nnq.Hardswish,
        },
        ops=ops, fixed_range=fixed_range,
        relu_functions=(tensor.relu, F.relu),
        quantize_per_tensor=tensor.quantize_per_tensor, quint8=tensor.quint8,
        quantized_binary={"add": (nnq.add, nnq.add_relu), "mul": (nnq.mul, nnq.mul_relu)},
        scalar=lambda value: tensor.tensor(value),
        quantize_weight=quantize_weight,
        build_quantized=lambda qtype, module, weight, scale, zp: qtype.from_float(
            module, weight, scale, zp
        ),
    )


def _torch_backend() -> QuantBackend:
    import torch
    import torch.ao.nn.intrinsic as nni
    import torch.ao.nn.intrinsic.quantized as nniq
    import torch.ao.nn.quantized as nnq
    import torch.nn as nn
    import torch.nn.functional as F

    from .torch_support import TorchObserver, build_torch_quantized

    def quantize_weight(weight, scales, zero_points):
        return torch.quantize_per_channel(
            weight.detach().float(), torch.from_numpy(scales.astype(np.float64)),
            torch.from_numpy(zero_points.astype(np.int64)), 0, torch.qint8,
        )

    ops, fixed_range = resolve_op_table(torch)
    quantized = torch.ops.quantized
    return QuantBackend(
        conv=nn.Conv2d, linear=nn.Linear, relu_module=nn.ReLU,
        conv_relu=nni.ConvReLU2d, linear_relu=nni.LinearReLU,
        quantized_modules={
            nn.Conv2d: nnq.Conv2d, nni.ConvReLU2d: nniq.ConvReLU2d,
            nn.Linear: nnq.Linear, nni.LinearReLU: nniq.LinearReLU,
            nn.Dropout: nnq.Dropout, nn.Hardswish: nnq.Hardswish,
        },
        ops=ops, fixed_range=fixed_range,
        relu_functions=(torch.relu, F.relu),
        quantize_per_tensor=torch.quantize_per_tensor, quint8=torch.quint8,
        quantized_binary={"add": (quantized.add, quantized.add_relu),
                          "mul": (quantized.mul, quantized.mul_relu)},
        scalar=lambda value: torch.tensor(value),
        quantize_weight=quantize_weight,
        build_quantized=build_torch_quantized,
        wrap_observer=TorchObserver,
        float_functional=(nnq.FloatFunctional, nnq.FXFloatFunctional),
    )


_BUILDERS = {"tensor": _tensor_backend, "torch": _torch_backend}
_CACHE: dict[str, QuantBackend] = {}


def backend_for(framework: Framework) -> QuantBackend:
    """The quantization table of ``framework`` (built once, on first use)."""
    if framework.name not in _BUILDERS:
        raise ValueError(f"quantization: no backend table for framework {framework.name!r}")
    if framework.name not in _CACHE:
        _CACHE[framework.name] = _BUILDERS[framework.name]()
    return _CACHE[framework.name]
