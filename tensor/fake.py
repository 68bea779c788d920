"""Fake tensors: shape, dtype and strides, no data (torch's FakeTensor and FakeTensorMode).

A `FakeTensor` is a Tensor whose storage is a `FakeArray`
(`tensor._fake_array`): a window of the right shape and strides over
memory that is reserved and never used. `FakeTensorMode` is a dispatch mode (`tensor.dispatch`) that
answers every primitive with its meta function (`tensor.ops`, next to the
kernel it stands for), so a whole forward pass runs its checks, its views
and its shape arithmetic, and computes nothing::

    with FakeTensorMode() as mode:
        x = mode.from_tensor(tensor.randn(256, 3, 224, 224))   # or tensor.randn(...)
        y = model(x)                                         # a FakeTensor
    y.shape, y.dtype, y.stride()

What stays true under fake tensors, and why:

- The front end's argument checks run unchanged, on the same shapes, so
  bad input raises the same error, word for word, as on real data.
- Views keep torch's strides: NumPy computes them on the window itself.
- Creation ops under the mode (``tensor.empty``, ``zeros``, ``randn``,
  ...) are primitives too, and answer fake tensors.
- Asking for a value (``item()``, ``numpy()``, ``bool(x)``, printing the
  numbers) raises: there are none. Python control flow on a fake value
  fails the same way, which is what a tracer wants to know.

Fake tensors remember their mode; an op on one after the ``with`` block
re-enters it, as torch does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dispatch
from ._fake_array import FakeArray, fake_array
from ._fake_tensor import FakeTensor, mode_switched
from ._tensor import Tensor

__all__ = ["FakeTensor", "FakeTensorMode"]


class FakeTensorMode(dispatch.TensorDispatchMode):
    """A dispatch mode under which every primitive computes only its output's metadata."""

    def from_tensor(self, t: Tensor) -> FakeTensor:
        """A fake twin of `t`: same shape, dtype and strides, no data."""
        if not isinstance(t, Tensor):
            raise TypeError(f"from_tensor(): expected a Tensor, got {type(t).__name__}")
        arr = t._array
        if isinstance(arr, FakeArray) and arr.fake_mode is self:
            return t if isinstance(t, FakeTensor) else FakeTensor._from_array(arr)
        return FakeTensor._from_array(fake_array(arr.shape, arr.dtype, arr.strides, self))

    def __enter__(self) -> FakeTensorMode:
        super().__enter__()
        mode_switched(True)
        return self

    def __exit__(self, *exc_info) -> None:
        super().__exit__(*exc_info)
        mode_switched(False)

    def __tensor_dispatch__(self, func, types, args=(), kwargs=None) -> Any:
        out = func.compute_meta(*args, **(kwargs or {}))
        return self._claim(out, args)

    def _claim(self, out, args):
        """The meta function's answer as FakeTensors of this mode.

        A view of a real tensor (a parameter's ``t()``, a buffer's slice: a
        view's meta is the view itself) stays a real view, as a plain Tensor.
        """
        if isinstance(out, FakeArray) and out.fake_mode is None:  # a new one, the usual case
            out.fake_mode = self
            return FakeTensor._from_array(out)
        if isinstance(out, np.ndarray):
            for a in args:  # an in-place primitive answers its own argument
                if isinstance(a, Tensor) and a._array is out:
                    return a
            if not isinstance(out, FakeArray):
                return Tensor._from_array(out)
            out.fake_mode = self
            return FakeTensor._from_array(out)
        if isinstance(out, tuple):
            return tuple(self._claim(o, args) for o in out)
        return out
