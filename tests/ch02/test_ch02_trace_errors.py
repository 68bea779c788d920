"""Chapter 2, bad input: control flow on a traced value names the user's line."""

import inspect

import pytest

import minifx
import tensor
from minifx.proxy import TraceError


def uses_if(x):
    if x.sum() > 0:  # <- traced value used here
        return x
    return -x


def uses_bool(x):
    return bool(x)  # <- traced value used here


def uses_len(x):
    return x + len(x)  # <- traced value used here


def uses_for(x):
    total = x
    for row in x:  # <- traced value used here
        total = total + row
    return total


def uses_range_of_size(x):
    for _ in range(x.size(0)):  # <- traced value used here
        x = x + 1
    return x


def uses_int(x):
    return x * int(x.sum())  # <- traced value used here


def uses_star_args(x):
    return tensor.cat([*x])  # <- traced value used here


def offending_line(fn):
    """The line of `fn` that uses the traced value as a Python value."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if "<- traced value" in line)


@pytest.mark.parametrize(
    "fn", [uses_if, uses_bool, uses_len, uses_for, uses_range_of_size, uses_int, uses_star_args]
)
def test_control_flow_names_user_line_and_ways_out(fn):
    with pytest.raises(TraceError) as info:
        minifx.symbolic_trace(fn)
    message = str(info.value)
    assert __file__ in message
    assert f"line {offending_line(fn)}" in message
    for way_out in ("concrete_args", "minifx.wrap", "leaf"):
        assert way_out in message


def test_if_message_says_what_went_wrong():
    with pytest.raises(TraceError, match="control flow"):
        minifx.symbolic_trace(uses_if)


def test_len_is_also_a_runtime_error_as_in_torch_fx():
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        minifx.symbolic_trace(uses_len)


class BranchingModule(tensor.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = tensor.nn.Linear(3, 3)

    def forward(self, x):
        y = self.linear(x)
        if y.mean() > 0:
            return y
        return x


def test_error_inside_a_module_forward_points_at_forward():
    with pytest.raises(TraceError) as info:
        minifx.symbolic_trace(BranchingModule())
    line = inspect.getsourcelines(BranchingModule.forward)[1] + 2
    assert f"line {line}, in forward" in str(info.value)


def test_module_class_is_restored_after_a_failed_trace():
    before = (tensor.nn.Module.__getattr__, tensor.nn.Module.__call__)
    with pytest.raises(TraceError):
        minifx.symbolic_trace(BranchingModule())
    assert (tensor.nn.Module.__getattr__, tensor.nn.Module.__call__) == before
    module = BranchingModule()
    assert isinstance(module(tensor.randn(2, 3)), tensor.Tensor)
