"""The op table: every elementwise op and reduction of `tensor`, written once.

Each row says what the rest of the library needs to know about one op:

- ``name``: ``tensor.<name>``, ``Tensor.<name>`` and the backend's op name;
- ``kind``: ``unary``, ``binary``, ``compare`` (binary, bool result),
  ``reduce``, or ``other`` (written by hand in ``_functions.py``; the row
  only gives its method and operators);
- ``numpy``: the NumPy reference, array(s) in, array out (the NumPy backend
  runs it; the numba kernels are tested against it);
- ``dtypes``: ``float`` (integer inputs compute in float32), ``numeric`` (every
  dtype in its own; unary ops refuse bool), ``int`` (int and bool only) or
  ``all``;
- ``scalar``: the per-element function in ``backend/kernels/scalar.py``
  from which the numba backend builds the op's kernel (``name`` if empty);
- ``operator``, ``reflected``: Python's spellings (``__add__``, and
  ``__radd__`` when reflected); ``torch_passes_method``: torch hands the
  operator to ``__torch_function__`` as the named method (``x + y`` arrives
  as ``Tensor.add``), which is how torch.fx records it;
- ``method`` / ``public``: whether ``Tensor.<name>`` / ``tensor.<name>`` exist;
- ``work``: what one element costs beyond reading and writing it, in copies
  of an element (float32, one thread, data in cache; measured with the numba
  kernels as the time of the op over the time of a copy, less the copy's 1:
  an exp takes a little over three copies' time, so its work is 2.3). The numba backend
  and the compiler split an op over threads from a size that falls as its
  work grows: a range handed to a thread must be worth the hand-off.

What derives from it: both backends' op tuples and the NumPy backend's
functions, the numba kernels (one per op, built around its scalar function),
the public functions and Tensor methods and operators (``_functions.py``), the
tensor framework adapter's operator list and the tests' parametrization
(tests/ch00/op_db.py). A new elementwise op is one row here plus its scalar
function in ``scalar.py``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def _quiet(ufunc):
    """``ufunc`` without NumPy's warnings: log(-1) is NaN and 1/0 is inf, as in torch."""

    def run(*arrays):
        with np.errstate(all="ignore"):
            return ufunc(*arrays)

    return run


# torch gives inf and NaN without a word where NumPy warns: 3e38 * 10, 0 * inf, the
# sum of ten values of 3e38. The ufuncs of add, sub, mul and sum run bare (an errstate block
# would cost more than an op of a few elements), so NumPy's floating-point warnings
# are turned off once, here, for the two modules that call the op table's ufuncs.
for _caller in (r"tensor\._ops$", r"tensor\.backend\.reference$"):
    warnings.filterwarnings("ignore", r"(overflow|invalid value|divide by zero) encountered",
                            RuntimeWarning, _caller)


def _power(base, exponent):
    """``np.power`` with torch's answer for negative integer exponents, where NumPy
    raises: ``1 ** -n`` is 1, ``(-1) ** -n`` is 1 or -1, any other base gives 0
    (what the numba kernel computes too)."""
    base, exponent = np.asarray(base), np.asarray(exponent)
    with np.errstate(all="ignore"):
        if exponent.dtype.kind not in "iu" or base.dtype.kind not in "iu" or not (
                exponent < 0).any():
            return np.power(base, exponent)
        negative = exponent < 0
        result = np.power(base, np.where(negative, 0, exponent))
        odd = exponent % 2 != 0
        small = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
        return np.where(negative, small, result).astype(result.dtype)


# logaddexp warns when it meets NaN, though NaN in, NaN out is exactly what we want
warnings.filterwarnings("ignore", "invalid value encountered in logaddexp", RuntimeWarning)
_erf = np.frompyfunc(math.erf, 1, 1)


def _sigmoid(a):
    # 1 / (1 + exp(-a)) written as exp(-log(1 + exp(-a))): no overflow, no warning
    return np.exp(-np.logaddexp(0, -a))


def _gelu(a):
    # the exact form torch uses by default: x * Phi(x), Phi the normal CDF
    phi = _erf(a.astype(np.float64) / math.sqrt(2.0)).astype(np.float64)
    with np.errstate(invalid="ignore"):  # gelu(-inf) is -inf * 0: NaN, as in torch
        return (0.5 * a * (1.0 + phi)).astype(a.dtype)


def _mean(a, axis, keepdims):
    total = np.add.reduce(a, axis=axis, keepdims=keepdims)
    count = a.size // max(total.size, 1) if a.size else 0
    if count == 0:  # NaN, as in torch, without NumPy's warning about an empty mean
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / a.dtype.type(0)
    return total / a.dtype.type(count)


@dataclass(frozen=True)
class Op:
    name: str
    kind: str
    numpy: Callable | None
    dtypes: str
    doc: str = ""
    scalar: str = ""
    operator: str = ""
    reflected: bool = False
    torch_passes_method: bool = True
    method: bool = True
    public: bool = True
    work: float = 0.0


F, N, I, A = "float", "numeric", "int", "all"  # noqa: E741 (the dtypes column, short)

OPS: tuple[Op, ...] = (
    Op("neg", "unary", np.negative, N, "-input, elementwise.", operator="__neg__"),
    Op("abs", "unary", np.abs, N, "|input|, elementwise.", "absolute", "__abs__",
       torch_passes_method=False),
    Op("exp", "unary", _quiet(np.exp), F, "e ** input, elementwise (ints become float32).",
       work=2.3),
    Op("log", "unary", _quiet(np.log), F, "Natural logarithm, elementwise.", work=3.2),
    Op("sqrt", "unary", _quiet(np.sqrt), F, "Square root, elementwise.", work=0.2),
    Op("rsqrt", "unary", _quiet(lambda a: 1.0 / np.sqrt(a)), F, "1 / sqrt(input), elementwise.",
       work=1.0),
    Op("sigmoid", "unary", _sigmoid, F, "1 / (1 + exp(-input)), elementwise.", work=3.3),
    Op("tanh", "unary", np.tanh, F, "Hyperbolic tangent, elementwise.", work=4.9),
    Op("relu", "unary", lambda a: np.maximum(a, 0), N, "max(input, 0), elementwise."),
    Op("gelu", "unary", _gelu, F, method=False, public=False,  # tensor.nn.functional.gelu
       work=4.9),
    Op("add", "binary", np.add, N, "input + alpha * other.", operator="__add__", reflected=True),
    Op("sub", "binary", np.subtract, N, "input - alpha * other.", operator="__sub__",
       reflected=True),
    Op("mul", "binary", np.multiply, N, "input * other, broadcasting.", operator="__mul__",
       reflected=True),
    Op("div", "binary", _quiet(np.true_divide), N, "input / other (true division: integers "
       "give float32).", operator="__truediv__", reflected=True, work=0.5),
    Op("pow", "binary", _power, N, "input ** exponent, broadcasting.", "power",
       "__pow__", reflected=True, work=26.0),  # pow32: 22 with a tensor exponent, 30 with a number
    Op("maximum", "binary", np.maximum, N, "The larger of two tensors, elementwise (NaN wins)."),
    Op("minimum", "binary", np.minimum, N, "The smaller of two tensors, elementwise (NaN wins)."),
    Op("bitwise_and", "binary", np.bitwise_and, I, "input & other for bool and int tensors.",
       operator="__and__", reflected=True, torch_passes_method=False),
    Op("bitwise_or", "binary", np.bitwise_or, I, "input | other for bool and int tensors.",
       operator="__or__", reflected=True, torch_passes_method=False),
    Op("gt", "compare", np.greater, A, "input > other, elementwise, as bool.", operator="__gt__"),
    Op("lt", "compare", np.less, A, "input < other, elementwise, as bool.", operator="__lt__"),
    Op("ge", "compare", np.greater_equal, A, "input >= other, elementwise, as bool.",
       operator="__ge__"),
    Op("le", "compare", np.less_equal, A, "input <= other, elementwise, as bool.",
       operator="__le__"),
    Op("eq", "compare", np.equal, A, "input == other, elementwise, as bool.", operator="__eq__"),
    Op("ne", "compare", np.not_equal, A, "input != other, elementwise, as bool.",
       operator="__ne__"),
    # The ufuncs' own reduce methods: what np.sum and np.max call, minus their Python layer.
    Op("sum", "reduce", np.add.reduce, A, work=0.3),
    Op("mean", "reduce", _mean, F, work=0.3),
    Op("amax", "reduce", np.maximum.reduce, A, work=0.4),
    Op("amin", "reduce", np.minimum.reduce, A),
    # Written by hand in _functions.py; the rows give their methods and operators.
    Op("clamp", "other", None, N),
    Op("matmul", "other", np.matmul, N, operator="__matmul__", reflected=True),
    Op("max", "other", None, A),
    Op("min", "other", None, A),
    Op("argmax", "other", None, N),
    Op("argmin", "other", None, N),
    Op("softmax", "other", None, F),
    Op("log_softmax", "other", None, F),
)

BY_NAME: dict[str, Op] = {op.name: op for op in OPS}


def names(kind: str) -> tuple[str, ...]:
    """The names of the ops of one kind, in table order."""
    return tuple(op.name for op in OPS if op.kind == kind)


def scalar_name(op: str) -> str:
    """The per-element function in ``backend/kernels/scalar.py`` that computes ``op``."""
    return BY_NAME[op].scalar or op


UNARY_OPS = names("unary")
BINARY_OPS = names("binary")
COMPARE_OPS = names("compare")
REDUCE_OPS = names("reduce")
FLOAT_ONLY = frozenset(op.name for op in OPS if op.kind == "unary" and op.dtypes == F)
