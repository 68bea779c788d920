"""The numba kernels against torch, on every layout a view can have.

Each kernel is called through the numba backend (``tests.backends.NUMBA``: the
fast layer's, or with TENSOR_FAST=0 the kernels layer's) with NumPy arrays
that are contiguous, permuted, sliced with a step, or broadcast with stride 0,
and with size-0 and size-1 dims; torch computes the oracle.
"""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tensor._ops import scalar_name
from tensor.backend import powers as _powers
from tensor.backend.kernels import scalar, spatial
from tests import oracles
from tests.backends import NUMBA as nb
from tests.oracles import ulps

RNG = np.random.default_rng(0)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def kernels_even_for_tiny_inputs(monkeypatch):
    """The backend hands inputs of <= SMALL elements to NumPy; test the kernels on them too."""
    monkeypatch.setattr(nb, "SMALL", -1, raising=False)  # (the kernels layer has none)


def t(a):
    return torch.from_numpy(np.array(a, copy=True))  # ascontiguousarray makes 0-d 1-d


def check(actual, expected, exact=False):
    expected = expected.numpy() if isinstance(expected, torch.Tensor) else expected
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    if exact or actual.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected)
    else:
        tol = 2e-6 if actual.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(actual, expected, rtol=tol * 5, atol=tol * 5, equal_nan=True)


def data(shape, dtype):
    if dtype == np.bool_:
        return RNG.random(shape) > 0.5
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-50, 50, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def layouts(shape, dtype):
    """The same logical ``shape`` as contiguous, permuted, sliced and expanded views."""
    base = data(shape, dtype)
    yield "contiguous", base
    perm = data(shape[::-1], dtype).transpose(tuple(range(len(shape)))[::-1])
    yield "permuted", perm
    big = data(tuple(2 * n + 1 for n in shape), dtype)
    yield "sliced", big[tuple(slice(1, None, 2) for _ in shape)][tuple(slice(0, n) for n in shape)]
    if shape:
        row = data((1,) + shape[1:], dtype)
        yield "expanded", np.broadcast_to(row, shape)


SHAPES = [(3, 4, 5), (7,), (1, 6), (2, 0, 3), ()]
FLOATS = [np.float32, np.float64]
TORCH_UNARY = {
    "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log,
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "sigmoid": torch.sigmoid,
    "tanh": torch.tanh, "relu": torch.relu, "gelu": torch.nn.functional.gelu,
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", nb.UNARY_OPS)
def test_unary_float(op, dtype):
    for shape in SHAPES + [(70000,)]:
        for _, a in layouts(shape, dtype):
            if op in ("log", "sqrt", "rsqrt"):
                a = np.abs(a) + dtype(0.1)
            check(nb.unary(op, a), TORCH_UNARY[op](t(a)))


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("op", ["neg", "abs", "relu"])
def test_unary_int(op, dtype):
    for _, a in layouts((3, 4), dtype):
        check(nb.unary(op, a), TORCH_UNARY[op](t(a)))


TORCH_BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
    "maximum": torch.maximum, "minimum": torch.minimum,
    "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or,
}


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("op", nb.BINARY_OPS)
def test_binary(op, dtype):
    kind = np.dtype(dtype).kind
    if (kind == "f" and op.startswith("bitwise")) or (kind != "f" and op == "div"):
        return
    if kind == "b" and op in ("sub", "pow"):
        return
    for shape_a, shape_b in [((3, 4, 5), (3, 4, 5)), ((3, 4, 5), (4, 1)), ((5,), (2, 1, 5)),
                             ((2, 0, 3), (3,)), ((), (2, 3)), ((40000,), (40000,))]:
        for (_, a), (_, b) in zip(layouts(shape_a, dtype), layouts(shape_b, dtype)):
            if op == "pow" and kind == "f":
                a = np.abs(a)
            if op == "pow" and kind == "i":
                b = np.abs(b) % 5
            check(nb.binary(op, a, b), TORCH_BINARY[op](t(a), t(b)))


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.bool_])
@pytest.mark.parametrize("op", nb.COMPARE_OPS)
def test_compare(op, dtype):
    for shape_a, shape_b in [((3, 4, 5), (4, 1)), ((6,), (6,)), ((0, 2), (2,))]:
        for (_, a), (_, b) in zip(layouts(shape_a, dtype), layouts(shape_b, dtype)):
            check(nb.compare(op, a, b), getattr(torch, op)(t(a), t(b)))


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.bool_])
def test_where_and_clamp(dtype):
    for _, a in layouts((3, 4, 5), dtype):
        cond = data((4, 1), np.bool_)
        b = data((5,), dtype)
        check(nb.where(cond, a, b), torch.where(t(cond), t(a), t(b)))
        if dtype != np.bool_:
            lo, hi = (-0.5, 0.5) if np.dtype(dtype).kind == "f" else (-10, 10)
            check(nb.clamp(a, lo, hi), torch.clamp(t(a), lo, hi))
            check(nb.clamp(a, None, hi), torch.clamp(t(a), max=hi))
            check(nb.clamp(a, lo, None), torch.clamp(t(a), min=lo))


@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
@pytest.mark.parametrize("op", nb.REDUCE_OPS)
def test_reduce(op, dtype):
    if op == "mean" and dtype == np.int64:
        return
    fn = getattr(torch, op)
    for _, a in layouts((3, 4, 5), dtype):
        for dims in [(), (0,), (1,), (2,), (0, 2), (1, 2), (0, 1, 2)]:
            for keepdim in (False, True):
                expected = fn(t(a), dim=dims, keepdim=keepdim) if dims else fn(t(a))
                if not dims and keepdim:
                    expected = expected.reshape(1, 1, 1)
                check(nb.reduce(op, a, dims, keepdim), expected)
    big = data((70000,), dtype)
    check(nb.reduce(op, big, (), False), fn(t(big)))
    if op in ("sum", "mean"):
        empty = np.zeros((2, 0), dtype)
        check(nb.reduce(op, empty, (1,), False), fn(t(empty), dim=1))


@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
def test_argmax(dtype):
    for _, a in layouts((3, 4, 5), dtype):
        check(nb.argmax(a, None, False), torch.argmax(t(a)))
        for dim in range(3):
            for keepdim in (False, True):
                check(nb.argmax(a, dim, keepdim), torch.argmax(t(a), dim, keepdim))


def test_nan_inf_and_overflow_as_torch():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 100.0, -100.0], np.float32)
    for op in nb.UNARY_OPS:
        # torch's gelu itself gives inf or NaN for inf, by code path: compare the rest.
        z = x[np.isfinite(x) | np.isnan(x)] if op == "gelu" else x
        check(nb.unary(op, z), TORCH_UNARY[op](t(z)))
    y = x[::-1].copy()
    for op in ("add", "sub", "mul", "div", "pow", "maximum", "minimum"):
        check(nb.binary(op, x, y), TORCH_BINARY[op](t(x), t(y)))
    for op in nb.COMPARE_OPS:
        check(nb.compare(op, x, y), getattr(torch, op)(t(x), t(y)))
    for op in ("amax", "amin", "sum", "mean"):
        m = x.reshape(3, 3)
        check(nb.reduce(op, m, (1,), False), getattr(torch, op)(t(m), 1))
    check(nb.argmax(x, None, False), torch.argmax(t(x)))
    check(nb.softmax(x.reshape(3, 3), 1), torch.softmax(t(x.reshape(3, 3)), 1))
    big = np.array([2**62, -(2**63), 2**63 - 1], np.int64)
    check(nb.binary("add", big, big), t(big) + t(big))
    check(nb.binary("mul", big, big), t(big) * t(big))
    check(nb.unary("abs", big), torch.abs(t(big)))
    check(nb.reduce("sum", big, (), False), torch.sum(t(big)))
    i32 = np.array([2**31 - 1, -(2**31)], np.int32)
    check(nb.binary("add", i32, i32), t(i32) + t(i32))
    check(nb.unary("neg", i32), -t(i32))
    check(nb.binary("pow", np.array([3, -1, 2, 1], np.int64), np.array([40, -3, -1, -5])),
          torch.pow(torch.tensor([3, -1, 2, 1]), torch.tensor([40, -3, -1, -5])))


def test_exp32_accuracy_in_ulps():
    """The float32 exp stays within 2 ulp of the correctly rounded exp (C's exp in
    float64, rounded once), and within 4 of NumPy's float32 exp, whose vector
    routine (it differs by CPU) has errors of its own."""
    x = np.concatenate([
        np.linspace(-103.0, 88.7, 200001, dtype=np.float32),
        RNG.standard_normal(100000).astype(np.float32) * 5,
    ])
    ours = nb.unary("exp", x)
    exact = oracles.rounded_once(oracles.exp, x)
    normal = exact > np.finfo(np.float32).tiny
    assert ulps(ours[normal], exact[normal]).max() <= 2
    assert np.abs(ours[~normal] - exact[~normal]).max() <= 2 * np.float32(1.4e-45)
    assert (ulps(ours, np.exp(x)) <= 4).all()
    tanh = nb.unary("tanh", x[np.abs(x) < 20])
    assert ulps(tanh, oracles.rounded_once(math.tanh, x[np.abs(x) < 20])).max() <= 4


@pytest.mark.fast_layer  # the fast layer's float32 maths (math32.py)
def test_sigmoid_exp_changes_no_sigmoid_bit():
    """sigmoid's own exp (exp32_flush) gives 0 below -87, where exp32 gives
    a tiny value: 1 + either is 1, so sigmoid is exp32's sigmoid to the bit."""
    from numba import njit

    from tensor.backend.fast import math32

    @njit(error_model="numpy", fastmath={"contract"})  # as the kernels are compiled
    def with_exp32(x, out):
        for i in range(x.size):
            out[i] = np.float32(1.0) / (np.float32(1.0) + math32.exp32(-x[i]))

    x = np.concatenate([
        np.linspace(-120.0, 120.0, 400001, dtype=np.float32),
        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 87.0, -87.0, 88.72, -88.72, 89.0, -89.0],
                 np.float32),
        RNG.standard_normal(10000).astype(np.float32) * 30,
    ])
    expected = np.empty_like(x)
    with_exp32(x, expected)
    np.testing.assert_array_equal(nb.unary("sigmoid", x), expected)


NESTED_INLINE = """
import numpy as np, tensor
from numba import njit
from tensor.backend.kernels.scalar import exp_of, tanh_of

@njit
def kernel(x, out):  # a branch around tanh, which inlines exp: phi nodes two levels deep
    for i in range(x.size):
        out[i] = tanh_of(x[i]) if x[i] > 0 else exp_of(x[i]) + tanh_of(x[i])

x = np.linspace(-3, 3, 101, dtype=np.float32)
out = np.empty_like(x)
kernel(x, out)
print(np.abs(out - np.where(x > 0, np.tanh(x), np.exp(x) + np.tanh(x))).max() < 1e-6)
"""


@pytest.mark.fast_layer  # the fast layer's float32 maths (math32.py)
def test_a_kernel_inlining_tanh_in_a_branch_compiles_without_numba_s_pedantic_warning():
    """numba's SSA check warns, asking for a bug report, about a variable of exp32
    inlined in tanh32 inlined in a branch; the code is right (tested here and by
    every tanh test), and tensor turns that one warning off when it is imported.
    A fresh process, so that the kernel compiles anew and pytest's filters are not
    in the way."""
    done = subprocess.run([sys.executable, "-W", "error", "-c", NESTED_INLINE],
                          capture_output=True, text=True, cwd=ROOT)
    assert (done.returncode, done.stdout, done.stderr) == (0, "True\n", "")


@pytest.mark.parametrize("dtype", FLOATS)
def test_batch_norm_fold_rounds_as_numpy_does(dtype):
    """The per-channel scale and shift of an eval batch_norm, folded by one numba
    call, have NumPy's bits: the same operations, each rounded in the dtype."""
    from tensor.backend.kernels import rows

    c = 1000
    mean, w, b = (data((c,), dtype) * 3 for _ in range(3))
    var = np.abs(data((c,), dtype)) * 5
    var[:5] = 0
    eps = dtype(1e-5)
    for weight, bias in [(w, b), (None, b), (w, None), (None, None)]:
        alpha = 1.0 / np.sqrt(var + eps)
        if weight is not None:
            alpha = alpha * weight
        beta = -mean * alpha
        if bias is not None:
            beta = beta + bias
        got_alpha, got_beta = np.empty(c, dtype), np.empty(c, dtype)
        rows.fold_batch_norm(mean, var, weight, bias, eps, got_alpha, got_beta)
        np.testing.assert_array_equal(got_alpha, alpha)
        np.testing.assert_array_equal(got_beta, beta)


@pytest.mark.fast_layer  # the fast layer's float32 maths (math32.py)
def test_gelu_flushed_exp_changes_only_results_below_1e37():
    """gelu32 takes exp32_flush: up to |x| = 13 every bit is what exp32 gives, and
    beyond, a result under 1e-37 in size may become -0.0."""
    from numba import njit

    from tensor.backend.fast import math32

    @njit(error_model="numpy", fastmath={"contract"})  # as the kernels are compiled
    def with_exp32(x, out):
        for i in range(x.size):
            u = x[i] * np.float32(0.7071067811865476)
            t = np.float32(1.0) / (np.float32(1.0) + np.float32(0.3275911) * abs(u))
            q = np.float32(1.061405429) * t - np.float32(1.453152027)
            q = q * t + np.float32(1.421413741)
            q = q * t - np.float32(0.284496736)
            q = q * t + np.float32(0.254829592)
            half_erfc = np.float32(0.5) * q * t * math32.exp32(-(u * u))
            out[i] = x[i] * (half_erfc if x[i] < np.float32(0.0) else np.float32(1.0) - half_erfc)

    x = np.concatenate([np.linspace(-40.0, 40.0, 400001, dtype=np.float32),
                        np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)])
    expected = np.empty_like(x)
    with_exp32(x, expected)
    ours = nb.unary("gelu", x)
    near = np.abs(x) <= 13
    np.testing.assert_array_equal(ours[near], expected[near])
    assert np.abs(ours[~near & np.isfinite(x)] - expected[~near & np.isfinite(x)]).max() < 1e-37
    np.testing.assert_array_equal(ours[~np.isfinite(x)], expected[~np.isfinite(x)])


def _correctly_rounded_pow(x, y):
    """C's pow in float64, one pair at a time, rounded once: no CPU's vector routine."""
    return oracles.c_pow(x, y)


@pytest.mark.fast_layer  # pow32's own accuracy (math32.py); libm's powf is 1 ulp too
def test_pow32_within_one_ulp_of_the_correctly_rounded_power():
    """pow32 computes y * log2(x) and 2 ** that in float64: never more than 1 ulp
    from the correctly rounded power, subnormal and overflowing results
    included, and that ulp is rare (5 in a million here; glibc's powf,
    NumPy's float32 power, misses about 4 in ten thousand). Integer powers
    of integers are checked for the 1 ulp only: their exact value often lies
    halfway between two float32s, and pow32 then takes either neighbour, not
    always the even one (both are half an ulp off)."""
    n = 400_000
    cases = [
        (np.exp(RNG.uniform(-100, 88, n)), RNG.uniform(-3, 3, n)),  # results across the range
        (RNG.uniform(0, 4, n), RNG.standard_normal(n) * 30),  # big exponents
        (np.exp(RNG.uniform(-104, -87, n)), RNG.uniform(0.2, 1.5, n)),  # subnormal x
    ]
    for x, y in cases:
        x, y = x.astype(np.float32), y.astype(np.float32)
        ours, exact = nb.binary("pow", x, y), _correctly_rounded_pow(x, y)
        assert ulps(ours, exact).max() <= 1
        assert (ours != exact).mean() < 2e-5
    x = -np.floor(RNG.uniform(1, 50, n)).astype(np.float32)  # negative whole bases
    y = np.floor(RNG.uniform(-20, 20, n)).astype(np.float32)
    assert ulps(nb.binary("pow", x, y), _correctly_rounded_pow(x, y)).max() <= 1


# The values at which C's pow has its own rules: zeros of both signs, +-1,
# infinities, NaN, subnormals, odd and even integers, non-integers.
POW_SPECIALS = np.array(
    [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 2.5, -2.5, np.inf, -np.inf,
     np.nan, 1e-45, -1e-45, 1e-40, 3.4e38, -3.4e38, 1e8, -1e8, 16777215.0, -16777215.0, 0.3],
    np.float32)


def test_pow32_special_values_are_c_pow():
    """Every pair of special values gives C's pow: NaN where C gives NaN, every bit
    where the power is a float32 (zeros, infinities, +-1, exact powers: C's
    special values), and within 1 ulp elsewhere, through the kernels of two
    tensors and of a tensor and a number. The reference is C's pow in float64
    (Python's math.pow, one pair at a time) rounded once, the same on every
    CPU; NumPy's float32 power is not: on AVX-512 it is NumPy's own vector
    routine, not glibc's powf. (The exponents torch computes with other ops,
    such as 0.5, are test_speed_paths.py's: with a number exponent they do not
    reach pow32.)"""
    x, y = (v.ravel() for v in np.meshgrid(POW_SPECIALS, POW_SPECIALS))
    assert_c_pow(nb.binary("pow", x, y), x, y)
    for value in POW_SPECIALS:
        number = np.full_like(POW_SPECIALS, value)
        assert_c_pow(nb.binary_scalar("pow", POW_SPECIALS, float(value), True), number,
                     POW_SPECIALS)
        if not _powers.computed_by_other_ops(POW_SPECIALS, value):
            assert_c_pow(nb.binary_scalar("pow", POW_SPECIALS, float(value), False),
                         POW_SPECIALS, number)


def assert_c_pow(actual, x, y):
    """``actual`` is C's pow of (x, y): bits where the power is exactly a float32, else 1 ulp."""
    expected = oracles.c_pow(x, y)
    exact = np.array([oracles.c_pow_scalar(a, b) for a, b in zip(x.astype(float),
                                                                   y.astype(float))])
    representable = np.isnan(expected) | (expected.astype(np.float64) == exact)
    oracles.same_bits(actual[representable], expected[representable])
    assert oracles.ulps(actual[~representable], expected[~representable]).max(initial=0) <= 1


@pytest.mark.fast_layer  # the routes are the fast layer's (in place, scalar, ...)
def test_pow32_same_bits_on_every_route():
    """Serial and split over threads, contiguous and strided, a tensor and a
    number exponent, in place: every route gives the same bits (pow32's fmas
    are written out, so no kernel's compile flags can change them)."""
    x = (np.abs(RNG.standard_normal(300_001)) * 3).astype(np.float32)
    y = RNG.standard_normal(300_001).astype(np.float32)
    whole = nb.binary("pow", x, y)  # split over the threads
    pieces = np.concatenate([nb.binary("pow", x[i:i + 1000], y[i:i + 1000])
                             for i in range(0, x.size, 1000)])
    oracles.same_bits(pieces, whole)
    oracles.same_bits(nb.binary("pow", x[::2], y[::2]), whole[::2])  # the strided kernel
    oracles.same_bits(nb.binary("pow", x, np.broadcast_to(np.float32(1.7), x.shape)),
              nb.binary_scalar("pow", x, 1.7, False))
    oracles.same_bits(nb.binary("pow", np.broadcast_to(np.float32(1.7), x.shape), y),
              nb.binary_scalar("pow", y, 1.7, True))
    assert nb.binary_("pow", z := x.copy(), y)  # in place
    oracles.same_bits(z, whole)


def test_softmax_log_softmax():
    for dtype in FLOATS:
        for _, a in layouts((3, 4, 5), dtype):
            for dim in range(3):
                check(nb.softmax(a, dim), torch.softmax(t(a), dim))
                check(nb.log_softmax(a, dim), torch.log_softmax(t(a), dim))
        huge = np.array([[1000.0, 999.0, -1000.0], [-np.inf, 0.0, 1.0]], dtype)
        check(nb.softmax(huge, 1), torch.softmax(t(huge), 1))
        check(nb.log_softmax(huge, 1), torch.log_softmax(t(huge), 1))


def test_matmul_linear():
    for sa, sb in [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2))]:
        a, b = data(sa, np.float32), data(sb, np.float32)
        check(nb.matmul(a, b), torch.matmul(t(a), t(b)))
    x, w, b = data((2, 3, 4), np.float32), data((5, 4), np.float32), data((5,), np.float32)
    check(nb.linear(x, w, b), torch.nn.functional.linear(t(x), t(w), t(b)))
    check(nb.linear(x, w, None), torch.nn.functional.linear(t(x), t(w)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "stride,padding,dilation,groups",
    [((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1), ((1, 1), (1, 1), (2, 2), 2),
     ((2, 2), (3, 3), (1, 1), 4)],
)
def test_conv2d(stride, padding, dilation, groups, dtype):
    x = data((2, 4, 9, 8), dtype).transpose(0, 1, 3, 2)  # non-contiguous (2, 4, 8, 9)
    for k in [(3, 3), (1, 1), (2, 3)]:
        w = data((8, 4 // groups, *k), dtype)
        b = data((8,), dtype)
        expected = torch.nn.functional.conv2d(t(x), t(w), t(b), stride, padding, dilation, groups)
        actual = nb.conv2d(x, w, b, stride, padding, dilation, groups)
        np.testing.assert_allclose(actual, expected.numpy(), rtol=1e-4, atol=1e-4)
    assert nb.conv2d(x, w, None, stride, padding, dilation, groups).dtype == dtype


def test_split_phases_holds_the_padded_image_by_stride_phase():
    x = data((2, 3, 7, 6), np.float32)
    sh, sw, ph, pw = 2, 3, 1, 2
    hq, wq = 5, 4  # the padded 9 x 10 image, split 2 ways by row and 3 by column
    phases = np.full((2, 3, sh, sw, hq, wq), np.nan, np.float32)
    spatial.split_phases(phases, x, 3, 4, sh, sw, ph, pw, 1, 1)
    padded = np.zeros((2, 3, sh * hq, sw * wq), np.float32)
    padded[:, :, ph : ph + 7, pw : pw + 6] = x
    for qy in range(sh):
        for qx in range(sw):
            np.testing.assert_array_equal(phases[:, :, qy, qx], padded[:, :, qy::sh, qx::sw])


@pytest.mark.parametrize(
    "kernel,stride,padding,dilation",
    [((1, 1), (2, 2), (0, 0), (1, 1)),  # 1x1 with a stride: only phase (0, 0) is read
     ((3, 3), (3, 2), (2, 1), (1, 1)),  # different strides along rows and columns
     ((3, 2), (2, 2), (1, 0), (2, 3)),  # dilation and stride together
     ((2, 2), (1, 1), (3, 3), (1, 1)),  # padding wider than the kernel
     ((7, 7), (2, 2), (3, 3), (1, 1))],  # the ResNet stem
)
def test_conv2d_from_stride_phases(kernel, stride, padding, dilation):
    x = data((3, 5, 13, 11), np.float64)
    w, b = data((4, 5, *kernel), np.float64), data((4,), np.float64)
    actual = nb.conv2d(x, w, b, stride, padding, dilation, 1)
    assert actual.flags.c_contiguous
    check(actual, torch.nn.functional.conv2d(t(x), t(w), t(b), stride, padding, dilation))


@pytest.mark.parametrize("ceil_mode", [False, True])
def test_pools(ceil_mode):
    F = torch.nn.functional
    x = data((2, 3, 11, 10), np.float32)[:, :, ::1, ::-1]
    x[0, 0, 0, 0] = np.nan
    for k, s, p, d in [((3, 3), (2, 2), (1, 1), (1, 1)), ((2, 3), (1, 2), (0, 1), (2, 1))]:
        check(nb.max_pool2d(x, k, s, p, d, ceil_mode), F.max_pool2d(t(x), k, s, p, d, ceil_mode))
        for cip in (False, True):
            check(nb.avg_pool2d(x, k, s, p, ceil_mode, cip),
                  F.avg_pool2d(t(x), k, s, p, ceil_mode, cip))
    for size in [(1, 1), (3, 4), (11, 10), (4, 7)]:
        check(nb.adaptive_avg_pool2d(x, size), F.adaptive_avg_pool2d(t(x), size))


@pytest.mark.parametrize("dtype", FLOATS)
def test_norms_and_embedding(dtype):
    F = torch.nn.functional
    for _, x in layouts((4, 3, 5, 6), dtype):
        mean, var = data((3,), dtype), np.abs(data((3,), dtype)) + 0.5
        w, b = data((3,), dtype), data((3,), dtype)
        check(nb.batch_norm(x, mean, var, w, b, 1e-5),
              F.batch_norm(t(x), t(mean), t(var), t(w), t(b), False, 0.1, 1e-5))
        check(nb.batch_norm(x, mean, var, None, None, 1e-3),
              F.batch_norm(t(x), t(mean), t(var), None, None, False, 0.1, 1e-3))
        lw, lb = data((5, 6), dtype), data((5, 6), dtype)
        check(nb.layer_norm(x, 2, lw, lb, 1e-5), F.layer_norm(t(x), (5, 6), t(lw), t(lb), 1e-5))
        check(nb.layer_norm(x, 1, None, None, 1e-5), F.layer_norm(t(x), (6,), None, None, 1e-5))
    # One weight or bias missing, and statistics of another dtype than x's.
    mean64, var64 = mean.astype(np.float64), var.astype(np.float64)
    check(nb.batch_norm(x, mean64, var64, w, None, 1e-5),
          F.batch_norm(t(x), t(mean), t(var), t(w), None, False, 0.1, 1e-5))
    check(nb.batch_norm(x, mean, var, None, b, 1e-5),
          F.batch_norm(t(x), t(mean), t(var), None, t(b), False, 0.1, 1e-5))
    weight = data((10, 4), dtype)
    idx = np.array([[1, 9], [0, 1], [3, 3]])[:, ::-1]
    check(nb.embedding(idx, weight), F.embedding(t(idx), t(weight)), exact=True)


@pytest.mark.fast_layer
def test_tiny_inputs_take_the_numpy_path_with_the_same_results(monkeypatch):
    monkeypatch.setattr(nb, "SMALL", 64)
    a, b = data((2, 3), np.float32), data((3,), np.float32)
    check(nb.binary("add", a, b), t(a) + t(b))
    check(nb.unary("sigmoid", a), torch.sigmoid(t(a)))
    check(nb.reduce("sum", a, (1,), True), t(a).sum(1, keepdim=True))


def test_every_elementwise_op_of_the_table_names_a_scalar_function():
    for op in nb.UNARY_OPS + nb.BINARY_OPS + nb.COMPARE_OPS:
        assert callable(getattr(scalar, scalar_name(op), None)), op


def test_the_kernel_cache_is_keyed_by_every_kernel_source():
    """A kernel inlines functions from other files, which numba's own staleness
    check does not read: the cache folder must change whenever any kernel file does."""
    import numba

    from tensor.backend.kernels import _cache, elementwise, rows

    folder = f"kernels-{_cache._sources_digest()}"
    for kernel in (elementwise.map_kernel("neg"), elementwise.zip_kernel("add"),
                   rows.softmax_rows_serial):
        assert folder in kernel._cache._cache_path
    assert "kernels-" not in (numba.config.CACHE_DIR or "")  # restored after import


def every_float32(step):
    """Every ``step``-th float32 bit pattern, both signs: subnormals, normals, inf and NaN."""
    bits = np.arange(0, 1 << 32, step, dtype=np.int64).astype(np.uint32)
    return bits.view(np.float32)


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45,
                    1.1754942e-38, 1.17549435e-38, np.finfo(np.float32).max, 0.99999994,
                    1.0000001, 0.70710677, 0.7071068, 1.4142135, 1.4142137, 2.0, 0.5],
                   np.float32)


def assert_ulps_against_float64(op, reference, x, max_ulps):
    """``op`` on float32 ``x`` within ``max_ulps`` of ``reference`` (a C function, through
    Python's math) computed in float64 and rounded once; where the reference is not
    finite (inf, -inf, nan), exactly it."""
    exact = oracles.rounded_once(reference, x)
    ours = nb.unary(op, x)
    assert ours.dtype == np.float32
    finite = np.isfinite(exact)
    assert (ulps(ours[finite], exact[finite]) <= max_ulps).all(), x[finite][
        ulps(ours[finite], exact[finite]) > max_ulps][:5]
    np.testing.assert_array_equal(ours[~finite], exact[~finite])  # NaN equals NaN here
    return ulps(ours[finite], exact[finite]).max()


def test_log32_within_1_ulp_and_exact_at_special_values():
    """log32 (float32 log from the bits of x) on a dense sample of all float32 bit
    patterns, the region around 1 and every special value: at most 1 ulp."""
    near_one = np.float32(1.0) + np.arange(-300000, 300000, dtype=np.float32) * np.float32(2**-24)
    x = np.concatenate([every_float32(4099), near_one, SPECIAL, -SPECIAL])
    assert_ulps_against_float64("log", oracles.log, x, 1)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -1e-45])
    at_special = np.array([-np.inf, -np.inf, 0.0, np.nan, np.inf, np.nan, np.nan, np.nan])
    for dtype in FLOATS:  # float32 (log32) and float64 (libm): C's special values
        oracles.same_bits(nb.unary("log", special.astype(dtype)), at_special.astype(dtype))


def test_gelu32_close_to_float64_and_torch_at_special_values():
    """gelu32 (erfc by Abramowitz and Stegun 7.1.26, taken directly for x < 0)
    against GELU computed in float64 with math.erfc: absolute error below 6e-7
    everywhere; relative error below 1e-6 from x = -1 up, and in the negative
    tail, where torch's 1 + erf(u) cancels to nothing, still a few digits.
    The special values are the exact ones (oracles.GELU_AT_SPECIAL)."""

    x = np.concatenate([np.linspace(-12, 12, 1_000_001, dtype=np.float32),
                        np.geomspace(1e-30, 12, 100_001, dtype=np.float32)])
    x = np.concatenate([x, -x])
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2.0)) for v in x.astype(np.float64)])
    ours = nb.unary("gelu", x).astype(np.float64)
    assert np.abs(ours - exact).max() < 6e-7
    relative = np.abs(ours - exact) / np.maximum(np.abs(exact), 1e-30)
    relative[np.abs(exact) < 1e-30] = 0  # results below float32's normal range
    for lowest, bound in [(-1, 1e-6), (-3, 1e-4), (-5, 3e-3), (-12, 0.05)]:
        assert relative[x >= lowest].max() < bound, lowest
    oracles.same_bits(nb.unary("gelu", oracles.GELU_SPECIAL), oracles.GELU_AT_SPECIAL)

