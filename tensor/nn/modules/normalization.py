"""BatchNorm2d and LayerNorm."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._dtype import dtype
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from .._layer_utils import empty_parameter, filled_buffer
from ..module import Module


class BatchNorm2d(Module):
    """Per-channel normalisation of (N, C, H, W) input.

    In training it normalises with the batch's statistics and moves the running
    statistics towards them (``momentum``; ``None`` means a cumulative average
    over ``num_batches_tracked``); in eval it uses the running statistics.
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        dtype: dtype | None = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = empty_parameter((num_features,), dtype)
            if bias:
                self.bias = empty_parameter((num_features,), dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", filled_buffer((num_features,), 0.0, dtype))
            self.register_buffer("running_var", filled_buffer((num_features,), 1.0, dtype))
            self.register_buffer(
                "num_batches_tracked", Tensor._from_array(np.array(0, dtype=np.int64))
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        if isinstance(input, Tensor) and input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input) (in "
                             f"{type(self).__name__}: input shape {list(input.shape)})")
        factor = 0.0 if self.momentum is None else self.momentum
        if not self.training:
            # Eval with running statistics, the common case, reads each of them once:
            # a module finds its parameters and buffers through Module.__getattr__,
            # a slow lookup next to the whole of a small batch_norm.
            mean, var = self.running_mean, self.running_var
            if mean is not None and var is not None:
                return F.batch_norm(input, mean, var, self.weight, self.bias, False, factor,
                                    self.eps)
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)  # a public in-place op: dispatch modes see it
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked._array)
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if keep_running else None,
            self.running_var if keep_running else None,
            self.weight,
            self.bias,
            use_batch_stats,
            factor,
            self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift."""

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        dtype: dtype | None = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = empty_parameter(self.normalized_shape, dtype)
            if bias:
                self.bias = empty_parameter(self.normalized_shape, dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )
