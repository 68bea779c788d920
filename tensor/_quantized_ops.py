"""What a quantized tensor can go through, and the integer ops behind ``tensor.nn.quantized``.

Three kinds of operation meet a :class:`~tensor._quantized.QTensor`:

- ops that only move elements (``flatten``, ``reshape``, ``view``, ...): they
  run on the integers and keep the scale and zero point;
- ops whose result can keep the input's scale and zero point (``relu``,
  ``max_pool2d``, ``adaptive_avg_pool2d``; ``relu6``, ``hardtanh``, ``cat``
  and ``mean`` in ``_quantized_elementwise``): an integer kernel each;
- ops with a fixed output range (``hardsigmoid``, ``sigmoid``, ``tanh``);
- ops that need new quantization parameters (linear, conv2d, add): the
  functions at the bottom, which the quantized modules call with the output's
  scale and zero point.

Everything else is refused by ``QTensor.__tensor_function__``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _functions
from . import _quantized_elementwise as qe
from ._dtype import quint8
from ._quantized import QTensor, quantized_range
from ._shape import output_hw
from ._tensor import Tensor
from .backend import int8

__all__ = [
    "prepack",
    "qadd",
    "qconv2d",
    "qlinear",
    "quantized_implementation",
]


def _pair(v) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _per_tensor(x: Any, op: str) -> QTensor:
    if not isinstance(x, QTensor) or x._axis is not None:
        raise TypeError(f"{op}(): expected a per-tensor quantized tensor, got {x!r:.60}")
    return x


def _moving(func: Callable) -> Callable:
    """Run ``func`` on the integers (a plain int tensor) and keep the quantization parameters."""

    def run(*args, **kwargs):
        source = next(a for a in args if isinstance(a, QTensor))
        _per_tensor(source, getattr(func, "__name__", "op"))
        plain = [Tensor._from_array(a._array) if isinstance(a, QTensor) else a for a in args]
        result = func(*plain, **kwargs)
        if isinstance(result, Tensor):
            return source._like(result._array)
        return result

    return run


def _relu(input: QTensor, inplace: bool = False) -> QTensor:
    """max(q, zero_point): the integer of the real 0 is the floor."""
    x = _per_tensor(input, "relu")
    return x._like(np.maximum(x._array, np.asarray(x._zero_point, dtype=x._array.dtype)))


def _max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    x = _per_tensor(input, "max_pool2d")
    if ceil_mode:
        raise NotImplementedError("quantized max_pool2d: ceil_mode=True is not supported")
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(kernel_size if stride is None or stride == [] else stride)
    ph, pw = _pair(padding)
    dh, dw = _pair(dilation)
    arr = x._array
    squeeze = arr.ndim == 3
    if squeeze:
        arr = arr[None]
    n, c, h, w = arr.shape
    oh, ow = output_hw((h, w), (kh, kw), (sh, sw), (ph, pw), (dh, dw))
    out = int8().max_pool2d(arr, (kh, kw), (sh, sw), (ph, pw), (dh, dw), oh, ow)
    return x._like(out[0] if squeeze else out)


def _adaptive_avg_pool2d(input, output_size):
    x = _per_tensor(input, "adaptive_avg_pool2d")
    arr = x._array
    squeeze = arr.ndim == 3
    if squeeze:
        arr = arr[None]
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    oh, ow = (arr.shape[2 + i] if s is None else int(s) for i, s in enumerate(output_size))
    out = int8().adaptive_avg_pool2d(arr, oh, ow)
    return x._like(out[0] if squeeze else out)


_TABLE: dict[Callable, Callable] | None = None


def _build_table() -> dict[Callable, Callable]:
    from .nn import functional as F

    table: dict[Callable, Callable] = {}
    moving = [
        Tensor.flatten, _functions.flatten, Tensor.reshape, _functions.reshape, Tensor.view,
        Tensor.contiguous, Tensor.clone, Tensor.detach, Tensor.size, Tensor.dim, Tensor.numel,
        Tensor.stride, Tensor.is_contiguous, Tensor.__getitem__,
    ]
    for func in moving:
        table[func] = _moving(func)
    for func in (F.relu, _functions.relu, Tensor.relu):
        table[func] = _relu
    table[F.max_pool2d] = _max_pool2d
    table[F.adaptive_avg_pool2d] = _adaptive_avg_pool2d
    for func in (Tensor.transpose, _functions.transpose, Tensor.permute):
        table[func] = _moving(func)
    table[F.dropout] = _dropout
    elementwise = {
        F.relu6: qe.qrelu6, F.hardtanh: qe.qclamp_hardtanh, F.hardsigmoid: qe.qhardsigmoid,
        F.sigmoid: qe.qsigmoid,
        _functions.sigmoid: qe.qsigmoid, Tensor.sigmoid: qe.qsigmoid, F.tanh: qe.qtanh,
        _functions.tanh: qe.qtanh, Tensor.tanh: qe.qtanh, _functions.cat: qe.qcat,
        Tensor.mean: qe.qmean, _functions.mean: qe.qmean,
    }
    table.update(elementwise)
    return table


def _dropout(input, p=0.5, training=True, inplace=False):
    """Dropout in eval mode is the identity; a quantized model is only ever evaluated.
    In training, torch refuses it too (it has no quantized bernoulli)."""
    if training:
        raise NotImplementedError("quantized dropout: only eval mode (training=False), as in "
                                  "torch, which has no random dropout of quantized values")
    return _per_tensor(input, "dropout")


def quantized_implementation(func: Callable) -> Callable | None:
    """The quantized version of the public function ``func``, or None when there is none."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _build_table()
    return _TABLE.get(func)


# ---------------------------------------------------------------------- ops with new qparams


def _requant_args(scale: float, zero_point: int, x: QTensor, weight: QTensor, bias):
    """The float32 constants of the requantization: s_x * s_w per row, bias, 1/s_out.

    A per-tensor weight (as a freshly built module has) lends its one scale to every row.
    Made once for each input scale, output scale and bias, and kept on the weight (the
    same arrays each call: the fast layer keys its plans by them).
    """
    cache, key = weight.__dict__.setdefault("_requant_args", {}), (x._scale, scale, id(bias))
    if cache.get(key, (None,))[0] is not bias or key not in cache:
        if len(cache) >= 8:  # (inputs of ever new scales: keep the last few)
            cache.clear()
        rows = weight._array.shape[0]
        w_scales = np.broadcast_to(np.asarray(weight._scale, dtype=np.float32), (rows,))
        mult = (np.float32(x._scale) * w_scales).astype(np.float32)
        b = np.zeros(rows, np.float32) if bias is None else np.asarray(bias, np.float32)
        cache[key] = (bias, (mult, np.ascontiguousarray(b.reshape(rows)),
                             np.float32(1.0) / np.float32(scale)))
    return cache[key][1]


def _range(relu: bool, zero_point: int) -> tuple[int, int]:
    qmin, qmax = quantized_range(quint8)
    return (max(qmin, zero_point) if relu else qmin), qmax


def prepack(weight: QTensor):
    """The weight's integers in the order the int8 kernels read them (``int8().pack``),
    made once and kept on the weight, one packing per kernels module. The quantized
    modules call it when they get their weight, so ``convert_fx`` packs every layer."""
    kernels, packs = int8(), weight.__dict__.setdefault("_packed", {})
    if kernels.__name__ not in packs:
        packs[kernels.__name__] = kernels.pack(weight._array)
    return packs[kernels.__name__]


def qlinear(
    x: QTensor, weight: QTensor, bias, scale: float, zero_point: int, relu: bool = False
) -> QTensor:
    """Quantized ``x @ weight.T + bias``: quint8 ``x``, qint8 per-channel ``weight``."""
    x = _per_tensor(x, "quantized linear")
    arr = x._array
    lead, k = arr.shape[:-1], arr.shape[-1]
    mult, b, inv_out = _requant_args(scale, zero_point, x, weight, bias)
    out = int8().linear(arr.reshape(-1, k), x._zero_point, prepack(weight), mult, b, inv_out,
                        zero_point, *_range(relu, zero_point))
    return QTensor._make(out.reshape(*lead, -1), quint8, float(scale), int(zero_point))


def qconv2d(
    x: QTensor, weight: QTensor, bias, stride, padding, dilation, groups: int,
    scale: float, zero_point: int, relu: bool = False,
) -> QTensor:
    """Quantized 2-d convolution (the int8 kernels' ``conv2d``; the fast layer's answers
    in channels-last memory, as torch's x86 convolutions do)."""
    x = _per_tensor(x, "quantized conv2d")
    if groups != 1:
        raise NotImplementedError("quantized conv2d: groups other than 1 are not supported")
    arr = x._array
    kh, kw = weight._array.shape[2:]
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    dh, dw = _pair(dilation)
    oh, ow = output_hw(arr.shape[2:], (kh, kw), (sh, sw), (ph, pw), (dh, dw))
    mult, b, inv_out = _requant_args(scale, zero_point, x, weight, bias)
    out = int8().conv2d(arr, x._zero_point, prepack(weight), (sh, sw), (ph, pw), (dh, dw),
                        oh, ow, mult, b, inv_out, zero_point, *_range(relu, zero_point))
    return QTensor._make(out, quint8, float(scale), int(zero_point))


def qadd(a: QTensor, b: QTensor, scale: Any, zero_point: Any, relu: bool = False) -> QTensor:
    """Quantized ``a + b`` (then ReLU if asked) with the output's ``scale`` and ``zero_point``."""
    a, b = _per_tensor(a, "quantized add"), _per_tensor(b, "quantized add")
    if a._array.shape != b._array.shape:
        raise RuntimeError(
            f"quantized add: shapes {tuple(a.shape)} and {tuple(b.shape)} must be equal"
        )
    scale = float(scale.item() if isinstance(scale, Tensor) else scale)
    zero_point = int(zero_point.item() if isinstance(zero_point, Tensor) else zero_point)
    # Both in the same memory order (channels last after the fast layer's convolutions,
    # else NCHW), read and written flat in that order.
    order = tuple(np.argsort(a._array.strides, kind="stable")[::-1])
    x, y = a._array.transpose(order), b._array.transpose(order)
    if a._array.strides != b._array.strides or not x.flags.c_contiguous:
        order = tuple(range(a._array.ndim))
        x, y = np.ascontiguousarray(a._array), np.ascontiguousarray(b._array)
    out = np.empty(x.shape, dtype=np.uint8)
    int8().add_requant(
        x.reshape(-1), a._zero_point, np.float32(a._scale),
        y.reshape(-1), b._zero_point, np.float32(b._scale),
        np.float32(1.0) / np.float32(scale), zero_point, relu, out.reshape(-1),
    )
    return QTensor._make(out.transpose(np.argsort(order)), quint8, scale, zero_point)
