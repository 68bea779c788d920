"""torch values as ``tensor`` values: tensors, parameters, dtypes, sizes.

A converted model must not share memory with the torch one (a training step
on one must not move the other), so tensors are copied. A torch tensor that
two places hold (a weight tied between an embedding and the output layer)
becomes one ``tensor`` tensor held by both: ``ValueConverter`` remembers what
it converted by identity.
"""

from __future__ import annotations

from typing import Any

from .table import ConversionTable

# What tensor computes in; every other dtype is refused with this sentence.
SUPPORTED = "tensor computes on the CPU in float32 and float64 (int32, int64 and bool for indices"\
    " and masks)"


class ValueConverter:
    """Turns torch values into tensor values, once per torch object."""

    def __init__(self, table: ConversionTable) -> None:
        self.table = table
        self._done: dict[int, tuple[Any, Any]] = {}  # id(torch value) -> (it, its twin)

    def tensor(self, value: Any) -> Any:
        """A torch tensor (or Parameter) as a tensor tensor (or Parameter), copied."""
        import numpy as np
        import torch

        import tensor

        known = self._done.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        problem = unsupported_tensor(value, self.table)
        if problem:
            raise TypeError(problem)
        array = np.array(value.detach().numpy(), copy=True)  # never share torch's memory
        result: Any = tensor.from_numpy(array)
        if isinstance(value, torch.nn.Parameter):
            result = tensor.nn.Parameter(result, requires_grad=value.requires_grad)
        self._done[id(value)] = (value, result)
        return result

    def constant(self, value: Any) -> Any:
        """A non-tensor argument: a torch dtype becomes tensor's, a torch.Size a tuple."""
        import torch

        if isinstance(value, torch.dtype):
            if value not in self.table.dtypes:
                raise TypeError(f"dtype {value}: {SUPPORTED}")
            return self.table.dtypes[value]
        if isinstance(value, torch.Size):
            return tuple(value)
        if isinstance(value, (torch.device, torch.layout, torch.memory_format)):
            raise TypeError(f"argument {value!r}: tensor has no {type(value).__name__}")
        return value


def unsupported_tensor(value: Any, table: ConversionTable) -> str | None:
    """Why tensor cannot hold this torch tensor (its device or dtype), or None."""
    if value.device.type != "cpu":
        return f"it is on {value.device}, but {SUPPORTED}"
    if value.dtype not in table.dtypes:
        return f"its dtype is {value.dtype}, but {SUPPORTED}"
    return None
