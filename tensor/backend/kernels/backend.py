"""The numba backend as the book teaches it: the names and signatures of the
NumPy reference (``tensor/backend/reference``), computed by this folder's kernels.

Every function follows the same three steps. It describes each operand as
(storage, offset, strides) over a coalesced shape (``strides.py``), so that
views, broadcasts and transposes need no copy; it allocates a contiguous
output; and it runs one kernel over the whole output. The elementwise
kernels run on the calling thread; the reductions over strided dims and the
pools use numba's ``prange``.

Nothing here exists for speed alone. The fast layer (``tensor/backend/fast``)
keeps these answers and takes over the hot paths: threads, a caching
allocator, Winograd, short calls for contiguous operands. ``TENSOR_FAST=0``
runs this module as the numba backend.

Kernels are compiled for float32, float64 and int64 (bool for comparisons
and ``where``'s condition); int32 and bool data is computed in int64 and cast
back, which keeps the wrap-around of integer overflow exactly torch's (the
low 32 bits of an int64 sum are the int32 sum). matmul, linear and the GEMM
inside conv2d call NumPy's ``matmul``, that is BLAS.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ..._ops import (  # noqa: F401  (the op tuples: part of the backend interface)
    BINARY_OPS,
    COMPARE_OPS,
    FLOAT_ONLY,
    OPS,
    REDUCE_OPS,
    UNARY_OPS,
    scalar_name,
)
from ..._shape import output_hw
from .. import powers
from .. import reference as _reference
from . import elementwise as ew
from . import reduce as rd
from . import rows, spatial
from .strides import coalesce, storage_of

_self = sys.modules[__name__]  # the backend, as ``powers`` calls it

KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64))
SCALAR = {op: scalar_name(op) for op in UNARY_OPS + BINARY_OPS + COMPARE_OPS}  # kernel names
COMPARE = frozenset(COMPARE_OPS)
BOOL = np.dtype(np.bool_)
REDUCE_CODE = {"sum": 0, "mean": 1, "amax": 2, "amin": 3}  # reduce.py's opcodes


def in_kernel_dtype(a: np.ndarray) -> np.ndarray:
    """``a`` in a dtype the kernels are compiled for (int64 for the small ints and bool)."""
    return a if a.dtype in KERNEL_DTYPES else a.astype(np.int64)


def cast_back(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The kernel's output in the dtype the caller asked for."""
    return out if out.dtype == dtype else out.astype(dtype)


def broadcast_operands(shape: tuple[int, ...], *arrays: np.ndarray):
    """The coalesced shape, then (storage, offset, strides) of each array broadcast to
    ``shape``, flat, as the strided kernels take them."""
    views = [storage_of(np.broadcast_to(a, shape)) for a in arrays]
    coalesced = coalesce(shape, *(strides for _, _, strides in views))
    args = []
    for (storage, offset, _), strides in zip(views, coalesced[1:]):
        args += [storage, offset, strides]
    return coalesced[0], args


# ---- elementwise -------------------------------------------------------------
def unary(op: str, a: np.ndarray) -> np.ndarray:
    x = in_kernel_dtype(a)
    if x.dtype.kind != "f" and op in FLOAT_ONLY:
        raise TypeError(f"numba backend: unary {op!r} is not defined for {a.dtype}")
    out = np.empty(a.shape, x.dtype)
    if out.size:
        shape, args = broadcast_operands(x.shape, x)
        ew.map_kernel(SCALAR[op])(out.reshape(-1), 0, out.size, shape, *args)
    return cast_back(out, a.dtype)


def _with_scalar(op: str, x: np.ndarray, value, left: bool, out_dtype) -> np.ndarray:
    """``op`` between array ``x`` and a number, kept a number all the way into the kernel
    (``x * 2.0`` never becomes ``x * broadcast_to(2.0, x.shape)``)."""
    out = np.empty(x.shape, out_dtype)
    if out.size:
        c = float(value) if x.dtype.kind == "f" else int(value)
        shape, args = broadcast_operands(x.shape, x)
        ew.scalar_kernel(SCALAR[op], left)(out.reshape(-1), 0, out.size, shape, *args, c)
    return out


def binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A binary op or a comparison (``compare`` is this function), broadcasting; a 0-d
    operand beside a larger one is passed to the kernel as a number."""
    if op == "pow" and powers.is_number(b):
        if (power := powers.by_other_ops(_self, a, b)) is not None:
            return power
    x, y = in_kernel_dtype(a), in_kernel_dtype(b)
    out_dtype = BOOL if op in COMPARE else x.dtype
    if y.ndim == 0 and x.ndim:
        out = _with_scalar(op, x, y, False, out_dtype)
    elif x.ndim == 0 and y.ndim:
        out = _with_scalar(op, y, x, True, out_dtype)
    else:
        shape = np.broadcast_shapes(x.shape, y.shape)
        out = np.empty(shape, out_dtype)
        if out.size:
            cshape, args = broadcast_operands(shape, x, y)
            ew.zip_kernel(SCALAR[op])(out.reshape(-1), 0, out.size, cshape, *args)
    return out if op in COMPARE else cast_back(out, a.dtype)


compare = binary  # a comparison is a binary op whose kernel writes bools
binary_same_shape = binary  # the reference's shortcut names: here the same function


def binary_scalar(op: str, a: np.ndarray, value: float, left: bool) -> np.ndarray:
    """``a op value`` (``value op a`` when ``left``) for a Python number ``value``."""
    number = a.dtype.type(value)
    return binary(op, number, a) if left else binary(op, a, number)


def unary_(op: str, a: np.ndarray) -> bool:
    """In place: not here. False tells the caller to compute a new array and copy it."""
    return False


def binary_(op: str, a: np.ndarray, b) -> bool:
    """In place: not here (see ``unary_``)."""
    return False


def where(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    shape = np.broadcast_shapes(cond.shape, a.shape, b.shape)
    x, y = in_kernel_dtype(a), in_kernel_dtype(b)
    out = np.empty(shape, x.dtype)
    if out.size:
        c = cond if cond.dtype == np.bool_ else cond.astype(np.bool_)
        cshape, args = broadcast_operands(shape, c, x, y)
        ew.where_range(out.reshape(-1), 0, out.size, cshape, *args)
    return cast_back(out, a.dtype)


def clamp(a: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    x = np.ascontiguousarray(in_kernel_dtype(a)).reshape(-1)
    out = np.empty(a.shape, x.dtype)
    if out.size:
        cast = x.dtype.type
        low, high = cast(0 if lo is None else lo), cast(0 if hi is None else hi)
        ew.clamp_range(out.reshape(-1), 0, out.size, x, low, high, lo is not None,
                       hi is not None)
    return cast_back(out, a.dtype)


# ---- reductions --------------------------------------------------------------
def split_dims(a: np.ndarray, reduced: list[int]):
    """Coalesced (kept shape, kept strides, storage, offset, reduced shape, reduced strides)."""
    storage, offset, strides = storage_of(a)
    kept = [d for d in range(a.ndim) if d not in reduced]
    kshape, kstrides = coalesce([a.shape[d] for d in kept], [strides[d] for d in kept])
    rshape, rstrides = coalesce([a.shape[d] for d in reduced], [strides[d] for d in reduced])
    return kshape, kstrides, storage, offset, rshape, rstrides


def reduced_shape(a: np.ndarray, reduced: list[int], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if d in reduced else n for d, n in enumerate(a.shape))
    return tuple(n for d, n in enumerate(a.shape) if d not in reduced)


def reduce(op: str, a: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    x = in_kernel_dtype(a)
    reduced = sorted(set(dims)) if dims else list(range(a.ndim))
    out = np.empty(reduced_shape(a, reduced, keepdim), x.dtype)
    count = math.prod(a.shape[d] for d in reduced)
    if out.size and count == 0:
        out[...] = 0 if op == "sum" else np.nan
    elif out.size:
        rd.reduce_strided(REDUCE_CODE[op], out.reshape(-1), *split_dims(x, reduced))
        if op == "mean":
            out /= count
    return cast_back(out, a.dtype)


def argmax(a: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    x = in_kernel_dtype(a)
    reduced = list(range(a.ndim)) if dim is None else [dim]
    shape = ((1,) * a.ndim if keepdim else ()) if dim is None else \
        reduced_shape(a, reduced, keepdim)
    out = np.empty(shape, np.int64)
    if out.size:
        rd.argmax_strided(out.reshape(-1), *split_dims(x, reduced))
    return out


# ---- softmax and the norms ---------------------------------------------------
def rows_last(a: np.ndarray, dim: int) -> np.ndarray:
    """``a`` with ``dim`` moved last, contiguous, as (rows, n)."""
    moved = np.ascontiguousarray(np.moveaxis(a, dim, -1))
    return moved.reshape(-1, a.shape[dim] if a.ndim else 1)


def _softmax(a: np.ndarray, dim: int, log: bool) -> np.ndarray:
    if a.size == 0:
        return np.empty(a.shape, a.dtype)
    x = rows_last(a, dim)
    out = np.empty(x.shape, x.dtype)
    rows.softmax_rows_serial(out, x, log)
    if a.ndim == 0:
        return out.reshape(())
    moved = np.moveaxis(np.empty(a.shape, np.bool_), dim, -1).shape
    return np.ascontiguousarray(np.moveaxis(out.reshape(moved), -1, dim))


def softmax(a: np.ndarray, dim: int) -> np.ndarray:
    return _softmax(a, dim, False)


def log_softmax(a: np.ndarray, dim: int) -> np.ndarray:
    return _softmax(a, dim, True)


def layer_norm(x, normalized_ndim, weight, bias, eps):
    n = math.prod(x.shape[x.ndim - normalized_ndim :])
    out = np.empty(x.shape, x.dtype)
    if x.size:
        none = np.empty(1, x.dtype)  # the kernel's stand-in for an absent weight or bias
        w = none if weight is None else np.ascontiguousarray(weight, x.dtype).reshape(-1)
        b = none if bias is None else np.ascontiguousarray(bias, x.dtype).reshape(-1)
        rows.layer_norm_rows_serial(out.reshape(-1, n), np.ascontiguousarray(x).reshape(-1, n),
                                    w, b, x.dtype.type(eps), weight is not None,
                                    bias is not None)
    return out


def batch_norm(x, mean, var, weight, bias, eps):
    if x.dtype not in KERNEL_DTYPES or x.dtype.kind != "f":
        return _reference.batch_norm(x, mean, var, weight, bias, eps)
    out = np.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    # Each channel's statistics folded into one scale and one shift, as torch's eval
    # batch_norm does: the planes are then x * alpha + beta, one multiply-add each.
    dt, channels = x.dtype, x.shape[1]
    alpha, beta = np.empty(channels, dt), np.empty(channels, dt)
    rows.fold_batch_norm(*(None if v is None else np.ascontiguousarray(v, dt)
                           for v in (mean, var, weight, bias)), dt.type(eps), alpha, beta)
    planes = x.shape[0] * channels
    rows.scale_shift_planes(out.reshape(-1), np.ascontiguousarray(x).reshape(-1), alpha, beta,
                            channels, x.size // planes, 0, planes)
    return out


# ---- matrix products and images ----------------------------------------------
def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(a, b)


def linear(x, w, b):
    out = np.matmul(x, w.T)
    if b is not None:
        out += b
    return out


def conv2d(x, w, b, stride, padding, dilation, groups):
    """im2col, one image at a time: each image's patches become the columns of a matrix
    (``spatial.im2col``, after ``split_phases`` has laid out the strided taps), and
    one product per group computes the outputs."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    oh, ow = output_hw((h, wd), (kh, kw), stride, padding, dilation)
    x = np.ascontiguousarray(x)
    k = cg * kh * kw
    weight = np.ascontiguousarray(w).reshape(groups, o // groups, k)
    out = np.empty((n, groups, o // groups, oh * ow), x.dtype)
    if out.size:
        hq = (kh - 1) * dh // sh + oh
        wq = -(-(wd + 2 * pw) // sw)
        phases = np.empty((1, c, sh, sw, hq, wq), x.dtype)
        cols = np.empty((groups, k, oh * ow), x.dtype)
        for i in range(n):
            spatial.split_phases(phases, x[i:i + 1], kh, kw, sh, sw, ph, pw, dh, dw)
            spatial.im2col(cols.reshape(c * kh * kw, oh * ow), phases[0], kh, kw, dh, dw, oh, ow)
            np.matmul(weight, cols, out=out[i])
    out = out.reshape(n, o, oh, ow)
    if b is not None:
        out += np.asarray(b, x.dtype).reshape(o, 1, 1)
    return out


def max_pool2d(x, kernel, stride, padding, dilation, ceil_mode):
    n, c = x.shape[:2]
    oh, ow = output_hw(x.shape[2:], kernel, stride, padding, dilation, ceil_mode)
    out = np.empty((n, c, oh, ow), x.dtype)
    if out.size:
        spatial.max_pool2d(out, np.ascontiguousarray(x), *kernel, *stride, *padding, *dilation)
    return out


def avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad):
    n, c = x.shape[:2]
    oh, ow = output_hw(x.shape[2:], kernel, stride, padding, (1, 1), ceil_mode)
    out = np.empty((n, c, oh, ow), x.dtype)
    if out.size:
        spatial.avg_pool2d(out, np.ascontiguousarray(x), *kernel, *stride, *padding,
                           bool(count_include_pad))
    return out


def adaptive_avg_pool2d(x, output_size):
    n, c = x.shape[:2]
    out = np.empty((n, c, *output_size), x.dtype)
    if out.size:
        spatial.adaptive_avg_pool2d(out, np.ascontiguousarray(x))
    return out


def embedding(indices, weight):
    idx = np.ascontiguousarray(indices, np.int64).reshape(-1)
    out = np.empty((idx.size, weight.shape[1]), weight.dtype)
    if out.size:
        spatial.embedding(out, idx, np.ascontiguousarray(weight))
    return out.reshape(*indices.shape, weight.shape[1])
