"""Per-element functions, one per elementwise op, inlined into every kernel.

The op table (``tensor/_ops.py``) names, for each elementwise op, the
function here that computes one element; ``elementwise.py`` builds the op's
kernels around it, and chapter 8's compiler pastes the same functions into
its fused kernels.

Transcendental functions go through a hook (``exp_of``, ``log_of``, ...): for
float32 it takes the version the fast layer registered in ``FLOAT32``
(``tensor/backend/fast/math32.py``, a maths library LLVM can vectorise), and
otherwise libm through numba. Float64 always uses libm.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numba import njit, types
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import overload

# A function with branches, inlined into an inlined function (tanh32 calls exp32),
# leaves numba's SSA pass a variable it has not entered in its scope's table, and
# a pedantic check of numba's then warns and asks for a report (numba issues 7802
# and 8130). The variable keeps its name and the compiled code is right: every
# kernel's values are tested against torch. A learner should not see it.
warnings.filterwarnings("ignore", r".*variable '.*' is not in scope", NumbaIRAssumptionWarning,
                        r"numba\.core\.ssa$")

# Float32 versions of ``exp``, ``exp_flush``, ``log``, ``tanh``, ``gelu`` and ``power``,
# put here by the fast layer when it loads; empty with ``TENSOR_FAST=0``. A kernel
# reads the table when it compiles, and the on-disk cache keeps the two apart
# (``_cache.py``).
FLOAT32: dict = {}


def _libm_or_float32(name: str, libm, libm32=None):
    """A function for kernels: ``FLOAT32[name]`` for a float32 argument when the fast
    layer registered one, else ``libm`` (``libm32``, if given, for float32)."""

    def hook(x):
        raise NotImplementedError("a kernel-only function: call it inside numba code")

    @overload(hook, inline="always")
    def _choose(x):
        fast = FLOAT32.get(name) if x == types.float32 else None
        if fast is not None:
            return lambda x: fast(x)
        return libm32 if libm32 is not None and x == types.float32 else libm

    hook.__name__ = hook.__qualname__ = f"{name}_of"
    return hook


exp_of = _libm_or_float32("exp", lambda x: math.exp(x))
# sigmoid's exp: the fast layer's version flushes what would be subnormal to 0
exp_flush_of = _libm_or_float32("exp_flush", lambda x: math.exp(x))
log_of = _libm_or_float32("log", lambda x: np.log(x))
tanh_of = _libm_or_float32("tanh", lambda x: math.tanh(x))
# GELU as torch writes it, 0.5 * x * (1 + erf(x / sqrt(2))); for float32, erfc(-x / sqrt(2))
# in float64 instead, which keeps its digits in the negative tail where 1 + erf cancels
# (as the fast layer's gelu32 does), rounded once.
gelu_of = _libm_or_float32(
    "gelu", lambda x: 0.5 * x * (1.0 + math.erf(x * 0.7071067811865476)),
    lambda x: np.float32(0.5 * np.float64(x) * math.erfc(-np.float64(x) * 0.7071067811865476)))


def like(x, value):
    """``value`` converted to the type of ``x`` (so float32 math stays float32)."""


@overload(like)
def _like(x, value):
    target = x

    def impl(x, value):
        return target(value)

    return impl


# ---- unary -----------------------------------------------------------------
@njit(inline="always")
def neg(x):
    return -x


@njit(inline="always")
def absolute(x):
    return x if x >= like(x, 0) else -x


@njit(inline="always")
def exp(x):
    return exp_of(x)


@njit(inline="always")
def log(x):
    return log_of(x)


@njit(inline="always")
def sqrt(x):
    return np.sqrt(x)


@njit(inline="always")
def rsqrt(x):
    return like(x, 1.0) / np.sqrt(x)


@njit(inline="always")
def sigmoid(x):
    return like(x, 1.0) / (like(x, 1.0) + exp_flush_of(-x))


@njit(inline="always")
def tanh(x):
    return tanh_of(x)


@njit(inline="always")
def relu(x):
    return like(x, 0) if x < like(x, 0) else x  # NaN stays NaN, as in torch


@njit(inline="always")
def gelu(x):
    return gelu_of(x)


# ---- binary ----------------------------------------------------------------
@njit(inline="always")
def add(x, y):
    return x + y


@njit(inline="always")
def sub(x, y):
    return x - y


@njit(inline="always")
def mul(x, y):
    return x * y


@njit(inline="always")
def div(x, y):
    return x / y


def _power_any(x, y):
    """x ** y with torch's rules for integer exponents."""


@overload(_power_any, inline="always")
def _power_any_impl(x, y):
    if isinstance(x, types.Integer):

        def int_impl(x, y):
            # Square and multiply; a negative exponent gives 0 unless |x| == 1.
            if y < 0:
                if x == 1:
                    return like(x, 1)
                if x == -1:
                    return like(x, 1) if y % 2 == 0 else like(x, -1)
                return like(x, 0)
            result = like(x, 1)
            base = x
            e = y
            while e > 0:
                if e & 1:
                    result *= base
                base *= base
                e >>= 1
            return result

        return int_impl
    fast = FLOAT32.get("power") if x == types.float32 and y == types.float32 else None
    if fast is not None:
        return lambda x, y: fast(x, y)
    return lambda x, y: x**y  # libm's pow


@njit(inline="always")
def power(x, y):
    return _power_any(x, y)


@njit(inline="always")
def maximum(x, y):
    return x if (x > y or x != x) else y  # NaN wins, as in torch


@njit(inline="always")
def minimum(x, y):
    return x if (x < y or x != x) else y


@njit(inline="always")
def bitwise_and(x, y):
    return x & y  # ints only: the public API never sends floats here


@njit(inline="always")
def bitwise_or(x, y):
    return x | y


# ---- compare ---------------------------------------------------------------
@njit(inline="always")
def gt(x, y):
    return x > y


@njit(inline="always")
def lt(x, y):
    return x < y


@njit(inline="always")
def ge(x, y):
    return x >= y


@njit(inline="always")
def le(x, y):
    return x <= y


@njit(inline="always")
def eq(x, y):
    return x == y


@njit(inline="always")
def ne(x, y):
    return x != y
