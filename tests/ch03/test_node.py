"""Node: users kept in sync, rewiring, map_aggregate, metadata."""

import builtins
import operator
from collections import namedtuple

import pytest
import torch
import torch.fx

import minifx
import tensor
import tensor.nn as nn
from minifx.node import map_aggregate, map_arg


def chain():
    g = minifx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    a = g.call_function(operator.add, (x, y))
    b = g.call_function(operator.mul, (a, x), {"k": [a]})
    g.output(b)
    return g, x, y, a, b


def test_users_and_inputs():
    g, x, y, a, b = chain()
    assert list(x.users) == [a, b]
    assert list(a.users) == [b]
    assert b.all_input_nodes == [a, x]
    assert repr(b) == "mul"


def test_setting_args_updates_users():
    g, x, y, a, b = chain()
    b.args = (y, 3)
    assert b not in x.users and b in y.users and b in a.users  # a still in kwargs
    b.kwargs = {}
    assert b not in a.users and a.users == {}
    g.lint()


def test_update_arg_and_kwarg():
    g, x, y, a, b = chain()
    b.update_arg(1, y)
    assert b.args == (a, y) and b in y.users and b not in x.users
    b.update_kwarg("k", x)
    assert b.kwargs == {"k": x} and b in x.users
    g.lint()


def test_replace_all_uses_with_and_callback():
    g, x, y, a, b = chain()
    changed = x.replace_all_uses_with(y)
    assert changed == [a, b] and x.users == {} and a.args == (y, y)
    g.lint()
    g, x, y, a, b = chain()
    changed = x.replace_all_uses_with(y, delete_user_cb=lambda user: user is b)
    assert changed == [b] and list(x.users) == [a]


def test_replace_all_uses_with_propagate_meta():
    g, x, y, a, b = chain()
    a.meta["val"] = 1
    with g.inserting_after(a):
        c = g.call_function(operator.sub, (x, y))
    a.replace_all_uses_with(c, propagate_meta=True)
    assert c.meta == {"val": 1}
    with pytest.raises(RuntimeError, match="already has meta"):
        c.replace_all_uses_with(a, propagate_meta=True)


def test_replace_input_with():
    g, x, y, a, b = chain()
    b.replace_input_with(a, y)
    assert b.args == (y, x) and b.kwargs == {"k": [y]} and a.users == {}


def test_prepend_append_move_nodes():
    g, x, y, a, b = chain()
    y.append(x)  # order: y, x, add, mul, output
    assert [n.name for n in g.nodes] == ["y", "x", "add", "mul", "output"]
    a.prepend(b)
    assert [n.name for n in g.nodes][2:4] == ["mul", "add"]
    assert a.prev is b and b.next is a
    with pytest.raises(RuntimeError, match=r"Node mul .* reads add, which is defined later"):
        g.lint()


def test_map_aggregate_structures():
    Point = namedtuple("Point", "x y")
    data = (1, [2, {"a": 3}], Point(4, 5), slice(6, 7, None))
    out = map_aggregate(data, lambda v: v * 10 if isinstance(v, int) else v)
    assert out == (10, [20, {"a": 30}], Point(40, 50), slice(60, 70, None))
    assert type(out[2]) is Point


def test_map_arg_only_touches_nodes():
    g, x, y, a, b = chain()
    out = map_arg((x, 1, [y, "s"]), lambda n: n.name)
    assert out == ("x", 1, ["y", "s"])


def test_meta_and_stack_trace():
    g, x, y, a, b = chain()
    a.stack_trace = 'File "m.py", line 3, in forward\n    return x + y'
    assert a.meta["stack_trace"].startswith("File") and a.stack_trace == a.meta["stack_trace"]
    assert b.stack_trace is None


def test_is_impure():
    g, x, y, a, b = chain()
    with g.inserting_before(b):
        p = g.call_function(builtins.print, (a,))
        s = g.call_function(operator.setitem, (x, 0, a))
        r = g.call_function(tensor.randn, (3,))
    assert x.is_impure() and g.output_node().is_impure() and s.is_impure() and r.is_impure()
    assert not a.is_impure()
    assert not p.is_impure()  # as in torch.fx: a print nobody reads is dead code


def test_bad_node_construction_is_refused():
    g = minifx.Graph()
    with pytest.raises(ValueError, match="unknown op"):
        g.create_node("call_it", operator.add)
    with pytest.raises(ValueError, match="not callable"):
        g.create_node("call_function", "add")
    with pytest.raises(TypeError, match="args must be a tuple"):
        g.create_node("call_function", operator.add, [1, 2])
    with pytest.raises(TypeError, match="kwargs must be a dict"):
        g.create_node("call_function", operator.add, (1, 2), [("k", 1)])
    assert len(g.nodes) == 0  # nothing was inserted
    node = g.create_node("call_function", operator.add)
    assert node.args == () and node.kwargs == {} and len(g.nodes) == 1


def test_prepend_a_node_of_another_graph_is_refused():
    g, x, y, a, b = chain()
    other, *_ = chain()
    stranger = next(iter(other.nodes))
    with pytest.raises(ValueError, match="node x belongs to another graph than add"):
        a.prepend(stranger)
    assert [n.name for n in g.nodes] == ["x", "y", "add", "mul", "output"]
    assert [n.name for n in other.nodes] == ["x", "y", "add", "mul", "output"]


def test_prepend_keeps_both_directions_linked():
    g, x, y, a, b = chain()
    b.prepend(x)  # x leaves the front: y, add, x, mul, output
    forward = [n.name for n in g.nodes]
    assert forward == ["y", "add", "x", "mul", "output"]
    assert [n.name for n in reversed(g.nodes)] == forward[::-1]
    assert x.prev is a and x.next is b and y.prev is g._root and g._root.next is y


def test_argument_from_another_graph_is_accepted_and_reported_by_lint():
    # torch.fx accepts it (copy first, remap later); lint names the node and both graphs.
    g, x, y, a, b = chain()
    other = minifx.Graph()
    z = other.placeholder("z")
    neg = other.call_function(operator.neg, (x,))
    other.output(neg)
    assert neg.args == (x,) and neg in x.users
    with pytest.raises(RuntimeError, match=r"Node neg \(call_function operator.neg\) reads x, a "
                       r"node of another graph \(graph at 0x[0-9a-f]+ with nodes \[x, y, add"):
        other.lint()
    neg.replace_input_with(x, z)  # remapped: both graphs are whole again
    other.lint()
    assert list(x.users) == [a, b]
    torch_graph, torch_other = torch.fx.Graph(), torch.fx.Graph()
    tx = torch_graph.placeholder("x")
    torch_other.output(torch_other.call_function(operator.neg, (tx,)))  # accepted there too
    with pytest.raises(RuntimeError, match="does not belong to this Graph"):
        torch_other.lint()


def test_prepending_a_node_to_itself_does_nothing():
    g, x, y, a, b = chain()
    a.prepend(a)
    a.append(a)
    assert [n.name for n in g.nodes] == ["x", "y", "add", "mul", "output"]
    g.lint()
    tg = torch.fx.Graph()
    tx = tg.placeholder("x")
    tx.prepend(tx)  # torch.fx: a no-op as well
    assert [n.name for n in tg.nodes] == ["x"]


def test_registered_side_effects_and_impure_modules_survive_dce():
    from minifx.node import register_side_effect

    calls = []

    @register_side_effect
    def log(v):
        calls.append(v)

    g = minifx.Graph()
    x = g.placeholder("x")
    g.call_function(log, (x,))
    g.call_module("noisy", (x,))
    g.call_module("quiet", (x,))
    g.output(x)

    noisy, quiet = nn.ReLU(), nn.ReLU()
    noisy._is_impure = True
    gm = minifx.GraphModule({"noisy": noisy, "quiet": quiet}, g)
    gm.graph.eliminate_dead_code()
    assert [n.name for n in gm.graph.nodes] == ["x", "log", "noisy", "output"]
