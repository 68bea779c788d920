"""Fold an eval-mode BatchNorm into the convolution before it.

In eval mode BatchNorm is an affine map per output channel,
``y = (x - mean) / sqrt(var + eps) * gamma + beta``. Applied to a convolution's
output it scales each output channel's filter and shifts its bias, so the
pair becomes a single convolution with

    W' = W * (gamma / sqrt(var + eps))            (per output channel)
    b' = (b - mean) * gamma / sqrt(var + eps) + beta

which is what chapter 7 (Conv+BN fusion) builds a graph pass around.
"""

from __future__ import annotations

import copy

import numpy as np

from ..._tensor import Tensor
from ..modules.conv import Conv2d
from ..modules.normalization import BatchNorm2d
from ..parameter import Parameter


def _array(t: Tensor | None) -> np.ndarray | None:
    return None if t is None else t._array


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
) -> tuple[Parameter, Parameter]:
    """The fused (weight, bias) of a convolution followed by an eval-mode BatchNorm.

    ``conv_w`` is (out_channels, in_channels / groups, kh, kw); the BatchNorm
    statistics and affine parameters, and ``conv_b``, are (out_channels,).
    Missing ones (None) act as weight 1 and bias 0. Both results keep the
    weight's dtype and its ``requires_grad``.
    """
    w = conv_w._array
    dtype = w.dtype
    out_channels = w.shape[0]
    mean, var = bn_rm._array, bn_rv._array
    gamma = np.ones(out_channels, dtype) if bn_w is None else bn_w._array
    beta = np.zeros(out_channels, dtype) if bn_b is None else bn_b._array
    bias = np.zeros(out_channels, dtype) if conv_b is None else conv_b._array
    scale = gamma / np.sqrt(var + bn_eps)  # (out_channels,)
    fused_w = (w * scale.reshape(-1, *([1] * (w.ndim - 1)))).astype(dtype)
    fused_b = ((bias - mean) * scale + beta).astype(dtype)
    requires_grad = getattr(conv_w, "requires_grad", False)  # plain tensors: False, as torch
    return (
        Parameter(Tensor._from_array(fused_w), requires_grad=requires_grad),
        Parameter(Tensor._from_array(fused_b), requires_grad=requires_grad),
    )


def fuse_conv_bn_eval(conv: Conv2d, bn: BatchNorm2d) -> Conv2d:
    """A copy of ``conv`` that computes ``bn(conv(x))``; both must be in eval mode."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_conv_bn_eval needs a BatchNorm with running statistics")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused
