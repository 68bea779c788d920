"""assert_close: compare tensors the way torch.testing.assert_close does.

It accepts `tensor.Tensor`s, NumPy arrays, Python numbers and lists, and any
object with `.detach()` and `.numpy()` (a torch tensor, without importing
torch), so a test can put our result beside torch's in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._dtype import from_numpy_dtype
from ._size import Size
from ._tensor import Tensor

__all__ = ["assert_close"]

# torch's default (rtol, atol) per dtype; exact comparison for integers and bool
_TOLERANCES = {
    np.dtype(np.float16): (1e-3, 1e-5),
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
}


def _as_numpy(value) -> np.ndarray:
    if isinstance(value, Tensor):
        return value._array
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        value = value.detach()
        if hasattr(value, "cpu"):
            value = value.cpu()
        return np.asarray(value.numpy())
    if isinstance(value, (bool, int, float, np.generic, list, tuple)):
        return np.asarray(value)
    raise TypeError(
        f"assert_close(): cannot compare an object of type {type(value).__name__}; expected a "
        "tensor.Tensor, a NumPy array, a number, or an object with .detach() and .numpy()"
    )


def _dtype_name(np_dtype) -> str:
    try:
        return repr(from_numpy_dtype(np_dtype))
    except TypeError:
        return f"numpy.{np_dtype}"


def assert_close(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    *,
    equal_nan: bool = False,
    check_dtype: bool = True,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Raise AssertionError unless |actual - expected| <= atol + rtol * |expected| everywhere.

    Default tolerances depend on the dtype, as in torch (float32: rtol 1.3e-6,
    atol 1e-5; float64: 1e-7 and 1e-7; integers and bool: exact). The message
    names the number of mismatched elements and the greatest differences.
    """
    if (rtol is None) != (atol is None):
        raise ValueError(
            "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}."
        )
    a, e = _as_numpy(actual), _as_numpy(expected)
    if a.shape != e.shape:
        _fail(
            msg,
            f"The values for attribute 'shape' do not match: {Size(a.shape)} != {Size(e.shape)}.",
        )
    if check_dtype and a.dtype != e.dtype:
        _fail(
            msg,
            f"The values for attribute 'dtype' do not match: {_dtype_name(a.dtype)} != "
            f"{_dtype_name(e.dtype)}.",
        )
    if rtol is None:
        rtol_a, atol_a = _TOLERANCES.get(a.dtype, (0.0, 0.0))
        rtol_e, atol_e = _TOLERANCES.get(e.dtype, (0.0, 0.0))
        rtol, atol = max(rtol_a, rtol_e), max(atol_a, atol_e)
    exact = rtol == 0 and atol == 0
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        a64, e64 = a.astype(np.int64), e.astype(np.int64)
        close = a64 == e64
        abs_diff = np.abs(a64 - e64).astype(np.float64)
    else:
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            abs_diff = np.abs(a64 - e64)
            finite = np.isfinite(a64) & np.isfinite(e64)  # inf only matches the same inf
            close = (a64 == e64) | (finite & (abs_diff <= atol + rtol * np.abs(e64)))
        if equal_nan:
            close |= np.isnan(a64) & np.isnan(e64)
        abs_diff = np.where(a64 == e64, 0.0, abs_diff)
    if bool(np.all(close)):
        return
    total = a.size
    mismatched = int(total - np.count_nonzero(close))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_diff = abs_diff / np.abs(e64.astype(np.float64))
    rel_diff = np.where(abs_diff == 0, 0.0, rel_diff)
    abs_at = _greatest_at(abs_diff)
    rel_at = _greatest_at(rel_diff)
    abs_max = abs_diff[abs_at] if a.ndim else float(abs_diff)
    rel_max = rel_diff[rel_at] if a.ndim else float(rel_diff)
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        abs_max = int(abs_max)
    if a.ndim == 0:  # torch words a 0-d mismatch as one of Python numbers
        _fail(msg, "\n".join([
            f"Scalars are not {'equal' if exact else 'close'}!",
            "",
            f"Expected {e.item()} but got {a.item()}.",
            f"Absolute difference: {abs_max}" + ("" if exact else f" (up to {atol} allowed)"),
            f"Relative difference: {float(rel_max)}"
            + ("" if exact else f" (up to {rtol} allowed)"),
        ]))
    lines = [
        f"Tensor-likes are not {'equal' if exact else 'close'}!",
        "",
        f"Mismatched elements: {mismatched} / {total} ({100 * mismatched / total:.1f}%)",
        f"Greatest absolute difference: {abs_max} at index {tuple(int(i) for i in abs_at)}"
        + ("" if exact else f" (up to {atol} allowed)"),
        f"Greatest relative difference: {float(rel_max)} at index {tuple(int(i) for i in rel_at)}"
        + ("" if exact else f" (up to {rtol} allowed)"),
    ]
    _fail(msg, "\n".join(lines))


def _greatest_at(diff: np.ndarray) -> tuple:
    """Where the greatest difference is; a NaN counts as greatest, as torch's max() has it."""
    if diff.ndim == 0:
        return ()
    flat = diff.reshape(-1)
    nans = np.flatnonzero(np.isnan(flat))
    at = int(nans[0]) if nans.size else int(np.argmax(flat))
    return np.unravel_index(at, diff.shape)


def _fail(msg: str | Callable[[str], str] | None, detail: str) -> None:
    """Raise with ``detail``, or ``msg`` in its place (``msg(detail)`` if callable), as torch."""
    if callable(msg):
        detail = msg(detail)
    elif msg is not None:
        detail = msg
    raise AssertionError(detail)
