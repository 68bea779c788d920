"""Identity and Linear."""

from __future__ import annotations

from typing import Any

from ..._dtype import dtype
from ..._tensor import Tensor
from .. import functional as F
from .._layer_utils import empty_parameter, reset_weight_and_bias
from ..module import Module


class Identity(Module):
    """Returns its input unchanged (a placeholder, e.g. for a fused-away BatchNorm)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x @ weight.T + bias, with weight of shape (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: dtype | None = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = empty_parameter((out_features, in_features), dtype)
        if bias:
            self.bias = empty_parameter((out_features,), dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh weights and bias at torch's default scale."""
        reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name, as torch's MultiheadAttention holds its ``out_proj``
    (torch's dynamic quantization skips it by that name); it prints with its own name."""
