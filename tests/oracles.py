"""References that give the same answer on every CPU.

NumPy and torch compute ``exp``, ``log``, ``pow``, ``tanh``, ``gelu`` and the
like with vectorised routines that they pick at run time from the CPU's
instruction set (SSE, AVX2, AVX-512, NEON). Those routines differ in the last
bit, and sometimes at special values: on an AVX-512 machine NumPy's float32
``power`` is not glibc's ``powf``, and torch's ``gelu(inf)`` is NaN. A test
that compares bits with them passes on the machine it was written on and
fails on a learner's laptop.

So a test that asserts bits compares with one of these instead:

- exact arithmetic (``+``, ``*``, comparisons, integer maths);
- Python's ``math`` in float64 (the C library, one value at a time), rounded
  once to the tensor's dtype: ``rounded_once``, ``c_pow``;
- the C standard's special values, written in the test.

Where a library's vectorised routine is the only oracle, the test bounds the
distance in units in the last place (``ulps``) and says why.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


def ulps(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """How many representable floats lie between each pair: 0 for the same value.

    The bit patterns are mapped to integers that increase with the value
    (negative floats counted down from zero), so the distance is right across
    zero too; ``+0.0`` and ``-0.0`` are 0 apart. Both arrays must have the same
    float dtype; NaNs give meaningless distances, so compare them separately.
    """
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.dtype.kind == "f", (actual.dtype,
                                                                         expected.dtype)
    signed = {4: np.int32, 8: np.int64}[actual.dtype.itemsize]

    def ordered(a: np.ndarray) -> np.ndarray:
        bits = a.view(signed).astype(np.int64)
        lowest = np.int64(np.iinfo(signed).min)
        return np.where(bits < 0, lowest - bits, bits)  # -0.0 maps to 0, as +0.0

    # Python ints: the difference of two int64 orderings can overflow int64.
    return np.abs(ordered(actual).astype(object) - ordered(expected).astype(object)).astype(
        np.float64)


def same_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    """Every bit equal, the sign of zero included; a NaN matches any NaN."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(actual), nan, err_msg="NaN in different places")
    signed = {2: np.int16, 4: np.int32, 8: np.int64}[actual.dtype.itemsize]
    differ = actual.view(signed)[~nan] != expected.view(signed)[~nan]
    assert not differ.any(), (
        f"{int(differ.sum())} of {differ.size} differ; first: "
        f"{actual[~nan][differ][:5]!r} where {expected[~nan][differ][:5]!r} was expected"
    )


def _odd_integer(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2.0) != 0.0


def c_pow_scalar(x: float, y: float) -> float:
    """C99's pow(x, y) in float64, through Python's math.pow.

    ``math.pow`` follows the C standard's Annex F, except that where C returns
    an infinity or NaN and flags an error, Python raises. Those cases are put
    back here as C defines them: a negative base to a non-integer power is
    NaN; zero to a negative power is an infinity, signed like the zero when
    the exponent is an odd integer; an overflow is an infinity, negative for a
    negative base to an odd power.
    """
    try:
        return math.pow(x, y)
    except ValueError:
        if x == 0.0:  # pole: 0 ** negative
            return math.copysign(math.inf, x) if _odd_integer(y) else math.inf
        return math.nan  # negative ** non-integer
    except OverflowError:
        return -math.inf if x < 0 and _odd_integer(y) else math.inf


def c_pow(x: np.ndarray, y: np.ndarray, dtype=np.float32) -> np.ndarray:
    """C's pow of each pair in float64, rounded once to ``dtype``: the same on every CPU."""
    x, y = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(y, np.float64))
    exact = np.array([c_pow_scalar(a, b) for a, b in zip(x.ravel(), y.ravel())], np.float64)
    with np.errstate(over="ignore", under="ignore"):
        return exact.reshape(x.shape).astype(dtype)


def rounded_once(fn: Callable[[float], float], x: np.ndarray, dtype=None) -> np.ndarray:
    """``fn`` (a ``math`` function) of each element in float64, rounded once to ``dtype``.

    ``dtype`` defaults to ``x``'s. A domain error gives NaN and an overflow an
    infinity of the sign of the float64 result's direction, as C's functions
    return them (``math.log(0.0)`` raises where C's log gives ``-inf``: pass a
    function that handles its own poles, as ``log`` below does).
    """
    x = np.asarray(x)
    dtype = x.dtype if dtype is None else np.dtype(dtype)

    def one(v: float) -> float:
        try:
            return fn(v)
        except ValueError:
            return math.nan
        except OverflowError:
            return math.inf

    exact = np.array([one(float(v)) for v in x.ravel()], np.float64).reshape(x.shape)
    with np.errstate(over="ignore", under="ignore"):
        return exact.astype(dtype)


def log(v: float) -> float:
    """C's log: ``-inf`` at zero (Python raises there), NaN below it, NaN for NaN."""
    if v == 0.0:
        return -math.inf
    if v < 0.0 or math.isnan(v):
        return math.nan
    return math.log(v)


def exp(v: float) -> float:
    """C's exp: ``inf`` on overflow (Python raises there)."""
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


# GELU's special values, written out: x * Phi(x) in IEEE arithmetic. At -inf that is
# -inf * 0, NaN, as torch computes it in float64 on every CPU. torch's float32 gelu
# is no oracle here: on some AVX-512 machines it gives gelu(inf) = NaN and
# gelu(3e38) = inf (its vector kernel overflows x * (1 + erf)), on others inf and 3e38.
GELU_SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 3e38, -3e38],
                        np.float32)
GELU_AT_SPECIAL = np.array([np.nan, np.inf, np.nan, 0.0, -0.0, 0.0, -0.0, 3e38, -0.0],
                           np.float32)
