"""Graphs built by hand in minifx and in torch.fx print the same, character for character."""

import math
import operator

import pytest
import torch
import torch.fx as tfx

import minifx
import tensor


def user_function(a, b):
    return a


def build_mixed(fx):
    """Operators, builtins, a math function, a user function, odd names."""
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=(1, "a"))
    a = g.call_function(user_function, (x, y))
    b = g.call_function(math.sqrt, (a,))
    c = g.call_function(operator.getitem, (b, 0))
    d = g.call_function(getattr, (c, "shape"))
    e = g.call_function(getattr, (c, "not ident"))
    f = g.call_method("foo bar", (e,))
    h = g.get_attr("a.b.c")
    k = g.call_module("sub.0.lin", (h,))
    m = g.call_function(operator.not_, (k,))
    n = g.call_function(operator.iadd, (m, 1))
    o = g.create_node("call_function", operator.add, (n, float("inf")), name="Class1Foo")
    p = g.create_node("call_function", operator.add, (o, 2), name="print")
    r = g.create_node("call_function", operator.add, (p, 2), name="for")
    s = g.create_node("call_function", operator.add, (r, 2), name="9abc")
    t = g.create_node("call_method", "sum", (s,), name="sum")
    u = g.create_node("call_module", "MyLinear", (t,))
    v = g.create_node("call_method", "__add__", (u, 1))
    g.output({"a": v, "b": (d, f)})
    return g


def build_ops(fx):
    """Every operator of the magic-method table, reflected forms, containers."""
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    w = g.get_attr("weight")
    outs = []
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift",
                 "rshift", "and_", "or_", "xor", "matmul", "eq", "ne", "lt", "gt", "le", "ge"):
        outs.append(g.call_function(getattr(operator, name), (x, y)))
    outs.append(g.call_function(operator.sub, (2, x)))
    for name in ("neg", "pos", "invert"):
        outs.append(g.call_function(getattr(operator, name), (w,)))
    outs.append(g.call_function(operator.getitem, (x, (slice(None, 2, None), Ellipsis, None))))
    outs.append(g.call_method("clamp", (x,), {"min": 0.0, "max": 1.0}))
    outs.append(g.call_method("view", (x, -1, 3)))
    outs.append(g.call_module("layer1.0.conv", (x,), {"bias": [x, (y,)]}))
    g.output((outs[0], [outs[1:4]], {"k": outs[-1], 1: None}, tuple(outs[4:])))
    return g


@pytest.mark.parametrize("build", [build_mixed, build_ops])
def test_str_graph_matches_torch_fx(build):
    assert str(build(minifx)) == str(build(tfx))


@pytest.mark.parametrize("build", [build_mixed, build_ops])
def test_python_code_matches_torch_fx(build):
    ours = build(minifx).python_code("self").src
    theirs = build(tfx).python_code("self").src
    assert ours == theirs


@pytest.mark.parametrize("build", [build_mixed, build_ops])
def test_node_names_and_format_node_match(build):
    ours, theirs = list(build(minifx).nodes), list(build(tfx).nodes)
    assert [n.name for n in ours] == [n.name for n in theirs]
    assert [n.format_node() for n in ours] == [n.format_node() for n in theirs]


def test_golden_graph_text():
    g = minifx.Graph()
    x = g.placeholder("x")
    a = g.call_function(operator.add, (x, 1))
    c = g.call_method("clamp", (a,), {"min": 0.0})
    g.output(c)
    assert str(g) == (
        "graph():\n"
        "    %x : [num_users=1] = placeholder[target=x]\n"
        "    %add : [num_users=1] = call_function[target=operator.add]"
        "(args = (%x, 1), kwargs = {})\n"
        "    %clamp : [num_users=1] = call_method[target=clamp]"
        "(args = (%add,), kwargs = {min: 0.0})\n"
        "    return clamp"
    )


def build_library_calls(fx, lib):
    """Library functions print as torch.fx prints torch's, with `torch` read as `tensor`."""
    g = fx.Graph()
    x = g.placeholder("x")
    p = g.get_attr("param")
    a = g.call_function(operator.add, (x, p))
    r = g.call_function(lib.nn.functional.relu, (a,), {"inplace": False})
    s = g.call_function(lib.sigmoid, (r,))
    c = g.call_function(lib.cat, ([s, x],), {"dim": 0})
    t = g.call_function(lib.sum, (c,), {"dim": (0, 1)})
    m = g.call_method("to", (t,), {"dtype": lib.float32})
    # A node may not take the package's name: torch.fx renames "torch" to torch_1.
    tensor_node = g.create_node("call_function", lib.relu, (m,), name=lib.__name__)
    g.output((tensor_node, r))
    return g


def test_library_functions_print_like_torch_functions():
    ours, theirs = build_library_calls(minifx, tensor), build_library_calls(tfx, torch)
    assert str(ours) == str(theirs).replace("torch", "tensor")
    assert ours.python_code().src == theirs.python_code("self").src.replace("torch", "tensor")
    assert ours.python_code().globals["tensor"] is tensor


DCE_TARGETS = [
    operator.setitem, operator.add, print, math.sqrt, torch.randn, torch.rand_like,
    torch._assert, torch._assert_async, torch.relu, torch.ops.aten.add_.Tensor,
    torch.ops.aten.copy_.default, torch.ops.aten.add.Tensor, torch.ops.aten.rand.default,
    torch.ops.aten._assert_async.msg,
]


@pytest.mark.parametrize("impure_random", [True, False])
@pytest.mark.parametrize("target", DCE_TARGETS, ids=lambda t: getattr(t, "__name__", str(t)))
def test_dead_code_elimination_keeps_what_torch_fx_keeps(target, impure_random):
    """A call nobody reads: dropped or kept exactly as torch.fx decides (asserts,
    random draws, in-place aten ops and setitem stay; print and pure ops go)."""
    kept = []
    for fx in (minifx, tfx):
        g = fx.Graph()
        x = g.placeholder("x")
        call = g.call_function(target, (x,))
        g.output(x)
        kept.append((call.is_impure(impure_random), call.is_impure()))
        g.eliminate_dead_code()  # asks is_impure() with its default, impure_random=True
        assert (call in g.nodes) is kept[-1][1]
    assert kept[0] == kept[1], f"minifx says impure={kept[0]}, torch.fx says {kept[1]}"


def test_tensor_random_draws_survive_dead_code_elimination():
    g = minifx.Graph()
    x = g.placeholder("x")
    draw = g.call_function(tensor.randn, (3,))
    g.output(x)
    g.eliminate_dead_code()
    assert draw in g.nodes and draw.is_impure(impure_random=False)
