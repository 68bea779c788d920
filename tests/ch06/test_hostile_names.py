"""Hostile names: every spot where a name reaches generated code (SPEC section 5).

Modules, parameters, buffers and placeholders named like keywords, builtins,
`self`, `torch`, `tensor` or a global the code uses, or with dots, dashes,
spaces, unicode or a leading digit; and strings written to break out of the
code, in node names, call_method and get_attr targets, module paths and
kwargs keys. Each case gives valid code that behaves as eager does, or is
refused with a clear error. None runs the injected code: every payload would
set `builtins.MINIFX_INJECTED` if it ran.
"""

import builtins
import operator

import numpy as np
import pytest
import torch

import minifx
import tensor
import tensor.nn as nn

SET_FLAG = '__import__("builtins").__setattr__("MINIFX_INJECTED", 1)'
PAYLOADS = [
    f"x; {SET_FLAG}",
    f"x\n{SET_FLAG}",
    f'x"); {SET_FLAG}; ("',
    f"x'); {SET_FLAG}; ('",
    f"x = {SET_FLAG} #",
    f'x\\"); {SET_FLAG} #',
    f'"""; {SET_FLAG}; """',
    f"x)\n    {SET_FLAG}\n    (x",
]
# Names that are legal attribute names of a module but not safe Python variables.
ODD_NAMES = ["if", "class", "None", "len", "getattr", "slice", "self", "torch", "tensor",
             "inf", "nan", "wrap", "minifx_tracer__assert", "a-b", "a b", "ünï",
             "1abc", "_", "x", "relu"]


@pytest.fixture(autouse=True)
def no_injection():
    yield
    assert not hasattr(builtins, "MINIFX_INJECTED"), "generated code ran an injected string"


def module_with_odd_names(names):
    """A module holding, under each name, a leaf submodule, a parameter and a buffer."""
    root = nn.Module()
    for i, name in enumerate(names):
        holder = nn.Module()
        holder.add_module(name, nn.ReLU())
        holder.register_parameter(name + "_p" if name != "_" else "p",
                                  nn.Parameter(tensor.full((3,), float(i))))
        root.add_module(f"h{i}", holder)
    return root


class Uses(nn.Module):
    def __init__(self, names):
        super().__init__()
        self.names = names
        for name in names:
            self.add_module(name, nn.ReLU())
            self.register_parameter(name + "_param", nn.Parameter(tensor.ones(3)))
            self.register_buffer(name + "_buf", tensor.full((3,), 2.0))

    def forward(self, x):
        for name in self.names:
            x = getattr(self, name)(x) + getattr(self, name + "_param")
            x = x * getattr(self, name + "_buf")
        return x


@pytest.mark.parametrize("names", [ODD_NAMES, PAYLOADS_NO_DOT := [
    p.replace(".", ",") for p in PAYLOADS]], ids=["odd", "payloads"])
def test_modules_parameters_and_buffers_with_hostile_names_trace_and_run(names):
    model = Uses(names)
    gm = minifx.symbolic_trace(model)
    gm.graph.lint()
    compile(gm.code, "<check>", "exec")
    x = tensor.randn(3)
    tensor.testing.assert_close(gm(x), model(x))
    again = minifx.symbolic_trace(gm)
    assert again.code == gm.code
    tensor.testing.assert_close(again(x), model(x))


def test_placeholders_named_like_globals_builtins_and_unicode():
    source = (
        "def program(torch, tensor, len, getattr, inf, wrap, ünï, _assert, slice):\n"
        "    return tensor_lib.relu(torch) + len * getattr + inf[..., 0:1] - wrap * ünï"
        " + _assert + slice\n"
    )
    namespace = {"tensor_lib": tensor}
    exec(source, namespace)
    program = namespace["program"]
    gm = minifx.symbolic_trace(program)
    gm.graph.lint()
    values = [tensor.randn(2, 3) for _ in range(9)]
    tensor.testing.assert_close(gm(*values), program(*values))
    by_name = dict(zip(["torch", "tensor", "len", "getattr", "inf", "wrap", "ünï", "_assert",
                        "slice"], values))
    tensor.testing.assert_close(gm(**by_name), program(*values))


@pytest.mark.parametrize("name", ["if", "class", "1abc", "a-b", "a b", "***kwargs", *PAYLOADS])
def test_a_placeholder_that_cannot_be_a_parameter_is_refused_clearly(name):
    g = minifx.Graph()
    g.output(g.placeholder(name))
    with pytest.raises(ValueError, match=r"not a Python identifier \(or is a keyword\), so it"):
        minifx.GraphModule({}, g)


@pytest.mark.parametrize("payload", PAYLOADS + ODD_NAMES)
def test_node_names_given_to_create_node_are_made_safe(payload):
    g = minifx.Graph()
    x = g.placeholder("x")
    y = g.create_node("call_function", operator.neg, (x,), name=payload)
    z = g.create_node("call_function", operator.add, (y, x), name=payload)
    g.output(z)
    gm = minifx.GraphModule({}, g)
    assert y.name.isidentifier() and z.name != y.name
    assert gm(tensor.ones(2)).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_node_name_set_by_hand_is_refused_at_code_generation(payload):
    g = minifx.Graph()
    x = g.placeholder("x")
    y = g.call_function(operator.neg, (x,))
    g.output(y)
    y.name = payload
    with pytest.raises(ValueError, match="must be a unique Python identifier"):
        g.python_code("self")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_call_method_targets_are_strings_never_code(payload):
    g = minifx.Graph()
    x = g.placeholder("x")
    g.output(g.call_method(payload, (x,)))
    gm = minifx.GraphModule({}, g)
    with pytest.raises(AttributeError, match="has no attribute"):
        gm(tensor.ones(2))


class Obj:
    """An object with attributes and methods named by the payloads."""


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_method_with_a_hostile_name_is_called_as_itself(payload):
    obj = Obj()
    setattr(obj, payload, lambda k: k + 1)
    g = minifx.Graph()
    o = g.placeholder("o")
    g.output(g.call_method(payload, (o, 41)))
    assert minifx.GraphModule({}, g)(obj) == 42


@pytest.mark.parametrize("payload", PAYLOADS + ODD_NAMES)
def test_get_attr_and_call_module_targets_from_a_dict_root(payload):
    g = minifx.Graph()
    x = g.placeholder("x")
    r = g.call_module(payload, (x,))
    w = g.get_attr(payload + "_w")  # after: a retrace reads an attribute where it is used
    g.output(g.call_function(operator.add, (r, w)))
    root = {payload + "_w": tensor.full((2,), 3.0), payload: nn.ReLU()}
    gm = minifx.GraphModule(root, g)
    gm.graph.lint()
    assert gm(tensor.tensor([-1.0, 1.0])).tolist() == [3.0, 4.0]
    assert minifx.symbolic_trace(gm).code == gm.code


@pytest.mark.parametrize("payload", PAYLOADS + ["if", "a-b", "1abc", "ünï", "self"])
def test_kwargs_keys_become_string_literals(payload):
    def collect(x, **kwargs):
        return x, kwargs

    g = minifx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(collect, (x,), {payload: 1, "plain": 2}))
    gm = minifx.GraphModule({}, g)
    assert gm(5) == (5, {"plain": 2, payload: 1})


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_function_reachable_by_a_hostile_path_is_bound_not_printed(payload, monkeypatch):
    def sneaky(x):
        return x + 1

    sneaky.__module__ = "tensor"
    sneaky.__qualname__ = sneaky.__name__ = payload
    monkeypatch.setattr(tensor, payload, sneaky, raising=False)
    g = minifx.Graph()
    g.output(g.call_function(sneaky, (g.placeholder("x"),)))
    gm = minifx.GraphModule({}, g)
    assert gm(1) == 2


def test_torch_modules_with_hostile_names_trace_and_match_eager():
    model = torch.nn.Module()
    for name in ["if", "torch", "self", "a-b", "ünï", "1abc", PAYLOADS[0].replace(".", ",")]:
        model.add_module(name, torch.nn.ReLU())
    names = [n for n, _ in model.named_children()]

    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, x):
            for name in names:
                x = getattr(self.inner, name)(x) - 1.0
            return x

    wrapper = Wrapper()
    gm = minifx.symbolic_trace(wrapper)
    x = torch.randn(4)
    torch.testing.assert_close(gm(x), wrapper(x))
    np.testing.assert_array_equal(gm(x).numpy(), wrapper(x).numpy())
