"""Size: the shape of a tensor, a tuple that prints like torch's."""

from __future__ import annotations

import math


class Size(tuple):
    """A tuple of ints printed as `tensor.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"tensor.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, index):
        result = tuple.__getitem__(self, index)
        return Size(result) if isinstance(index, slice) else result

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        return math.prod(self)


Size.__module__ = "tensor"
