"""Creation functions, dtypes and the random generator, against torch."""

import numpy as np
import pytest
import torch

import tensor
from tests.helpers import check, dtype_name


@pytest.mark.parametrize(
    "data",
    [
        [1, 2, 3],
        [1.0, 2.0],
        [True, False],
        [[1, 2], [3, 4]],
        3,
        2.5,
        True,
        [[1.5, 2], [3, 4]],
        [],
        [[]],
    ],
    ids=repr,
)
def test_tensor_infers_dtype_like_torch(data):
    check(tensor.tensor(data), torch.tensor(data))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_creation_with_dtype(dtype):
    ours_dt, torch_dt = getattr(tensor, dtype), getattr(torch, dtype)
    check(tensor.tensor([1, 0, 2], dtype=ours_dt), torch.tensor([1, 0, 2], dtype=torch_dt))
    for name in ("zeros", "ones", "empty"):
        ours = getattr(tensor, name)(2, 3, dtype=ours_dt)
        assert ours.shape == (2, 3) and dtype_name(ours.dtype) == dtype
        if name != "empty":
            check(ours, getattr(torch, name)(2, 3, dtype=torch_dt))
            check(
                getattr(tensor, name)((2, 3), dtype=ours_dt),
                getattr(torch, name)((2, 3), dtype=torch_dt),
            )
    base = tensor.ones(2, 2, dtype=ours_dt)
    check(tensor.zeros_like(base), torch.zeros_like(torch.ones(2, 2, dtype=torch_dt)))
    check(tensor.ones_like(base), torch.ones_like(torch.ones(2, 2, dtype=torch_dt)))


def test_full_and_arange():
    for value in (7, 2.5, True):
        check(tensor.full((2, 3), value), torch.full((2, 3), value))
    check(tensor.full((2,), 1, dtype=tensor.float64), torch.full((2,), 1, dtype=torch.float64))
    for args in [(5,), (2, 7), (1, 10, 3), (0.0, 1.0, 0.25), (10, 0, -3), (0, 1, 0.1), (3, 3)]:
        check(tensor.arange(*args), torch.arange(*args))
    check(tensor.arange(4, dtype=tensor.float32), torch.arange(4, dtype=torch.float32))


def test_sizes_as_varargs_or_tuple_and_size_zero():
    assert tensor.zeros(2, 3).shape == tensor.zeros((2, 3)).shape == tensor.zeros([2, 3]).shape
    assert tensor.zeros(0, 3).shape == (0, 3)
    assert tensor.zeros(()).shape == ()
    assert tensor.randn(3, 4).shape == tensor.randn((3, 4)).shape == (3, 4)


def test_manual_seed_reproduces_random_tensors():
    tensor.manual_seed(0)
    a, b = tensor.randn(3, 4), tensor.rand(5)
    tensor.manual_seed(0)
    np.testing.assert_array_equal(tensor.randn(3, 4).numpy(), a.numpy())
    np.testing.assert_array_equal(tensor.rand(5).numpy(), b.numpy())
    assert a.dtype is tensor.float32 and b.dtype is tensor.float32
    assert ((b >= 0) & (b < 1)).numpy().all()
    assert tensor.randn(2, dtype=tensor.float64).dtype is tensor.float64
    like = tensor.randn_like(tensor.zeros(2, 3, dtype=tensor.float64))
    assert like.shape == (2, 3) and like.dtype is tensor.float64
    tensor.manual_seed(1)
    assert not np.array_equal(tensor.randn(3, 4).numpy(), a.numpy())


def test_from_numpy_shares_memory():
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tensor.from_numpy(array)
    array[0, 0] = 100
    assert t[0, 0].item() == 100
    t[1, 1] = -1
    assert array[1, 1] == -1
    assert t.numpy() is array


def test_unsupported_dtypes_raise_type_error_naming_them():
    with pytest.raises(TypeError, match="uint8"):
        tensor.from_numpy(np.zeros(3, dtype=np.uint8))
    with pytest.raises(TypeError, match="float16"):
        tensor.zeros(2, dtype=np.float16)
    with pytest.raises(TypeError, match="complex"):
        tensor.tensor(np.zeros(2, dtype=np.complex64))
    with pytest.raises(TypeError, match="float16"):
        tensor.ones(2).to("float16")


def test_conversions():
    t = tensor.tensor([1.7, -2.2])
    check(t.long(), torch.tensor([1.7, -2.2]).long())
    check(t.int(), torch.tensor([1.7, -2.2]).int())
    check(t.double(), torch.tensor([1.7, -2.2]).double())
    check(t.bool(), torch.tensor([1.7, -2.2]).bool())
    check(t.to(tensor.float64), torch.tensor([1.7, -2.2]).to(torch.float64))
    assert float(tensor.tensor(2.5)) == 2.5 and int(tensor.tensor(3)) == 3
    assert [0, 1, 2][tensor.tensor(1)] == 1
    assert bool(tensor.tensor([True]))
    assert np.asarray(t).dtype == np.float32
    assert tensor.is_tensor(t) and not tensor.is_tensor(t.numpy())
