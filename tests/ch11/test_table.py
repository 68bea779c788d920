"""The one table, checked against tensor's public lists: a new tensor op shows up
as convertible, or must be named in NOT_TWINS with the reason."""

import inspect
import operator
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import tensor
import tensor.nn.functional
from minifx.convert.table import (
    GAPS,
    NOT_TWINS,
    conversion_table,
    passes_through,
    public_functions,
    qualified,
    tensor_methods,
)

TABLE = conversion_table()
TWINS = set(TABLE.functions.values())


def names_of(namespace):
    return [n for n in namespace.__all__ if not inspect.ismodule(getattr(namespace, n))]


@pytest.mark.parametrize("namespace", [tensor, tensor.nn.functional], ids=lambda m: m.__name__)
def test_every_public_tensor_function_is_convertible_or_a_named_exception(namespace):
    for name in names_of(namespace):
        value = getattr(namespace, name)
        if name in NOT_TWINS or not callable(value) or isinstance(value, type):
            continue  # a dtype, a type, or an exception with its reason
        assert value in TWINS, f"{namespace.__name__}.{name} is public but not in the table"


def test_every_tensor_function_in_the_table_has_torch_twin_of_the_same_name():
    torch_spaces = {"tensor": torch, "tensor.nn.functional": F}
    for torch_fn, twin in TABLE.functions.items():
        if torch_fn is torch._assert:
            continue
        namespace, _, name = qualified(twin).rpartition(".")
        assert getattr(torch_spaces[namespace], name) is torch_fn


def test_every_tensor_method_is_convertible():
    for name in tensor_methods():
        assert name in TABLE.methods, f"Tensor.{name} has no torch method of that name"


def test_every_tensor_nn_module_is_convertible_or_a_named_exception():
    for name in names_of(tensor.nn):
        value = getattr(tensor.nn, name)
        if not isinstance(value, type):
            continue
        assert name in NOT_TWINS or TABLE.modules.get(getattr(torch.nn, name)) is value, name


def test_not_twins_are_real_names():
    for name in NOT_TWINS:
        assert hasattr(tensor, name) or hasattr(tensor.nn, name), name


def test_gaps_are_really_missing_from_tensor():
    """When tensor gains one of these, its advice must go: the op converts now."""
    for name in GAPS:
        if name in ("device", "to"):
            continue  # an argument and a method whose device form tensor lacks
        assert not hasattr(tensor, name), name
        assert not hasattr(tensor.Tensor, name), name
        assert not hasattr(tensor.nn, name), name
        assert not hasattr(tensor.nn.functional, name), name


# SPEC section 1: what tensor has, spelled as torch spells it.
SPEC_FUNCTIONS = (
    "add sub mul div neg pow abs exp log sqrt rsqrt sigmoid tanh relu clamp matmul gt lt ge le "
    "eq ne bitwise_and bitwise_or where sum mean max min amax amin argmax softmax log_softmax "
    "reshape flatten permute transpose t squeeze unsqueeze cat stack zeros ones full arange "
    "rand randn zeros_like ones_like randn_like tensor"
).split()
SPEC_METHODS = (
    "size stride dim numel contiguous view expand reshape flatten permute transpose t squeeze "
    "unsqueeze add sub mul div neg pow abs exp log sqrt rsqrt sigmoid tanh relu clamp matmul "
    "sum mean max min amax amin argmax softmax log_softmax chunk split unbind __getitem__"
).split()
SPEC_FUNCTIONAL = (
    "relu gelu sigmoid tanh linear conv2d batch_norm layer_norm max_pool2d avg_pool2d "
    "adaptive_avg_pool2d softmax log_softmax dropout embedding"
).split()
SPEC_MODULES = (
    "Linear Conv2d BatchNorm2d LayerNorm ReLU Sigmoid Tanh GELU Softmax Dropout Identity "
    "Flatten MaxPool2d AvgPool2d AdaptiveAvgPool2d Embedding"
).split()


def test_spec_section_1_converts():
    for name in SPEC_FUNCTIONS:
        assert TABLE.functions[getattr(torch, name)] is getattr(tensor, name), name
    for name in SPEC_FUNCTIONAL:
        assert TABLE.functions[getattr(F, name)] is getattr(tensor.nn.functional, name), name
    for name in SPEC_METHODS:
        assert name in TABLE.methods, name
    for name in SPEC_MODULES:
        assert TABLE.modules[getattr(torch.nn, name)] is getattr(tensor.nn, name), name
    for name in ("shape", "dtype", "ndim", "T"):
        assert name in TABLE.attributes, name
    assert TABLE.dtypes[torch.float32] is tensor.float32
    assert TABLE.dtypes[torch.float64] is tensor.float64


def test_python_operators_and_builtins_pass_through_torch_does_not():
    assert passes_through(operator.add) and passes_through(operator.getitem)
    assert passes_through(getattr)
    assert not passes_through(torch.relu) and not passes_through(F.mish)


def test_public_functions_skips_types_and_dtypes():
    names = public_functions(tensor)
    assert "relu" in names and "Size" not in names and "float32" not in names


def test_nearby_names():
    assert "tensor.nn.functional.relu" in TABLE.nearby("relu")
    assert TABLE.nearby("qwertyuiop") == []


def test_importing_minifx_convert_does_not_import_torch():
    code = "import sys, minifx.convert; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"
