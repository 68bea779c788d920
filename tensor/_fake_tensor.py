"""The FakeTensor class: a Tensor whose storage is a FakeArray (see `tensor.fake`).

It sits below `tensor.ops` and `tensor.fake`, which both make fake tensors.
"""

from __future__ import annotations

from typing import Any

from . import _tensor, dispatch, overrides
from ._fake_array import FakeArray
from ._tensor import Tensor

__all__ = ["FakeTensor", "fake_mode_of"]

_modes_on = 0  # how many FakeTensorModes are inside their with block


def fake_mode_of(args) -> Any:
    """The fake mode of the first fake tensor among ``args`` (one level of lists), or None."""
    for a in args:
        for v in a if isinstance(a, (tuple, list)) else (a,):
            if isinstance(v, Tensor) and isinstance(v._array, FakeArray):
                return v._array.fake_mode
    return None


class FakeTensor(Tensor):
    """A Tensor with metadata and no data; made by `FakeTensorMode.from_tensor` or
    by any op under a FakeTensorMode."""

    @property
    def fake_mode(self) -> Any:  # the tensor.fake.FakeTensorMode that made it
        return self._array.fake_mode

    @classmethod
    def __tensor_function__(cls, func, types, args=(), kwargs=None):
        """Bring back the mode of a fake tensor used after its with block, for the call.

        While a fake mode is on (`mode_switched`) nothing is asked of this handler:
        FakeTensor then takes a plain Tensor's fast path through the public API, and
        its results are FakeTensors because the front end wraps each FakeArray as one
        (`tensor._tensor.TENSOR_CLASS_OF`).
        """
        kwargs = kwargs or {}
        mode = fake_mode_of(args) or (fake_mode_of(kwargs.values()) if kwargs else None)
        if mode is not None and mode not in dispatch._modes:
            with mode:  # used after its with block: the mode comes back for the call
                return super().__tensor_function__(func, types, args, kwargs)
        return super().__tensor_function__(func, types, args, kwargs)

    def numpy(self):
        raise RuntimeError("numpy(): a FakeTensor has no data (shape, dtype and strides only)")

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("a FakeTensor has no data to convert to a NumPy array")

    def __repr__(self) -> str:
        return f"FakeTensor(..., size={tuple(self.shape)}, dtype={self.dtype!r})"


def mode_switched(on: bool) -> None:
    """A FakeTensorMode entered (``on``) or left its with block. While one is in, the
    public API treats FakeTensors as plain Tensors (`overrides._count_as_plain`)."""
    global _modes_on
    _modes_on += 1 if on else -1
    overrides._count_as_plain(FakeTensor, _modes_on > 0)


_tensor.TENSOR_CLASS_OF[FakeArray] = FakeTensor
