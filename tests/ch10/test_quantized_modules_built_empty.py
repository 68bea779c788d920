"""A quantized module built by its constructor, before ``from_float``, is what torch's is:
a zero per-tensor qint8 weight, a zero bias, scale 1 and zero point 0. It prints as
torch's does (``torch`` read as ``tensor``) and runs."""

import warnings

import numpy as np
import pytest
import torch

import tensor

BUILDS = [
    ("Linear", (4, 2), {}),
    ("Linear", (4, 2), {"bias_": False}),
    ("Conv2d", (3, 4, 3), {}),
    ("Conv2d", (3, 4, (3, 1)), {"stride": 2, "padding": 1, "bias": False}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), BUILDS)
def test_built_empty_prints_and_holds_what_torchs_does(name, args, kwargs):
    ours = getattr(tensor.nn.quantized, name)(*args, **kwargs)
    with warnings.catch_warnings():  # torch: quantized tensor creation is deprecated
        warnings.simplefilter("ignore", UserWarning)
        theirs = getattr(torch.ao.nn.quantized, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs).replace("torch", "tensor")
    assert ours.weight().shape == tuple(theirs.weight().shape)
    assert ours.weight().qscheme() is tensor.per_tensor_affine
    assert (ours.weight().q_scale(), ours.weight().q_zero_point()) == (1.0, 0)
    if theirs.bias() is None:
        assert ours.bias() is None
    else:
        np.testing.assert_array_equal(ours.bias().numpy(), theirs.bias().detach().numpy())


def test_built_empty_runs_to_its_zero_point():
    """A zero weight and bias give zero, which scale 1 and zero point 0 store as 0."""
    x = tensor.quantize_per_tensor(tensor.randn(3, 4), 0.1, 128, tensor.quint8)
    out = tensor.nn.quantized.Linear(4, 2)(x)
    assert out.shape == (3, 2) and (out.q_scale(), out.q_zero_point()) == (1.0, 0)
    assert (out.int_repr().numpy() == 0).all()
    image = tensor.quantize_per_tensor(tensor.randn(1, 3, 5, 5), 0.1, 128, tensor.quint8)
    assert tensor.nn.quantized.Conv2d(3, 4, 3)(image).shape == (1, 4, 3, 3)

