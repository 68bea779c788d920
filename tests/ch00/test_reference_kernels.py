"""Chapter 0: the NumPy reference's clamp, log_softmax, linear and binary, against torch.

Each function of `tensor.backend.reference` is called directly on NumPy
arrays, views and 0-d ones, and compared with torch on the same numbers:
bit for bit where torch computes the same operations (clamp, the special
powers), closely where the order of a sum may differ.
"""

import numpy as np
import pytest
import torch

from tensor.backend import reference as ref

RNG = np.random.default_rng(0)


def _bits_equal(ours: np.ndarray, theirs: torch.Tensor, signed_zeros: bool = True) -> None:
    expected = theirs.numpy()
    assert type(ours) is np.ndarray
    assert ours.dtype == expected.dtype and ours.shape == expected.shape
    if signed_zeros:  # the sign of a zero (a NaN's sign is nobody's business)
        numbers = ~np.isnan(expected)
        np.testing.assert_array_equal(np.signbit(ours[numbers]), np.signbit(expected[numbers]))
    np.testing.assert_array_equal(ours, expected)


CLAMP_BOUNDS = [(-0.5, 0.5), (None, 0.25), (-0.25, None), (0.75, -0.75), (None, None),
                (0.0, 0.0), (-3.0, 3.0)]


@pytest.mark.parametrize("lo, hi", CLAMP_BOUNDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clamp_as_torch(lo, hi, dtype):
    a = RNG.standard_normal((3, 4)).astype(dtype)
    a[0, 0], a[1, 1], a[2, 2] = np.nan, np.inf, -0.0
    t = torch.from_numpy(a.copy())
    expected = t if lo is None and hi is None else torch.clamp(t, lo, hi)  # torch refuses
    ours = ref.clamp(a, lo, hi)
    # NumPy's maximum(-0.0, 0.0) may answer 0.0 where torch keeps -0.0: zeros compare equal
    _bits_equal(ours, expected, signed_zeros=False)
    assert ours is not a and not np.shares_memory(ours, a)


def test_clamp_of_ints_and_of_views():
    a = np.arange(-5, 7, dtype=np.int64).reshape(3, 4)
    _bits_equal(ref.clamp(a, -2, 3), torch.clamp(torch.from_numpy(a), -2, 3))
    view = a.T[::2]
    _bits_equal(ref.clamp(view, 0, None), torch.clamp(torch.from_numpy(view.copy()), 0, None))
    scalar = np.array(2.5, np.float32)
    _bits_equal(ref.clamp(scalar, None, 1.0), torch.clamp(torch.tensor(2.5), None, 1.0))
    narrow = np.array([0.1, 0.7], np.float32)  # the bound is taken in float32
    _bits_equal(ref.clamp(narrow, 0.3, 0.6), torch.clamp(torch.from_numpy(narrow), 0.3, 0.6))


@pytest.mark.parametrize("shape, dim", [((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -1),
                                        ((2, 3, 4), 1), ((7,), 0), ((), 0)])
def test_log_softmax_as_torch(shape, dim):
    a = np.asarray(RNG.standard_normal(shape) * 5)
    ours = ref.log_softmax(a, dim)
    expected = torch.log_softmax(torch.from_numpy(a), dim).numpy()
    assert ours.shape == a.shape and ours.dtype == a.dtype
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-12)
    a32 = a.astype(np.float32)
    assert ref.log_softmax(a32, dim).dtype == np.float32


def test_log_softmax_is_stable_on_extreme_rows():
    a = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0],
                  [3.0e38, 3.0e38, 1.0e38]], np.float32)
    ours = ref.log_softmax(a, 1)
    expected = torch.log_softmax(torch.from_numpy(a), 1).numpy()
    assert np.isfinite(ours).all()
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-6)


def test_log_softmax_of_an_empty_array_is_a_copy():
    a = np.empty((0, 3), np.float32)
    out = ref.log_softmax(a, 1)
    assert out.shape == (0, 3) and out.dtype == np.float32 and out is not a
    b = np.empty((2, 0))
    assert ref.log_softmax(b, 1).shape == (2, 0)


@pytest.mark.parametrize("x_shape", [(4, 3), (3,), (2, 5, 3), (0, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_as_torch(x_shape, bias):
    x = RNG.standard_normal(x_shape)
    w = RNG.standard_normal((2, 3))
    b = RNG.standard_normal(2) if bias else None
    ours = ref.linear(x, w, b)
    expected = torch.nn.functional.linear(torch.from_numpy(x), torch.from_numpy(w),
                                          None if b is None else torch.from_numpy(b)).numpy()
    assert type(ours) is np.ndarray and ours.shape == expected.shape
    assert ours.dtype == np.float64
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-12)


def test_linear_of_a_vector_by_a_row_is_an_array():
    out = ref.linear(np.ones(3, np.float32), np.ones((1, 3), np.float32), None)
    assert type(out) is np.ndarray and out.shape == (1,) and out.dtype == np.float32
    w = np.arange(6.0).reshape(3, 2)  # a transposed view as the weight
    x = np.arange(3.0)
    np.testing.assert_array_equal(ref.linear(x, w.T, np.ones(2)), x @ w + 1)


SPECIAL = np.array([-0.0, 0.0, -np.inf, np.inf, -2.0, 4.0, 0.25, np.nan], np.float32)


@pytest.mark.parametrize("exponent", [0.5, -0.5, 2.0, 3.0, -1.0, -2.0, 1.0, 1.5])
def test_pow_by_a_number_as_torch(exponent):
    # A number exponent reaches binary as a NumPy scalar (tensor/backend/powers.py).
    ours = ref.binary("pow", SPECIAL, np.float32(exponent))
    _bits_equal(ours, torch.pow(torch.from_numpy(SPECIAL), exponent))


@pytest.mark.parametrize("exponent", [0.5, -0.5, 2.0])
def test_pow_by_a_0d_tensor_is_pow_as_torch(exponent):
    b = np.array(exponent, np.float32)
    ours = ref.binary("pow", SPECIAL, b)
    _bits_equal(ours, torch.pow(torch.from_numpy(SPECIAL), torch.tensor(exponent)))
    assert ours.shape == SPECIAL.shape


def test_pow_of_arrays():
    exps = np.array([0.5, 2.0, 0.5, 3.0, 0.5, -1.0, 2.0, 0.5], np.float32)
    _bits_equal(ref.binary("pow", SPECIAL, exps),
                torch.pow(torch.from_numpy(SPECIAL), torch.from_numpy(exps)))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_binary_broadcasts_as_torch(op):
    a = RNG.standard_normal((3, 1, 4)).astype(np.float32)
    b = RNG.standard_normal((2, 1)).astype(np.float32)
    ours = ref.binary(op, a, b)
    expected = getattr(torch, op)(torch.from_numpy(a), torch.from_numpy(b))
    _bits_equal(ours, expected)
    zero_d = ref.binary(op, np.array(1.5, np.float32), np.array(2.0, np.float32))
    assert type(zero_d) is np.ndarray and zero_d.shape == ()


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
@pytest.mark.parametrize("value", [2.0, 0.5, -1.0, 3.0])
def test_binary_with_a_number_operand_as_torch(op, value):
    # Only pow has special exponents: other ops with the same numbers compute as they are.
    ours = ref.binary(op, SPECIAL, np.float32(value))
    other = torch.tensor(value, dtype=torch.float32)  # maximum takes no plain number
    _bits_equal(ours, getattr(torch, op)(torch.from_numpy(SPECIAL), other))


def test_pow_is_recognised_by_its_name_not_its_object():
    pow_ = "".join(["p", "ow"])  # equal to "pow", another str object
    _bits_equal(ref.binary(pow_, SPECIAL, np.float32(0.5)),
                torch.pow(torch.from_numpy(SPECIAL), 0.5))
    _bits_equal(ref.binary(pow_, SPECIAL, np.array(0.5, np.float32)),
                torch.pow(torch.from_numpy(SPECIAL), torch.tensor(0.5)))


def test_pow_by_an_exponent_array_larger_than_the_base():
    base = np.array([[4.0], [-0.0], [0.25]], np.float32)
    exps = np.array([[0.5, 2.0], [0.5, 3.0], [-0.5, 1.0]], np.float32)
    _bits_equal(ref.binary("pow", base, exps),
                torch.pow(torch.from_numpy(base), torch.from_numpy(exps)))
