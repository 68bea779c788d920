"""The kernels again, in the two shapes only speed needs.

1. *Short-call* kernels (``flat_*_kernel``): at a few thousand elements
   numba's dispatcher, which checks the type of every argument on every call,
   costs as much as the loop, and the strided kernels of ``kernels`` take ten
   arguments. These take only the arrays and the range, for operands that are
   contiguous and of the output's shape (the common case).
2. *Tasks* for the polling workers (``spin.py``): the same loops compiled as
   ``cfunc``s of the one signature ``spin.TASK``, which a worker calls through
   an address, without Python or the GIL.

Every loop here computes what a ``kernels`` loop computes, element for
element: ``TENSOR_FAST=0`` switches these off and the answers stay the same.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cfunc, njit

from ..kernels._cache import keyed_by_every_kernel_source
from ..kernels.elementwise import _as_dtype_of, apply, apply2
from ..kernels.reduce import CHUNK, _argmax_one, _argmax_unit, _reduce_kept, _rows_range, reduce_run
from ..kernels.rows import layer_norm_rows_serial, scale_shift_planes, softmax_rows_serial
from ..kernels.spatial import adaptive_avg_pool_plane, avg_pool_plane, max_pool_plane
from . import spin
from .settings import IN_PLACE_BLOCK


# ---- contiguous operands: the short call --------------------------------------
# At a few thousand elements numba's dispatcher, which checks the type of
# every argument on every call, costs as much as the loop: the strided kernels
# above take ten arguments. When every operand is already contiguous and of
# the output's shape (the common case) these kernels take only the arrays and
# the range. The loops are the same ones, without the block walk, and each
# runs over slices from 0: a loop over ``range(lo, hi)`` indexing the whole
# arrays would not vectorise (numba must allow for a negative index wrapping
# around), and ran much slower.
@functools.cache
def flat_map_kernel(fn: str):
    """``map_kernel`` for a contiguous operand: ``out[lo:hi] = fn(a[lo:hi])``."""
    with keyed_by_every_kernel_source():

        @njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
        def map_flat(out, a, lo, hi):
            o, x = out[lo:hi], a[lo:hi]
            for j in range(o.size):
                o[j] = apply(fn, x[j])

    return map_flat


@functools.cache
def flat_zip_kernel(fn: str):
    """``zip_kernel`` for contiguous operands of the output's shape."""
    with keyed_by_every_kernel_source():

        @njit(cache=True, nogil=True, error_model="numpy")
        def zip_flat(out, a, b, lo, hi):
            o, x, y = out[lo:hi], a[lo:hi], b[lo:hi]
            for j in range(o.size):
                o[j] = apply2(fn, x[j], y[j])

    return zip_flat


@functools.cache
def flat_scalar_kernel(fn: str, scalar_left: bool):
    """``scalar_kernel`` for a contiguous operand."""
    with keyed_by_every_kernel_source():

        @njit(cache=True, nogil=True, error_model="numpy")
        def scalar_flat(out, a, value, lo, hi):
            c = _as_dtype_of(a, value)
            o, x = out[lo:hi], a[lo:hi]
            if scalar_left:
                for j in range(o.size):
                    o[j] = apply2(fn, c, x[j])
            else:
                for j in range(o.size):
                    o[j] = apply2(fn, x[j], c)

    return scalar_flat


# ---- the short-call kernels as tasks for the spinning workers -----------------
# ``spin.py``'s workers call a kernel through its address, so each op is
# also compiled as a ``cfunc`` of the one signature ``spin.TASK``: it finds
# its arrays at the addresses in its integer arguments (the output first,
# as ``spin.split`` lays them out) and runs the flat kernel's loop on its
# range. The loop is written out again rather than calling ``flat_*_kernel``:
# a cfunc that closes over a dispatcher gets a new on-disk cache key in
# every process (a dispatcher pickles with an id of its own), so it would be
# compiled afresh each time; closing over strings and dtypes keys the same.
_at = spin.array_at


@functools.cache
def flat_task(fn: str, operands: str, dtype: np.dtype, out_dtype: np.dtype,
              scalar_left: bool = False) -> int:
    """The address of ``fn``'s flat kernel as a ``spin.TASK`` for contiguous operands of
    ``dtype``; ``operands`` is "map", "zip" or "scalar" (which reads the number
    from the float argument for a float dtype, else from the first integer one)."""
    t, out_t = np.dtype(dtype).type, np.dtype(out_dtype).type
    with keyed_by_every_kernel_source():
        if operands == "map":

            @cfunc(spin.TASK, cache=True, error_model="numpy", fastmath={"contract"})
            def task(ints, floats, lo, hi):
                o, x = _at(ints[0], hi, out_t)[lo:], _at(ints[1], hi, t)[lo:]
                for j in range(o.size):
                    o[j] = apply(fn, x[j])

        elif operands == "zip":

            @cfunc(spin.TASK, cache=True, error_model="numpy")
            def task(ints, floats, lo, hi):
                o, x, y = (_at(ints[0], hi, out_t)[lo:], _at(ints[1], hi, t)[lo:],
                           _at(ints[2], hi, t)[lo:])
                for j in range(o.size):
                    o[j] = apply2(fn, x[j], y[j])

        else:
            floating = np.dtype(dtype).kind == "f"

            @cfunc(spin.TASK, cache=True, error_model="numpy")
            def task(ints, floats, lo, hi):
                c = t(floats[0]) if floating else t(ints[4])
                o, x = _at(ints[0], hi, out_t)[lo:], _at(ints[1], hi, t)[lo:]
                if scalar_left:
                    for j in range(o.size):
                        o[j] = apply2(fn, c, x[j])
                else:
                    for j in range(o.size):
                        o[j] = apply2(fn, x[j], c)

    return task.address


_IN_PLACE_BLOCK = IN_PLACE_BLOCK


@functools.cache
def in_place_task(fn: str, operands: str, dtype: np.dtype) -> int:
    """``flat_task`` writing into its first operand (``relu(x, inplace=True)``,
    ``x += y``, ``x *= 2.0``): the output address is the first operand's, and
    the loop reads and writes through that one array. Run through
    ``flat_task`` with the output passed again as the first operand, the same
    loop reads and writes through two pointers that LLVM cannot prove apart:
    it checks for overlap, finds it, and runs the loop without SIMD, much
    slower. ``operands``: "map", "zip" (the other array is the third
    address, and must not overlap the first) or "scalar".

    A map goes through a small buffer, a block at a time: written in place,
    ``x[j] = 0 if x[j] < 0 else x[j]`` (relu) becomes a store only where
    ``x[j] < 0``, a branch per element that the vectoriser gives up on (much
    slower on random signs); computed into the buffer and copied back,
    both loops vectorise and the block stays in the L1 cache."""
    t = np.dtype(dtype).type
    with keyed_by_every_kernel_source():
        if operands == "map":

            @cfunc(spin.TASK, cache=True, error_model="numpy", fastmath={"contract"})
            def task(ints, floats, lo, hi):
                x = _at(ints[0], hi, t)
                block = np.empty(_IN_PLACE_BLOCK, t)
                for start in range(lo, hi, _IN_PLACE_BLOCK):
                    v = x[start:min(start + _IN_PLACE_BLOCK, hi)]
                    b = block[:v.size]
                    for j in range(v.size):
                        b[j] = apply(fn, v[j])
                    for j in range(v.size):
                        v[j] = b[j]

        elif operands == "zip":

            @cfunc(spin.TASK, cache=True, error_model="numpy")
            def task(ints, floats, lo, hi):
                x, y = _at(ints[0], hi, t)[lo:], _at(ints[2], hi, t)[lo:]
                for j in range(x.size):
                    x[j] = apply2(fn, x[j], y[j])

        else:
            floating = np.dtype(dtype).kind == "f"

            @cfunc(spin.TASK, cache=True, error_model="numpy")
            def task(ints, floats, lo, hi):
                c = t(floats[0]) if floating else t(ints[4])
                x = _at(ints[0], hi, t)[lo:]
                for j in range(x.size):
                    x[j] = apply2(fn, x[j], c)

    return task.address


# ---- as tasks for the spinning workers (spin.py) --------------------------------
# Each is a ``spin.TASK`` over a range of chunks or rows, reading its arrays
# from the addresses ``spin.split`` lays out: (out, a, -, -, k0, k1).
@functools.cache
def chunks_task(dtype: np.dtype) -> int:
    """The partial reduction of each chunk in [lo, hi) (CHUNK elements each, the last
    shorter): (partial, a, -, -, elements, op). Each chunk's partial result is
    the same whichever thread computes it."""
    t = np.dtype(dtype).type
    with keyed_by_every_kernel_source():

        @cfunc(spin.TASK, cache=True)
        def task(ints, floats, lo, hi):
            n = ints[4]
            partial = spin.array_at(ints[0], hi, t)
            a = spin.array_at(ints[1], n, t)
            for c in range(lo, hi):
                start = c * CHUNK
                partial[c] = reduce_run(ints[5], a, start, min(CHUNK, n - start), 1)

    return task.address


@functools.cache
def rows_task(dtype: np.dtype) -> int:
    """``reduce_rows_serial`` over the rows [lo, hi): (out, a, -, -, row length, op)."""
    t = np.dtype(dtype).type
    with keyed_by_every_kernel_source():

        @cfunc(spin.TASK, cache=True)
        def task(ints, floats, lo, hi):
            n = ints[4]
            out = spin.array_at(ints[0], hi, t)
            flat = spin.array_at(ints[1], hi * n, t)
            _rows_range(ints[5], out, flat, n, lo, hi)

    return task.address


# ---- as tasks for the spinning workers (spin.py) --------------------------------
# Each is a ``spin.TASK`` over the rows [lo, hi), reading its arrays from the
# addresses ``spin.split`` lays out, and runs the serial kernel on them.
@functools.cache
def softmax_task(dtype: np.dtype, log: bool) -> int:
    """``softmax_rows_serial`` on rows [lo, hi): (out, a, -, -, row length)."""
    t = np.dtype(dtype).type
    with keyed_by_every_kernel_source():

        @cfunc(spin.TASK, cache=True, error_model="numpy")
        def task(ints, floats, lo, hi):
            shape = (hi, ints[4])
            out = spin.array_at(ints[0], shape, t)
            a = spin.array_at(ints[1], shape, t)
            softmax_rows_serial(out[lo:], a[lo:], log)

    return task.address


@functools.cache
def layer_norm_task(dtype: np.dtype, affine_w: bool, affine_b: bool) -> int:
    """``layer_norm_rows_serial`` on rows [lo, hi): (out, a, weight, bias, row length)
    and eps, the float argument."""
    t = np.dtype(dtype).type
    with keyed_by_every_kernel_source():

        @cfunc(spin.TASK, cache=True, error_model="numpy")
        def task(ints, floats, lo, hi):
            n = ints[4]
            out = spin.array_at(ints[0], (hi, n), t)
            a = spin.array_at(ints[1], (hi, n), t)
            w = spin.array_at(ints[2], n if affine_w else 1, t)
            b = spin.array_at(ints[3], n if affine_b else 1, t)
            layer_norm_rows_serial(out[lo:], a[lo:], w, b, t(floats[0]), affine_w, affine_b)

    return task.address


@functools.cache
def batch_norm_task(dtype: np.dtype) -> int:
    """Planes [lo, hi) of an (N, C, S) array, ``out = a * alpha[c] + beta[c]`` (the
    eval batch_norm, its per-channel statistics folded into ``alpha`` and
    ``beta`` as torch does): (out, a, alpha, beta, channels, plane size)."""
    t = np.dtype(dtype).type
    with keyed_by_every_kernel_source():

        @cfunc(spin.TASK, cache=True, error_model="numpy", fastmath={"contract"})
        def task(ints, floats, lo, hi):
            channels, size = ints[4], ints[5]
            out = spin.array_at(ints[0], hi * size, t)
            a = spin.array_at(ints[1], hi * size, t)
            alpha = spin.array_at(ints[2], channels, t)
            beta = spin.array_at(ints[3], channels, t)
            scale_shift_planes(out, a, alpha, beta, channels, size, lo, hi)

    return task.address


# ---- what the kernels layer runs on ``prange``, as tasks --------------------------
# The kernels layer runs these loops on numba's own thread pool (``prange``);
# here they are ranges of the same loops, for the spinning workers, so that
# the fast layer runs all its work on one set of threads.
@functools.cache
def argmax_rows_task(dtype: np.dtype) -> int:
    """argmax of each row in [lo, hi) of a contiguous 2-d array: (out, a, -, -, row length)."""
    t = np.dtype(dtype).type
    with keyed_by_every_kernel_source():

        @cfunc(spin.TASK, cache=True)
        def task(ints, floats, lo, hi):
            n = ints[4]
            out = spin.array_at(ints[0], hi, np.int64)
            flat = spin.array_at(ints[1], hi * n, t)
            for r in range(lo, hi):
                out[r] = _argmax_unit(flat, r * n, n)

    return task.address


@functools.cache
def strided_task(argmax: bool, dtype: np.dtype) -> int:
    """``reduce_strided`` (or ``argmax_strided``) over the kept indices [lo, hi):
    (out, storage, geometry, -, storage length). ``geometry`` is one int64 array:
    the kept and reduced dims' counts, the storage offset, the reduction code,
    then the kept shape and strides and the reduced shape and strides."""
    t = np.dtype(dtype).type
    out_t = np.int64 if argmax else t
    with keyed_by_every_kernel_source():

        @cfunc(spin.TASK, cache=True)
        def task(ints, floats, lo, hi):
            head = spin.array_at(ints[2], 4, np.int64)
            nk, nr, offset, op = head[0], head[1], head[2], head[3]
            g = spin.array_at(ints[2], 4 + 2 * (nk + nr), np.int64)
            kshape, kstrides = g[4:4 + nk], g[4 + nk:4 + 2 * nk]
            rshape, rstrides = g[4 + 2 * nk:4 + 2 * nk + nr], g[4 + 2 * nk + nr:]
            out = spin.array_at(ints[0], hi, out_t)
            a = spin.array_at(ints[1], ints[4], t)
            for k in range(lo, hi):
                if argmax:
                    out[k] = _argmax_one(k, kshape, kstrides, a, offset, rshape, rstrides)
                else:
                    out[k] = _reduce_kept(op, k, kshape, kstrides, a, offset, rshape, rstrides)

    return task.address


@functools.cache
def pool_task(pool: str, dtype: np.dtype) -> int:
    """A pool ("max", "avg" or "adaptive") over the planes [lo, hi) of an
    (N*C, H, W) input: (out, x, geometry), ``geometry`` the int64 array
    (H, W, OH, OW, then the pool's arguments after the two planes)."""
    t = np.dtype(dtype).type
    with keyed_by_every_kernel_source():

        @cfunc(spin.TASK, cache=True, error_model="numpy")
        def task(ints, floats, lo, hi):
            g = spin.array_at(ints[2], 12, np.int64)
            x = spin.array_at(ints[1], (hi, g[0], g[1]), t)
            out = spin.array_at(ints[0], (hi, g[2], g[3]), t)
            for p in range(lo, hi):
                if pool == "max":
                    max_pool_plane(out[p], x[p], g[4], g[5], g[6], g[7], g[8], g[9], g[10],
                                   g[11])
                elif pool == "avg":
                    avg_pool_plane(out[p], x[p], g[4], g[5], g[6], g[7], g[8], g[9], g[10] != 0)
                else:
                    adaptive_avg_pool_plane(out[p], x[p])

    return task.address


@functools.cache
def embedding_task(dtype: np.dtype) -> int:
    """Rows [lo, hi) of an embedding, ``out[k] = weight[indices[k]]``:
    (out, weight, indices, -, row length, rows of the weight)."""
    t = np.dtype(dtype).type
    with keyed_by_every_kernel_source():

        @cfunc(spin.TASK, cache=True)
        def task(ints, floats, lo, hi):
            n = ints[4]
            out = spin.array_at(ints[0], (hi, n), t)
            weight = spin.array_at(ints[1], (ints[5], n), t)
            indices = spin.array_at(ints[2], hi, np.int64)
            for k in range(lo, hi):
                out[k] = weight[indices[k]]

    return task.address
