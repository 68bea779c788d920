"""Reductions over any set of dims: sum, mean, amax, amin, argmax.

The backend splits the dims of the input into *kept* and *reduced* ones and
coalesces each group (``strides.coalesce``). Each output element then owns
one starting position (from the kept index) and walks the reduced elements
row by row, the last reduced dim in a tight loop. ``prange`` runs over the
output elements; a reduction to a single value instead runs over chunks
(``chunks_task``) and combines the partial results, and reducing the last
dims of a contiguous input (``reduce_rows_serial``, ``rows_task``) needs no
index math at all. The chunks and rows are shared with the spinning workers
of ``spin.py``.

Codes: 0 sum, 1 mean (a sum, divided afterwards), 2 amax, 3 amin. NaN
propagates through amax and amin, as in torch.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.extending import intrinsic, overload

from .scalar import like
from .strides import position, row_start

CHUNK = 32768


@njit(fastmath={"reassoc"})
def _sum_run(a, p, n, s):
    """Sum of n elements from a[p] with stride s; reassociation lets LLVM vectorise."""
    acc = like(a[p], 0)
    if s == 1:
        x = a[p : p + n]
        for j in range(n):
            acc += x[j]
    else:
        for j in range(n):
            acc += a[p + j * s]
    return acc


@njit(inline="always")
def _better(op, x, m):
    """Does x replace the running max (op 2) or min (op 3) m? NaN always wins."""
    if x != x:
        return m == m
    if op == 2:
        return x > m
    return x < m


@njit
def _extreme_run(op, a, p, n, s, m):
    for j in range(n):
        x = a[p + j * s]
        if _better(op, x, m):
            m = x
    return m


def _key_range(ints, shift: int, mask: int):
    """A kernel giving the largest and smallest *key* of a float row seen as
    integers of type ``ints`` (int32 for float32, int64 for float64).

    A float's bits, read as a signed integer, sort like the float when it is
    positive; for a negative float, flipping all bits but the sign makes them
    sort too: ``key = b ^ ((b >> shift) & mask)``, with ``b >> shift`` all ones
    for a negative ``b`` (the map is its own inverse). So the max of floats
    is the max of their keys, and an integer max is a reduction LLVM
    vectorises, where a float max with torch's NaN rule is not. A NaN's key
    lies beyond infinity's: above it for a positive NaN, below -infinity's
    for a negative one, so the two extremes also say whether the row has one.

    Every step is cast back to ``ints``: numba widens int32 arithmetic to
    int64, and AVX2 has no 64-bit max, so the widened float32 loop would not
    vectorise as a 32-bit one (it measured much slower).
    """
    shift, mask = ints(shift), ints(mask)

    @njit(inline="always")
    def key(b):
        return ints(b ^ ints(ints(b >> shift) & mask))

    @njit
    def key_range(bits):
        hi = lo = key(bits[0])
        for i in range(bits.size):
            k = key(bits[i])
            hi = max(hi, k)
            lo = min(lo, k)
        return hi, lo

    return key, key_range


@intrinsic
def _bits_as_float(typingctx, bits, like):
    """The float (of ``like``'s type) whose bits are the integer ``bits`` (same width)."""
    sig = like(bits, like)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


_KEYS32 = _key_range(np.int32, 31, 0x7FFFFFFF)
_KEYS64 = _key_range(np.int64, 63, 0x7FFFFFFFFFFFFFFF)


def _extreme_unit(op, a, p, n):
    """max (op 2) or min (op 3) of a[p:p+n] (n >= 1, contiguous); NaN wins.

    Float32 and float64 go through integer keys (``_key_range``), which
    vectorise; other dtypes take the plain scan. (A stub: numba compiles the
    overload below for each dtype.)
    """


@overload(_extreme_unit)
def _extreme_unit_for(op, a, p, n):
    if a.dtype == types.float32:
        ints, (key, key_range), inf = np.int32, _KEYS32, np.int32(0x7F800000)
    elif a.dtype == types.float64:
        ints, (key, key_range), inf = np.int64, _KEYS64, np.int64(0x7FF0000000000000)
    else:
        return lambda op, a, p, n: _extreme_run(op, a, p + 1, n - 1, 1, a[p])
    # inf is the key (and the bits) of +infinity; ~inf is the key of -infinity.
    minus_inf = ~inf

    def impl(op, a, p, n):
        x = a[p : p + n]
        hi, lo = key_range(x.view(ints))
        if hi > inf or lo < minus_inf:
            return like(x[0], np.nan)
        return _bits_as_float(key(hi if op == 2 else lo), x[0])

    return impl


@njit(cache=True)
def reduce_run(op, a, p, n, s):
    """One reduction code over one run of elements (n >= 1 for amax/amin)."""
    if op <= 1:
        return _sum_run(a, p, n, s)
    if s == 1:
        return _extreme_unit(op, a, p, n)
    return _extreme_run(op, a, p + s, n - 1, s, a[p])


# ---- whole rows, for the kernels minifx.compile generates ----------------------
@njit
def row_sum(x):
    """Sum of a contiguous 1-d array."""
    return _sum_run(x, 0, x.size, 1)


@njit
def row_amax(x):
    """Largest element of a contiguous 1-d array (size >= 1); NaN propagates."""
    return _extreme_unit(2, x, 0, x.size)


@njit(inline="always")
def _reduced_walk(k, kshape, kstrides, a_off, rshape, rstrides):
    """How kept index ``k``'s reduced elements lie: (row length, rows, stride along
    a row, where the first row starts)."""
    rows = 1
    for d in range(len(rshape) - 1):
        rows *= rshape[d]
    return rshape[-1], rows, rstrides[-1], position(k, kshape, kstrides, a_off)


# --8<-- [start:reduce_strided]
@njit(cache=True, parallel=True)
def reduce_strided(op, out, kshape, kstrides, a, a_off, rshape, rstrides):
    """``out[k]`` = reduction ``op`` (0 sum, 1 mean's sum, 2 amax, 3 amin) of the elements
    whose kept index is ``k``, for every ``k`` in ``range(out.size)``.

    ``out`` is 1-d, one element per kept index in C order over ``kshape``;
    ``a`` is the input's storage. The kept dims (``kshape``, ``kstrides``)
    and the reduced dims (``rshape``, ``rstrides``) are each coalesced, at
    least 1-d, and no reduced dim is empty. Output ``k``'s elements start at
    ``base = position(k, kshape, kstrides, a_off)``; walk them row by row
    over ``rshape``: row ``r`` starts at ``row_start(r, rshape, rstrides,
    base)`` and holds ``rshape[-1]`` elements ``rstrides[-1]`` apart, and
    ``reduce_run`` reduces one row. Add the rows' results for a sum; for
    amax and amin keep the row result that ``_better`` prefers (a NaN wins,
    as in torch). The loop over ``k`` is a ``prange``: the outputs are
    independent.
    """
    inner = rshape[-1]
    rows = 1
    for d in range(len(rshape) - 1):
        rows *= rshape[d]
    last = rstrides[-1]
    for k in prange(out.size):
        base = position(k, kshape, kstrides, a_off)
        acc = reduce_run(op, a, row_start(0, rshape, rstrides, base), inner, last)
        for r in range(1, rows):
            v = reduce_run(op, a, row_start(r, rshape, rstrides, base), inner, last)
            if op <= 1:
                acc += v
            elif _better(op, v, acc):
                acc = v
        out[k] = acc
# --8<-- [end:reduce_strided]


@njit(inline="always")
def _reduce_kept(op, k, kshape, kstrides, a, a_off, rshape, rstrides):
    """``reduce_strided``'s value for kept index ``k``: one output on its own, for the
    callers that split the outputs themselves (the fast layer's tasks)."""
    inner, rows, last, base = _reduced_walk(k, kshape, kstrides, a_off, rshape, rstrides)
    acc = reduce_run(op, a, row_start(0, rshape, rstrides, base), inner, last)
    for r in range(1, rows):
        v = reduce_run(op, a, row_start(r, rshape, rstrides, base), inner, last)
        if op <= 1:
            acc += v
        elif _better(op, v, acc):
            acc = v
    return acc


@njit(cache=True)
def reduce_strided_serial(op, out, kshape, kstrides, a, a_off, rshape, rstrides):
    """``reduce_strided`` on this thread alone, for the fast layer's small reductions."""
    for k in range(out.size):
        out[k] = _reduce_kept(op, k, kshape, kstrides, a, a_off, rshape, rstrides)


def _elements(out: np.ndarray, rshape) -> int:
    """How many input elements a strided reduction into ``out`` reads."""
    count = out.size
    for d in rshape:
        count *= int(d)
    return count


@njit
def _rows_range(op, out, flat, n, lo, hi):
    """out[r] = reduction of the n elements from flat[r * n], for r in [lo, hi).

    The op is tested once, before the loop. Tested per row (``reduce_run``
    in the loop), it cost a good share of a (100, 1000) float32 row sum: LLVM
    does not take the test out of the loop, and each row paid a call that
    could not be specialised to the sum."""
    if op <= 1:
        for r in range(lo, hi):
            out[r] = _sum_run(flat, r * n, n, 1)
    else:
        for r in range(lo, hi):
            out[r] = reduce_run(op, flat, r * n, n, 1)


@njit(cache=True)
def reduce_rows_serial(op, out, a):
    """out[r] = reduction of row r of a contiguous 2-d array, on this thread.

    The common case (reducing the last dims of a contiguous tensor) without
    the index math of ``reduce_strided``, which costs even on large arrays. The
    backend shares the rows with the spinning workers (``rows_task``)."""
    _rows_range(op, out, a.reshape(-1), a.shape[1], 0, a.shape[0])


# Elements from which argmax runs on several threads (numba's prange), set
# from measurement: waking numba's OpenMP threads costs more than a smaller
# argmax saves.
PARALLEL_ROWS_MIN = 3 << 18


@njit(cache=True)
def combine_chunks(op, partial):
    """The partial results of ``chunks_task`` combined in order, as
    ``reduce_all_serial`` combines them as it goes: the same value either way."""
    acc = partial[0]
    for c in range(1, partial.size):
        v = partial[c]
        if op <= 1:
            acc += v
        elif _better(op, v, acc):
            acc = v
    return acc


@njit(cache=True)
def reduce_all_serial(op, a):
    """A contiguous 1-d array reduced to one value on this thread, in one call:
    per CHUNK, combined as it goes (the partial results of ``chunks_task``
    without their array, and without a second call to combine them)."""
    n = a.size
    acc = reduce_run(op, a, 0, min(CHUNK, n), 1)
    for lo in range(CHUNK, n, CHUNK):
        v = reduce_run(op, a, lo, min(CHUNK, n - lo), 1)
        if op <= 1:
            acc += v
        elif _better(op, v, acc):
            acc = v
    return acc


@njit
def _argmax_unit(a, p, n):
    """Index of the first largest of a[p:p+n] (contiguous), NaN first: the
    vectorised max (``reduce_run``), then a scan that stops where it is (a
    scan in blocks of 16 with a branch-free test per block measured slower)."""
    m = reduce_run(2, a, p, n, 1)
    x = a[p : p + n]
    if m != m:
        for j in range(n):
            if x[j] != x[j]:
                return j
    for j in range(n):
        if x[j] == m:
            return j
    return 0


@njit
def _argmax_one(k, kshape, kstrides, a, a_off, rshape, rstrides):
    """argmax for output element k: the index, C order over the reduced dims."""
    inner, rows, last, base = _reduced_walk(k, kshape, kstrides, a_off, rshape, rstrides)
    if rows == 1 and last == 1:
        return _argmax_unit(a, base, inner)
    best = a[base]
    best_i = 0
    for r in range(rows):
        p = row_start(r, rshape, rstrides, base)
        for j in range(inner):
            x = a[p + j * last]
            if _better(2, x, best):
                best = x
                best_i = r * inner + j
    return best_i


@njit(cache=True, parallel=True)
def argmax_parallel(out, kshape, kstrides, a, a_off, rshape, rstrides):
    """Index (C order over the reduced dims) of the first largest element; NaN wins."""
    for k in prange(out.size):
        out[k] = _argmax_one(k, kshape, kstrides, a, a_off, rshape, rstrides)


@njit(cache=True)
def argmax_serial(out, kshape, kstrides, a, a_off, rshape, rstrides):
    """``argmax_parallel`` on one thread."""
    for k in range(out.size):
        out[k] = _argmax_one(k, kshape, kstrides, a, a_off, rshape, rstrides)


@njit(cache=True)
def argmax_rows_serial(out, a):
    """argmax of each row of a contiguous 2-d array, without the index math."""
    n = a.shape[1]
    flat = a.reshape(-1)
    for r in range(a.shape[0]):
        out[r] = _argmax_unit(flat, r * n, n)


def argmax_strided(out, kshape, kstrides, a, a_off, rshape, rstrides) -> None:
    """argmax of every kept index: on one thread below ``PARALLEL_ROWS_MIN`` elements."""
    kernel = argmax_parallel if _elements(out, rshape) >= PARALLEL_ROWS_MIN else argmax_serial
    kernel(out, kshape, kstrides, a, a_off, rshape, rstrides)


def partial_count(n: int) -> int:
    return max(1, (n + CHUNK - 1) // CHUNK)
