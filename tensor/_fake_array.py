"""FakeArray: a NumPy array with a shape, a dtype and strides, and no data.

A fake tensor's storage is a `FakeArray`: an ``as_strided`` window of the
right shape and strides over memory that is reserved and never used (one
anonymous mapping, which all windows share; see `_reserve`). Everything
NumPy does with metadata alone (``.shape``, ``.strides``, views:
``transpose``, ``reshape`` when it can be a view, basic slicing, ``None``
indexing) works unchanged and costs nothing, so the front end's own checks
and views run on it as on real data: a shape error is the same error.

Everything that would read or write elements is intercepted, so that no
element is ever computed or stored: ufuncs and NumPy functions
answer a new FakeArray of the result's shape and dtype (computed from 0-d
samples, so NumPy's own dtype rules decide), copies (``astype``, ``copy``,
a ``reshape`` that cannot be a view) answer a fresh contiguous FakeArray,
writes do nothing, and reading a value (``item``, ``tolist``, printing)
raises: a fake tensor has no data to give.
"""

from __future__ import annotations

import math
import mmap
import sys
from typing import Any

import numpy as np

from ._shape import infer_size, view_strides

__all__ = ["FakeArray", "fake_array"]


def fake_array(shape, dtype, strides=None, mode=None) -> FakeArray:
    """A FakeArray of `shape` and `dtype`; `strides` in bytes, row-major when None."""
    dtype = np.dtype(dtype)
    shape = tuple(map(int, shape))
    if strides is None:  # row-major: NumPy lays out a window over a buffer so by itself
        memory = _reserve(dtype.itemsize * math.prod(shape))
        out = np.ndarray.__new__(FakeArray, shape, dtype, buffer=memory)
    else:
        strides = tuple(strides)
        extent = dtype.itemsize
        if 0 not in shape:
            for size, stride in zip(shape, strides):
                extent += (size - 1) * abs(stride)
        memory = _reserve(extent)
        if min(strides, default=0) >= 0:  # the window built directly, over the buffer
            out = np.ndarray.__new__(FakeArray, shape, dtype, buffer=memory, strides=strides)
        else:  # the constructor takes no negative stride: a view of the buffer can
            out = np.lib.stride_tricks.as_strided(np.frombuffer(memory, dtype), shape,
                                                  strides).view(FakeArray)
    out.fake_mode = mode
    return out


_MAP_NORESERVE = 0x4000  # Linux: reserve address space only (Python 3.11's mmap lacks the name)


def _reserve(extent: int) -> Any:
    """Memory reserved and never used, for a window of ``extent`` bytes to span: a memory
    map of at least that many bytes, which every window shares.

    The FakeArray's own methods never touch elements; this is the safety net
    for NumPy code that copies behind their back (``np.ascontiguousarray``,
    ``np.array``): it then reads zeros instead of memory beyond the buffer.
    An anonymous mapping costs address space, not memory: the kernel gives
    pages only when they are written, and reading maps its shared zero page.
    Since nothing is written there, all windows share one mapping, as large
    as the largest window yet (a larger window replaces it for the windows to
    come): a mapping of its own per window would cost a system call to make
    and one to free, for each of the hundreds a traced network makes.
    """
    if not _shared or len(_shared[0]) < extent:
        size = -(-max(extent, 1) // mmap.PAGESIZE) * mmap.PAGESIZE  # whole pages: whole items
        _shared[:] = [mmap.mmap(-1, size, flags=_MAP_FLAGS) if _MAP_FLAGS else mmap.mmap(-1, size)]
    return _shared[0]


_shared: list[mmap.mmap] = []  # the mapping `_reserve` hands out

# Private and anonymous; on Linux, address space only. Windows' mmap takes no flags.
_MAP_FLAGS = (mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
              | (_MAP_NORESERVE if sys.platform.startswith("linux") else 0)
              if hasattr(mmap, "MAP_ANONYMOUS") else 0)


def _no_data(what: str):
    raise RuntimeError(f"{what}: a fake tensor has shape, dtype and strides but no data")


def _sample(x):
    """A 0-d stand-in with x's dtype (an array) or x itself (a Python number)."""
    return np.zeros((), x.dtype) if isinstance(x, np.ndarray) else x


class FakeArray(np.ndarray):
    """See the module docstring. ``fake_mode`` is the FakeTensorMode that made it."""

    fake_mode = None

    def __array_finalize__(self, obj) -> None:
        self.fake_mode = getattr(obj, "fake_mode", None)

    def _new(self, shape, dtype, strides=None) -> FakeArray:
        return fake_array(shape, dtype, strides, self.fake_mode)

    # ---- computing: shape and dtype only ---------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs.get("out") is not None:
            _no_data(f"numpy.{ufunc.__name__}.{method}")
        shape = np.broadcast_shapes(*(np.shape(x) for x in inputs))
        samples = [_sample(x) for x in inputs]
        result = ufunc(*samples, **{k: v for k, v in kwargs.items() if k != "out"})
        if isinstance(result, tuple):
            return tuple(self._new(shape, r.dtype) for r in result)
        return self._new(shape, np.asarray(result).dtype)

    def __array_function__(self, func, types, args, kwargs):
        handler = _FUNCTIONS.get(func)
        if handler is not None:
            return handler(self, *args, **kwargs)
        if func in _VIEWS:  # metadata only: NumPy's own code is safe
            return super().__array_function__(func, types, args, kwargs)
        _no_data(f"numpy.{func.__name__}")

    # ---- copies: a fresh contiguous window --------------------------------
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        return self._new(self.shape, dtype)

    def copy(self, order="C"):
        return self._new(self.shape, self.dtype)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = infer_size(tuple(int(s) for s in shape), self.size, "reshape", self.shape)
        item = self.itemsize
        strides = view_strides(self.shape, tuple(s // item for s in self.strides), shape)
        if strides is None:  # NumPy would copy
            return self._new(shape, self.dtype)
        return self._new(shape, self.dtype, tuple(s * item for s in strides))

    def ravel(self, order="C"):
        return self.reshape(-1)

    def flatten(self, order="C"):
        return self._new((self.size,), self.dtype)

    def __getitem__(self, index):
        for i in index if isinstance(index, tuple) else (index,):
            if isinstance(i, np.ndarray) and i.dtype == np.bool_ and isinstance(i, FakeArray):
                raise RuntimeError(
                    "indexing with a boolean mask: the output's shape is the count of True "
                    "values, which a fake tensor does not have (a data-dependent shape)")
        zero = np.lib.stride_tricks.as_strided(np.zeros(1, self.dtype), self.shape,
                                               (0,) * self.ndim)
        picked = np.ndarray.__getitem__(zero, index)  # reads element 0 at most: safe
        if isinstance(picked, np.ndarray) and picked.base is not None:
            return super().__getitem__(index)  # basic indexing: a view, metadata only
        return self._new(np.shape(picked), self.dtype)

    # ---- writes do nothing; reads refuse -----------------------------------
    def __setitem__(self, index, value) -> None:
        zero = np.lib.stride_tricks.as_strided(np.zeros(1, self.dtype), self.shape,
                                               (0,) * self.ndim)
        target = np.ndarray.__getitem__(zero, index)
        np.broadcast_shapes(np.shape(value), np.shape(target))  # the same shape check

    def fill(self, value) -> None:
        pass

    def item(self, *args):
        _no_data("item()")

    def tolist(self):
        _no_data("tolist()")

    def tobytes(self, order="C"):
        _no_data("tobytes()")

    def __bool__(self):
        _no_data("bool()")

    def __float__(self):
        _no_data("float()")

    def __int__(self):
        _no_data("int()")

    def __index__(self):
        _no_data("index")

    def __repr__(self) -> str:
        return f"FakeArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides})"

    __str__ = __repr__


def _concatenate(self, arrays, axis=0, **kwargs):
    arrays = list(arrays)
    shapes = [list(np.shape(a)) for a in arrays]
    dtype = np.result_type(*(_sample(a) for a in arrays))
    if axis is None:
        return self._new((sum(int(np.prod(s)) for s in shapes),), dtype)
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    return self._new(out, dtype)


def _stack(self, arrays, axis=0, **kwargs):
    arrays = list(arrays)
    shape = list(np.shape(arrays[0]))
    axis = axis % (len(shape) + 1)
    shape.insert(axis, len(arrays))
    return self._new(shape, np.result_type(*(_sample(a) for a in arrays)))


def _contiguous(self, a, dtype=None, **kwargs):
    a = np.asarray(a)
    if isinstance(a, FakeArray) and a.flags.c_contiguous and dtype in (None, a.dtype):
        return a
    return a._new(a.shape, dtype or a.dtype)


def _copyto(self, dst, src, casting="same_kind", where=True):
    np.broadcast_shapes(np.shape(src), np.shape(dst))


_FUNCTIONS = {
    np.concatenate: _concatenate,
    np.stack: _stack,
    np.ascontiguousarray: _contiguous,
    np.copyto: _copyto,
}
_VIEWS = {
    np.shape, np.ndim, np.size, np.transpose, np.swapaxes, np.moveaxis, np.squeeze,
    np.expand_dims, np.broadcast_to, np.broadcast_arrays, np.result_type, np.can_cast,
    np.may_share_memory, np.shares_memory, np.atleast_1d, np.atleast_2d,
}
