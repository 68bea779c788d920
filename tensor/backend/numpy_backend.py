"""The NumPy backend: reference implementations of every tensor kernel.

Each function takes NumPy arrays that the public `tensor` functions have
already checked and converted to the dtype of the computation, and returns a
new array. Inputs may have any strides (views, broadcast zeros) and may be
0-d or empty. The numba backend has the same names and signatures, and these
functions are the oracle its kernels are tested against.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .numpy_nn import (  # noqa: F401  (re-exported: part of the backend interface)
    adaptive_avg_pool2d,
    avg_pool2d,
    batch_norm,
    conv2d,
    embedding,
    layer_norm,
    max_pool2d,
)

UNARY_OPS = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "gelu")
BINARY_OPS = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "bitwise_and", "bitwise_or")
COMPARE_OPS = ("gt", "lt", "ge", "le", "eq", "ne")
REDUCE_OPS = ("sum", "mean", "amax", "amin")


def _array(result) -> np.ndarray:
    """NumPy turns 0-d results into scalars; the interface promises arrays."""
    return result if type(result) is np.ndarray else np.asarray(result)


_erf = np.frompyfunc(math.erf, 1, 1)


# logaddexp warns when it meets NaN, though NaN in, NaN out is exactly what we want
warnings.filterwarnings("ignore", "invalid value encountered in logaddexp", RuntimeWarning)


def _sigmoid(a):
    # 1 / (1 + exp(-a)) written as exp(-log(1 + exp(-a))): no overflow, no warning
    return np.exp(-np.logaddexp(0, -a))


def _gelu(a):
    # the exact form torch uses by default: x * Phi(x), Phi the normal CDF
    phi = _erf(a.astype(np.float64) / math.sqrt(2.0)).astype(np.float64)
    return (0.5 * a * (1.0 + phi)).astype(a.dtype)


def _rsqrt(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / np.sqrt(a)


def _checked(ufunc):
    def run(a):
        with np.errstate(all="ignore"):
            return ufunc(a)

    return run


_UNARY = {
    "neg": np.negative,
    "abs": np.abs,
    "exp": _checked(np.exp),
    "log": _checked(np.log),
    "sqrt": _checked(np.sqrt),
    "rsqrt": _rsqrt,
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "relu": lambda a: np.maximum(a, 0),
    "gelu": _gelu,
}


def _checked2(ufunc):
    def run(a, b):
        with np.errstate(all="ignore"):
            return ufunc(a, b)

    return run


_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": _checked2(np.true_divide),
    "pow": _checked2(np.power),
    "maximum": np.maximum,
    "minimum": np.minimum,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
}

_COMPARE = {
    "gt": np.greater,
    "lt": np.less,
    "ge": np.greater_equal,
    "le": np.less_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}


def _mean(a, axis, keepdims):
    total = np.add.reduce(a, axis=axis, keepdims=keepdims)
    count = a.size // max(total.size, 1) if a.size else 0
    if count == 0:  # NaN, as in torch, without NumPy's warning about an empty mean
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / a.dtype.type(0)
    return total / a.dtype.type(count)


# the ufuncs' own reduce methods: what np.sum and np.max call, minus their Python layer
_REDUCE = {
    "sum": np.add.reduce,
    "mean": _mean,
    "amax": np.maximum.reduce,
    "amin": np.minimum.reduce,
}


def unary(op: str, a: np.ndarray) -> np.ndarray:
    """Apply an elementwise op; same shape and dtype as `a`."""
    result = _UNARY[op](a)
    return result if type(result) is np.ndarray else np.asarray(result)


def binary(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Combine two arrays of one dtype elementwise, broadcasting their shapes."""
    result = _BINARY[op](a, b)
    return result if type(result) is np.ndarray else np.asarray(result)


def compare(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Compare elementwise; a bool array of the broadcast shape."""
    return _array(_COMPARE[op](a, b))


def where(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pick from `a` where `cond` holds, else from `b`."""
    return _array(np.where(cond, a, b))


def clamp(a: np.ndarray, lo, hi) -> np.ndarray:
    """Limit `a` to [lo, hi]; either bound may be None. NaN stays NaN."""
    if lo is not None:
        a = np.maximum(a, a.dtype.type(lo))
    if hi is not None:
        a = np.minimum(a, a.dtype.type(hi))
    return np.array(a)


def reduce(op: str, a: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    """Reduce over `dims` (all dims when empty)."""
    axis = dims if dims else None
    result = _REDUCE[op](a, axis=axis, keepdims=keepdim)
    return result if type(result) is np.ndarray else np.asarray(result)


def argmax(a: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    """Index of the first largest value (NaN counts as largest), as int64."""
    return _array(np.argmax(a, axis=dim, keepdims=keepdim)).astype(np.int64, copy=False)


def softmax(a: np.ndarray, dim: int) -> np.ndarray:
    """exp(a) / sum(exp(a)) along `dim`, shifted by the maximum for stability."""
    if a.size == 0:
        return a.copy()
    e = np.exp(a - np.maximum.reduce(a, axis=dim, keepdims=True))
    return e / np.add.reduce(e, axis=dim, keepdims=True)


def log_softmax(a: np.ndarray, dim: int) -> np.ndarray:
    """a - log(sum(exp(a))) along `dim`, shifted by the maximum for stability."""
    if a.size == 0:
        return a.copy()
    shifted = a - np.maximum.reduce(a, axis=dim, keepdims=True)
    return shifted - np.log(np.add.reduce(np.exp(shifted), axis=dim, keepdims=True))


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Matrix product with torch.matmul's rules for 1-d, 2-d and batched inputs."""
    return _array(np.matmul(a, b))


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """x @ w.T + b, the affine map of `tensor.nn.Linear`."""
    out = np.matmul(x, w.T)
    if b is not None:
        out = out + b
    return _array(out)
