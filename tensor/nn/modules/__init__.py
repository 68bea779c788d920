"""The layer classes, one file per family (as in torch.nn.modules)."""

from .activation import (
    GELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout
from .flatten import Flatten
from .linear import Identity, Linear, NonDynamicallyQuantizableLinear
from .normalization import BatchNorm2d, LayerNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .sparse import Embedding

__all__ = [
    "AdaptiveAvgPool2d",
    "AvgPool2d",
    "BatchNorm2d",
    "Conv2d",
    "Dropout",
    "Embedding",
    "Flatten",
    "GELU",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "Identity",
    "LayerNorm",
    "Linear",
    "MaxPool2d",
    "ModuleDict",
    "ModuleList",
    "MultiheadAttention",
    "NonDynamicallyQuantizableLinear",
    "ReLU",
    "ReLU6",
    "Sequential",
    "Sigmoid",
    "SiLU",
    "Softmax",
    "Tanh",
]
