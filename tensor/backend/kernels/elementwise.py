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
3. applies the op to contiguous blocks: one tight loop that LLVM vectorises,
   because the op's scalar function is inlined into it.

Each op gets kernels of its own, built on first use by a factory
(``map_kernel``, ``zip_kernel``, ``scalar_kernel``) around the scalar
function that the op table names: no switch on an opcode, and an op that a
program never uses is never compiled. The factory closes over the scalar
function's *name*, a string, which numba's on-disk cache keys on, so a second
process loads each kernel instead of compiling it again. The kernels release
the GIL (``nogil=True``); the backend splits large outputs into ranges and
runs them on a few threads.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, types
from numba.extending import overload

from . import scalar as s
from ._cache import keyed_by_every_kernel_source
from .strides import row_start

BLOCK = 2048  # elements per block; a block's scratch buffers stay in L1


# --8<-- [start:next_block]
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
# --8<-- [end:next_block]


# --8<-- [start:apply]
def apply(name, x):
    """``scalar.<name>(x)``: ``name`` is known when the kernel compiles."""


@overload(apply, prefer_literal=True)
def _apply(name, x):
    if isinstance(name, types.StringLiteral):
        fn = getattr(s, name.literal_value)
        return lambda name, x: fn(x)
    return None


def apply2(name, x, y):
    """``scalar.<name>(x, y)``, pasted into the loop by numba itself.

    ``apply`` leaves the pasting to LLVM, which declines a function as long
    as pow32; the loop then calls it once per element and does not
    vectorise (measured much slower).
    """


@overload(apply2, prefer_literal=True, inline="always")
def _apply2(name, x, y):
    if isinstance(name, types.StringLiteral):
        fn = getattr(s, name.literal_value)
        if x == types.float32 and y == types.float32:  # pow_ -> pow32 (see scalar.FLOAT32)
            fn = s.FLOAT32.get(name.literal_value, fn)
        return lambda name, x, y: fn(x, y)
    return None


@njit(inline="always")
def _block(a, pos, n, step, scratch):
    """n elements of ``a`` from ``pos`` with stride ``step``, as a contiguous array."""
    if step == 1:
        return a[pos : pos + n]
    buf = scratch[:n]
    for j in range(n):
        buf[j] = a[pos + j * step]
    return buf
# --8<-- [end:apply]


# --8<-- [start:kernels]
@functools.cache
def map_kernel(fn: str):
    """The kernel of unary op ``scalar.<fn>``: ``map_range(out, lo, hi, shape, a, a_off,
    a_strides)`` sets ``out[k] = apply(fn, x)`` for each output element ``k`` in
    ``[lo, hi)``, and writes no other element.

    ``out`` is 1-d and contiguous; ``k`` counts in C order over ``shape``, and
    ``x`` is the element of the same index in the operand: ``a`` is its
    storage, ``a_off`` and ``a_strides`` address it (``strides.py``). Walk the
    range block by block: ``_next_block`` gives a block's length and its
    start in ``a`` (a block never leaves its row; cap it at BLOCK unless the
    last stride is 1, when it may run to ``hi``), and ``_block`` gives it as
    a contiguous array, gathered into a scratch buffer of BLOCK elements of
    ``a``'s dtype when the stride is not 1. The kernel is made inside ``with
    keyed_by_every_kernel_source():`` with ``@njit(cache=True, nogil=True,
    error_model="numpy", fastmath={"contract"})``: "contract" lets LLVM fuse
    a multiply and an add into one FMA instruction.
    """
    with keyed_by_every_kernel_source():

        @njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
        def map_range(out, lo, hi, shape, a, a_off, a_strides):
            scratch = np.empty(BLOCK, a.dtype)
            cap = hi - lo if a_strides[-1] == 1 else BLOCK
            k = lo
            while k < hi:
                n, pa = _next_block(k, hi, shape, a_strides, a_off, cap)
                x = _block(a, pa, n, a_strides[-1], scratch)
                o = out[k : k + n]
                for j in range(n):
                    o[j] = apply(fn, x[j])
                k += n

    return map_range


@functools.cache
def zip_kernel(fn: str):
    """The kernel of binary or comparison op ``scalar.<fn>``: ``zip_range(out, lo, hi,
    shape, a, a_off, a_strides, b, b_off, b_strides)`` sets ``out[k] = apply2(fn, x, y)``
    for each output element ``k`` in ``[lo, hi)``, and writes no other element.

    ``map_kernel``'s walk with a second operand: ``x`` and ``y`` are element
    ``k``'s index in ``a`` and in ``b`` (a broadcast dim has stride 0, so ``b``
    may repeat). A block may be as long as the range when both last strides
    are 1, else at most BLOCK; ``b``'s block starts at the ``row_start`` of the
    block's row plus its column times ``b``'s last stride, and each operand
    has a scratch buffer of its own dtype. Compiled like ``map_kernel``'s
    kernel, without ``fastmath``. A comparison's ``out`` is a bool array.
    """
    with keyed_by_every_kernel_source():

        @njit(cache=True, nogil=True, error_model="numpy")
        def zip_range(out, lo, hi, shape, a, a_off, a_strides, b, b_off, b_strides):
            scratch_a, scratch_b = np.empty(BLOCK, a.dtype), np.empty(BLOCK, b.dtype)
            cap = hi - lo if a_strides[-1] == 1 and b_strides[-1] == 1 else BLOCK
            k = lo
            while k < hi:
                n, pa = _next_block(k, hi, shape, a_strides, a_off, cap)
                pb = row_start(k // shape[-1], shape, b_strides, b_off)
                x = _block(a, pa, n, a_strides[-1], scratch_a)
                y = _block(b, pb + (k % shape[-1]) * b_strides[-1], n, b_strides[-1], scratch_b)
                o = out[k : k + n]
                for j in range(n):
                    o[j] = apply2(fn, x[j], y[j])
                k += n

    return zip_range
# --8<-- [end:kernels]


# ---- a Python-scalar operand ---------------------------------------------------
# ``x * 2.0`` must not become ``x * broadcast_to(2.0, x.shape)``: the scalar
# stays a scalar, held in a register by the loop, and only ``x`` is read.
@njit(inline="always")
def _as_dtype_of(a, value):
    """``value`` (a Python float, int or bool) as a scalar of ``a``'s dtype."""
    cast = np.empty(1, a.dtype)
    cast[0] = value
    return cast[0]


@functools.cache
def scalar_kernel(fn: str, scalar_left: bool):
    """``scalar.<fn>(x, value)`` (``fn(value, x)`` when ``scalar_left``) over ``a``'s
    elements [lo, hi): ``2.0 - x`` and ``0.5 < x`` are computed as written."""
    with keyed_by_every_kernel_source():

        @njit(cache=True, nogil=True, error_model="numpy")
        def scalar_range(out, lo, hi, shape, a, a_off, a_strides, value):
            c = _as_dtype_of(a, value)
            scratch = np.empty(BLOCK, a.dtype)
            cap = hi - lo if a_strides[-1] == 1 else BLOCK
            k = lo
            while k < hi:
                n, pa = _next_block(k, hi, shape, a_strides, a_off, cap)
                x = _block(a, pa, n, a_strides[-1], scratch)
                o = out[k : k + n]
                if scalar_left:
                    for j in range(n):
                        o[j] = apply2(fn, c, x[j])
                else:
                    for j in range(n):
                        o[j] = apply2(fn, x[j], c)
                k += n

    return scalar_range


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
    o, v = out[lo:hi], a[lo:hi]  # slices from 0, so that the loop vectorises
    for k in range(o.size):
        x = v[k]
        if has_low and x < low:
            x = low
        if has_high and x > high:
            x = high
        o[k] = x
