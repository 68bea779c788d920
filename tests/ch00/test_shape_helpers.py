"""Chapter 0: the small shape rules, each against torch.

`contiguous_strides` and `is_contiguous` against torch's strides and
``is_contiguous`` on views; `linear_shape` against ``torch.nn.functional.linear``
(shapes and errors); `window_count` against torch's pools, ceil_mode
included; `in_op` against the sentence it promises.
"""

import itertools

import pytest
import torch

from tensor._shape import contiguous_strides, in_op, is_contiguous, linear_shape, window_count

SHAPES = [(), (1,), (5,), (2, 3), (3, 1, 4), (2, 0, 3), (0,), (4, 1, 1), (2, 3, 4, 5), (1, 0)]


@pytest.mark.parametrize("shape", SHAPES)
def test_contiguous_strides_as_torch(shape):
    strides = contiguous_strides(shape)
    assert type(strides) is tuple
    assert strides == torch.empty(shape).stride()
    assert contiguous_strides(list(shape)) == strides


def _views():
    base = torch.empty(4, 3, 5)
    yield base
    yield base.permute(2, 0, 1)
    yield base.transpose(0, 1)
    yield base[:, 1:, :]
    yield base[:, :, ::2]
    yield base[1:3]
    yield base[:, :1, :]
    yield base[:1]
    yield base[:, 1]
    yield base.unsqueeze(1)
    yield base.unsqueeze(3)
    yield torch.empty(3, 1).expand(3, 4)
    yield torch.empty(1, 4).expand(3, 4)
    yield torch.empty(1, 1, 4).expand(1, 2, 4)
    yield torch.empty(5)[::2]
    yield torch.empty(6).view(2, 3).t()
    yield torch.empty(())
    yield torch.empty_strided((1, 3), (7, 1))  # a size-1 dim's stride does not matter
    yield torch.empty_strided((3, 1), (1, 9))
    yield torch.empty_strided((2, 1, 3), (3, 5, 1))
    yield torch.empty_strided((2, 2), (2, 1))
    yield torch.empty_strided((2, 2), (3, 1))  # a gap between rows
    yield torch.empty_strided((2, 3), (3, 2))


@pytest.mark.parametrize("index", range(23))
def test_is_contiguous_as_torch(index):
    view = list(_views())[index]
    assert is_contiguous(tuple(view.shape), view.stride()) is view.is_contiguous()


def test_is_contiguous_ignores_only_size_one_dims():
    assert is_contiguous((1, 1), (0, 0))
    assert not is_contiguous((2,), (0,))
    assert not is_contiguous((2, 3), (1, 2))
    assert is_contiguous((3, 2, 1), (2, 1, 1))


def test_is_contiguous_compares_strides_by_value():
    # Sizes past CPython's small-int cache: a stride equal to the expected one is
    # another int object than the product computed along the way.
    rows, cols = int("3"), int("400")
    for view in (torch.empty(rows, cols), torch.empty(rows, cols, 2)[:, :, 0],
                 torch.empty(rows, 1, cols)):
        assert is_contiguous(tuple(view.shape), tuple(int(str(s)) for s in view.stride())) \
            is view.is_contiguous()


LINEAR_CASES = [
    ((4, 3), (2, 3), (2,)),
    ((3,), (5, 3), None),
    ((2, 6, 3), (4, 3), (4,)),
    ((0, 3), (2, 3), (2,)),
    ((4, 3), (2, 3), ()),
    ((4, 3), (2, 3), (1,)),
    ((5, 2, 0), (3, 0), None),
]


def test_linear_shape_compares_sizes_by_value():
    features = int("1000")  # past the small-int cache: equal, not the same object
    assert linear_shape((2, features), (3, int("1000")), None) == (2, 3)


@pytest.mark.parametrize("x, w, b", LINEAR_CASES)
def test_linear_shape_as_torch(x, w, b):
    expected = torch.nn.functional.linear(
        torch.empty(x), torch.empty(w), None if b is None else torch.empty(b)).shape
    ours = linear_shape(x, w, b)
    assert type(ours) is tuple and ours == tuple(expected)


def _torch_error(x, w, b):
    with pytest.raises(RuntimeError) as error:
        torch.nn.functional.linear(torch.empty(x), torch.empty(w),
                                   None if b is None else torch.empty(b))
    return str(error.value)


def test_linear_shape_errors():
    with pytest.raises(RuntimeError) as error:
        linear_shape((4, 3), (2, 3, 1), None)
    assert str(error.value) == "linear(): expected a 2-d weight, got shape [2, 3, 1]"
    with pytest.raises(RuntimeError) as error:
        linear_shape((4, 3), (3,), None)
    assert str(error.value) == "linear(): expected a 2-d weight, got shape [3]"
    with pytest.raises(RuntimeError) as error:
        linear_shape((), (2, 3), None)
    assert str(error.value) == "linear(): input must have at least 1 dimension, got a 0-d tensor"
    with pytest.raises(RuntimeError) as error:
        linear_shape((), (2, 3, 4), None)  # the weight is checked first
    assert "2-d weight" in str(error.value)
    for x, w in [((4, 5), (2, 3)), ((2, 3, 5), (2, 4)), ((7,), (2, 3)), ((4, 2), (2, 3)),
                 ((3,), (2, 7))]:
        with pytest.raises(RuntimeError) as error:
            linear_shape(x, w, None)
        assert str(error.value) == _torch_error(x, w, None) + in_op("linear", x, w)
    with pytest.raises(RuntimeError) as error:
        linear_shape((4, 5), (2, 3), (9,))  # the sizes are checked before the bias
    assert str(error.value).startswith("mat1 and mat2")
    for b in [(3,), (2, 1), (1, 2), (2, 2)]:
        with pytest.raises(RuntimeError) as error:
            linear_shape((4, 3), (2, 3), b)
        assert str(error.value) == f"linear(): bias of shape {list(b)} does not match " \
                                   "out_features=2"


@pytest.mark.parametrize("ceil_mode", [False, True])
def test_window_count_as_torch_pools(ceil_mode):
    checked = 0
    for size, kernel, stride, pad in itertools.product(range(1, 9), range(1, 5), range(1, 4),
                                                       range(0, 3)):
        if pad > kernel // 2 or kernel > size + 2 * pad:
            continue
        x = torch.empty(1, 1, size)
        expected = torch.nn.functional.max_pool1d(x, kernel, stride, pad,
                                                  ceil_mode=ceil_mode).shape[-1]
        assert window_count(size, kernel, stride, pad, 1, ceil_mode) == expected, \
            (size, kernel, stride, pad)
        checked += 1
    assert checked > 150


@pytest.mark.parametrize("ceil_mode", [False, True])
def test_window_count_with_dilation_as_torch(ceil_mode):
    for size, kernel, stride, pad, dilation in itertools.product(range(3, 10), (2, 3), (1, 2, 3),
                                                                 (0, 1), (1, 2, 3)):
        if pad > kernel // 2 or dilation * (kernel - 1) + 1 > size + 2 * pad:
            continue
        x = torch.empty(1, 1, size)
        expected = torch.nn.functional.max_pool1d(x, kernel, stride, pad, dilation,
                                                  ceil_mode=ceil_mode).shape[-1]
        assert window_count(size, kernel, stride, pad, dilation, ceil_mode) == expected
    conv = torch.nn.functional.conv1d(torch.empty(1, 1, 9), torch.empty(1, 1, 3), stride=2,
                                      padding=1, dilation=2)
    assert window_count(9, 3, 2, 1, 2) == conv.shape[-1]
    assert window_count(9, 3, 2, 1) == window_count(9, 3, 2, 1, 1, False)


def test_in_op_names_the_op_and_its_shapes():
    assert in_op("relu", (2, 3)) == " (in relu: shape [2, 3])"
    assert in_op("add", (2, 3), (4, 3)) == " (in add: shapes [2, 3] and [4, 3])"
    assert in_op("cat", (1,), (), (2, 2)) == " (in cat: shapes [1], [] and [2, 2])"
    assert in_op("where", [1, 2], (3,), (4,), (5,)) == \
        " (in where: shapes [1, 2], [3], [4] and [5])"
    assert in_op("sum", ()) == " (in sum: shape [])"
