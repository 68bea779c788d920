"""make_fx records every model of chapter 9's zoo and chapter 11's, converted to ``tensor``.

Each torch model is converted (chapter 11) and traced by make_fx in both
modes; the graph must hold only primitives and compute what the converted
model computes on *other* inputs of the same shapes, so that a value the
run computed outside the primitives (frozen into the graph as a constant)
would show. The zoo entries chapter 11 does not convert, and the one with
a data-dependent shape under fake tensors, are checked where they are
defined (tests/ch12/test_fake_tensor_prop_zoo.py).
"""

import copy

import numpy as np
import pytest

import tensor
from minifx.convert import torch_to_tensor
from minifx.convert.table import conversion_table
from minifx.convert.values import ValueConverter
from minifx.experimental.proxy_tensor import make_fx
from tests.ch09.zoo import ZOO
from tests.ch11.ch11_models import ZOO as CH11_ZOO
from tests.ch12.test_fake_tensor_prop_zoo import DATA_DEPENDENT, NOT_CONVERTED
from tests.ch12.test_make_fx import assert_graph_is_primitive
from tests.generators import leaves

rng = np.random.default_rng(1)


def other(value):
    """A new input like ``value``: new numbers, the same shape, dtype and value range."""
    if not isinstance(value, tensor.Tensor):
        return value
    x = value.numpy()
    if x.dtype.kind == "f":
        return tensor.from_numpy(rng.standard_normal(x.shape).astype(x.dtype))
    if x.dtype.kind == "b":
        return tensor.from_numpy(rng.random(x.shape) < 0.5)
    return tensor.from_numpy(rng.integers(0, int(x.max()) + 1, x.shape).astype(x.dtype))


def check(model, inputs, mode):
    args = [ValueConverter(conversion_table()).tensor(x) for x in inputs]
    root = copy.deepcopy(model) if hasattr(model, "parameters") else model
    converted = torch_to_tensor(root, inputs)
    gm = make_fx(converted, tracing_mode=mode)(*args)
    assert_graph_is_primitive(gm)
    others = [other(a) for a in args]
    got, expected = leaves(gm(*others)), leaves(converted(*others))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if isinstance(e, tensor.Tensor):  # sizes and numbers a model returns are constants
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-5)
        else:
            assert g == e


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name", sorted(set(ZOO) - NOT_CONVERTED - DATA_DEPENDENT))
def test_ch09_zoo(name, mode):
    check(*ZOO[name](), mode)


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name", sorted(CH11_ZOO))
def test_ch11_zoo(name, mode):
    check(*CH11_ZOO[name](), mode)
