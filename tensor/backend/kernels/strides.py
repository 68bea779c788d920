"""Strides and index math, shared by every strided kernel.

A NumPy view is a flat block of memory (its *storage*) plus an offset and
one stride per dim: element ``(i0, i1, ..., ik)`` lives at
``offset + i0*s0 + i1*s1 + ... + ik*sk`` (strides in elements, as torch
counts them). A broadcast dim has stride 0. The kernels receive exactly that
triple, so one compiled kernel serves every shape, view and broadcast.

Before a kernel runs, ``coalesce`` merges neighbouring dims that every
operand walks as one (``stride[d] == stride[d+1] * shape[d+1]``) and drops
dims of size 1: a contiguous (4, 5, 6) array becomes one dim of 120, and
``(8, 64, 56, 56) + (1, 64, 1, 1)`` becomes (8, 64, 3136). The kernels loop
over *rows* (all dims but the last) and run a tight loop along the last one.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided


# --8<-- [start:storage_of]
def storage_of(a: np.ndarray) -> tuple[np.ndarray, int, list[int]]:
    """(storage, offset, strides) that address the view ``a``, with no data copied.

    ``strides`` is ``a.strides`` counted in elements, as a list (negative
    ones included). ``storage`` is a contiguous 1-d view of ``a``'s memory,
    from the lowest address an element of ``a`` occupies to the highest, and
    ``offset`` is where ``a[0, 0, ...]`` sits in it (0 unless a stride is
    negative): ``a[i, j, ...]`` is ``storage[offset + i*strides[0] +
    j*strides[1] + ...]``. An empty ``a`` gives a new 1-element storage of
    zeros and offset 0, with its strides.
    """
    item = a.itemsize
    strides = [s // item for s in a.strides]
    if a.size == 0:
        return np.zeros(1, a.dtype), 0, strides
    low = sum((n - 1) * s for n, s in zip(a.shape, strides) if s < 0)
    high = sum((n - 1) * s for n, s in zip(a.shape, strides) if s > 0)
    corner = tuple(slice(n - 1, n) if s < 0 else slice(0, 1) for n, s in zip(a.shape, strides))
    flat = as_strided(a[corner], shape=(high - low + 1,), strides=(item,))
    return flat, -low, strides
# --8<-- [end:storage_of]


# --8<-- [start:coalesce]
def coalesce(shape, *strides_list):
    """Merge dims that all operands walk contiguously; drop dims of size 1.

    ``shape`` is a sequence of sizes and each of ``strides_list`` one operand's
    strides in elements. Dim ``d`` merges into the dim kept before it when,
    for every operand, that dim's stride is ``strides[d] * shape[d]``; the
    merged dim's size is the product and each operand's stride becomes its
    ``strides[d]``. Returns the new shape, then the new strides of each
    operand, each an int64 array, at least 1-d: when every dim has size 1
    the shape is ``[1]`` and every stride ``[0]``.
    """
    dims = [d for d, n in enumerate(shape) if n != 1]
    new_shape: list[int] = []
    new_strides: list[list[int]] = [[] for _ in strides_list]
    for d in dims:
        n = shape[d]
        if new_shape and all(
            out[-1] == st[d] * n for out, st in zip(new_strides, strides_list)
        ):
            new_shape[-1] *= n
            for out, st in zip(new_strides, strides_list):
                out[-1] = st[d]
            continue
        new_shape.append(n)
        for out, st in zip(new_strides, strides_list):
            out.append(st[d])
    if not new_shape:
        new_shape = [1]
        new_strides = [[0] for _ in strides_list]
    return (
        np.array(new_shape, np.int64),
        *(np.array(s, np.int64) for s in new_strides),
    )
# --8<-- [end:coalesce]


# --8<-- [start:row_start]
@njit(inline="always")
def row_start(row, shape, strides, offset):
    """Storage position of the first element of ``row``.

    Rows are numbered in C order over ``shape[:-1]``; the last dim is the one
    the caller loops along.
    """
    pos = offset
    rest = row + 0  # a new variable: the caller's row may be a prange index
    for d in range(len(shape) - 2, -1, -1):
        n = shape[d]
        pos += (rest % n) * strides[d]
        rest //= n
    return pos
# --8<-- [end:row_start]


@njit(inline="always")
def position(flat, shape, strides, offset):
    """Storage position of the element numbered ``flat`` in C order over ``shape``."""
    pos = offset
    rest = flat + 0
    for d in range(len(shape) - 1, -1, -1):
        n = shape[d]
        pos += (rest % n) * strides[d]
        rest //= n
    return pos
