"""Broadcasting and views, as shape arithmetic: ``tensor._shape`` against torch.

``broadcast_shapes`` must give torch's result shape for every pair of shapes,
and torch's sentence (with the op and the shapes after it) where torch
refuses; ``view_strides`` must give the strides torch's ``view`` gives, and
None exactly where torch's ``view`` refuses.
"""

import itertools

import pytest
import torch

from tensor._shape import (
    broadcast_shapes,
    contiguous_strides,
    in_op,
    infer_size,
    matmul_shape,
    view_strides,
)

SIZES = (1, 2, 3)


def shapes(max_dims: int):
    for ndim in range(max_dims + 1):
        yield from itertools.product(SIZES, repeat=ndim)


def torch_broadcast(a: tuple, b: tuple):
    """torch's result shape of ``a + b``, or its error message."""
    try:
        return tuple((torch.empty(a) + torch.empty(b)).shape)
    except RuntimeError as error:
        return str(error)


def test_broadcast_shapes_as_torch():
    pairs = [(a, b) for a in shapes(3) for b in shapes(2)]
    pairs += [(b, a) for a, b in pairs] + [((2, 0, 3), (1, 3)), ((0,), (1,)), ((4, 1), (0,))]
    for a, b in pairs:
        expected = torch_broadcast(a, b)
        if isinstance(expected, tuple):
            result = broadcast_shapes("add", a, b)
            assert type(result) is tuple and result == expected, (a, b)
        else:
            with pytest.raises(RuntimeError) as error:
                broadcast_shapes("add", a, b)
            assert str(error.value) == expected + in_op("add", a, b), (a, b)


def test_broadcast_error_names_the_padded_dim_and_the_op():
    with pytest.raises(RuntimeError) as error:
        broadcast_shapes("mul", (5, 3, 2), (4, 1))
    assert str(error.value) == (
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
        "dimension 1 (in mul: shapes [5, 3, 2] and [4, 1])")
    assert broadcast_shapes("add", (2, 3), (2, 3)) == (2, 3)


def views():
    """Torch tensors of several shapes and layouts: contiguous, transposed, sliced,
    expanded, with size-1 dims, empty and 0-d."""
    base = torch.arange(48.0)
    yield base.reshape(2, 3, 4, 2)
    yield base.reshape(4, 12).t()
    yield base.reshape(2, 24)[:, ::2]
    yield base.reshape(6, 8)[1:5, 2:6]
    yield base.reshape(2, 1, 24).transpose(0, 1)
    yield base.reshape(4, 3, 4)[:, :, :1]
    yield base.reshape(3, 16)[:, 1:13].reshape(3, 3, 4).permute(1, 0, 2)
    yield torch.ones(3).expand(2, 3)
    yield torch.ones(4, 1).expand(4, 3)
    yield base.reshape(2, 24)[:, :0]
    yield torch.tensor(5.0)
    yield base.reshape(1, 48)
    yield base[:12].reshape(4, 3, 1).transpose(1, 2)  # a size-1 dim with an odd stride


def factorisations(n: int, max_dims: int = 4) -> list[tuple[int, ...]]:
    """Every shape of at most ``max_dims`` dims (1s included) that holds ``n`` elements;
    for ``n == 0``, the shapes of sizes 0 to 2 with a 0 in them."""
    if n == 0:
        return [s for d in range(1, max_dims + 1) for s in itertools.product((0, 1, 2), repeat=d)
                if 0 in s]

    def split(rest: int, dims: int):
        if dims == 0:
            if rest == 1:
                yield ()
            return
        for size in range(1, rest + 1):
            if rest % size == 0:
                for tail in split(rest // size, dims - 1):
                    yield (size, *tail)

    return [s for d in range(max_dims + 1) for s in split(n, d)]


VIEWS = list(views())


@pytest.mark.parametrize("index", range(len(VIEWS)))
def test_view_strides_as_torch(index):
    t = VIEWS[index]
    old_shape, old_strides = tuple(t.shape), t.stride()
    for new_shape in factorisations(t.numel()):
        try:
            expected = t.view(new_shape).stride()
        except RuntimeError:
            expected = None
        result = view_strides(old_shape, old_strides, new_shape)
        assert result == expected, (old_shape, old_strides, new_shape)
        assert result is None or type(result) is tuple


def test_view_strides_of_empty_and_0d_shapes():
    assert view_strides((2, 0), (5, 7), (2, 0)) == (5, 7)
    assert view_strides((2, 0), (5, 7), (0, 2)) == contiguous_strides((0, 2))
    assert view_strides((), (), (1, 1)) == (1, 1)


def torch_matmul(a: tuple, b: tuple):
    try:
        return tuple(torch.matmul(torch.empty(a), torch.empty(b)).shape)
    except RuntimeError as error:
        return str(error)


def test_matmul_shape_as_torch():
    operands = [(), (3,), (4,), (2, 3), (3, 4), (4, 3), (1, 3, 4), (2, 4, 5), (3, 2, 3, 4),
                (2, 1, 4, 2), (5, 4), (3, 2, 3), (0, 4), (4, 0)]
    for a, b in itertools.product(operands, repeat=2):
        expected = torch_matmul(a, b)
        if isinstance(expected, tuple):
            result = matmul_shape(a, b)
            assert type(result) is tuple and result == expected, (a, b)
            continue
        with pytest.raises(RuntimeError) as error:
            matmul_shape(a, b)
        if "size of tensor" in expected:  # the batch dims' broadcast names them
            expected += in_op("matmul", a[:-2], b[:-2])
        elif a and b:  # every other shape error but the 0-d one names the op and shapes
            expected += in_op("matmul", a, b)
        assert str(error.value) == expected, (a, b)
    # Two equal sizes above 256 are two int objects: the inner sizes agree by value.
    big, other = 300, int("300")
    for a, b in [((2, big), (other,)), ((big,), (other,)), ((2, big), (other, 5)),
                 ((3, 2, big), (3, other, 5))]:
        assert matmul_shape(a, b) == torch_matmul(a, b), (a, b)


def torch_reshape(input_shape: tuple, shape: tuple):
    try:
        return tuple(torch.empty(input_shape).reshape(shape).shape)
    except RuntimeError as error:
        return str(error)


def test_infer_size_as_torch():
    requests = [(-1,), (2, -1), (-1, 3), (5, -1), (-1, -1), (2, 3), (3, 2, 1), (4, -1, 2),
                (0, -1), (-1, 0), (2, -2), (-3, -1), (6,), (7,)]
    for input_shape in ((2, 3), (6,), (2, 0, 3), (), (4, 2)):
        numel = torch.Size(input_shape).numel()
        for shape in requests + [(1,) * 3]:
            expected = torch_reshape(input_shape, shape)
            if isinstance(expected, tuple):
                result = infer_size(shape, numel, "reshape", input_shape)
                assert type(result) is tuple and result == expected, (input_shape, shape)
                continue
            with pytest.raises(RuntimeError) as error:
                infer_size(shape, numel, "reshape", input_shape)
            if "is invalid for input" in expected or "cannot reshape" in expected:
                expected += in_op("reshape", input_shape, shape)
            assert str(error.value) == expected, (input_shape, shape)
