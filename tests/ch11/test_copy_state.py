"""copy_state: a twin gets copies of the torch module's own parameters and buffers.

Own means not recursive: each layer is copied by its own call
(copy_weights_of_every_layer). A difference in names or in a shape is a
TwinError that names it, whichever side has more.
"""

import numpy as np
import pytest
import torch

import tensor
from minifx.convert.table import conversion_table
from minifx.convert.twins import TwinError, copy_state
from minifx.convert.values import ValueConverter


@pytest.fixture
def values():
    return ValueConverter(conversion_table())


def test_parameters_and_buffers_are_copied_parameters_staying_parameters(values):
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(3)
    bn.running_mean.uniform_()
    bn.weight.data.uniform_()
    twin = tensor.nn.BatchNorm2d(3)
    copy_state(bn, twin, values)
    for name in ("weight", "bias", "running_mean", "running_var"):
        np.testing.assert_array_equal(getattr(twin, name).numpy(),
                                      getattr(bn, name).detach().numpy())
    assert isinstance(twin.weight, tensor.nn.Parameter)
    assert not isinstance(twin.running_mean, tensor.nn.Parameter)


@pytest.mark.parametrize("torch_bias, twin_bias", [(True, False), (False, True)])
def test_different_names_are_a_twin_error_naming_both_sides(values, torch_bias, twin_bias):
    module, twin = torch.nn.Linear(3, 4, bias=torch_bias), tensor.nn.Linear(3, 4, bias=twin_bias)
    with pytest.raises(TwinError) as error:
        copy_state(module, twin, values)
    ours = ["bias", "weight"] if torch_bias else ["weight"]
    theirs = ["bias", "weight"] if twin_bias else ["weight"]
    assert str(error.value) == (f"tensor.nn.Linear holds {theirs}, "
                                f"the torch module holds {ours}")


@pytest.mark.parametrize("torch_out, twin_out", [(4, 5), (5, 4)])
def test_a_different_shape_is_a_twin_error_naming_the_shapes(values, torch_out, twin_out):
    module, twin = torch.nn.Linear(3, torch_out), tensor.nn.Linear(3, twin_out)
    with pytest.raises(TwinError, match=rf"weight has shape \({torch_out}, 3\) in torch but "
                                        rf"\({twin_out}, 3\) in tensor.nn.Linear"):
        copy_state(module, twin, values)


def test_the_layers_inside_are_left_to_their_own_call(values):
    # Only the container's own state: none. Its layers differ, which is not its business.
    module = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm2d(3))
    twin = tensor.nn.Sequential(tensor.nn.Linear(2, 4), tensor.nn.BatchNorm2d(4))
    before = twin[0].weight, twin[1].running_mean
    copy_state(module, twin, values)
    assert twin[0].weight is before[0] and twin[1].running_mean is before[1]
    assert sorted(vars(twin)) == sorted(vars(
        tensor.nn.Sequential(tensor.nn.Linear(2, 4), tensor.nn.BatchNorm2d(4))))
