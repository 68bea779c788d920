"""A placeholder never shadows a global of the generated code; a dict root's
tensors become buffers (SPEC sections 2 and 5)."""

import math
import operator

import numpy as np
import pytest
import torch
import torch.fx

import minifx
import tensor


def graph_of(placeholder, fn, *extra):
    g = minifx.Graph()
    x = g.placeholder(placeholder)
    g.output(g.call_function(fn, (x, *extra)))
    return g


@pytest.mark.parametrize("name", ["tensor", "torch", "getattr", "slice", "inf", "self",
                                  "wrap", "minifx_tracer__assert"])
def test_a_placeholder_named_like_a_global_does_not_shadow_it(name):
    g = minifx.Graph()
    x = g.placeholder(name)
    r = g.call_function(tensor.relu, (x,))
    s = g.call_function(getattr, (r, "shape"))
    cut = g.call_function(operator.getitem, (r, slice(0, 2)))
    big = g.call_function(tensor.clamp, (cut,), {"max": math.inf})
    g.output((big, s))
    gm = minifx.GraphModule({}, g)
    out, shape = gm(tensor.tensor([-1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(out.numpy(), [0.0, 2.0])
    assert shape == (3,)
    if name != "self":  # Module.__call__ has its own `self`
        out, _ = gm(**{name: tensor.tensor([4.0, -4.0, 1.0])})  # still callable by its name
        np.testing.assert_array_equal(out.numpy(), [4.0, 0.0])


def test_the_placeholder_named_torch_that_torch_fx_gets_wrong():
    # torch.fx writes `relu = torch.relu(torch_1)` after `def forward(self, torch)`:
    # the parameter hides the module. minifx binds the module under another name.
    g = graph_of("torch", torch.relu)
    theirs = torch.fx.GraphModule({}, torch.fx.Graph())
    theirs.graph = torch.fx.Graph()
    tg = theirs.graph
    tx = tg.placeholder("torch")
    tg.output(tg.call_function(torch.relu, (tx,)))
    theirs.recompile()
    with pytest.raises(TypeError):
        theirs(torch.tensor([-1.0]))
    ours = minifx.GraphModule(torch.nn.Module(), g)
    assert "def forward(self, torch):" in ours.code
    torch.testing.assert_close(ours(torch.tensor([-1.0, 2.0])), torch.tensor([0.0, 2.0]))


def test_a_placeholder_named_self_renames_the_module_parameter():
    g = minifx.Graph()
    x = g.placeholder("self")
    w = g.get_attr("w")
    g.output(g.call_function(operator.add, (x, w)))
    gm = minifx.GraphModule({"w": tensor.ones(2)}, g)
    assert gm.code.splitlines()[3] == "def forward(self_1, self):"
    np.testing.assert_array_equal(gm(tensor.zeros(2)).numpy(), [1.0, 1.0])


def test_dict_root_tensors_named_by_get_attr_are_buffers_as_in_torch_fx():
    g = minifx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("w")
    p = g.get_attr("sub.p")
    g.output(g.call_function(operator.add, (g.call_function(operator.add, (x, w)), p)))
    w_value, p_value = tensor.ones(2), tensor.nn.Parameter(tensor.ones(2))
    gm = minifx.GraphModule({"w": w_value, "sub.p": p_value, "unused": tensor.ones(1)}, g)
    assert list(gm.state_dict()) == ["w", "sub.p"]
    assert gm.get_buffer("w") is w_value
    assert gm.get_parameter("sub.p") is p_value
    assert [n for n, _ in gm.named_buffers()] == ["w"]
    # torch.fx, the same graph over a dict of torch tensors.
    tg = torch.fx.Graph()
    tx = tg.placeholder("x")
    tg.output(tg.call_function(operator.add, (tx, tg.get_attr("w"))))
    theirs = torch.fx.GraphModule({"w": torch.ones(2)}, tg)
    assert list(theirs.state_dict()) == ["w"]
    g = minifx.Graph()
    g.output(g.call_function(operator.add, (g.placeholder("x"), g.get_attr("w"))))
    ours = minifx.GraphModule({"w": torch.ones(2)}, g)
    assert list(ours.state_dict()) == ["w"] and isinstance(ours, torch.nn.Module)


def test_tensor_constants_of_a_traced_module_are_buffers_as_in_torch_fx():
    def build(lib):
        class WithConstant(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = lib.ones(3)  # a plain attribute, neither parameter nor buffer

            def forward(self, x):
                return x * self.scale + lib.ones(3)

        return WithConstant()

    ours = minifx.symbolic_trace(build(tensor))
    theirs = torch.fx.symbolic_trace(build(torch))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["scale", "_tensor_constant0"]


def _dict_root_module(lib, fx, values: dict):
    """A GraphModule of ``fx`` over the dict ``values``, one get_attr node per key."""
    g = fx.Graph()
    g.placeholder("x")
    g.output(tuple(g.get_attr(target) for target in values))
    return fx.GraphModule(values, g)


def _tree(gm) -> tuple:
    return ([n for n, _ in gm.named_parameters()], [n for n, _ in gm.named_buffers()],
            [(n, type(m).__name__) for n, m in gm.named_modules()][1:], list(gm.state_dict()))


@pytest.mark.parametrize("targets", [
    ("a.b.w", "a.b.p", "a.c", "a.m", "x.y.z.p", "top"),
    ("m", "m.w", "m.inner.p"),  # into a module of the root's, not one made empty
    ("a.training",),  # a name the module class has: refused
    ("a.eval",),
    ("a.b.forward",),
])
def test_a_dict_root_builds_the_module_tree_torch_fx_builds(targets):
    """Targets deep under modules that GraphModule makes empty (make_fx's parameters and
    buffers, filled straight into their stores: speed only) land where torch.fx puts
    them, parameters, buffers and submodules alike, with the same refusals."""
    def values(lib):
        made = {}
        for target in targets:
            field = target.rpartition(".")[2]
            made[target] = (lib.nn.Parameter(lib.ones(2)) if field == "p" else
                            lib.nn.Linear(2, 2) if field in ("m", "inner") else lib.ones(2))
        return made

    try:
        theirs = _tree(_dict_root_module(torch, torch.fx, values(torch)))
    except Exception as e:  # noqa: BLE001 - the refusal is compared below
        with pytest.raises(type(e)):
            _dict_root_module(tensor, minifx, values(tensor))
        return
    ours = _dict_root_module(tensor, minifx, values(tensor))
    assert _tree(ours) == theirs
    for name, _ in ours.named_modules():
        if name and name not in targets:
            assert type(ours.get_submodule(name)) is tensor.nn.Module
