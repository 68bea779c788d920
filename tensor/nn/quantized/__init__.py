"""Quantized modules (torch.ao.nn.quantized): int8 weights, quint8 activations, integer kernels.

Each module holds its weight as a per-channel ``qint8`` QTensor, its bias in
float32, and the ``scale`` and ``zero_point`` of its *output*: the kernel
accumulates in int32 and requantizes straight to the output's integers, so
no float tensor is made in between. ``convert_fx`` builds them with
``from_float``, from a float (or fused float) module and the quantization
parameters that calibration found.
"""

from .functional import add, add_relu, mul, mul_relu
from .modules import (
    Conv2d,
    ConvReLU2d,
    DeQuantize,
    Dropout,
    Hardswish,
    Linear,
    LinearReLU,
    Quantize,
    ReLU,
)

__all__ = [
    "Conv2d",
    "ConvReLU2d",
    "DeQuantize",
    "Dropout",
    "Hardswish",
    "Linear",
    "LinearReLU",
    "Quantize",
    "ReLU",
    "add",
    "add_relu",
    "mul",
    "mul_relu",
]
