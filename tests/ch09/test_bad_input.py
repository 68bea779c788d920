"""Torch models that cannot be traced as they are: clear errors, never silent differences."""

import pytest
import torch
import torch.fx

import minifx
from minifx.proxy import TraceError


class Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # the line the error must show
            return x
        return -x


def test_control_flow_names_the_users_line():
    with pytest.raises(TraceError) as info:
        minifx.symbolic_trace(Branchy())
    message = str(info.value)
    assert "test_bad_input.py" in message
    assert "if x.sum() > 0:" in message
    assert "concrete_args" in message


def loop_over_rows(x):
    total = 0
    for row in range(x.size(0)):
        total = total + x[row]
    return total


def test_shape_as_int_names_the_users_line():
    with pytest.raises(TraceError, match=r"range\(x.size\(0\)\)"):
        minifx.symbolic_trace(loop_over_rows)


class Flagged(torch.nn.Module):
    def forward(self, x, flip):
        if flip:
            return -x
        return x


def test_concrete_args_is_the_way_out():
    ours = minifx.symbolic_trace(Flagged(), concrete_args={"flip": True})
    theirs = torch.fx.symbolic_trace(Flagged(), concrete_args={"flip": True})
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    x = torch.randn(3)
    torch.testing.assert_close(ours(x, True), -x)


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Sequential(torch.nn.Linear(3, 3))
        self.linear = torch.nn.Linear(3, 3)

    def forward(self, x):
        return self.linear(self.inner(x))


def double_output(module, args, output):
    return output * 2


def test_hook_on_the_root_is_refused():
    m = Gate()
    m.register_forward_hook(double_output)
    with pytest.raises(RuntimeError, match=r"root module \(Gate\).*forward hook double_output"):
        minifx.symbolic_trace(m)


def test_hook_on_a_traced_through_submodule_is_refused():
    m = Gate()
    seen = []

    def save_activation(module, args, output):
        seen.append(output)

    m.inner.register_forward_hook(save_activation)
    with pytest.raises(RuntimeError, match=r"submodule 'inner' \(Sequential\).*save_activation"):
        minifx.symbolic_trace(m)
    # torch.fx runs the hook once, while tracing, on a Proxy; the GraphModule never calls it.
    gm = torch.fx.symbolic_trace(m)
    seen.clear()
    gm(torch.randn(2, 3))
    assert seen == []


def test_pre_hook_is_named_too():
    m = Gate()

    def shift(module, args):
        return (args[0] + 1,)

    m.inner.register_forward_pre_hook(shift)
    with pytest.raises(RuntimeError, match=r"forward pre-hook .*shift"):
        minifx.symbolic_trace(m)


def test_hook_on_a_leaf_keeps_working():
    m = Gate()
    m.linear.register_forward_hook(double_output)
    gm = minifx.symbolic_trace(m)
    x = torch.randn(2, 3)
    torch.testing.assert_close(gm(x), m(x))
    assert str(gm.graph) == str(torch.fx.symbolic_trace(m).graph)
