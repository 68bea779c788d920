"""A float32 maths library that LLVM can vectorise: exp, log, tanh, GELU and pow.

This module is speed only. Without it (``TENSOR_FAST=0``) the kernels call
libm through numba (``math.exp`` and friends), one call per element, which
LLVM cannot turn into vector code because this llvmlite has no SVML.

``exp32`` computes the same value the way Cephes' ``expf`` does: reduce ``x``
to ``n*ln2 + r`` with ``|r| <= ln2/2``, evaluate a degree-6 polynomial for
``exp(r)``, and scale by ``2**n`` built straight from the exponent bits.
Every step is plain arithmetic, so a loop of ``exp32`` compiles to SIMD code;
its error is about 1 ulp (tests/ch00/test_kernels.py measures it against
float64 references). ``log32`` is its mirror image: it reads the exponent and
the mantissa straight out of the bits of ``x`` and evaluates Cephes' ``logf``
polynomial on the mantissa. ``pow32`` does the same for ``x ** y``, with
float64 inside (see there).

``register`` puts the functions in ``kernels.scalar.FLOAT32``, where the
per-op scalar functions look for a float32 version before they fall back to
libm; the fast backend calls it when it loads. Float64 always keeps libm: accuracy first.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ..kernels import scalar


def _bits_as(source, target):
    """An intrinsic that reads the bits of a ``source`` value as a ``target`` of the
    same width: a reinterpretation, no conversion (LLVM's bitcast)."""

    @intrinsic
    def bits_as(typingctx, value):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(target))

        return target(source), codegen

    return bits_as


_int32_bits_as_float32 = _bits_as(types.int32, types.float32)
_float32_bits_as_int32 = _bits_as(types.float32, types.int32)
_float64_bits_as_int64 = _bits_as(types.float64, types.int64)
_int64_bits_as_float64 = _bits_as(types.int64, types.float64)


@intrinsic
def _fma64(typingctx, a, b, c):
    """a * b + c for float64, rounded once (LLVM's fma; vectorises).

    Written out rather than left to the "contract" flag, which some of our
    kernels set and some do not: pow32's bits must not depend on which
    kernel runs it.
    """
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        double = context.get_value_type(types.float64)
        fma = builder.module.declare_intrinsic(
            "llvm.fma", [double], ir.FunctionType(double, [double, double, double]))
        return builder.call(fma, args)

    return sig, codegen


# Adding 1.5 * 2**23 to a float32 of magnitude below 2**22 rounds it to an
# integer, which then sits in the low bits of the sum's mantissa.
_ROUNDER = np.float32(12582912.0)
_ROUNDER_BITS = np.int32(0x4B400000)


@njit(inline="always")
def _exp32_reduced(xc):
    """(y, n) with exp(xc) = y * 2**n, y in [0.7, 1.42], for a clamped float32 ``xc``:
    range reduction and a polynomial, branch-free."""
    # n = round(x / ln2), as a float and as an int, with one addition and no
    # float-to-int conversion (LLVM leaves that undefined for NaN, and it
    # then needed a NaN test per element). A NaN gives meaningless bits for
    # ni here, and r carries the NaN into the result.
    t = xc * np.float32(1.44269504088896341) + _ROUNDER
    n = t - _ROUNDER
    ni = _float32_bits_as_int32(t) - _ROUNDER_BITS
    # ln2 split in two parts so that n * ln2 is exact to float32 precision.
    r = xc - n * np.float32(0.693359375) - n * np.float32(-2.12194440e-4)
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    return p * (r * r) + r + np.float32(1.0), ni


@njit(inline="always")
def exp32(x):
    """exp for float32, branch-free: range reduction and a polynomial."""
    # Clamp so that n stays in [-150, 128]: the result then over/underflows
    # to inf / 0 by itself, the way expf does. A NaN passes both tests.
    xc = np.float32(89.0) if x > np.float32(89.0) else x
    xc = np.float32(-104.0) if xc < np.float32(-104.0) else xc
    y, ni = _exp32_reduced(xc)
    # 2**n in two halves, each a normal float32 even when n is -150 or 128.
    n1 = ni >> 1
    n2 = ni - n1
    scale1 = _int32_bits_as_float32((n1 + np.int32(127)) << 23)
    scale2 = _int32_bits_as_float32((n2 + np.int32(127)) << 23)
    return y * scale1 * scale2


@njit(inline="always")
def exp32_flush(x):
    """exp32, except that below -87 it gives 0 rather than a value under 2**-125.

    Above -87 the bits are exp32's. What it buys: n then stays in
    [-126, 128], and 2**n is (y + y) * 2**(n - 1), one exponent field to
    build instead of two. For a caller that cannot tell such a tiny value
    from 0 that is free speed: sigmoid reads exp only through 1 + exp(-x),
    which it cannot change (sigmoid measured faster with it), and gelu32
    multiplies it into a result below 1e-37.
    """
    xc = np.float32(89.0) if x > np.float32(89.0) else x
    xc = np.float32(-87.0) if xc < np.float32(-87.0) else xc
    y, ni = _exp32_reduced(xc)
    # n = -126 gives an exponent field of 0, that is 0.0: exp(-87) rounds to nothing in 1 + e.
    return (y + y) * _int32_bits_as_float32((ni + np.int32(126)) << 23)


# log32 adds _TO_SQRT_HALF to the bits of x, read as an int32, so that a
# mantissa at or above sqrt(2) carries into the exponent field; the low 23
# bits, put under the exponent field of sqrt(1/2), then give m in
# [sqrt(1/2), sqrt(2)).
_SQRT_HALF_BITS = np.int32(0x3F3504F3)
_TO_SQRT_HALF = np.int32(0x3F800000 - 0x3F3504F3)
_MANTISSA = np.int32(0x007FFFFF)
_TINY = np.float32(1.17549435e-38)  # the smallest normal float32, 2**-126


@njit(inline="always")
def _split32(x):
    """(k, m) with x = 2**k * m and m in [sqrt(1/2), sqrt(2)), for a float32 x > 0,
    both float32 and exact, read straight from the bits."""
    # A subnormal x has no implicit leading 1: scale it by 2**23 into the
    # normal range first, and take 23 off its exponent afterwards.
    subnormal = x < _TINY
    xs = x * np.float32(8388608.0) if subnormal else x
    # numba widens int32 arithmetic to int64; np.int32(...) keeps every step
    # 32 bits wide, so that eight lanes fit in one AVX register.
    bits = np.int32(_float32_bits_as_int32(xs) + _TO_SQRT_HALF)
    k = np.float32(np.int32((bits >> 23) - np.int32(127)))
    k = k - np.float32(23.0) if subnormal else k
    m = _int32_bits_as_float32(np.int32((bits & _MANTISSA) + _SQRT_HALF_BITS))
    return k, m


@njit(inline="always")
def log32(x):
    """log for float32, branch-free: the bits give x = 2**k * m, a polynomial log(m).

    With m in [sqrt(1/2), sqrt(2)), log(x) = k*ln2 + log(1 + f) with
    f = m - 1 in [-0.29, 0.42], and Cephes' logf polynomial gives log(1 + f)
    to about 1 ulp. The special values are picked at the end by selects,
    which vectorise: log(0) = -inf, log(x < 0) = nan, log(inf) = inf, nan
    stays nan.
    """
    k, m = _split32(x)
    f = m - np.float32(1.0)
    z = f * f
    # log(1 + f) = f - f**2/2 + f**3 * p(f), p of degree 8, evaluated in
    # Estrin's scheme (pairs first, then powers of f**2): a shorter chain of
    # dependent multiply-adds than Horner's, so the CPU overlaps more of it.
    z4 = z * z
    a0 = np.float32(-2.4999993993e-1) * f + np.float32(3.3333331174e-1)
    a1 = np.float32(-1.6668057665e-1) * f + np.float32(2.0000714765e-1)
    a2 = np.float32(-1.2420140846e-1) * f + np.float32(1.4249322787e-1)
    a3 = np.float32(-1.1514610310e-1) * f + np.float32(1.1676998740e-1)
    b0 = a1 * z + a0
    b1 = a3 * z + a2
    b1 = np.float32(7.0376836292e-2) * z4 + b1
    p = b1 * z4 + b0
    # k*ln2 in two parts, the first with few enough bits that k times it is
    # exact; the small part joins the small terms before the big ones.
    y = p * f * z + k * np.float32(-2.12194440e-4) - np.float32(0.5) * z
    r = (f + y) + k * np.float32(0.693359375)
    r = r if x < np.float32(np.inf) else x  # inf -> inf, nan -> nan
    r = np.float32(-np.inf) if x == np.float32(0.0) else r  # both zeros
    return np.float32(np.nan) if x < np.float32(0.0) else r


@njit(inline="always")
def tanh32(x):
    """tanh for float32: an odd polynomial near 0, exp32 further out."""
    ax = abs(x)
    s = x * x
    p = np.float32(-5.70498872745e-3)
    p = p * s + np.float32(2.06390887954e-2)
    p = p * s - np.float32(5.37397155531e-2)
    p = p * s + np.float32(1.33314422036e-1)
    p = p * s - np.float32(3.33332819422e-1)
    small = p * s * x + x
    big = np.float32(1.0) - np.float32(2.0) / (exp32(ax + ax) + np.float32(1.0))
    big = big if x >= np.float32(0.0) else -big
    return small if ax < np.float32(0.625) else big


@njit(inline="always")
def gelu32(x):
    """GELU for float32, x * Phi(x), branch-free, so that its loop vectorises.

    With u = x / sqrt(2), Phi(x) = (1 + erf(u)) / 2 is erfc(|u|) / 2 for
    x < 0 and 1 - erfc(|u|) / 2 otherwise. erfc(|u|) comes from formula
    7.1.26 of Abramowitz and Stegun's Handbook of Mathematical Functions,
    t * q(t) * exp(-u**2) with t = 1 / (1 + 0.3275911 |u|) (absolute error
    below 1.5e-7, the formula of torch's vectorised CPU erf). Taking erfc
    directly, not 1 + erf, keeps the small values of GELU at negative x
    accurate (1 + erf(u) there loses every digit to cancellation), and GELU
    needs no separate series near 0: there Phi is near 1/2, so an absolute
    error of 1.5e-7 makes a relative error of the same size.
    """
    u = x * np.float32(0.7071067811865476)
    t = np.float32(1.0) / (np.float32(1.0) + np.float32(0.3275911) * abs(u))
    q = np.float32(1.061405429) * t - np.float32(1.453152027)
    q = q * t + np.float32(1.421413741)
    q = q * t - np.float32(0.284496736)
    q = q * t + np.float32(0.254829592)
    # exp32_flush, not exp32: from |x| > 13.2 on it makes the tiny negative results
    # (below 1e-37 in size) -0.0, as torch's own float32 GELU does (it gives 0 there
    # already from -13), and its simpler exponent build makes a gelu cheaper.
    half_erfc = np.float32(0.5) * q * t * exp32_flush(-(u * u))
    return x * (half_erfc if x < np.float32(0.0) else np.float32(1.0) - half_erfc)


# ---- pow for float32 ----------------------------------------------------------
# x ** y = 2 ** (y * log2 x). In float32 that loses accuracy: an error of one
# ulp in log2 x becomes an error of |y * log2 x| ulps in the result. So pow32
# computes t = y * log2(x) and 2 ** t in float64, where the same slip costs
# nothing a float32 can show, and rounds once at the end. The series are
# plain Taylor series, written out; their coefficients are computed here.
_LN2 = math.log(2.0)
# log(m) = 2 * atanh(s) = 2 * (s + s**3/3 + s**5/5 + ...), s = (m - 1) / (m + 1).
# With m in [sqrt(1/2), sqrt(2)), |s| <= 0.172: eight terms leave an error
# under 2**-44 of the sum.
_ATANH = tuple(1.0 / (2 * j + 1) for j in range(8))
_TWO_OVER_LN2 = 2.0 / _LN2
# 2**f = exp(f * ln2) = sum of (f * ln2)**j / j!, f in [-1/2, 1/2]: ten terms
# leave an error of about 2**-37.
_EXP2 = tuple(_LN2**j / math.factorial(j) for j in range(10))
# Adding 1.5 * 2**52 to a float64 of magnitude below 2**51 rounds it to an
# integer, which then sits in the low bits of the sum's mantissa.
_ROUNDER64 = 6755399441055744.0
_ROUNDER64_BITS = np.int64(0x4338000000000000)


@njit(inline="always")
def _estrin8(x, x2, c):
    """c[0] + c[1] x + ... + c[7] x**7 for float64, ``x2`` = x * x, in Estrin's scheme:
    pairs first, then powers of x**2.

    Horner's rule would be one chain of seven dependent fmas. With a
    Python-scalar exponent LLVM vectorises pow only four lanes wide, too few
    independent chains to hide that latency (pow measured slower). It is
    written out, not a loop: a loop here would not be unrolled, and the
    element loop around it would then not vectorise.
    """
    a0 = _fma64(x, c[1], c[0])
    a1 = _fma64(x, c[3], c[2])
    a2 = _fma64(x, c[5], c[4])
    a3 = _fma64(x, c[7], c[6])
    return _fma64(_fma64(a3, x2, a2), x2 * x2, _fma64(a1, x2, a0))


@njit(inline="always")
def _log2_64(ax):
    """log2 of a float32 ``ax`` > 0 (subnormals too), in float64."""
    k, m32 = _split32(ax)
    m = np.float64(m32)
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    p = _estrin8(z, z * z, _ATANH)
    return _fma64(p * s, _TWO_OVER_LN2, np.float64(k))


@njit(inline="always")
def _exp2_64(t):
    """2**t for a float64 ``t`` in [-1000, 1000] (NaN gives meaningless bits)."""
    shifted = t + _ROUNDER64
    n = shifted - _ROUNDER64
    f = t - n
    f2 = f * f
    f8 = (f2 * f2) * (f2 * f2)
    q = _fma64(_fma64(f, _EXP2[9], _EXP2[8]), f8, _estrin8(f, f2, _EXP2))
    # 2**n straight from the exponent bits: |n| <= 1000 keeps it a normal float64.
    ni = _float64_bits_as_int64(shifted) - _ROUNDER64_BITS
    return q * _int64_bits_as_float64((ni + np.int64(1023)) << 52)


@njit(inline="always")
def pow32(x, y):
    """x ** y for float32, branch-free, so that its loop vectorises.

    libm's powf is one call per element, which LLVM cannot vectorise. Here
    every step is arithmetic or a select, so it beats powf with a tensor of
    exponents and with a number, and its time does not swing as powf's
    does from run to run. It is also
    closer to the correctly rounded result: never more than 1 ulp from it,
    and off by that ulp about 80 times more rarely than powf (tested).

    The special values of C's pow fall out of the same arithmetic:
    log2(0) = -inf and log2(inf) = inf make t = y * log2|x| infinite, and
    2 ** +-inf is inf or 0. What is left is picked by selects at the end:
    a negative base (a sign for an odd integer y, NaN for a non-integer
    one), NaN, and the cases that give 1 whatever the other operand is.
    """
    ax = abs(x)
    lg = _log2_64(ax)
    lg = lg if ax < np.float32(np.inf) else np.float64(ax)  # inf -> inf, nan -> nan
    lg = np.float64(-np.inf) if ax == np.float32(0.0) else lg
    t = np.float64(y) * lg
    # Beyond +-1000 the float32 result is inf or 0 already; NaN passes both tests.
    t = 1000.0 if t > 1000.0 else t
    t = -1000.0 if t < -1000.0 else t
    r = np.float32(_exp2_64(t))
    whole = np.floor(y) == y  # +-inf count as whole: no NaN for them
    half = y * np.float32(0.5)
    odd = whole and np.floor(half) != half
    negative = _float32_bits_as_int32(x) < np.int32(0)  # -0.0 too
    r = -r if negative and odd else r
    r = np.float32(np.nan) if x < np.float32(0.0) and x > np.float32(-np.inf) and not whole else r
    r = np.float32(np.nan) if t != t else r
    # pow(1, y) and pow(x, 0) are 1 even for NaN; so is pow(-1, +-inf).
    one = x == np.float32(1.0) or y == np.float32(0.0) \
        or (ax == np.float32(1.0) and abs(y) == np.float32(np.inf))
    return np.float32(1.0) if one else r



def register() -> None:
    """Make the per-op scalar functions of ``kernels/scalar.py`` use these for float32,
    in every kernel compiled from now on (the fast backend calls this at import)."""
    scalar.FLOAT32.update(exp=exp32, exp_flush=exp32_flush, log=log32, tanh=tanh32,
                          gelu=gelu32, power=pow32)
