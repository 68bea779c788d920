"""check_conversion: convert a torch model, run both on the same inputs, say whether they agree.

This is what ``python -m minifx compare --convert`` prints under the
comparison with torch.fx, and what a learner runs on their own model. Both
sides run on copies, so the user's model is left as it was (BatchNorm in
training mode moves its running statistics when it runs).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ConversionError
from .graph_pass import torch_to_tensor
from .table import conversion_table
from .values import ValueConverter

# torch.testing.assert_close's tolerance for float32: the converted model must
# agree as closely as two runs of one float32 kernel in another summation order.
RTOL = 1.3e-6
ATOL = 1e-5


@dataclass
class ConversionReport:
    """The verdict of one round trip, and its text for a terminal."""

    agree: bool
    text: str
    converted: Any = None  # the tensor GraphModule, when conversion succeeded
    max_difference: float | None = None  # largest |tensor - torch| over all outputs

    def __str__(self) -> str:
        return self.text


# --8<-- [start:check_conversion]
def check_conversion(module: Any, inputs: tuple, rtol: float = RTOL,
                     atol: float = ATOL) -> ConversionReport:
    """Convert ``module`` to tensor, run both on ``inputs`` (torch tensors), compare."""
    import torch

    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    name = type(module).__name__ if isinstance(module, torch.nn.Module) else module.__name__
    try:
        converted = torch_to_tensor(_copy(module), inputs)
    except ConversionError as exc:
        return ConversionReport(False, f"== conversion to tensor: FAILED ==\n{exc}")
    values = ValueConverter(conversion_table())
    ours_inputs = [values.tensor(x) if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        expected = _copy(module)(*copy.deepcopy(inputs))
    try:
        actual = converted(*ours_inputs)
    except Exception as exc:  # a converted model that cannot run is a disagreement
        text = f"== conversion to tensor: FAILED ==\nrunning the converted {name} raised " \
               f"{type(exc).__name__}: {exc}"
        return ConversionReport(False, text, converted)
    problem, largest = output_difference(actual, expected, rtol, atol)
    lines = [f"== conversion to tensor: {'same' if problem is None else 'DIFFERENT'} ==",
             f"converted {name}: {_summary(converted)}"]
    if largest is not None:
        lines.append(f"largest difference from torch: {largest:.3g} "
                     f"(allowed: atol={atol:g} + rtol={rtol:g} * |torch|)")
    if problem:
        lines.append(problem)
    lines.append("the tensor model agrees with torch" if problem is None
                 else "the tensor model DIFFERS from torch")
    return ConversionReport(problem is None, "\n".join(lines), converted, largest)
# --8<-- [end:check_conversion]


def output_difference(actual: Any, expected: Any, rtol: float = RTOL, atol: float = ATOL,
                      where: str = "output") -> tuple[str | None, float | None]:
    """Why a tensor output differs from a torch one (or None), and the largest
    absolute difference over the tensors compared."""
    import torch

    import tensor

    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, tensor.Tensor):
            return f"{where}: {type(actual).__name__} instead of a Tensor", None
        ours, theirs = actual.numpy(), expected.detach().numpy()
        if ours.shape != theirs.shape:
            return f"{where}: shape {list(ours.shape)} instead of {list(theirs.shape)}", None
        if ours.dtype != theirs.dtype:
            return f"{where}: dtype {ours.dtype} instead of {theirs.dtype}", None
        if ours.size == 0:
            return None, 0.0
        if ours.dtype == np.bool_ or np.issubdtype(ours.dtype, np.integer):
            mismatched = int(np.count_nonzero(ours != theirs))
            return (f"{where}: {mismatched} elements differ" if mismatched else None), 0.0
        # Equal values (equal infinities included) and NaN against NaN agree.
        same = (ours == theirs) | (np.isnan(ours) & np.isnan(theirs))
        with np.errstate(invalid="ignore"):  # inf - inf is NaN: those are masked by `same`
            gap = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
        gap = np.where(same, 0.0, gap)
        bad = ~(gap <= atol + rtol * np.abs(theirs))
        largest = float(np.nanmax(gap))
        if bad.any():
            return (f"{where}: {int(bad.sum())} of {ours.size} elements differ by more than "
                    f"allowed (largest {largest:.3g})"), largest
        return None, largest
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            return f"{where}: {type(actual).__name__} instead of {len(expected)} values", None
        largest = None
        for i, (ours, theirs) in enumerate(zip(actual, expected)):
            problem, gap = output_difference(ours, theirs, rtol, atol, f"{where}[{i}]")
            if problem:
                return problem, gap
            if gap is not None:
                largest = gap if largest is None else max(largest, gap)
        return None, largest
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or list(actual) != list(expected):
            return f"{where}: keys {list(actual)} instead of {list(expected)}", None
        largest = None
        for key in expected:
            problem, gap = output_difference(actual[key], expected[key], rtol, atol,
                                             f"{where}[{key!r}]")
            if problem:
                return problem, gap
            if gap is not None:
                largest = gap if largest is None else max(largest, gap)
        return None, largest
    return (None if actual == expected else f"{where}: {actual!r} != {expected!r}"), None


def _summary(converted: Any) -> str:
    counts: dict[str, int] = {}
    for node in converted.graph.nodes:
        counts[node.op] = counts.get(node.op, 0) + 1
    parts = [f"{counts[op]} {op}" for op in ("call_module", "call_function", "call_method",
                                               "get_attr") if op in counts]
    return f"{len(converted.graph.nodes)} nodes (" + ", ".join(parts) + ")"


def _copy(module: Any) -> Any:
    """A deep copy of a module (a function needs none; an uncopyable module is used as is)."""
    import torch

    if not isinstance(module, torch.nn.Module):
        return module
    try:
        return copy.deepcopy(module)
    except Exception:  # a module holding a lock or a file
        return module
