"""Quantized tensors: small integers that stand for real numbers.

An affine quantization maps a real number ``r`` to an integer ``q`` with two
numbers, a ``scale`` (the real step between two neighbouring integers) and a
``zero_point`` (the integer that stands for the real 0)::

    q = clamp(round(r / scale) + zero_point, qmin, qmax)
    r ~ (q - zero_point) * scale

A :class:`QTensor` keeps the integers in its NumPy array (``uint8`` for
``quint8``, ``int8`` for ``qint8``, ``int32`` for ``qint32``) and the
quantization parameters beside it: one scale and zero point for the whole
tensor (per-tensor), or one pair per slice along ``axis`` (per-channel, used
for weights, where each output channel has its own range).

The rounding is torch's, measured against torch 2.13 on x86: per-tensor,
``nearbyint(r * (1/scale) + zero_point)`` in float32 with a single rounding
of the multiply-add (a fused multiply-add, which is what torch's vectorised
loop computes), so ties go to the even integer *after* adding the zero point;
per-channel, the same in float32 but with the product rounded before the zero
point is added (two roundings, no fused multiply-add).

Operations reach a QTensor through the ``__tensor_function__`` protocol, the
way torch's dispatcher picks a QuantizedCPU kernel: the functions that only
move elements (``flatten``, ``reshape``, ``view``, ...) keep the integers and
the parameters; ``relu``, ``max_pool2d`` and ``adaptive_avg_pool2d`` have
integer kernels; anything else is refused with an error that names the
function and says to call ``dequantize()`` first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dtype import dtype, qint8, qint32, quint8
from ._tensor import Tensor, tensor_repr

__all__ = [
    "QTensor",
    "per_channel_affine",
    "per_channel_symmetric",
    "per_tensor_affine",
    "per_tensor_symmetric",
    "qscheme",
    "quantize_per_channel",
    "quantize_per_tensor",
    "quantized_range",
]


class qscheme:  # noqa: N801 (torch spells it in lower case)
    """How a tensor is quantized: per tensor or per channel, affine or symmetric."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"tensor.{self.name}"

    def __reduce__(self):
        return _qscheme_by_name, (self.name,)


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
_QSCHEMES = {
    s.name: s
    for s in (per_tensor_affine, per_channel_affine, per_tensor_symmetric, per_channel_symmetric)
}


def _qscheme_by_name(name: str) -> qscheme:
    return _QSCHEMES[name]


_RANGES = {quint8: (0, 255), qint8: (-128, 127), qint32: (-(2**31), 2**31 - 1)}


def quantized_range(qdtype: dtype) -> tuple[int, int]:
    """The integers a quantized dtype can hold: (0, 255) for quint8, (-128, 127) for qint8."""
    if qdtype not in _RANGES:
        raise TypeError(f"expected a quantized dtype (quint8, qint8, qint32), got {qdtype!r}")
    return _RANGES[qdtype]


def _number(value: Any, what: str) -> float | int:
    """A scale or zero point given as a Python number or a one-element tensor."""
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"quantize_per_tensor(): {what} must be a single number")
        return value.item()
    return value


def _float_input(x: Any, op: str) -> np.ndarray:
    if not isinstance(x, Tensor) or isinstance(x, QTensor):
        raise TypeError(f"{op}(): expected a float Tensor, got {type(x).__name__}")
    arr = x._array
    if arr.dtype.kind != "f":
        raise TypeError(f"{op}(): expected a float Tensor, got {x.dtype!r}")
    return arr


# --8<-- [start:quantize]
def quantize_affine(values: np.ndarray, scale: float, zero_point: int, qdtype: dtype) -> np.ndarray:
    """Real numbers to the integers of ``qdtype`` with one scale and zero point, torch's rounding.

    float32 ``r * inv_scale + zero_point`` rounded once (an exact product in
    float64, then one rounding to float32, is what a fused multiply-add
    gives), then round half to even, then clamp.
    """
    qmin, qmax = quantized_range(qdtype)
    inv_scale = np.float64(np.float32(1.0) / np.float32(scale))
    shifted = (values.astype(np.float64) * inv_scale + zero_point).astype(np.float32)
    q = np.clip(np.rint(shifted), qmin, qmax)
    return q.astype(qdtype.numpy_dtype)
# --8<-- [end:quantize]


def quantize_per_tensor(input: Tensor, scale: Any, zero_point: Any, dtype: dtype) -> QTensor:
    """``input`` as integers of ``dtype`` with one ``scale`` and ``zero_point`` (torch's name)."""
    arr = _float_input(input, "quantize_per_tensor")
    scale, zero_point = float(_number(scale, "scale")), int(_number(zero_point, "zero_point"))
    if not scale > 0:
        raise ValueError(f"quantize_per_tensor(): scale must be positive, got {scale}")
    q = quantize_affine(arr, scale, zero_point, dtype)
    return QTensor._make(q, dtype, scale, zero_point)


def quantize_per_channel(
    input: Tensor, scales: Tensor, zero_points: Tensor, axis: int, dtype: dtype
) -> QTensor:
    """``input`` quantized with one (scale, zero point) per index along ``axis`` (weights)."""
    arr = _float_input(input, "quantize_per_channel")
    scale_arr = np.asarray(scales, dtype=np.float64).reshape(-1)
    zp_arr = np.asarray(zero_points, dtype=np.int64).reshape(-1)
    axis = axis % arr.ndim
    if scale_arr.size != arr.shape[axis] or zp_arr.size != arr.shape[axis]:
        raise ValueError(
            f"quantize_per_channel(): expected {arr.shape[axis]} scales and zero points "
            f"(the size of dim {axis}), got {scale_arr.size} and {zp_arr.size}"
        )
    shape = [1] * arr.ndim
    shape[axis] = -1
    qmin, qmax = quantized_range(dtype)
    inv_scale = (np.float32(1.0) / scale_arr.astype(np.float32)).reshape(shape)
    shifted = arr.astype(np.float32) * inv_scale + zp_arr.reshape(shape).astype(np.float32)
    q = np.clip(np.rint(shifted), qmin, qmax).astype(dtype.numpy_dtype)
    return QTensor._make(q, dtype, scale_arr, zp_arr, axis)


class QTensor(Tensor):
    """A quantized tensor: integers in ``_array`` and the (scale, zero point) that give them
    meaning. Its ``dtype`` is ``tensor.quint8``, ``tensor.qint8`` or ``tensor.qint32``."""

    __slots__ = ("_qdtype", "_scale", "_zero_point", "_axis")

    @classmethod
    def _make(
        cls, ints: np.ndarray, qdtype: dtype, scale: Any, zero_point: Any, axis: int | None = None
    ) -> QTensor:
        t = object.__new__(cls)
        t._array = ints
        t._qdtype = qdtype
        t._scale = scale  # a float, or a float64 array (per channel)
        t._zero_point = zero_point  # an int, or an int64 array (per channel)
        t._axis = axis  # None for per-tensor
        return t

    def _like(self, ints: np.ndarray) -> QTensor:
        """New integers with this tensor's quantization parameters (per-tensor only)."""
        return QTensor._make(ints, self._qdtype, self._scale, self._zero_point, self._axis)

    @property
    def dtype(self) -> dtype:
        return self._qdtype

    @property
    def is_quantized(self) -> bool:
        return True

    def qscheme(self) -> qscheme:
        return per_tensor_affine if self._axis is None else per_channel_affine

    def _per_tensor(self, name: str) -> None:
        if self._axis is not None:
            raise RuntimeError(f"{name}(): expected a per-tensor quantized tensor, got per-channel")

    def _per_channel(self, name: str) -> None:
        if self._axis is None:
            raise RuntimeError(f"{name}(): expected a per-channel quantized tensor, got per-tensor")

    def q_scale(self) -> float:
        self._per_tensor("q_scale")
        return self._scale

    def q_zero_point(self) -> int:
        self._per_tensor("q_zero_point")
        return self._zero_point

    def q_per_channel_scales(self) -> Tensor:
        self._per_channel("q_per_channel_scales")
        return Tensor._from_array(self._scale.copy())

    def q_per_channel_zero_points(self) -> Tensor:
        self._per_channel("q_per_channel_zero_points")
        return Tensor._from_array(self._zero_point.copy())

    def q_per_channel_axis(self) -> int:
        self._per_channel("q_per_channel_axis")
        return self._axis

    def int_repr(self) -> Tensor:
        """The stored integers as an int32 tensor (torch gives uint8/int8: `tensor` has no
        8-bit integer dtype, and int32 holds every value of quint8, qint8 and qint32)."""
        return Tensor._from_array(self._array.astype(np.int32))

    def dequantize(self) -> Tensor:
        """Back to float32: ``(q - zero_point) * scale``, computed as torch does (float32)."""
        if self._axis is None:
            values = (self._array.astype(np.int64) - self._zero_point).astype(np.float32)
            return Tensor._from_array(values * np.float32(self._scale))
        shape = [1] * self._array.ndim
        shape[self._axis] = -1
        zp = self._zero_point.reshape(shape)
        scale = self._scale.reshape(shape)  # float64, as torch keeps per-channel scales
        values = (self._array.astype(np.int64) - zp) * scale
        return Tensor._from_array(values.astype(np.float32))

    def __repr__(self) -> str:
        size = tuple(self._array.shape)
        extras = [f"size={size}", f"dtype={self._qdtype!r}"]
        extras.append(f"quantization_scheme={self.qscheme()!r}")
        if self._axis is None:
            extras += [f"scale={self._scale!r}", f"zero_point={self._zero_point!r}"]
        else:
            scales = Tensor._from_array(self._scale)
            zps = Tensor._from_array(self._zero_point)
            extras += [f"scale={scales!r}", f"zero_point={zps!r}", f"axis={self._axis}"]
        return tensor_repr(self.dequantize(), "tensor", extras)

    def __reduce__(self):
        return QTensor._make, (
            self._array.copy(), self._qdtype, self._scale, self._zero_point, self._axis
        )

    @classmethod
    def __tensor_function__(cls, func, types, args=(), kwargs=None):
        """Route a call to its quantized kernel, or refuse it by name."""
        from ._quantized_ops import quantized_implementation

        impl = quantized_implementation(func)
        if impl is None:
            name = "tensor." + getattr(func, "__qualname__", getattr(func, "__name__", "?"))
            raise NotImplementedError(
                f"{name} has no kernel for quantized tensors; call .dequantize() first to "
                "compute it in float (convert_fx leaves such ops between dequantize and "
                "quantize_per_tensor)"
            )
        return impl(*args, **(kwargs or {}))
