"""The Graph's ends and outside views: the output node, the insertion point, the check of
targets against the owning module, pickling, and the printed table and description.
torch.fx is the oracle wherever it has the same behaviour.
"""

import copy
import operator
import pickle
import sys
import types

import pytest
import torch
import torch.fx

import minifx
import tensor.nn as nn
from minifx.graph import _NodeRef, _rebuild_graph
from minifx.node import Node, map_aggregate, pretty_target


def build(fx):
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=3)
    a = g.call_function(operator.add, (x, y))
    b = g.call_method("relu", (a,))
    c = g.call_function(operator.mul, (b, a), {"k": [x, (y,)], "s": slice(x, None)})
    g.output((c, b))
    return g


def names(nodes):
    return [n.name for n in nodes]


# -- Graph.output ---------------------------------------------------------------------------


def test_the_output_node_is_torch_fx_s():
    for result in (None, 1, "x"):
        g, t = minifx.Graph(), torch.fx.Graph()
        got = [graph.output(graph.placeholder("x") if result == "x" else result, type_expr=int)
               for graph in (g, t)]
        for node in got:
            assert (node.op, node.target, node.name, node.type, node.kwargs) == (
                "output", "output", "output", int, {})
        assert str(got[0].args) == str(got[1].args) and str(g) == str(t)
        assert got[0] is list(g.nodes)[-1] and len(g.nodes) == len(t.nodes)
        assert g.output_node() is got[0]


def test_a_second_output_is_refused_by_name():
    g = minifx.Graph()
    first = g.create_node("output", "output", (None,), name="out")
    with pytest.raises(RuntimeError, match=r"already has an output node \(out\); erase it first"):
        g.output(None)
    g.create_node("output", "output", (None,), name="out2")  # two, as lint would refuse
    with pytest.raises(RuntimeError, match=r"already has an output node \(out\);"):
        g.output(None)
    g.erase_node(g.output_node())
    g.erase_node(first)
    assert g.output(1).args == (1,) and len(g.nodes) == 1


# -- Graph.output_node --------------------------------------------------------------------


def test_output_node_is_the_last_output_searched_from_the_end():
    g, t = build(minifx), build(torch.fx)
    assert g.output_node().name == t.output_node().name == "output"
    assert g.output_node() is list(g.nodes)[-1]
    # Two outputs made by hand (lint refuses this graph): the last one is answered.
    h = minifx.Graph()
    h.create_node("output", "output", (1,), name="first")
    h.placeholder("x")
    second = h.create_node("output", "output", (2,), name="second")
    assert h.output_node() is second
    # An output that is not last is still found, searching from the end.
    with h.inserting_after(second):
        h.placeholder("late")
    with h.inserting_after(second):
        h.get_attr("later")  # an op that sorts before "output"
    assert names(h.nodes)[-2:] == ["later", "late"]
    assert h.output_node() is second
    # The op is compared by value: an op string built at run time is not the literal.
    k = minifx.Graph()
    op = "".join(["out", "put"])
    literal = "output"
    assert op == literal and op is not literal
    made = k.create_node(op, "output", (None,))
    assert k.output_node() is made


def test_a_graph_without_output_node_says_so():
    for g in (minifx.Graph(), minifx.Graph()):
        with pytest.raises(RuntimeError, match="graph has no output node"):
            g.output_node()
        g.placeholder("x")
        with pytest.raises(RuntimeError, match="graph has no output node"):
            g.output_node()


# -- _InsertPoint.__init__ ------------------------------------------------------------------


@pytest.mark.parametrize("where", ["inserting_before", "inserting_after"])
def test_the_insertion_point_moves_at_once_and_comes_back_as_torch_fx_s(where):
    orders = []
    for fx in (minifx, torch.fx):
        g = fx.Graph()
        x = g.placeholder("x")
        out = g.output(x)
        point = getattr(g, where)(out if where == "inserting_before" else x)
        g.call_function(operator.neg, (x,))  # before entering: already moved
        with point:
            g.call_function(operator.abs, (x,))
        g.call_function(operator.pos, (x,))  # after the block: the end again
        orders.append(names(g.nodes))
    assert orders[0] == orders[1]


def test_the_insert_point_keeps_what_exit_restores():
    g = minifx.Graph()
    x = g.placeholder("x")
    before = g._insert
    point = g.inserting_before(x)
    assert point._graph is g and point._orig == before and g._insert == x.prepend
    point.__exit__(None, None, None)
    assert g._insert == before


# -- Graph._lint_targets --------------------------------------------------------------------


class Owner(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(2, 2)


def with_targets(op, target, first=None):
    g = minifx.Graph(Owner())
    x = g.placeholder("x")
    if first is not None:
        g.create_node(*first)
    g.create_node(op, target, (x,) if op == "call_module" else (), name="bad")
    g.output(x)
    return g


def test_get_attr_and_call_module_targets_must_exist_as_torch_fx_says():
    for op, target in (("get_attr", "layer.bias"), ("call_module", "layer"),
                       ("call_method", "nowhere"), ("call_function", operator.add)):
        with_targets(op, target)._lint_targets()
    for op, target, missing in (("get_attr", "layer.nothing", "layer.nothing: Linear"),
                                ("call_module", "gone", "gone: Owner"),
                                ("get_attr", "layer.weight.x", "layer.weight.x: Parameter")):
        g = with_targets(op, target)
        with pytest.raises(RuntimeError) as info:
            g._lint_targets()
        assert str(info.value).startswith(f"Node bad ({op}) targets {target}, but {missing} ")
        assert info.value.__cause__ is None and info.value.__suppress_context__
        # torch.fx refuses the same target
        t = torch.fx.Graph(torch.nn.Module())
        t.owning_module.layer = torch.nn.Linear(2, 2)
        tx = t.placeholder("x")
        t.create_node(op, target, (tx,) if op == "call_module" else ())
        t.output(tx)
        with pytest.raises(RuntimeError, match="nonexistent attribute"):
            t.lint()


def test_every_node_is_checked_in_order():
    g = with_targets("get_attr", "missing", first=("get_attr", "layer.weight"))
    with pytest.raises(RuntimeError, match="Node bad"):
        g._lint_targets()
    g = with_targets("call_module", "no_module", first=("call_method", "relu"))
    with pytest.raises(RuntimeError, match="Node bad"):
        g._lint_targets()
    # the first bad node is the one named
    g.create_node("get_attr", "also_missing", name="worse")
    with pytest.raises(RuntimeError, match="Node bad"):
        g._lint_targets()


# -- Graph.__reduce__ and _rebuild_graph ----------------------------------------------------


def test_a_pickled_graph_comes_back_as_torch_fx_s_does():
    g, t = build(minifx), build(torch.fx)
    for graph in (g, t):
        for node in graph.nodes:
            node.meta["k"] = [node.name]
    g2, t2 = pickle.loads(pickle.dumps(g)), pickle.loads(pickle.dumps(t))
    assert str(g2) == str(g) == str(t2) == str(t)
    assert names(g2.nodes) == names(t2.nodes)
    assert [n.type for n in g2.nodes] == [n.type for n in g.nodes]
    assert [n.meta for n in g2.nodes] == [n.meta for n in g.nodes]
    assert [(n.op, pretty_target(n.target)) for n in g2.nodes] == [
        (n.op, pretty_target(n.target)) for n in g.nodes]
    assert g2.python_code("self").src == g.python_code("self").src
    g2.lint()
    assert all(n.graph is g2 for n in g2.nodes)


def test_reduce_answers_a_flat_table_of_rows():
    g = build(minifx)
    g.placeholder("z", type_expr=float)
    nodes = list(g.nodes)
    nodes[2].meta["m"] = 1
    fn, (rows, codegen) = g.__reduce__()
    assert fn is _rebuild_graph and codegen is g._codegen and len(rows) == len(nodes)
    seen = []
    for row, node in zip(rows, nodes):
        op, name, target, args, kwargs, type_expr, meta = row
        assert (op, name, target, type_expr) == (node.op, node.name, node.target, node.type)
        assert meta == node.meta
        refs = []
        map_aggregate((args, kwargs), refs.append)  # every leaf, in order
        assert not any(isinstance(a, Node) for a in refs)
        back = lambda a: nodes[a.index] if isinstance(a, _NodeRef) else a  # noqa: E731
        assert str(map_aggregate(args, back)) == str(node.args)
        assert str(map_aggregate(kwargs, back)) == str(node.kwargs)
        seen.append([a.index for a in refs if isinstance(a, _NodeRef)])
    assert seen[2] == [0, 1] and seen[4] == [3, 2, 0, 1, 0]


def test_a_long_graph_pickles_where_torch_fx_s_overflows():
    def long(fx):
        g = fx.Graph()
        v = g.placeholder("x")
        for _ in range(3000):
            v = g.call_function(operator.add, (v, 1))
        g.output(v)
        return g

    with pytest.raises(RecursionError):
        pickle.dumps(long(torch.fx))
    g = long(minifx)
    g2 = pickle.loads(pickle.dumps(g))
    assert len(g2.nodes) == 3002 and names(g2.nodes) == names(g.nodes)


def test_rebuild_graph_makes_the_nodes_of_the_rows():
    codegen = copy.deepcopy(minifx.Graph()._codegen)
    meta = {"tag": 1}
    rows = [("placeholder", "x", "x", (), {}, int, {}),
            ("placeholder", "add_7", "y", (5,), {}, None, {}),
            ("call_function", "mul_3", operator.mul,
             (_NodeRef(0), [_NodeRef(1), 2]), {"k": (_NodeRef(0),)}, float, meta),
            ("output", "output", "output", ((_NodeRef(2), _NodeRef(0)),), {}, None, {})]
    g = _rebuild_graph(rows, codegen)
    assert g._codegen is codegen and len(g.nodes) == 4
    x, y, m, out = g.nodes
    assert names(g.nodes) == ["x", "add_7", "mul_3", "output"]
    assert (x.type, y.target, y.args, m.type, m.target) == (int, "y", (5,), float, operator.mul)
    assert m.args == (x, [y, 2]) and m.kwargs == {"k": (x,)} and m.meta is meta
    assert out.args == ((m, x),) and list(x.users) == [m, out]
    g.lint()
    t = torch.fx.Graph()
    tx = t.placeholder("x", type_expr=int)
    ty = t.create_node("placeholder", "y", (5,), name="add_7")
    tm = t.create_node("call_function", operator.mul, (tx, [ty, 2]), {"k": (tx,)},
                       name="mul_3", type_expr=float)
    t.output((tm, tx))
    assert str(g) == str(t)


# -- Graph.describe -------------------------------------------------------------------------


def test_describe_names_the_module_and_the_first_nodes():
    g = minifx.Graph()
    assert g.describe() == f"graph at {id(g):#x} with nodes []"
    g.placeholder("x")
    g.placeholder("y")
    assert g.describe() == f"graph at {id(g):#x} with nodes [x, y]"
    g.placeholder("z")
    assert g.describe() == f"graph at {id(g):#x} with nodes [x, y, z]"
    g.placeholder("w")
    assert g.describe() == f"graph at {id(g):#x} with nodes [x, y, z, ...]"
    h = minifx.Graph(Owner())
    h.placeholder("a")
    assert h.describe() == f"graph of Owner at {id(h):#x} with nodes [a]"


# -- Graph.print_tabular --------------------------------------------------------------------


def short(fx):
    # Narrower cells than the header's in the name, args and kwargs columns.
    g = fx.Graph()
    x = g.placeholder("x")
    g.call_function(operator.neg, (x,))
    return g


@pytest.mark.parametrize("make", [build, short])
def test_print_tabular_without_tabulate_is_a_plain_table(capsys, monkeypatch, make):
    monkeypatch.setitem(sys.modules, "tabulate", None)  # its import fails
    g, t = make(minifx), make(torch.fx)
    g.print_tabular()
    out = capsys.readouterr().out
    assert out.endswith("\n")
    header, dashes, *rows = out[:-1].split("\n")
    expected = [[n.op, n.name, pretty_target(n.target), str(tn.args), str(tn.kwargs)]
                for n, tn in zip(g.nodes, t.nodes)]
    table = [["opcode", "name", "target", "args", "kwargs"], *expected]
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    assert dashes == "  ".join("-" * w for w in widths)
    assert len(rows) == len(expected)
    for line, cells in zip([header, *rows], table):
        assert line == "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()


def test_print_tabular_with_tabulate_hands_it_the_rows(capsys, monkeypatch):
    calls = []

    def tabulate(rows, headers):
        calls.append((rows, headers))
        return "TABLE"

    monkeypatch.setitem(sys.modules, "tabulate", types.SimpleNamespace(tabulate=tabulate))
    g, t = build(minifx), build(torch.fx)
    g.print_tabular()
    assert capsys.readouterr().out == "TABLE\n"
    [(rows, headers)] = calls
    assert headers == ["opcode", "name", "target", "args", "kwargs"]
    assert rows == [[n.op, n.name, pretty_target(n.target), str(tn.args), str(tn.kwargs)]
                    for n, tn in zip(g.nodes, t.nodes)]
