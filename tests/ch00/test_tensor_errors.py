"""Bad input gets torch's error, naming the op, the shapes or the dtype."""

import re

import numpy as np
import pytest
import torch

import tensor


def torch_message(fn):
    with pytest.raises(Exception) as info:
        fn(torch)
    return str(info.value)


@pytest.mark.parametrize("op", ["add", "mul", "sub", "div", "gt", "maximum", "eq"])
def test_broadcast_mismatch_names_op_and_shapes(op):
    a_shape, b_shape = (2, 3), (4,)
    expected = torch_message(lambda lib: getattr(lib, op)(lib.ones(*a_shape), lib.ones(*b_shape)))
    with pytest.raises(RuntimeError) as info:
        getattr(tensor, op)(tensor.ones(*a_shape), tensor.ones(*b_shape))
    message = str(info.value)
    assert message.startswith(expected)  # torch's sentence, word for word
    assert op in message and "[2, 3]" in message and "[4]" in message


def test_broadcast_mismatch_in_operators_and_where():
    with pytest.raises(RuntimeError, match=r"tensor a \(3\) must match the size of tensor b \(2\)"):
        tensor.ones(3) + tensor.ones(2)
    with pytest.raises(RuntimeError, match="where"):
        tensor.where(tensor.ones(3, dtype=tensor.bool), tensor.ones(2), 0.0)
    with pytest.raises(
        RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape"
    ):
        t = tensor.ones(3)
        t += tensor.ones(2, 3)


def test_matmul_shape_errors():
    expected = torch_message(lambda lib: lib.matmul(lib.ones(2, 3), lib.ones(4, 5)))
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        tensor.ones(2, 3) @ tensor.ones(4, 5)
    expected = torch_message(lambda lib: lib.matmul(lib.ones(3), lib.ones(4)))
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        tensor.matmul(tensor.ones(3), tensor.ones(4))
    with pytest.raises(RuntimeError, match="at least 1D"):
        tensor.matmul(tensor.tensor(1.0), tensor.ones(2))
    with pytest.raises(RuntimeError, match="same dtype"):
        tensor.ones(2, 2) @ tensor.ones(2, 2, dtype=tensor.float64)
    with pytest.raises(RuntimeError, match="must match"):
        tensor.ones(2, 2, 3) @ tensor.ones(3, 3, 4)


@pytest.mark.parametrize(
    "call, dtype_name",
    [
        (lambda: tensor.mean(tensor.ones(2, dtype=tensor.int64)), "int64"),
        (lambda: tensor.softmax(tensor.ones(2, dtype=tensor.int32), 0), "int32"),
        (lambda: tensor.ones(2) & tensor.ones(2), "float32"),
        (lambda: tensor.bitwise_or(tensor.ones(2, dtype=tensor.float64), 1), "float64"),
        (
            lambda: tensor.matmul(
                tensor.ones(2, dtype=tensor.bool), tensor.ones(2, dtype=tensor.bool)
            ),
            "bool",
        ),
        (lambda: -tensor.ones(2, dtype=tensor.bool), "bool"),
        (lambda: tensor.ones(2, dtype=tensor.bool) - 1, "bool"),
        (lambda: tensor.where(tensor.ones(2), tensor.ones(2), 0.0), "float32"),
        (lambda: tensor.from_numpy(np.zeros(2, dtype=np.int8)), "int8"),
        (lambda: tensor.randn(2, dtype=tensor.int64), "int64"),
    ],
)
def test_unsupported_dtype_raises_type_error_naming_it(call, dtype_name):
    with pytest.raises(TypeError, match=dtype_name):
        call()


def test_wrong_arguments_name_the_function():
    t = tensor.ones(2, 3)
    with pytest.raises(TypeError, match=r"add\(\)"):
        tensor.add(t)
    with pytest.raises(TypeError, match=r"sum\(\) got an unexpected keyword argument 'dimm'"):
        tensor.sum(t, dimm=1)
    with pytest.raises(TypeError, match=r"neg\(\)"):
        t.neg(1)
    with pytest.raises(TypeError, match=r"sigmoid\(\)"):
        tensor.sigmoid(t, t)
    with pytest.raises(TypeError, match=r"view\(\)"):
        t.view(2.5, 2)
    with pytest.raises(TypeError, match=r"add\(\): argument 'other'"):
        tensor.add(t, "x")
    with pytest.raises(TypeError, match=r"sigmoid\(\): argument 'input' must be Tensor"):
        tensor.sigmoid([1.0, 2.0])
    with pytest.raises(TypeError, match="unsupported operand"):
        t + "x"
    with pytest.raises(TypeError, match=r"cat\(\)"):
        tensor.cat([t, 1])


def test_dims_out_of_range():
    t = tensor.ones(2, 3)
    for call in (
        lambda: t.sum(2),
        lambda: t.transpose(0, 2),
        lambda: t.unsqueeze(3),
        lambda: t.softmax(-3),
        lambda: t.max(5),
        lambda: t.size(2),
    ):
        with pytest.raises(
            IndexError,
            match=r"Dimension out of range \(expected to be in range of "
            r"\[-\d, \d\], but got -?\d\)",
        ):
            call()
    with pytest.raises(RuntimeError, match="appears multiple times"):
        t.sum((0, -2))


def test_shape_op_errors():
    t = tensor.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        t.view(4, 2)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        t.reshape(-1, -1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.t().view(6)
    with pytest.raises(
        RuntimeError,
        match=r"expanded size of the tensor \(4\) must match the existing "
        r"size \(3\) at non-singleton dimension 1",
    ):
        t.expand(2, 4)
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0"):
        tensor.cat([t, tensor.ones(2, 4)])
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        tensor.cat([t, tensor.ones(3)])
    with pytest.raises(
        RuntimeError,
        match=r"stack expects each tensor to be equal size, but got "
        r"\[2, 3\] at entry 0 and \[3\] at entry 1",
    ):
        tensor.stack([t, tensor.ones(3)])
    with pytest.raises(ValueError, match="non-empty"):
        tensor.cat([])
    with pytest.raises(RuntimeError, match="number of dimensions"):
        t.permute(1, 0, 2)
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions"):
        tensor.ones(1, 2, 3).t()
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]


def test_scalar_conversion_errors():
    t = tensor.ones(2, 3)
    with pytest.raises(
        RuntimeError, match="a Tensor with 6 elements cannot be converted to Scalar"
    ):
        t.item()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(t)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(tensor.tensor(1.0))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        t.clamp()
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        tensor.ones(2, dtype=tensor.int64) ** -1
    with pytest.raises(RuntimeError, match="non-zero size"):
        tensor.ones(0, 3).amax(0)
    with pytest.raises(IndexError, match="non-zero size"):
        tensor.ones(0, 3).max(0)


def test_a_tensor_of_negative_integer_exponents_is_computed_as_torch_does():
    """Only a negative *number* exponent is refused; a tensor of them gives 1 ** -n = 1,
    (-1) ** -n = +-1 and 0 for any other base, on every backend."""
    from tensor import backend

    bases, exponents = [0, 1, -1, 2, -2, 3, -1], [-1, -1, -1, -1, -2, -3, -2]
    expected = (torch.tensor(bases) ** torch.tensor(exponents)).tolist()
    before = backend.get_backend()
    try:
        for name in backend.available():
            backend.set_backend(name)
            got = tensor.tensor(bases) ** tensor.tensor(exponents)
            assert got.tolist() == expected == [0, 1, -1, 0, 0, 0, 1], name
            assert (2 ** tensor.tensor([-1, 0, 3])).tolist() == [0, 1, 8], name
    finally:
        backend.set_backend(before)
