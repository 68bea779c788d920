"""The NumPy backend: reference implementations of every tensor kernel.

Each function takes NumPy arrays that the public `tensor` functions have
already checked and converted to the dtype of the computation, and returns a
new array. Inputs may have any strides (views, broadcast zeros) and may be
0-d or empty. The numba backend has the same names and signatures, and these
functions are the oracle its kernels are tested against.
"""

from __future__ import annotations

import sys

import numpy as np

from ..._ops import BINARY_OPS, BY_NAME, COMPARE_OPS, REDUCE_OPS, UNARY_OPS  # noqa: F401
from .. import powers as _powers
from .nn import (  # noqa: F401  (re-exported: part of the backend interface)
    adaptive_avg_pool2d,
    avg_pool2d,
    batch_norm,
    conv2d,
    embedding,
    layer_norm,
    max_pool2d,
)

_self = sys.modules[__name__]  # the backend, as _powers calls it


def _array(result) -> np.ndarray:
    """NumPy turns 0-d results into scalars; the interface promises arrays."""
    return result if type(result) is np.ndarray else np.asarray(result)


# The NumPy reference of every op, from the op table (tensor/_ops.py).
_NUMPY = {name: BY_NAME[name].numpy for name in UNARY_OPS + BINARY_OPS + COMPARE_OPS + REDUCE_OPS}


def unary(op: str, a: np.ndarray) -> np.ndarray:
    """Apply an elementwise op; same shape and dtype as `a`."""
    return _array(_NUMPY[op](a))


# --8<-- [start:binary]
def binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Combine two arrays of one dtype elementwise, broadcasting their shapes.

    The op's NumPy function (``_NUMPY[op]``) on ``a`` and ``b``, as an array
    (`_array`: a 0-d result too), except for ``pow``:

    - a number exponent (``_powers.is_number(b)``) is first offered to
      ``_powers.by_other_ops(_self, a, b)`` (squares, square roots and the
      like, computed as torch computes them); a non-None answer is the result;
    - a 0-d exponent array beside a base of 1 or more dims is first spread to
      the base's shape (``np.full``): NumPy's power takes a lone 0.5 as a
      square root, torch computes pow for each element.
    """
    if op == "pow" and _powers.is_number(b):
        if (power := _powers.by_other_ops(_self, a, b)) is not None:
            return power
    elif op == "pow" and b.ndim == 0 and a.ndim:
        # NumPy's power takes a lone 0.5 as a sqrt, even a 0-d or broadcast array's;
        # torch runs pow for a tensor exponent. One exponent per element is pow.
        b = np.full(a.shape, b)
    return _array(_NUMPY[op](a, b))
# --8<-- [end:binary]


def binary_same_shape(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``binary`` for two arrays of one shape and dtype."""
    return binary(op, a, b)


def binary_scalar(op: str, a: np.ndarray, value: float, left: bool) -> np.ndarray:
    """``a op value`` (``value op a`` when ``left``) for a Python float ``value``, which
    takes a's dtype, as a number beside a tensor does in torch."""
    if op == "pow" and not left and (power := _powers.by_other_ops(_self, a, value)) is not None:
        return power
    number = a.dtype.type(value)
    return _array(_NUMPY[op](number, a) if left else _NUMPY[op](a, number))


def unary_(op: str, a: np.ndarray) -> bool:
    """In place, when a backend can (the numba one): the reference never does, so the
    caller computes a new array and copies it, the plain way."""
    return False


def binary_(op: str, a: np.ndarray, b: np.ndarray) -> bool:
    """In place, when a backend can: the reference never does (see ``unary_``)."""
    return False


def compare(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Compare elementwise; a bool array of the broadcast shape."""
    return _array(_NUMPY[op](a, b))


def where(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pick from `a` where `cond` holds, else from `b`."""
    return _array(np.where(cond, a, b))


# --8<-- [start:clamp]
def clamp(a: np.ndarray, lo, hi) -> np.ndarray:
    """Limit `a` to [lo, hi]; either bound may be None. NaN stays NaN.

    Each bound is a Python number, taken in ``a``'s dtype. ``lo`` is applied
    first (the larger of each element and ``lo``), then ``hi`` (the
    smaller): so when ``lo > hi`` every element becomes ``hi``, as in torch.
    The result is a new array of ``a``'s shape and dtype, also when both
    bounds are None.
    """
    if lo is not None:
        a = np.maximum(a, a.dtype.type(lo))
    if hi is not None:
        a = np.minimum(a, a.dtype.type(hi))
    return np.array(a)
# --8<-- [end:clamp]


def reduce(op: str, a: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    """Reduce over `dims` (all dims when empty)."""
    axis = dims if dims else None
    return _array(_NUMPY[op](a, axis=axis, keepdims=keepdim))


def argmax(a: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    """Index of the first largest value (NaN counts as largest), as int64."""
    return _array(np.argmax(a, axis=dim, keepdims=keepdim)).astype(np.int64, copy=False)


# --8<-- [start:softmax]
def softmax(a: np.ndarray, dim: int) -> np.ndarray:
    """exp(a) / sum(exp(a)) along `dim`, same shape and dtype as `a`; an empty `a` comes
    back as a copy. The maximum along `dim` is subtracted first (the identity
    softmax(a) = softmax(a - max)), so that no exp overflows."""
    if a.size == 0:
        return a.copy()
    e = np.exp(a - np.maximum.reduce(a, axis=dim, keepdims=True))
    return e / np.add.reduce(e, axis=dim, keepdims=True)
# --8<-- [end:softmax]


# --8<-- [start:log_softmax]
def log_softmax(a: np.ndarray, dim: int) -> np.ndarray:
    """a - log(sum(exp(a))) along `dim`, shifted by the maximum for stability.

    Same shape and dtype as ``a``. The maximum along ``dim`` (kept as a dim
    of size 1) is subtracted first, so that no exp overflows:
    ``shifted - log(sum(exp(shifted)))`` with ``shifted = a - max``. An
    empty ``a`` comes back as a copy.
    """
    if a.size == 0:
        return a.copy()
    shifted = a - np.maximum.reduce(a, axis=dim, keepdims=True)
    return shifted - np.log(np.add.reduce(np.exp(shifted), axis=dim, keepdims=True))
# --8<-- [end:log_softmax]


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Matrix product with torch.matmul's rules for 1-d, 2-d and batched inputs."""
    return _array(np.matmul(a, b))


# --8<-- [start:linear]
def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """x @ w.T + b, the affine map of `tensor.nn.Linear`.

    ``x`` of shape (..., in), ``w`` (out, in), ``b`` (out,) or None for no
    bias; the result, of shape (..., out) and the operands' dtype, is an
    array (`_array`), a 0-d one too.
    """
    out = np.matmul(x, w.T)
    if b is not None:
        out = out + b
    return _array(out)
# --8<-- [end:linear]
