"""The fast layer's numba backend: the kernels layer's answers, reached sooner.

``tensor/backend/kernels/backend.py`` is the backend the book teaches: every
op describes its operands by strides and runs one kernel on one thread. This
module has the same names and signatures and gives the same answers; it
exists only for speed, and ``TENSOR_FAST=0`` leaves it out. What it adds:

- tiny inputs (``settings.SMALL``) go to the NumPy reference, whose call
  costs less than a numba call's unboxing;
- contiguous operands and Python scalars take short calls (``tasks.py``'s
  ``flat_*`` kernels: the arrays and the range, nothing else);
- large outputs are split over the spinning workers (``threads.py``), as
  compiled tasks, and come from a caching allocator (``allocator.py``);
  the pools, the strided reductions, argmax and embedding, which the
  kernels layer runs on numba's ``prange``, are such tasks too, so that
  one set of threads runs everything;
- in-place ops write where they read;
- matrix products split over the threads (``blas.py``), and 3x3
  convolutions go through Winograd's F(2x2, 3x3) (``winograd_kernels.py``);
- float32 exp, log, tanh, GELU and pow vectorise (``math32.py``).
"""

from __future__ import annotations

import math
import sys

import numba
import numpy as np

from ..._shape import output_hw
from .. import powers
from .. import reference as _reference
from ..kernels import elementwise as ew
from ..kernels import reduce as rd
from ..kernels import rows, spatial
from ..kernels.backend import (  # noqa: F401  (the same in both layers: part of the interface)
    BINARY_OPS,
    BOOL,
    COMPARE,
    COMPARE_OPS,
    FLOAT_ONLY,
    KERNEL_DTYPES,
    OPS,
    REDUCE_CODE,
    REDUCE_OPS,
    SCALAR,
    UNARY_OPS,
    broadcast_operands,
    cast_back,
    in_kernel_dtype,
    reduced_shape,
    rows_last,
    split_dims,
)
from . import blas, math32, settings, spin, tasks, threads, winograd_kernels
from .allocator import empty as _empty
from .settings import (
    BLAS_SPLIT_MIN,
    COPY_SPLIT_MIN,
    LAYER_NORM_COST,
    POOLED,
    SHARED_CHUNKS,
    SMALL,
    SOFTMAX_COST,
    WINOGRAD,
    WINOGRAD_BYTES,
    WINOGRAD_MIN_TILES,
)
from .threads import in_parallel, in_ranges, spread, thread_count  # noqa: F401

if settings.FAST:  # before any kernel compiles: float32 maths that vectorises. (Imported
    math32.register()  # with TENSOR_FAST=0, as a test of threads does, the kernels stay libm's.)
_self = sys.modules[__name__]  # the backend, as ``powers`` calls it
_UNIT_STRIDE = np.ones(1, np.int64)  # read-only for the kernels
# What one element of each op costs, in copies of an element (the op table's
# ``work``, plus the copy itself): an exp splits at a smaller size than an add.
_COST = {op.name: 1.0 + op.work for op in OPS}


def _operands(shape: tuple[int, ...], *arrays: np.ndarray):
    """``kernels.backend.broadcast_operands``, without its views and coalescing when
    every array is contiguous and of the output's shape."""
    if all(a.shape == shape and a.flags.c_contiguous for a in arrays):
        args = []  # one contiguous dim, stride 1
        for a in arrays:
            args += [a.reshape(-1), 0, _UNIT_STRIDE]
        return np.array([max(1, math.prod(shape))], np.int64), args
    return broadcast_operands(shape, *arrays)


class _Plan:
    """One contiguous op's kernels, looked up once per call: one dictionary lookup
    instead of three cached builders, since an add of 1e5 elements is quick
    enough that each step of Python on its path shows in its time."""

    __slots__ = ("kernel", "task", "cost", "out_dtype")

    def __init__(self, kernel, cost: float, out_dtype: np.dtype) -> None:
        self.kernel = kernel  # the short-call kernel, on this thread
        self.task = 0  # its task for the polling workers: compiled when first shared
        self.cost = cost  # element-copies per element
        self.out_dtype = out_dtype


_PLANS: dict[tuple, _Plan] = {}


def _plan(op: str, operands: str, dtype: np.dtype, out_dtype: np.dtype, left: bool) -> _Plan:
    key = (op, operands, dtype, left)
    plan = _PLANS.get(key)
    if plan is None:
        fn = SCALAR[op]
        if operands == "map":
            kernel = tasks.flat_map_kernel(fn)
        elif operands == "zip":
            kernel = tasks.flat_zip_kernel(fn)
        else:
            kernel = tasks.flat_scalar_kernel(fn, left)
        plan = _PLANS[key] = _Plan(kernel, _COST[op], out_dtype)
    return plan


def _flat(op: str, operands: str, o: np.ndarray, a: np.ndarray, b=None,
          left: bool = False) -> None:
    """Contiguous elementwise ``op`` into ``o``: ``operands`` is "map" (``a`` alone),
    "zip" (``b`` an array of ``a``'s shape) or "scalar" (``b`` a Python number, on
    the left when ``left``). One thread below ``SPIN_MIN`` element-copies, else
    shared with the polling workers."""
    plan = _PLANS.get((op, operands, a.dtype, left)) or _plan(op, operands, a.dtype,
                                                               o.dtype, left)
    n = o.size
    copies = n * plan.cost
    if copies < settings.SPIN_MIN:
        if b is None:
            plan.kernel(o, a, 0, n)
        else:
            plan.kernel(o, a, b, 0, n)
        return
    task = plan.task or _task(plan, op, operands, a.dtype, left)
    pool = threads.SPINNERS
    if not pool.workers:  # TENSOR_SPIN=0
        spread(task, n, copies, o, a, b if operands == "zip" else None,
               k0=b if operands == "scalar" and a.dtype.kind != "f" else 0,
               f0=b if operands == "scalar" and a.dtype.kind == "f" else 0.0)
        return
    # ``spread``'s work written out: this is the path of every op from 1e4 elements.
    parts = min(pool.workers + 1, int(copies) // settings.SPIN_MIN, n)
    if operands == "zip":
        woken = spin.split(pool.ctl, pool.floats, task, n, parts, o, a, b, a, 0, 0, 0.0)
    elif operands == "map":
        woken = spin.split(pool.ctl, pool.floats, task, n, parts, o, a, a, a, 0, 0, 0.0)
    elif a.dtype.kind == "f":
        woken = spin.split(pool.ctl, pool.floats, task, n, parts, o, a, a, a, 0, 0, b)
    else:
        woken = spin.split(pool.ctl, pool.floats, task, n, parts, o, a, a, a, b, 0, 0.0)
    if woken:
        pool.wake(woken)


def _task(plan: _Plan, op: str, operands: str, dtype: np.dtype, left: bool) -> int:
    plan.task = tasks.flat_task(SCALAR[op], operands, dtype, plan.out_dtype, left)
    return plan.task


# ---- elementwise -------------------------------------------------------------
# The fast paths below are what a call of a few thousand elements pays for:
# they avoid every Python step that does not change the answer (no
# broadcast views, no coalescing, no thread split below PARALLEL_MIN), and a
# contiguous operand goes to the short-call kernels (``flat_*_kernel``: the
# arrays and the range, five arguments where the strided kernels take ten).
# A Python scalar stays a scalar all the way into the kernel. Each op runs its
# own kernels, built from the op table's scalar function on first use.
def _each_element(op: str, x: np.ndarray, out_dtype: np.dtype, *scalar) -> np.ndarray:
    """Unary ``op`` (or ``op`` with a scalar: ``scalar`` is ``(value, scalar_left)``)
    over every element of ``x`` (any strides) into a new contiguous output."""
    out = np.empty(x.shape, out_dtype) if x.size < POOLED else _empty(x.shape, out_dtype)
    o = out if out.ndim == 1 else out.reshape(-1)
    n = o.size
    extra = scalar[:1]
    if x.flags.c_contiguous:  # the short call: the arrays and the range
        a = x if x.ndim == 1 else x.reshape(-1)
        if scalar:
            _flat(op, "scalar", o, a, scalar[0], scalar[1])
        else:
            _flat(op, "map", o, a)
        return out
    if scalar:
        kernel = ew.scalar_kernel(SCALAR[op], scalar[1])
    else:
        kernel = ew.map_kernel(SCALAR[op])
    shape, args = broadcast_operands(x.shape, x)
    in_parallel(lambda lo, hi: kernel(o, lo, hi, shape, *args, *extra), n, _COST[op])
    return out


def unary(op: str, a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f" and a.dtype in KERNEL_DTYPES and a.flags.c_contiguous and (
            (n := a.size) > SMALL):  # the common case, lean (as in ``binary``)
        out = np.empty(a.shape, a.dtype) if n < POOLED else _empty(a.shape, a.dtype)
        if a.ndim == 1:
            _flat(op, "map", out, a)
        else:
            _flat(op, "map", out.reshape(-1), a.reshape(-1))
        return out
    if a.size <= SMALL:
        return _reference.unary(op, a)
    x = in_kernel_dtype(a)
    if x.dtype.kind != "f" and op in FLOAT_ONLY:
        raise TypeError(f"numba backend: unary {op!r} is not defined for {a.dtype}")
    return cast_back(_each_element(op, x, x.dtype), a.dtype)


def _with_scalar(op: str, x: np.ndarray, value, scalar_left: bool) -> np.ndarray:
    """``op`` between array ``x`` and a 0-d ``value``, which is never broadcast: it
    reaches the kernel as one Python number (one signature per dtype)."""
    dtype = x.dtype
    x = in_kernel_dtype(x)
    c = float(value) if x.dtype.kind == "f" else int(value)
    if op in COMPARE:
        return _each_element(op, x, BOOL, c, scalar_left)
    return cast_back(_each_element(op, x, x.dtype, c, scalar_left), dtype)


def _zip(op: str, a: np.ndarray, b: np.ndarray, out_dtype) -> np.ndarray:
    """Binary or comparison ``op`` on two arrays of any shapes and strides, broadcast."""
    shape = a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape)
    out = _empty(shape, out_dtype)
    if out.size:
        kernel, o = ew.zip_kernel(SCALAR[op]), out.reshape(-1)
        cshape, args = _operands(shape, in_kernel_dtype(a), in_kernel_dtype(b))
        in_parallel(lambda lo, hi: kernel(o, lo, hi, cshape, *args), o.size)
    return out


def binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A binary op or a comparison (``compare`` is this function): the common case first,
    a Python scalar kept a scalar, NumPy for tiny inputs, else the broadcasting kernel."""
    if op == "pow" and powers.is_number(b):
        if (power := powers.by_other_ops(_self, a, b)) is not None:
            return power
    x, y, left = a, b, False
    if not a.ndim and b.ndim:  # 2.0 - x: the number on the left
        x, y, left = b, a, True
    shape = x.shape
    if (x.dtype in KERNEL_DTYPES and x.flags.c_contiguous and (n := x.size) > SMALL
            and (y.ndim == 0 or (shape == y.shape and y.flags.c_contiguous))):
        # The common cases, lean: a contiguous array of a kernel dtype, and an
        # array of its shape or a 0-d value (``x * 2.0``), kept a Python number.
        dtype = BOOL if op in COMPARE else x.dtype
        out = np.empty(shape, dtype) if n < POOLED else _empty(shape, dtype)
        o, x = (out, x) if len(shape) == 1 else (out.reshape(-1), x.reshape(-1))
        if y.ndim == 0:
            _flat(op, "scalar", o, x, float(y) if x.dtype.kind == "f" else int(y), left)
        else:
            _flat(op, "zip", o, x, y if len(shape) == 1 else y.reshape(-1))
        return out
    if b.ndim == 0 and a.size > SMALL:
        return _with_scalar(op, a, b, False)
    if a.ndim == 0 and b.size > SMALL:
        return _with_scalar(op, b, a, True)
    if max(a.size, b.size) <= SMALL:
        return _reference.binary(op, a, b)
    if op in COMPARE:
        return _zip(op, a, b, BOOL)
    return cast_back(_zip(op, a, b, in_kernel_dtype(a).dtype), a.dtype)


compare = binary  # a comparison is a binary op whose kernel writes bools


def binary_same_shape(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``binary`` for arrays the caller knows share one shape and dtype (``x + y`` of
    two plain tensors): ``binary``'s first case without its tests of what is
    known, which are a good share of a 1e3-element add."""
    if a.dtype in KERNEL_DTYPES and (n := a.size) > SMALL and a.flags.c_contiguous \
            and b.flags.c_contiguous:
        out = np.empty(a.shape, a.dtype) if n < POOLED else _empty(a.shape, a.dtype)
        plan = _PLANS.get((op, "zip", a.dtype, False))
        if plan is not None and a.ndim == 1 and n * plan.cost < settings.SPIN_MIN:
            plan.kernel(out, a, b, 0, n)  # ``_flat``'s one-thread case, without its call
            return out
        if a.ndim == 1:
            _flat(op, "zip", out, a, b)
        else:
            _flat(op, "zip", out.reshape(-1), a.reshape(-1), b.reshape(-1))
        return out
    return binary(op, a, b)


def binary_scalar(op: str, a: np.ndarray, value: float, left: bool) -> np.ndarray:
    """``a op value`` (``value op a`` when ``left``) for a Python float ``value``: the
    kernel converts it to a's dtype. ``binary``'s scalar case without a NumPy
    scalar, whose making costs more than a small op can spare."""
    if op == "pow" and not left and (power := powers.by_other_ops(_self, a, value)) is not None:
        return power
    if a.dtype in KERNEL_DTYPES and a.flags.c_contiguous and (n := a.size) > SMALL:
        out = np.empty(a.shape, a.dtype) if n < POOLED else _empty(a.shape, a.dtype)
        plan = _PLANS.get((op, "scalar", a.dtype, left))
        if plan is not None and a.ndim == 1 and n * plan.cost < settings.SPIN_MIN:
            plan.kernel(out, a, value, 0, n)  # ``_flat``'s one-thread case, without its call
            return out
        if a.ndim == 1:
            _flat(op, "scalar", out, a, value, left)
        else:
            _flat(op, "scalar", out.reshape(-1), a.reshape(-1), value, left)
        return out
    number = a.dtype.type(value)
    return binary(op, number, a) if left else binary(op, a, number)


# ---- in place: relu(inplace=True), x += y ---------------------------------------
# Computing a new array and copying it back reads and writes the tensor twice,
# and the copy runs on one thread. These run a kernel that writes where it
# reads (``tasks.in_place_task``), on this thread and the polling workers.
def unary_(op: str, a: np.ndarray) -> bool:
    """``a[...] = op(a)`` in place for a writable contiguous float array; False when
    the caller must compute a new array and copy it (any other array)."""
    if not (a.dtype.kind == "f" and a.dtype in KERNEL_DTYPES and a.flags.c_contiguous
            and a.flags.writeable and a.size > SMALL):
        return False
    flat = a.reshape(-1)
    task = tasks.in_place_task(SCALAR[op], "map", a.dtype)
    spread(task, flat.size, flat.size * _COST[op], flat, flat)
    return True


def binary_(op: str, a: np.ndarray, b) -> bool:
    """``a[...] = a op b`` in place, for a writable contiguous ``a`` of a kernel dtype and
    ``b`` a 0-d value or an array of ``a``'s shape and dtype that does not
    overlap it; False otherwise (the caller computes and copies, which is
    also right for overlapping operands such as ``x[1:] += x[:-1]``)."""
    if op in COMPARE or not (a.dtype in KERNEL_DTYPES and a.flags.c_contiguous
                              and a.flags.writeable and a.size > SMALL):
        return False
    if op == "pow" and powers.is_number(b) and powers.computed_by_other_ops(a, b):
        return False
    flat = a.reshape(-1)
    copies = flat.size * _COST[op]
    if b.ndim == 0:
        task = tasks.in_place_task(SCALAR[op], "scalar", a.dtype)
        if a.dtype.kind == "f":
            spread(task, flat.size, copies, flat, flat, f0=float(b))
        else:
            spread(task, flat.size, copies, flat, flat, k0=int(b))
        return True
    if (b.dtype is a.dtype and b.shape == a.shape and b.flags.c_contiguous
            and not np.may_share_memory(a, b)):
        task = tasks.in_place_task(SCALAR[op], "zip", a.dtype)
        spread(task, flat.size, copies, flat, flat, b.reshape(-1))
        return True
    return False


def where(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if max(cond.size, a.size, b.size) <= SMALL:
        return _reference.where(cond, a, b)
    shape = np.broadcast_shapes(cond.shape, a.shape, b.shape)
    x, y = in_kernel_dtype(a), in_kernel_dtype(b)
    out = _empty(shape, x.dtype)
    if out.size:
        c = cond if cond.dtype == np.bool_ else cond.astype(np.bool_)
        o = out.reshape(-1)
        cshape, args = _operands(shape, c, x, y)
        in_parallel(lambda lo, hi: ew.where_range(o, lo, hi, cshape, *args), o.size)
    return cast_back(out, a.dtype)


def clamp(a: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    if a.size <= SMALL:
        return _reference.clamp(a, lo, hi)
    x = np.ascontiguousarray(in_kernel_dtype(a)).reshape(-1)
    out = _empty(a.shape, x.dtype)
    if out.size:
        cast = x.dtype.type
        low, high = cast(0 if lo is None else lo), cast(0 if hi is None else hi)
        o = out.reshape(-1)
        in_parallel(
            lambda s, e: ew.clamp_range(o, s, e, x, low, high, lo is not None, hi is not None),
            o.size,
        )
    return cast_back(out, a.dtype)


# ---- reductions --------------------------------------------------------------
# Element-copies per element of each reduction code (the op table's ``work``).
_REDUCE_COST = {code: _COST[op] for op, code in REDUCE_CODE.items()}


def _reduce_all(code: int, flat: np.ndarray):
    """Contiguous 1-d ``flat`` reduced to one value: a partial result per ``rd.CHUNK``,
    the chunks shared with the spinning workers, then combined here."""
    n = flat.size
    copies = n * _REDUCE_COST[code]
    if copies < settings.SPIN_MIN or n < SHARED_CHUNKS * rd.CHUNK:
        return rd.reduce_all_serial(code, flat)
    partial = np.empty(rd.partial_count(n), flat.dtype)
    spread(tasks.chunks_task(flat.dtype), partial.size, copies, partial, flat, k0=n, k1=code)
    return rd.combine_chunks(code, partial)


_ROWS_TASKS: dict[np.dtype, int] = {}  # tasks.rows_task per dtype, one lookup per call


def _reduce_rows(code: int, out: np.ndarray, a: np.ndarray) -> None:
    """Each row of contiguous 2-d ``a`` reduced into ``out``, the rows shared with the
    spinning workers.

    As in ``_flat``, the task comes from a dict rather than from
    ``tasks.rows_task``'s cache, and ``spread``'s work is written out here:
    ``x.sum(-1)`` of (100, 1000) floats is quick enough that the lookup and
    the call to ``spread`` showed in its time."""
    count, n = a.shape
    copies = count * n * _REDUCE_COST[code]
    if copies < settings.SPIN_MIN or count < 2:
        rd.reduce_rows_serial(code, out, a)
        return
    task = _ROWS_TASKS.get(a.dtype) or _ROWS_TASKS.setdefault(a.dtype, tasks.rows_task(a.dtype))
    pool = threads.SPINNERS
    if not pool.workers:  # TENSOR_SPIN=0
        spread(task, count, copies, out, a, a, a, n, code)
        return
    parts = min(pool.workers + 1, int(copies) // settings.SPIN_MIN, count)
    woken = spin.split(pool.ctl, pool.floats, task, count, parts, out, a, a, a, n, code, 0.0)
    if woken:
        pool.wake(woken)


def reduce(op: str, a: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    if a.size <= SMALL:
        return _reference.reduce(op, a, dims, keepdim)
    if a.size and a.flags.c_contiguous and a.dtype in KERNEL_DTYPES:
        # The common cases, lean: x.sum() and x.sum(-1) of a contiguous tensor.
        code = REDUCE_CODE[op]
        if not dims or len(dims) == a.ndim:
            # The whole array: partial results per CHUNK, combined (``_reduce_all``).
            value = _reduce_all(code, a.reshape(-1))
            out = np.array(value, a.dtype)  # 0-d: a quarter of np.full's cost
            if op == "mean":
                out /= a.size
            return out.reshape((1,) * a.ndim) if keepdim else out
        if len(dims) == 1 and dims[0] == a.ndim - 1:
            # The last dim: each row in one run, no index math.
            shape = a.shape
            n = shape[-1]
            out = np.empty(shape[:-1] + (1,) if keepdim else shape[:-1], a.dtype)
            if len(shape) == 2 and not keepdim:  # (rows, n) into (rows,): no reshapes
                _reduce_rows(code, out, a)
            else:
                _reduce_rows(code, out.reshape(-1), a.reshape(-1, n))
            if op == "mean":
                out /= n
            return out
    x = in_kernel_dtype(a)
    code = REDUCE_CODE[op]
    reduced = sorted(set(dims)) if dims else list(range(a.ndim))
    out = _empty(reduced_shape(a, reduced, keepdim), x.dtype)
    count = math.prod(a.shape[d] for d in reduced)
    if out.size == 0:
        return cast_back(out, a.dtype)
    if count == 0:
        out[...] = 0 if op == "sum" else np.nan
        return cast_back(out, a.dtype)
    o = out.reshape(-1)
    trailing = reduced == list(range(a.ndim - len(reduced), a.ndim))
    if len(reduced) == a.ndim and x.flags.c_contiguous and count <= rd.CHUNK:
        o[0] = rd.reduce_run(code, x.reshape(-1), 0, count, 1)  # small: one thread, no launch
    elif len(reduced) == a.ndim and x.flags.c_contiguous:
        o[0] = _reduce_all(code, x.reshape(-1))
    elif trailing and x.flags.c_contiguous:
        _reduce_rows(code, o, x.reshape(-1, count))
    else:
        _strided(False, code, o, x, reduced)
    if op == "mean":
        out /= count
    return cast_back(out, a.dtype)


def _strided(argmax: bool, code: int, out: np.ndarray, x: np.ndarray, reduced: list[int]) -> None:
    """Every kept index's reduction ``code`` (or argmax) over the ``reduced`` dims of ``x``,
    into flat ``out``: the kept indices shared with the spinning workers
    (``tasks.strided_task``), or all on this thread below ``SPIN_MIN`` element-copies."""
    kshape, kstrides, storage, offset, rshape, rstrides = split_dims(x, reduced)
    copies = x.size * (1.0 if argmax else _REDUCE_COST[code])
    if copies < settings.SPIN_MIN or out.size < 2:
        if argmax:
            rd.argmax_serial(out, kshape, kstrides, storage, offset, rshape, rstrides)
        else:
            rd.reduce_strided_serial(code, out, kshape, kstrides, storage, offset, rshape,
                                     rstrides)
        return
    geometry = np.concatenate((np.array([kshape.size, rshape.size, offset, code], np.int64),
                               kshape, kstrides, rshape, rstrides))
    spread(tasks.strided_task(argmax, x.dtype), out.size, copies, out, storage, geometry,
           k0=storage.size)


def argmax(a: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    if a.size <= SMALL:
        return _reference.argmax(a, dim, keepdim)
    x = in_kernel_dtype(a)
    if dim is None:
        reduced = list(range(a.ndim))
        shape = (1,) * a.ndim if keepdim else ()
    else:
        reduced = [dim]
        shape = reduced_shape(a, reduced, keepdim)
    out = np.empty(shape, np.int64)
    if out.size and dim == a.ndim - 1 and x.flags.c_contiguous:
        # The common case, the last dim of a contiguous tensor: rows, no index math.
        o, rows_ = out.reshape(-1), x.reshape(-1, x.shape[-1])
        if x.size < settings.SPIN_MIN or o.size < 2:
            rd.argmax_rows_serial(o, rows_)
        else:
            spread(tasks.argmax_rows_task(x.dtype), o.size, x.size, o, rows_, k0=rows_.shape[1])
    elif out.size:
        _strided(True, 0, out.reshape(-1), x, reduced)
    return out


# ---- softmax and the norms ---------------------------------------------------
def _softmax_rows(out: np.ndarray, a: np.ndarray, log: bool) -> None:
    """(log_)softmax of each row of contiguous 2-d ``a``, the rows shared with the
    spinning workers."""
    count, n = a.shape
    copies = a.size * SOFTMAX_COST
    if copies < settings.SPIN_MIN or count < 2:
        rows.softmax_rows_serial(out, a, log)
    else:
        spread(tasks.softmax_task(a.dtype, log), count, copies, out, a, k0=n)


def _softmax(a: np.ndarray, dim: int, log: bool) -> np.ndarray:
    if a.size == 0:
        return np.empty(a.shape, a.dtype)
    if a.ndim >= 1 and dim == a.ndim - 1 and a.flags.c_contiguous:
        # The common case (the last dim of a contiguous tensor): no moving of dims.
        out = _empty(a.shape, a.dtype)
        _softmax_rows(out.reshape(-1, a.shape[-1]), a.reshape(-1, a.shape[-1]), log)
        return out
    x = rows_last(a, dim)
    out = _empty(x.shape, x.dtype)
    _softmax_rows(out, x, log)
    if a.ndim == 0:
        return out.reshape(())
    moved_shape = tuple(np.moveaxis(np.empty(a.shape, np.bool_), dim, -1).shape)
    return np.ascontiguousarray(np.moveaxis(out.reshape(moved_shape), -1, dim))


def softmax(a: np.ndarray, dim: int) -> np.ndarray:
    if a.size <= SMALL:
        return _reference.softmax(a, dim)
    return _softmax(a, dim, False)


def log_softmax(a: np.ndarray, dim: int) -> np.ndarray:
    if a.size <= SMALL:
        return _reference.log_softmax(a, dim)
    return _softmax(a, dim, True)


def layer_norm(x, normalized_ndim, weight, bias, eps):
    n = math.prod(x.shape[x.ndim - normalized_ndim :])
    out = _empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    a = np.ascontiguousarray(x).reshape(-1, n)
    dummy = np.empty(1, x.dtype)
    w = dummy if weight is None else np.ascontiguousarray(weight, x.dtype).reshape(-1)
    b = dummy if bias is None else np.ascontiguousarray(bias, x.dtype).reshape(-1)
    o = out.reshape(-1, n)
    copies = x.size * LAYER_NORM_COST
    if copies < settings.SPIN_MIN or a.shape[0] < 2:
        rows.layer_norm_rows_serial(o, a, w, b, x.dtype.type(eps), weight is not None,
                                    bias is not None)
    else:
        task = tasks.layer_norm_task(x.dtype, weight is not None, bias is not None)
        spread(task, a.shape[0], copies, o, a, w, b, k0=n, f0=float(eps))
    return out


def batch_norm(x, mean, var, weight, bias, eps):
    if x.dtype not in KERNEL_DTYPES or x.dtype.kind != "f":
        return _reference.batch_norm(x, mean, var, weight, bias, eps)
    out = _empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    # Each channel's statistics folded into one scale and one shift, as torch's eval
    # batch_norm does: the planes are then x * alpha + beta, one multiply-add each.
    dt = x.dtype
    channels = x.shape[1]
    alpha, beta = np.empty(channels, dt), np.empty(channels, dt)
    rows.fold_batch_norm(*(None if v is None else np.ascontiguousarray(v, dt)
                           for v in (mean, var, weight, bias)), dt.type(eps), alpha, beta)
    planes = x.shape[0] * channels
    spread(tasks.batch_norm_task(dt), planes, x.size * 1.5, out.reshape(-1),
           np.ascontiguousarray(x).reshape(-1), alpha, beta, k0=channels,
           k1=x.size // planes)
    return out


# ---- matrix products ---------------------------------------------------------
def _product(a: np.ndarray, b: np.ndarray, out: np.ndarray, bias=None) -> None:
    blas.matmul_into(a, b, out, in_ranges, numba.get_num_threads(), bias)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim < 2 or b.ndim < 2 or a.size * b.shape[-1] < BLAS_SPLIT_MIN:
        return np.matmul(a, b)  # small: one BLAS call, nothing to split
    if a.ndim == 2 and b.ndim == 2:
        shape = (a.shape[0], b.shape[1])
    else:
        shape = (*np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), a.shape[-2], b.shape[-1])
    out = _empty(shape, np.result_type(a, b))
    _product(a, b, out)
    return out


def linear(x, w, b):
    if x.ndim < 2 or x.size * w.shape[0] < BLAS_SPLIT_MIN:
        out = np.matmul(x, w.T)
    else:
        out = _empty((*x.shape[:-1], w.shape[0]), np.result_type(x, w))
        _product(x, w.T, out, b)  # each part adds its piece of the bias
        return out
    if b is not None:
        out += b
    return out


def _use_winograd(n: int, oh: int, ow: int) -> bool:
    """Winograd pays once there are enough 2x2 output tiles per filter.

    Transforming the filters costs 16 values per (output, input) channel
    pair, whatever the image size; the products save 20 multiply-adds per
    pair and tile. With few tiles (ResNet-50's third stage at batch 1 has 49,
    its last 16) the filter transform costs more than it saves, and im2col is
    faster. Measured, im2col won at 49 tiles (256 channels) and Winograd at
    64 (256 channels) and at 100 (128 channels); at 64 tiles with 128
    channels the two were close to even, so the line sits there.
    (``benchmarks/conv_variants.py`` times the two on ResNet-50's shapes.)
    """
    return WINOGRAD and n * -(-oh // 2) * -(-ow // 2) >= WINOGRAD_MIN_TILES


def _winograd(x: np.ndarray, w: np.ndarray, b, ph: int, pw: int, oh: int, ow: int) -> np.ndarray:
    """A 3x3, stride-1, undilated, ungrouped conv2d by Winograd's F(2x2, 3x3) (winograd_kernels.py).

    The filters are transformed first (BLAS products). Then each thread
    takes a range of tile rows and, a step of rows at a time, transforms their
    patches, runs the 16 products (BLAS on one thread) and writes their
    outputs, bias included, on buffers of its own: the threads meet only at
    the end. A step's patches and products take at most about
    ``WINOGRAD_BYTES``, so that they are still in the cache when read again.
    """
    n, c = x.shape[:2]
    o = w.shape[0]
    th, tw = -(-oh // 2), -(-ow // 2)
    threads = numba.get_num_threads()
    blas.single_threaded_blas()
    u = _empty((16, o, c), x.dtype)
    pairs = o * c  # filters to transform, split over the threads when there are many
    in_ranges(lambda lo, hi: winograd_kernels.filters(u, w, lo, hi), pairs,
              min(threads, max(1, pairs // 16384)))
    out = _empty((n, o, oh, ow), x.dtype)
    bias = np.zeros(1, x.dtype) if b is None else np.ascontiguousarray(b, x.dtype)

    # Units (tile rows) per step, so that a step's patches and products stay in the cache.
    units = n * th
    step = max(1, WINOGRAD_BYTES // (64 * (c + o) * tw))
    # A thread each, unless the products are too small to repay the hand-off.
    parts = min(threads, units) if units * tw * c * o * 16 >= BLAS_SPLIT_MIN else 1
    # One scratch block per thread, from the caching allocator (here, on this thread: it
    # is not thread-safe): fresh megabytes would fault in page by page on every call.
    size = min(step, -(-units // parts)) * tw
    scratch = _empty((parts, 16 * (c + o) * size), x.dtype)
    part = {units * i // parts: i for i in range(parts)}  # in_ranges' first unit -> part

    def run(lo: int, hi: int) -> None:
        v, m = np.split(scratch[part[lo]], [16 * c * size])
        for first in range(lo, hi, step):
            last = min(hi, first + step)
            k = (last - first) * tw
            vk, mk = v[: 16 * c * k].reshape(16, c, k), m[: 16 * o * k].reshape(16, o, k)
            winograd_kernels.patches(vk, x, first, last, th, tw, ph, pw)
            np.matmul(u, vk, out=mk)
            winograd_kernels.outputs(out, mk, bias, b is not None, first, last, th, tw)

    in_ranges(run, units, parts)
    return out


def _one_image_at_a_time(x, weight, out, phases, geometry, oh: int, ow: int) -> None:
    """Images one after another (a batch of 1, or one thread): each image's copies
    split over the threads by channels, then its product split (``_product``).

    Rows have 7 to 112 values here, too short for LLVM's vector loops, so the
    copies run near scalar speed: splitting them is what is left."""
    kh, kw, sh, sw, ph, pw, dh, dw = geometry
    n, c = x.shape[:2]
    taps = kh * kw
    cols = np.empty((c * taps, oh * ow), x.dtype)
    parts = min(numba.get_num_threads(), c) if cols.size >= COPY_SPLIT_MIN else 1
    for i in range(n):
        def channels(lo: int, hi: int, i: int = i) -> None:
            spatial.split_phases(phases[i:i + 1, lo:hi], x[i:i + 1, lo:hi], kh, kw, sh, sw,
                                 ph, pw, dh, dw)
            spatial.im2col(cols[lo * taps:hi * taps], phases[i, lo:hi], kh, kw, dh, dw, oh, ow)

        in_ranges(channels, c, parts)
        _product(weight, cols.reshape(weight.shape[0], -1, oh * ow), out[i])


def conv2d(x, w, b, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    oh, ow = output_hw((h, wd), (kh, kw), stride, padding, dilation)
    x = np.ascontiguousarray(x)
    if (kh, kw, sh, sw, dh, dw, groups) == (3, 3, 1, 1, 1, 1, 1) and _use_winograd(n, oh, ow):
        return _winograd(x, np.ascontiguousarray(w), b, ph, pw, oh, ow)
    k = cg * kh * kw
    weight = np.ascontiguousarray(w).reshape(groups, o // groups, k)
    # Each image's product lands directly in its (O, OH*OW) block of the output:
    # no reordering afterwards, and the result is contiguous, as torch's is.
    out = _empty((n, groups, o // groups, oh * ow), x.dtype)
    if out.size == 0:
        return out.reshape(n, o, oh, ow)
    if (kh, kw, sh, sw, ph, pw) == (1, 1, 1, 1, 0, 0):
        # A 1x1 convolution needs no im2col: each image already is the matrix.
        _product(weight, x.reshape(n, groups, k, h * wd), out)
    else:
        # One image at a time, so that its column matrix stays in the cache
        # between im2col and the product that reads it. With several images
        # each thread takes a share of them (im2col, product, im2col, ...);
        # a single image splits its product instead.
        hq = (kh - 1) * dh // sh + oh
        wq = -(-(wd + 2 * pw) // sw)
        phases = np.empty((n, c, sh, sw, hq, wq), x.dtype)
        threads = min(n, numba.get_num_threads())

        def images(lo: int, hi: int) -> None:
            spatial.split_phases(phases[lo:hi], x[lo:hi], kh, kw, sh, sw, ph, pw, dh, dw)
            cols = np.empty((groups, k, oh * ow), x.dtype)
            for i in range(lo, hi):
                spatial.im2col(cols.reshape(c * kh * kw, oh * ow), phases[i], kh, kw, dh, dw,
                               oh, ow)
                blas.single_threaded_blas()
                np.matmul(weight, cols, out=out[i])

        if threads > 1:
            in_ranges(images, n, threads)
        else:
            _one_image_at_a_time(x, weight, out, phases, (kh, kw, sh, sw, ph, pw, dh, dw),
                                 oh, ow)
    out = out.reshape(n, o, oh, ow)
    if b is not None:
        out += np.asarray(b, x.dtype).reshape(o, 1, 1)
    return out


def _pool(pool: str, out: np.ndarray, x: np.ndarray, copies: int, *args) -> None:
    """A pool over every (image, channel) plane of ``x`` into ``out``, the planes shared
    with the spinning workers (``tasks.pool_task``); ``args`` are the pool's own."""
    n, c, h, w = x.shape
    geometry = np.zeros(12, np.int64)
    geometry[:4 + len(args)] = (h, w, *out.shape[2:], *args)
    spread(tasks.pool_task(pool, x.dtype), n * c, copies, out, np.ascontiguousarray(x),
           geometry)


def max_pool2d(x, kernel, stride, padding, dilation, ceil_mode):
    n, c = x.shape[:2]
    oh, ow = output_hw(x.shape[2:], kernel, stride, padding, dilation, ceil_mode)
    out = _empty((n, c, oh, ow), x.dtype)
    if out.size:
        _pool("max", out, x, out.size * kernel[0] * kernel[1], *kernel, *stride, *padding,
              *dilation)
    return out


def avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad):
    n, c = x.shape[:2]
    oh, ow = output_hw(x.shape[2:], kernel, stride, padding, (1, 1), ceil_mode)
    out = _empty((n, c, oh, ow), x.dtype)
    if out.size:
        _pool("avg", out, x, out.size * kernel[0] * kernel[1], *kernel, *stride, *padding,
              bool(count_include_pad))
    return out


def adaptive_avg_pool2d(x, output_size):
    n, c = x.shape[:2]
    out = _empty((n, c, *output_size), x.dtype)
    if out.size:
        _pool("adaptive", out, x, x.size + out.size)
    return out


def embedding(indices, weight):
    idx = np.ascontiguousarray(indices, np.int64).reshape(-1)
    out = np.empty((idx.size, weight.shape[1]), weight.dtype)
    if out.size:
        table = np.ascontiguousarray(weight)
        spread(tasks.embedding_task(table.dtype), idx.size, out.size, out, table, idx,
               k0=table.shape[1], k1=table.shape[0])
    return out.reshape(*indices.shape, weight.shape[1])
