"""repr(tensor) prints exactly what torch prints, with `torch` read as `tensor`."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor
from tests.ch00.tensor_helpers import pair

RNG = np.random.default_rng(7)

CASES = {
    "float_matrix": RNG.standard_normal((2, 3)).astype(np.float32),
    "float_vector": np.array([0.1234, -1.0, 2.5], dtype=np.float32),
    "scalar": np.array(1.5, dtype=np.float32),
    "int_scalar": np.array(7),
    "bool_scalar": np.array(True),
    "integral_floats": np.array([1.0, 2.0, -3.0], dtype=np.float32),
    "zeros": np.zeros((2, 2), dtype=np.float32),
    "big_spread": np.array([1e-5, 1.0, 100.0], dtype=np.float32),
    "large": np.array([1e9, 1.0], dtype=np.float32),
    "large_ints_as_float": np.array([1e10, 2.0], dtype=np.float32),
    "tiny": np.array([1e-6, 2e-6], dtype=np.float32),
    "nan_inf": np.array([np.nan, np.inf, -np.inf, 1.5], dtype=np.float32),
    "nan_inf_integral": np.array([np.nan, np.inf, 2.0], dtype=np.float32),
    "all_nan": np.array([np.nan, np.nan], dtype=np.float32),
    "float64": RNG.standard_normal((2, 2)),
    "int64": np.array([[1, -20], [300, 4]]),
    "int32": np.array([1, 2, 3], dtype=np.int32),
    "bool": np.array([[True, False], [False, True]]),
    "empty_1d": np.zeros((0,), dtype=np.float32),
    "empty_2d": np.zeros((0, 3), dtype=np.float32),
    "empty_int32": np.zeros((2, 0), dtype=np.int32),
    "3d": RNG.standard_normal((2, 2, 3)).astype(np.float32),
    "4d": RNG.standard_normal((2, 1, 2, 2)).astype(np.float32),
    "wrapping_row": RNG.standard_normal(30).astype(np.float32),
    "wrapping_matrix": RNG.standard_normal((2, 15)).astype(np.float32) * 1000,
    "summarised_vector": np.arange(2000, dtype=np.float32),
    "summarised_matrix": RNG.standard_normal((50, 1000)).astype(np.float32),
    "summarised_3d": RNG.standard_normal((10, 10, 20)).astype(np.float32),
    "summarised_int": np.arange(1200).reshape(40, 30),
    "negative_zero": np.array([-0.0, 1.5], dtype=np.float32),
    "one_element": np.array([3.25], dtype=np.float64),
    "int_large": np.array([10**12, -5]),
    "long_float64_suffix_wraps": RNG.standard_normal(7) * 1e4,
}


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(name):
    ours, theirs = pair(CASES[name])
    assert repr(ours) == repr(theirs).replace("torch.", "tensor."), f"\n{ours!r}\n{theirs!r}"


def test_repr_of_views_and_results():
    ours, theirs = pair(RNG.standard_normal((3, 4)).astype(np.float32))
    for fn in (
        lambda x: x.t(),
        lambda x: x[:, ::2],
        lambda x: x.sum(0),
        lambda x: x > 0,
        lambda x: x.argmax(1),
        lambda x: x.double() * 3,
    ):
        assert repr(fn(ours)) == repr(fn(theirs)).replace("torch.", "tensor.")


def test_dtype_and_size_repr():
    assert repr(tensor.float32) == "tensor.float32"
    assert str(tensor.bool) == "tensor.bool"
    assert repr(tensor.Size([50, 1000])) == "tensor.Size([50, 1000])"
    assert str(tensor.ones(2, 3).shape) == "tensor.Size([2, 3])"
    assert repr(tensor.Size([])) == "tensor.Size([])"


def test_subclass_repr_names_the_class():
    class Marked(tensor.Tensor):
        pass

    assert repr(tensor.ones(2).as_subclass(Marked)) == "Marked([1., 1.])"


@settings(deadline=None, max_examples=50)
@given(
    shape=st.lists(st.integers(0, 5), min_size=0, max_size=3),
    exponent=st.integers(-9, 12),
    integral=st.booleans(),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**16),
)
def test_hypothesis_repr_matches_torch(shape, exponent, integral, dtype, seed):
    values = np.random.default_rng(seed).standard_normal(shape) * 10.0**exponent
    if integral:
        values = np.round(values)
    ours, theirs = pair(values.astype(dtype))
    assert repr(ours) == repr(theirs).replace("torch.", "tensor.")


def test_dtype_suffix_wraps_where_torch_wraps():
    # torch's last line here is 79 characters with ``torch.float64``; ours
    # spells ``tensor.float64``, one letter longer, and must not wrap earlier.
    values = np.random.default_rng(0).standard_normal([4, 3]) * 1e7
    ours, theirs = pair(values)
    assert repr(ours) == repr(theirs).replace("torch.", "tensor.")
