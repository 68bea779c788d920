"""How the torch adapter names torch's callables: as torch.fx does.

torch_qualified_name is checked against torch.fx's own ``_get_qualified_name``
on torch functions of every kind (Python functions, C builtins of torch and
torch._C._nn, Tensor methods and operators, aten ops, a function exported
under a private name); what is not torch's gives None. method_name is checked
against ``torch.overrides.is_tensor_method_or_property``.
"""

import math
import operator

import pytest
import torch
import torch.nn.functional as F
from torch.fx.node import _get_qualified_name

from minifx.frameworks.torch_framework import TorchFramework, torch_qualified_name

TORCH_CALLABLES = [
    torch.relu, torch.add, torch.cat, torch.flatten, torch.conv2d, torch.segment_reduce,
    F.relu, F.linear, F.gelu, torch.nn.init.normal_, torch.manual_seed,
    torch.Tensor.add, torch.Tensor.size, torch.Tensor.view, torch.Tensor.__add__,
    torch.ops.aten.add.Tensor, torch.ops.aten.relu.default,
]
NOT_TORCH = [math.sqrt, operator.add, len, print, str.upper,
             torch.Tensor.shape.__get__, torch.Tensor.T.__get__]


@pytest.mark.parametrize("func", TORCH_CALLABLES, ids=repr)
def test_a_torch_callable_is_named_as_torch_fx_names_it(func):
    assert torch_qualified_name(func) == _get_qualified_name(func)


@pytest.mark.parametrize("func", NOT_TORCH, ids=repr)
def test_what_is_not_torchs_has_no_torch_name(func):
    assert torch_qualified_name(func) is None


def test_a_callable_without_a_name_has_no_torch_name():
    class Nameless:
        def __call__(self):
            pass

    assert torch_qualified_name(Nameless()) is None


def test_a_descriptor_of_another_class_with_a_tensor_methods_name_is_not_torchs():
    # str.split is a method descriptor named like Tensor.split, but not Tensor's.
    assert torch_qualified_name(str.split) is None
    assert torch_qualified_name(int.__add__) is None


def _helper():
    pass


def __get__():  # a plain function named like a property getter
    pass


@pytest.mark.parametrize("func", [
    torch.Tensor.add, torch.Tensor.size, torch.Tensor.__add__, torch.Tensor.shape.__get__,
    torch.Tensor.T.__get__, torch.relu, F.relu, len, operator.add, _helper, __get__,
], ids=repr)
def test_method_name_answers_for_tensor_methods_and_properties(func):
    expected = func.__name__ if torch.overrides.is_tensor_method_or_property(func) else None
    assert TorchFramework().method_name(func) == expected
