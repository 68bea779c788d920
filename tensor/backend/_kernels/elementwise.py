"""The higher-order family: map (one operand), zip (two), where (three).

Every kernel here computes the output elements ``[lo, hi)`` of a contiguous
output from operands described by (storage, offset, strides) over a
coalesced shape (``strides.py``). It walks the range in *blocks* of at most
``BLOCK`` elements that lie in one row, and for each block:

1. finds where the block starts in each operand (``row_start``: the index
   math, written once);
2. gets each operand's block as a contiguous 1-d array: a slice of the
   storage when the stride is 1, else a gather into a small scratch buffer
   (``_block``: the only code that knows about strides);
3. applies the op to contiguous blocks (``_map_block``, ``_zip_block``):
   one tight loop per op that LLVM vectorises, because ``fn`` is a
   module-level scalar function inlined into it.

So each op has exactly one loop, compiled once per dtype inside one *switch*
function per family (``map_range``, ``zip_range``, ``compare_range``), and
that one compiled function serves contiguous, permuted, sliced and broadcast
operands alike. The kernels release the GIL (``nogil=True``); the backend
splits large outputs into ranges and runs them on a few threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import scalar as s
from .strides import row_start

BLOCK = 2048  # elements per block; a block's scratch buffers stay in L1


# --8<-- [start:family]
@njit(inline="always")
def _block(a, pos, n, step, scratch):
    """n elements of ``a`` from ``pos`` with stride ``step``, as a contiguous array."""
    if step == 1:
        return a[pos : pos + n]
    buf = scratch[:n]
    for j in range(n):
        buf[j] = a[pos + j * step]
    return buf


# A function of its own rather than inlined: in the big switch below, LLVM
# reloaded exp32's constants on every iteration; here they stay in registers.
# "contract" lets LLVM fuse each multiply and add into one FMA instruction.
@njit(error_model="numpy", fastmath={"contract"})
def _map_block(fn, o, x):
    for j in range(o.size):
        o[j] = fn(x[j])


@njit(inline="always")
def _zip_block(fn, o, x, y):
    for j in range(o.size):
        o[j] = fn(x[j], y[j])
# --8<-- [end:family]


@njit(inline="always")
def _next_block(k, hi, shape, strides, offset, cap):
    """(length, start position) of the block that begins at output element k.

    A block never crosses a row and never exceeds ``cap``: BLOCK when some
    operand is gathered into scratch, else the whole range.
    """
    inner = shape[-1]
    j = k % inner
    n = min(inner - j, hi - k, cap)
    return n, row_start(k // inner, shape, strides, offset) + j * strides[-1]


@njit(cache=True, nogil=True, error_model="numpy")
def map_range(op, out, lo, hi, shape, a, a_off, a_strides):
    """Unary float op ``op`` (code from ``scalar.UNARY``) on output elements [lo, hi)."""
    scratch = np.empty(BLOCK, a.dtype)
    cap = hi - lo if a_strides[-1] == 1 else BLOCK
    k = lo
    while k < hi:
        n, pa = _next_block(k, hi, shape, a_strides, a_off, cap)
        o = out[k : k + n]
        x = _block(a, pa, n, a_strides[-1], scratch)
        if op == 0:
            _map_block(s.neg, o, x)
        elif op == 1:
            _map_block(s.absolute, o, x)
        elif op == 2:
            _map_block(s.exp, o, x)
        elif op == 3:
            _map_block(s.log, o, x)
        elif op == 4:
            _map_block(s.sqrt, o, x)
        elif op == 5:
            _map_block(s.rsqrt, o, x)
        elif op == 6:
            _map_block(s.sigmoid, o, x)
        elif op == 7:
            _map_block(s.tanh, o, x)
        elif op == 8:
            _map_block(s.relu, o, x)
        else:
            _map_block(s.gelu, o, x)
        k += n


@njit(cache=True, nogil=True)
def map_range_int(op, out, lo, hi, shape, a, a_off, a_strides):
    """The unary ops integers have (neg 0, abs 1, relu 8) on output elements [lo, hi)."""
    scratch = np.empty(BLOCK, a.dtype)
    cap = hi - lo if a_strides[-1] == 1 else BLOCK
    k = lo
    while k < hi:
        n, pa = _next_block(k, hi, shape, a_strides, a_off, cap)
        o = out[k : k + n]
        x = _block(a, pa, n, a_strides[-1], scratch)
        if op == 0:
            _map_block(s.neg, o, x)
        elif op == 1:
            _map_block(s.absolute, o, x)
        else:
            _map_block(s.relu, o, x)
        k += n


@njit(cache=True, nogil=True, error_model="numpy")
def zip_range(op, out, lo, hi, shape, a, a_off, a_strides, b, b_off, b_strides):
    """Binary op ``op`` (code from ``scalar.BINARY``) on output elements [lo, hi)."""
    scratch_a = np.empty(BLOCK, a.dtype)
    scratch_b = np.empty(BLOCK, b.dtype)
    cap = hi - lo if a_strides[-1] == 1 and b_strides[-1] == 1 else BLOCK
    k = lo
    while k < hi:
        n, pa = _next_block(k, hi, shape, a_strides, a_off, cap)
        pb = row_start(k // shape[-1], shape, b_strides, b_off) + (k % shape[-1]) * b_strides[-1]
        o = out[k : k + n]
        x = _block(a, pa, n, a_strides[-1], scratch_a)
        y = _block(b, pb, n, b_strides[-1], scratch_b)
        if op == 0:
            _zip_block(s.add, o, x, y)
        elif op == 1:
            _zip_block(s.sub, o, x, y)
        elif op == 2:
            _zip_block(s.mul, o, x, y)
        elif op == 3:
            _zip_block(s.div, o, x, y)
        elif op == 4:
            _zip_block(s.pow_, o, x, y)
        elif op == 5:
            _zip_block(s.maximum, o, x, y)
        elif op == 6:
            _zip_block(s.minimum, o, x, y)
        elif op == 7:
            _zip_block(s.bitwise_and, o, x, y)
        else:
            _zip_block(s.bitwise_or, o, x, y)
        k += n


@njit(cache=True, nogil=True)
def compare_range(op, out, lo, hi, shape, a, a_off, a_strides, b, b_off, b_strides):
    """Comparison ``op`` (code from ``scalar.COMPARE``) on output elements [lo, hi)."""
    scratch_a = np.empty(BLOCK, a.dtype)
    scratch_b = np.empty(BLOCK, b.dtype)
    cap = hi - lo if a_strides[-1] == 1 and b_strides[-1] == 1 else BLOCK
    k = lo
    while k < hi:
        n, pa = _next_block(k, hi, shape, a_strides, a_off, cap)
        pb = row_start(k // shape[-1], shape, b_strides, b_off) + (k % shape[-1]) * b_strides[-1]
        o = out[k : k + n]
        x = _block(a, pa, n, a_strides[-1], scratch_a)
        y = _block(b, pb, n, b_strides[-1], scratch_b)
        if op == 0:
            _zip_block(s.gt, o, x, y)
        elif op == 1:
            _zip_block(s.lt, o, x, y)
        elif op == 2:
            _zip_block(s.ge, o, x, y)
        elif op == 3:
            _zip_block(s.le, o, x, y)
        elif op == 4:
            _zip_block(s.eq, o, x, y)
        else:
            _zip_block(s.ne, o, x, y)
        k += n


@njit(cache=True, nogil=True)
def where_range(out, lo, hi, shape, c, c_off, c_strides, a, a_off, a_strides, b, b_off, b_strides):
    """``c ? a : b`` on output elements [lo, hi)."""
    inner = shape[-1]
    for k in range(lo, hi):
        r, j = k // inner, k % inner
        pc = row_start(r, shape, c_strides, c_off) + j * c_strides[-1]
        pa = row_start(r, shape, a_strides, a_off) + j * a_strides[-1]
        pb = row_start(r, shape, b_strides, b_off) + j * b_strides[-1]
        out[k] = a[pa] if c[pc] else b[pb]


@njit(cache=True, nogil=True)
def clamp_range(out, lo, hi, a, low, high, has_low, has_high):
    """clamp on a contiguous array, elements [lo, hi); NaN stays NaN, as in torch."""
    for k in range(lo, hi):
        x = a[k]
        if has_low and x < low:
            x = low
        if has_high and x > high:
            x = high
        out[k] = x


# ---- a Python-scalar operand ---------------------------------------------------
# ``x * 2.0`` must not become ``x * broadcast_to(2.0, x.shape)``: the scalar
# stays a scalar, held in a register by the loop, and only ``x`` is read.
# Codes 0-8 are ``scalar.BINARY`` with the scalar on the right; 9, 10 and 11
# are sub, div and pow with the scalar on the left (``2.0 - x``), the only
# binary ops where the side matters and that torch has reflected operators for.
@njit(inline="always")
def _rsub(x, y):
    return y - x


@njit(inline="always")
def _rdiv(x, y):
    return y / x


@njit(inline="always")
def _rpow(x, y):
    return s.pow_(y, x)


@njit(inline="always")
def _scalar_block(fn, o, x, c):
    for j in range(o.size):
        o[j] = fn(x[j], c)


@njit(inline="always")
def _as_dtype_of(a, value):
    """``value`` (a Python float, int or bool) as a scalar of ``a``'s dtype."""
    cast = np.empty(1, a.dtype)
    cast[0] = value
    return cast[0]


@njit(cache=True, nogil=True, error_model="numpy")
def zip_scalar_range(op, out, lo, hi, shape, a, a_off, a_strides, value):
    """Binary op ``op`` between ``a`` and one scalar, on output elements [lo, hi)."""
    c = _as_dtype_of(a, value)
    scratch = np.empty(BLOCK, a.dtype)
    cap = hi - lo if a_strides[-1] == 1 else BLOCK
    k = lo
    while k < hi:
        n, pa = _next_block(k, hi, shape, a_strides, a_off, cap)
        o = out[k : k + n]
        x = _block(a, pa, n, a_strides[-1], scratch)
        if op == 0:
            _scalar_block(s.add, o, x, c)
        elif op == 1:
            _scalar_block(s.sub, o, x, c)
        elif op == 2:
            _scalar_block(s.mul, o, x, c)
        elif op == 3:
            _scalar_block(s.div, o, x, c)
        elif op == 4:
            _scalar_block(s.pow_, o, x, c)
        elif op == 5:
            _scalar_block(s.maximum, o, x, c)
        elif op == 6:
            _scalar_block(s.minimum, o, x, c)
        elif op == 7:
            _scalar_block(s.bitwise_and, o, x, c)
        elif op == 8:
            _scalar_block(s.bitwise_or, o, x, c)
        elif op == 9:
            _scalar_block(_rsub, o, x, c)
        elif op == 10:
            _scalar_block(_rdiv, o, x, c)
        else:
            _scalar_block(_rpow, o, x, c)
        k += n


@njit(cache=True, nogil=True)
def compare_scalar_range(op, out, lo, hi, shape, a, a_off, a_strides, value):
    """Comparison ``op`` (``a`` on the left) with one scalar, on output elements [lo, hi)."""
    c = _as_dtype_of(a, value)
    scratch = np.empty(BLOCK, a.dtype)
    cap = hi - lo if a_strides[-1] == 1 else BLOCK
    k = lo
    while k < hi:
        n, pa = _next_block(k, hi, shape, a_strides, a_off, cap)
        o = out[k : k + n]
        x = _block(a, pa, n, a_strides[-1], scratch)
        if op == 0:
            _scalar_block(s.gt, o, x, c)
        elif op == 1:
            _scalar_block(s.lt, o, x, c)
        elif op == 2:
            _scalar_block(s.ge, o, x, c)
        elif op == 3:
            _scalar_block(s.le, o, x, c)
        elif op == 4:
            _scalar_block(s.eq, o, x, c)
        else:
            _scalar_block(s.ne, o, x, c)
        k += n
