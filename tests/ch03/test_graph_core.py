"""The Graph's own machinery: the sentinel, the walk over the nodes, naming, printing,
and which nodes must stay. torch.fx is the oracle wherever it has the same method.
"""

import builtins
import functools
import math
import operator

import pytest
import torch
import torch.fx

import minifx
import tensor
import tensor.nn as nn
from minifx.node import register_side_effect


def build(fx):
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=3)
    a = g.call_function(operator.add, (x, y))
    b = g.call_method("relu", (a,))
    c = g.call_function(operator.mul, (b, a), {"k": [x, (y,)]})
    g.output((c, b))
    return g


def names(nodes):
    return [n.name for n in nodes]


# -- Graph.__str__ ----------------------------------------------------------------------


def test_str_is_torch_fx_str():
    assert str(minifx.Graph()) == str(torch.fx.Graph()) == "graph():"
    assert str(build(minifx)) == str(build(torch.fx))
    g, t = minifx.Graph(), torch.fx.Graph()
    for graph in (g, t):
        graph.output(graph.placeholder("x"))
    assert str(g) == str(t) and not str(g).endswith("\n")


# -- Graph.__init__ ---------------------------------------------------------------------


def test_an_empty_graph_is_a_circle_of_one():
    g = minifx.Graph()
    root = g._root
    assert root._next is root and root._prev is root and root.graph is g
    assert (root.name, root.op, root.target, root.type) == ("", "root", "", None)
    assert root.users == {} and root._input_nodes == {} and root.meta == {}
    assert root._args == () and root._kwargs == {} and root._erased is False
    assert len(g.nodes) == 0 and list(g.nodes) == [] and list(reversed(g.nodes)) == []
    assert g.owning_module is None


def test_new_nodes_go_at_the_end_and_are_counted():
    g = build(minifx)
    assert names(g.nodes) == names(build(torch.fx).nodes)
    assert len(g.nodes) == 6 and g._root._prev is g.output_node()
    assert g._root._next.name == "x"


def test_each_graph_has_its_own_root_namespace_and_codegen():
    module = nn.ReLU()
    g1, g2 = minifx.Graph(module), minifx.Graph()
    assert g1.owning_module is module
    assert g1._root is not g2._root and g1._codegen is not g2._codegen
    assert g1._graph_namespace is not g2._graph_namespace
    assert g1.placeholder("x").name == "x" and g2.placeholder("x").name == "x"
    assert g1.placeholder("x").name == "x_1"
    with g1.on_generate_code(lambda old: lambda lines: ["# mark\n", *lines]):
        assert "# mark" in g1.python_code("self").src
        assert "# mark" not in g2.python_code("self").src
    assert list(g2.nodes)[0].prev is g2._root


# -- _NodeList.__iter__ -------------------------------------------------------------------


def test_the_walk_both_ways_is_torch_fx_s():
    g, t = build(minifx), build(torch.fx)
    assert names(g.nodes) == names(t.nodes)
    assert names(reversed(g.nodes)) == names(reversed(t.nodes))
    assert repr(g.nodes) == "[x, y, add, relu, mul, output]"


def _erase_while_walking(fx, backwards):
    g = fx.Graph()
    x = g.placeholder("x")
    dead = [g.call_function(operator.neg, (x,)) for _ in range(4)]
    g.output(x)
    seen = []
    walk = reversed(g.nodes) if backwards else g.nodes
    for node in walk:
        seen.append(node.name)
        if node is dead[1]:  # erase the node being visited and the next one on the way
            g.erase_node(node)
            g.erase_node(dead[0] if backwards else dead[2])
    return seen, names(g.nodes)


@pytest.mark.parametrize("backwards", [False, True])
def test_erasing_the_visited_node_and_the_next_is_safe(backwards):
    assert _erase_while_walking(minifx, backwards) == _erase_while_walking(torch.fx, backwards)


def test_a_node_inserted_after_the_visited_one_is_visited_next():
    for fx in (minifx, torch.fx):
        g = fx.Graph()
        x = g.placeholder("x")
        g.output(x)
        seen = []
        for node in g.nodes:
            seen.append(node.name)
            if node is x:
                with g.inserting_after(x):
                    g.call_function(operator.neg, (x,))
        assert seen == ["x", "neg", "output"]


def test_the_walk_is_lazy_and_skips_erased_nodes():
    g = build(minifx)
    walk = iter(g.nodes)
    assert next(walk).name == "x"
    relu = g.find_nodes(op="call_method")[0]
    relu._erased = True  # marked only: still linked, but no longer yielded
    assert names(walk) == ["y", "add", "mul", "output"]
    assert "relu" not in names(reversed(g.nodes))


# -- Graph._target_to_str -----------------------------------------------------------------


class MyLinear:
    def __call__(self, x):
        return x


TARGETS = ["MyLinear", "layer1.0.conv", "__add__", "__x", "x__", "__", "relu", "camelCase",
           operator.add, math.sqrt, builtins.getattr, torch.sigmoid, tensor.sigmoid, len,
           MyLinear]


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_names_from_targets_are_torch_fx_s(target):
    assert minifx.Graph._target_to_str(target) == torch.fx.Graph()._target_to_str(target)


def test_a_callable_without_a_name_is_named_by_its_type():
    assert minifx.Graph._target_to_str(functools.partial(max, 1)) == "partial"
    assert minifx.Graph._target_to_str(MyLinear()) == "my_linear"


@pytest.mark.parametrize(("op", "target"), [("call_method", "__getitem__"),
                                            ("call_module", "SubNet"),
                                            ("call_function", operator.getitem)])
def test_nodes_are_named_from_their_target_as_torch_fx(op, target):
    g, t = minifx.Graph(), torch.fx.Graph()
    made = [graph.create_node(op, target, ()) for graph in (g, t) for _ in range(2)]
    assert names(made[:2]) == names(made[2:])


# -- Node.is_impure ------------------------------------------------------------------------


def test_which_nodes_are_impure_is_torch_fx_s():
    verdicts = []
    for fx in (minifx, torch.fx):
        g = fx.Graph()
        x = g.placeholder("x")
        w = g.get_attr("w")
        nodes = [x, w, g.call_function(operator.add, (x, w)),
                 g.call_function(operator.setitem, (x, 0, w)),
                 g.call_function(builtins.print, (x,)),
                 g.call_method("add_", (x, 1)), g.call_method("relu", (x,)),
                 g.output(x)]
        verdicts.append([n.is_impure() for n in nodes])
    assert verdicts[0] == verdicts[1] == [True, False, False, True, False, False, False, True]


TORCH_CALLS = [torch.randn, torch._assert, torch.ops.aten.add_.Tensor, torch.ops.aten.add.Tensor,
               torch.ops.aten.rand.default, torch.ops.aten.bernoulli.default, torch.relu]


@pytest.mark.parametrize("impure_random", [True, False])
def test_framework_side_effects_are_torch_fx_s(impure_random):
    verdicts = []
    for fx in (minifx, torch.fx):
        g = fx.Graph()
        x = g.placeholder("x")
        calls = [g.call_function(f, (x,)) for f in TORCH_CALLS]
        verdicts.append([c.is_impure(impure_random) for c in calls])
    assert verdicts[0] == verdicts[1]
    assert verdicts[0][0] and not verdicts[0][-1]


def test_random_draws_of_tensor_are_impure():
    g = minifx.Graph()
    draw = g.call_function(tensor.randn, (3,))
    assert draw.is_impure() and not g.call_function(tensor.add, (draw, 1)).is_impure()


def test_marked_functions_and_impure_modules_are_impure():
    @register_side_effect
    def log(v):
        return v

    root = nn.Module()
    root.noisy, root.quiet = nn.ReLU(), nn.ReLU()
    root.noisy._is_impure = True
    g = minifx.Graph()
    x = g.placeholder("x")
    calls = [g.call_function(log, (x,)), g.call_module("noisy", (x,)),
             g.call_module("quiet", (x,)), g.call_module("missing", (x,))]
    assert [c.is_impure() for c in calls] == [True, False, False, False]  # no module yet
    g.owning_module = root
    assert [c.is_impure() for c in calls] == [True, True, False, False]
    assert g.eliminate_dead_code() and names(g.nodes) == ["x", "log", "noisy"]


def test_only_call_module_asks_the_submodule_and_ops_compare_by_value():
    root = nn.Module()
    root.noisy = nn.ReLU()
    root.noisy._is_impure = True
    g = minifx.Graph(root)
    x = g.placeholder("x")
    module_op, function_op = "".join(["call_", "module"]), "".join(["call_", "function"])
    assert not g.get_attr("noisy").is_impure()  # a read of the impure module is pure
    assert not g.call_method("noisy", (x,)).is_impure()
    assert g.create_node(module_op, "noisy", (x,)).is_impure()
    assert g.create_node(function_op, operator.setitem, (x, 0, 1)).is_impure()
