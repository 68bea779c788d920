"""Chapter 1: seed 002's MyModule traced, printed and regenerated on `tensor`.

The golden strings below are what torch.fx 2.13 prints for the torch twin of
the module (with `torch` read as `tensor`); the last tests check that they
still are, so the goldens cannot drift from the oracle.
"""

import functools
import math
import operator

import pytest
import torch
import torch.fx

import minifx
import tensor

GOLDEN_GRAPH = """\
graph():
    %x : [num_users=1] = placeholder[target=x]
    %param : [num_users=1] = get_attr[target=param]
    %add : [num_users=1] = call_function[target=operator.add](args = (%x, %param), kwargs = {})
    %linear : [num_users=1] = call_module[target=linear](args = (%add,), kwargs = {})
    %clamp : [num_users=1] = call_method[target=clamp](args = (%linear,), kwargs = {min: 0.0, max: 1.0})
    return clamp"""  # noqa: E501

GOLDEN_CODE = """


def forward(self, x):
    param = self.param
    add = x + param;  x = param = None
    linear = self.linear(add);  add = None
    clamp = linear.clamp(min = 0.0, max = 1.0);  linear = None
    return clamp
    """


def make_module(lib):
    """Seed 002's MyModule, written once for `tensor` and for `torch`."""

    class MyModule(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.param = lib.nn.Parameter(lib.rand(3, 4))
            self.linear = lib.nn.Linear(4, 5)

        def forward(self, x):
            return self.linear(x + self.param).clamp(min=0.0, max=1.0)

    return MyModule()


@pytest.fixture
def traced():
    module = make_module(tensor)
    return module, minifx.symbolic_trace(module)


def test_graph_prints_as_golden(traced):
    _, gm = traced
    assert str(gm.graph) == GOLDEN_GRAPH


def test_code_is_golden(traced):
    _, gm = traced
    assert gm.code == GOLDEN_CODE


def test_traced_module_computes_like_eager(traced):
    module, gm = traced
    gm.graph.lint()
    x = tensor.randn(3, 4)
    tensor.testing.assert_close(gm(x), module(x))


def test_result_is_a_tensor_module_named_after_root(traced):
    module, gm = traced
    assert isinstance(gm, minifx.GraphModule)
    assert isinstance(gm, tensor.nn.Module)
    assert type(gm).__name__ == "MyModule"
    assert gm.param is module.param
    assert gm.linear is module.linear


def test_six_opcodes_seen(traced):
    _, gm = traced
    ops = [(n.op, n.target) for n in gm.graph.nodes]
    assert [op for op, _ in ops] == [
        "placeholder", "get_attr", "call_function", "call_module", "call_method", "output",
    ]


def test_golden_strings_are_torch_fx_output():
    gm = torch.fx.symbolic_trace(make_module(torch))
    assert str(gm.graph) == GOLDEN_GRAPH
    assert gm.code == GOLDEN_CODE
    assert type(gm).__name__ == "MyModule"


def make_defaults_module(lib):
    """Parameters with defaults (one annotated) and a builtin call: torch.fx's other forms."""

    class Defaults(lib.nn.Module):
        def forward(self, x, scale=2.0, name="mean", n: int = 3):
            return x.shape[0] * scale + n

    return Defaults()


def test_placeholder_defaults_and_builtins_print_as_torch_fx_prints_them():
    ours = str(minifx.symbolic_trace(make_defaults_module(tensor)).graph)
    theirs = str(torch.fx.symbolic_trace(make_defaults_module(torch)).graph)
    assert ours == theirs
    # What the comparison covers, so that it cannot pass on a graph without these lines.
    assert "placeholder[target=scale](default=2.0)" in ours
    assert "%n : int [num_users=1] = placeholder[target=n](default=3)" in ours
    assert "call_function[target=builtins.getattr](args = (%x, shape)" in ours


def _runtime(text: str) -> str:
    """The same text as a string built at run time: equal to the literal, not the same object."""
    built = "".join(list(text))
    assert built == text and built is not text
    return built


def build_by_hand(fx):
    """A graph written node by node: targets from math (a module after "builtins") and
    _functools (before "_operator"), and ops spelled by strings built at run time, as a
    graph read from a file would have them."""
    g = fx.Graph()
    x = g.placeholder("x")
    root = g.call_function(math.sqrt, (x,))
    total = g.call_function(functools.reduce, (operator.add, root))
    scaled = g.create_node(_runtime("call_function"), operator.mul, (total, 2))
    weight = g.create_node(_runtime("get_attr"), "w")
    later = g.create_node(_runtime("placeholder"), "y", (3,))
    g.create_node(_runtime("output"), "output", ((scaled, weight, later),))
    return g


def test_hand_built_graph_prints_as_torch_fx_prints_it():
    ours = str(build_by_hand(minifx))
    assert ours == str(build_by_hand(torch.fx))
    # What the comparison covers, so that it cannot pass on a graph without these lines.
    assert "call_function[target=math.sqrt]" in ours
    assert "call_function[target=_functools.reduce]" in ours
    assert "%w : [num_users=1] = get_attr[target=w]" in ours
    assert "placeholder[target=y](default=3)" in ours
    assert ours.endswith("return (mul, w, y)")


def test_a_target_without_a_name_prints_as_its_repr():
    # torch.fx cannot print this node (its qualified name needs __name__); minifx shows repr.
    g = minifx.Graph()
    add_one = functools.partial(operator.add, 1)
    g.output(g.create_node("call_function", add_one, (g.placeholder("x"),), name="add_one"))
    assert f"call_function[target={add_one!r}](args = (%x,)" in str(g)
