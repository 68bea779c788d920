"""Parameter: a Tensor that a Module registers as a learnable weight.

It is the same data as the tensor it wraps (no copy). Like torch's Parameter
it opts out of the dispatch protocol (``__tensor_function__ = None``), so
operations on a parameter return plain tensors rather than more parameters.
``requires_grad`` is kept only so that code and reprs written for torch read
the same; this library has no autograd.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, tensor_repr


def _rebuild_parameter(array: np.ndarray, requires_grad: bool) -> Parameter:
    return Parameter(Tensor._from_array(array), requires_grad)


class Parameter(Tensor):
    """A tensor registered by ``Module.__setattr__`` as a parameter."""

    __tensor_function__ = None  # results of ops on parameters are plain tensors
    requires_grad: bool = True

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            array = np.empty(0, dtype=np.float32)
        elif isinstance(data, Tensor):
            array = data._array
        else:
            raise TypeError(f"Parameter(): data must be a tensor.Tensor, not {type(data).__name__}")
        param = object.__new__(cls)
        param._array = array
        param.requires_grad = bool(requires_grad)
        return param

    def __repr__(self) -> str:
        suffixes = ("requires_grad=True",) if self.requires_grad else ()
        return "Parameter containing:\n" + tensor_repr(self, "tensor", suffixes)

    def __reduce_ex__(self, protocol):
        return _rebuild_parameter, (self._array.copy(), self.requires_grad)
