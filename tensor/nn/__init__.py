"""tensor.nn: modules, parameters and the functional ops, spelled as in torch.nn.

As after ``import torch``, every subpackage is an attribute once ``tensor`` is
imported: ``tensor.nn.quantized.Linear`` works without importing
``tensor.nn.quantized`` first.
"""

from . import functional, init, intrinsic, quantized, utils
from .module import Module
from .modules import (
    GELU,
    AdaptiveAvgPool2d,
    AvgPool2d,
    BatchNorm2d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    Identity,
    LayerNorm,
    Linear,
    MaxPool2d,
    ModuleDict,
    ModuleList,
    MultiheadAttention,
    ReLU,
    ReLU6,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from .parameter import Parameter

__all__ = [
    "GELU",
    "AdaptiveAvgPool2d",
    "AvgPool2d",
    "BatchNorm2d",
    "Conv2d",
    "Dropout",
    "Embedding",
    "Flatten",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "Identity",
    "LayerNorm",
    "Linear",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "MultiheadAttention",
    "Parameter",
    "ReLU",
    "ReLU6",
    "Sequential",
    "Sigmoid",
    "SiLU",
    "Softmax",
    "Tanh",
    "functional",
    "init",
    "intrinsic",
    "quantized",
    "utils",
]
