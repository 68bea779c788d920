"""The int8 ops of the small layers: clamps, the hard and smooth sigmoids, hardswish, mul, cat.

They follow what torch's QuantizedCPU kernels compute, in three families:

- clamps (``relu6``, ``hardtanh``): the bounds are quantized with the
  input's scale and zero point, then the integers are clamped; scale and
  zero point are kept (so convert_fx gives them their input's observer);
- ops whose values lie in a fixed range (``hardsigmoid``, ``sigmoid`` in
  [0, 1], ``tanh`` in [-1, 1]): computed on the dequantized float32 values
  and quantized with the range's fixed parameters (1/256 and 0, or 2/256
  and 128), so the caller needs none;
- ops that need the output's parameters: ``hardswish``, computed on float32
  values and quantized with the scale and zero point it is given, and
  ``mul``, in integers; both with torch's roundings.

``cat`` keeps the first input's parameters and brings the others to them
(convert_fx makes every input share one observer, so there is nothing to do).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dtype import quint8
from ._quantized import QTensor, quantize_affine, quantized_range
from ._tensor import Tensor

__all__ = [
    "qcat",
    "qclamp_hardtanh",
    "qhardsigmoid",
    "qhardswish",
    "qmean",
    "qmul",
    "qrelu6",
    "qsigmoid",
    "qtanh",
]


def _check(x: Any, op: str) -> QTensor:
    if not isinstance(x, QTensor) or x._axis is not None:
        raise TypeError(f"{op}(): expected a per-tensor quantized tensor, got {x!r:.60}")
    return x


def _number(value: Any) -> float:
    return float(value.item() if isinstance(value, Tensor) else value)


def _floats(x: QTensor) -> np.ndarray:
    return x.dequantize()._array


def _quantized(values: np.ndarray, scale: float, zero_point: int) -> QTensor:
    ints = quantize_affine(values.astype(np.float32), scale, zero_point, quint8)
    return QTensor._make(ints, quint8, float(scale), int(zero_point))


def qclamp_hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0,
                    inplace: bool = False) -> QTensor:
    """Clamp the integers between the quantized ``min_val`` and ``max_val``."""
    x = _check(input, "hardtanh")
    lo, hi = (int(quantize_affine(np.float32(v), x._scale, x._zero_point, x._qdtype))
              for v in (min_val, max_val))
    return x._like(np.clip(x._array, lo, hi).astype(x._array.dtype))


def qrelu6(input: Any, inplace: bool = False) -> QTensor:
    return qclamp_hardtanh(input, 0.0, 6.0)


def _fixed(values: np.ndarray, low: float) -> QTensor:
    qmin, qmax = quantized_range(quint8)
    scale = (1.0 - low) / (qmax - qmin + 1)  # 1/256 over [0, 1], 2/256 over [-1, 1]
    return _quantized(values, scale, int(round(-low / scale)))


def qhardsigmoid(input: Any, inplace: bool = False) -> QTensor:
    x = _floats(_check(input, "hardsigmoid"))
    return _fixed(np.clip(x / np.float32(6) + np.float32(0.5), 0, 1), 0.0)


def qsigmoid(input: Any) -> QTensor:
    x = _floats(_check(input, "sigmoid"))
    return _fixed(np.float32(1) / (np.float32(1) + np.exp(-x)), 0.0)


def qtanh(input: Any) -> QTensor:
    return _fixed(np.tanh(_floats(_check(input, "tanh"))), -1.0)


def qhardswish(input: Any, scale: Any, zero_point: Any) -> QTensor:
    """``x * relu6(x + 3) / 6`` quantized with the output's ``scale`` and ``zero_point``.

    In float32 as torch's vectorised kernel: ``x = q * s + (-zp * s)`` rounded once (a fused
    multiply-add), then ``round(y * float32(1 / scale)) + zero_point``. (torch's last
    size-mod-SIMD-width elements take its scalar rule, which may round one step apart.)
    """
    x = _check(input, "hardswish")
    f32 = np.float32
    shift = f32(x._scale) * f32(-x._zero_point)
    values = (x._array.astype(np.float64) * np.float64(f32(x._scale))
              + np.float64(shift)).astype(f32)
    values = values * np.minimum(np.maximum(values + f32(3), f32(0)), f32(6)) / f32(6)
    scale, zero_point = _number(scale), int(_number(zero_point))
    qmin, qmax = quantized_range(quint8)
    q = np.clip(np.rint(values * f32(1.0 / scale)) + zero_point, qmin, qmax)
    return QTensor._make(q.astype(np.uint8), quint8, scale, zero_point)


def qmul(a: Any, b: Any, scale: Any, zero_point: Any, relu: bool = False) -> QTensor:
    """``a * b`` (then ReLU if asked) with the output's ``scale`` and ``zero_point``; ``b`` is
    broadcast (a squeeze-excitation multiplies by one value per channel).

    As torch's kernel: the product of the shifted integers, times the float32 multiplier
    ``s_a * s_b * (1 / s_out)``, rounded, plus the output's zero point.
    """
    a, b = _check(a, "quantized mul"), _check(b, "quantized mul")
    scale, zero_point = _number(scale), int(_number(zero_point))
    f32 = np.float32
    product = (a._array.astype(np.int64) - a._zero_point) * (b._array.astype(np.int64)
                                                               - b._zero_point)
    multiplier = f32(a._scale) * f32(b._scale) * (f32(1) / f32(scale))
    q = np.rint(product.astype(f32) * multiplier) + zero_point
    qmin, qmax = quantized_range(quint8)
    q = np.clip(q, max(qmin, zero_point) if relu else qmin, qmax)
    return QTensor._make(q.astype(np.uint8), quint8, scale, zero_point)


def qcat(tensors: Any, dim: int = 0) -> QTensor:
    first = _check(tensors[0], "cat")
    parts = []
    for t in tensors:
        t = _check(t, "cat")
        same = (t._scale, t._zero_point) == (first._scale, first._zero_point)
        parts.append(t._array if same else
                     quantize_affine(_floats(t), first._scale, first._zero_point, quint8))
    return first._like(np.concatenate(parts, axis=dim))


def qmean(input: Any, dim: Any = None, keepdim: bool = False, **kwargs: Any) -> QTensor:
    """The mean of the dequantized values, quantized with the input's parameters."""
    x = _check(input, "mean")
    axis = tuple(dim) if isinstance(dim, (list, tuple)) else dim
    values = _floats(x).mean(axis=axis, keepdims=keepdim, dtype=np.float32)
    return x._like(quantize_affine(np.asarray(values), x._scale, x._zero_point, x._qdtype))
