"""What a Node holds: its fields, its copied arguments and both ends of every edge.

The oracle is torch.fx: the same graph built in both, the same edits made, and
the nodes' fields, inputs and users compared by name.
"""

import operator
from collections import namedtuple

import pytest
import torch.fx

import minifx
from minifx.node import Node, copy_arg, map_arg

Pair = namedtuple("Pair", "left right")


def build(fx):
    """Three inputs and two calls whose arguments nest lists, tuples, dicts and slices."""
    g = fx.Graph()
    x, y, z = g.placeholder("x"), g.placeholder("y"), g.placeholder("z")
    a = g.call_function(operator.add, (x, y))
    b = g.call_function(operator.mul, (a, [x, (y, {"k": z})], slice(z, None)), {"w": x, "v": 2})
    g.output(b)
    return g, {n.name: n for n in g.nodes}


def names(nodes):
    return [n.name for n in nodes]


def edges(graph):
    return [(n.name, names(n.all_input_nodes), names(n.users)) for n in graph.nodes]


# -- Node.__init__ --------------------------------------------------------------------


def test_a_fresh_node_holds_what_torch_fx_holds():
    seen = []
    for fx in (minifx, torch.fx):
        graph = fx.Graph()
        x = graph.placeholder("x")
        node = fx.Node(graph, "n", "call_function", operator.neg, (x, [x, 3]), {"k": x}, int)
        seen.append((node.graph is graph, node.name, node.op, node.target, node.type, node.meta,
                     node.args == (x, [x, 3]), node.kwargs == {"k": x}, names(node.users),
                     node._erased, node.next is node, node.prev is node,
                     names(node.all_input_nodes), names(x.users)))
    assert seen[0] == seen[1]
    assert seen[0][-2:] == (["x"], ["n"])


def test_a_fresh_node_is_a_circle_of_one_and_not_erased():
    g = minifx.Graph()
    node = Node(g, "n", "placeholder", "n", (), {})
    assert node._prev is node and node._next is node and node._erased is False
    assert node.users == {} and node._input_nodes == {} and node.meta == {}
    assert node.args == () and node.kwargs == {} and node.type is None
    assert type(node.users) is dict and type(node._input_nodes) is dict
    g._insert(node)  # linked in by hand, as create_node does: listed, since not erased
    g._len += 1
    assert list(g.nodes) == [node]


def test_two_fresh_nodes_do_not_share_their_dicts():
    g = minifx.Graph()
    n1 = Node(g, "a", "placeholder", "a", (), {})
    n2 = Node(g, "b", "call_function", operator.neg, (n1,), {})
    assert n1.meta is not n2.meta and n1.users is not n2.users
    assert list(n1.users) == [n2] and n2.users == {} and n1._input_nodes == {}


@pytest.mark.parametrize(("op", "target", "words"), [
    ("call_it", operator.add, "Node n: unknown op 'call_it'; expected one of ("),
    ("call_function", "add", "Node n: call_function target 'add' is not callable"),
    ("call_method", operator.add, "Node n: call_method needs a string target, got <built-in"),
    ("placeholder", 3, "Node n: placeholder needs a string target, got 3"),
])
def test_a_bad_op_or_target_is_refused_with_its_sentence(op, target, words):
    g = minifx.Graph()
    with pytest.raises(ValueError) as error:
        Node(g, "n", op, target, (), {})
    assert str(error.value).startswith(words)


@pytest.mark.parametrize("op", ["placeholder", "get_attr", "call_method", "call_module",
                                "output"])
def test_every_op_with_a_string_target_is_accepted(op):
    g = minifx.Graph()
    assert Node(g, "n", op, "t", (), {}).op == op
    assert Node(g, "f", "call_function", len, (), {}).target is len


# -- copy_arg -------------------------------------------------------------------------


def _nodes():
    g, n = build(minifx)
    return n["x"], n["y"], n["z"], n["add"]


@pytest.mark.parametrize("shape", [
    lambda x, y, z, a: (x, [y, 1, (z, "s")], {"k": x, "m": [a, None]}),
    lambda x, y, z, a: [a, (2.5, x), {"d": {"e": y}}],
    lambda x, y, z, a: {"k": (z, y), "j": x},
    lambda x, y, z, a: Pair(z, [x, y]),
    lambda x, y, z, a: (Pair(a, x), slice(y, z, None)),
    lambda x, y, z, a: slice(y, 3, a),
    lambda x, y, z, a: x,
])
def test_copy_arg_copies_and_notes_the_nodes_in_order(shape):
    x, y, z, a = _nodes()
    arg = shape(x, y, z, a)
    found = {}
    copied = copy_arg(arg, found)
    assert copied == arg and type(copied) is type(arg)
    seen = []
    map_arg(arg, seen.append)
    assert list(found) == list(dict.fromkeys(seen))
    assert all(v is None for v in found.values())
    node_map = {x: y, y: z, z: a, a: x}
    found = {}
    mapped = copy_arg(arg, found, node_map)
    assert mapped == map_arg(arg, node_map.__getitem__) and type(mapped) is type(arg)
    assert list(found) == list(dict.fromkeys(node_map[n] for n in seen))


def test_copy_arg_shares_no_container_and_keeps_constants():
    x, y, z, a = _nodes()
    inner, deep = [y, 1], {"e": [z]}
    arg = (x, inner, {"k": deep})
    copied = copy_arg(arg, {})
    assert copied[1] is not inner and copied[2]["k"] is not deep
    assert copied[2]["k"]["e"] is not deep["e"] and copied[2]["k"]["e"] == [z]
    as_list = [x, inner]
    assert copy_arg(as_list, {}) is not as_list and type(copy_arg(as_list, {})) is list
    big = 10 ** 30
    for constant in (big, "s", None, 2.5, True):
        found = {}
        assert copy_arg(constant, found) is constant and found == {}
        assert copy_arg([constant], found)[0] is constant and found == {}


def test_copy_arg_maps_nodes_at_every_depth():
    x, y, z, a = _nodes()
    found = {}
    out = copy_arg([x, (x, [y]), {"k": Pair(y, x)}, slice(x, y, None)], found,
                   {x: a, y: z})
    assert out == [a, (a, [z]), {"k": Pair(z, a)}, slice(a, z, None)]
    assert list(found) == [a, z]


def test_node_args_are_copies_as_torch_fx_makes_them():
    for fx in (minifx, torch.fx):
        g = fx.Graph()
        x = g.placeholder("x")
        inner = [x, 1]
        kwargs = {"k": inner}
        n = g.call_function(operator.add, (x, inner), kwargs)
        inner.append(2)
        kwargs["j"] = 3
        assert n.args[1] == [x, 1] and n.kwargs == {"k": [x, 1]}


# -- Node._update_args_kwargs ----------------------------------------------------------


def test_inputs_and_users_are_torch_fx_s():
    assert edges(build(minifx)[0]) == edges(build(torch.fx)[0])


@pytest.mark.parametrize("edit", [
    lambda n: setattr(n["mul"], "args", (n["y"], n["x"], n["add"])),
    lambda n: setattr(n["mul"], "args", ()),
    lambda n: setattr(n["mul"], "kwargs", {}),
    lambda n: setattr(n["mul"], "kwargs", {"q": [n["z"], n["y"]]}),
    lambda n: setattr(n["add"], "args", (n["z"], n["z"])),
    lambda n: (setattr(n["add"], "args", (n["z"],)), setattr(n["add"], "args", (n["x"], n["y"]))),
    lambda n: n["mul"].update_arg(0, n["z"]),
    lambda n: n["mul"].update_kwarg("w", n["add"]),
    lambda n: n["mul"].replace_input_with(n["x"], n["y"]),
])
def test_edits_keep_both_ends_of_every_edge_as_torch_fx(edit):
    mine, mine_nodes = build(minifx)
    theirs, their_nodes = build(torch.fx)
    edit(mine_nodes)
    edit(their_nodes)
    assert edges(mine) == edges(theirs)
    for name, node in mine_nodes.items():
        to_mine = lambda t: mine_nodes[t.name]  # noqa: E731
        assert node.args == torch.fx.node.map_arg(their_nodes[name].args, to_mine)
        assert node.kwargs == torch.fx.node.map_arg(
            their_nodes[name].kwargs, to_mine)
    mine.lint()


def test_args_given_as_a_list_become_a_tuple_and_empty_kwargs_a_new_dict():
    g, n = build(minifx)
    empty = {}
    node = n["mul"]
    node._update_args_kwargs([n["x"], [n["y"]]], empty)
    assert node.args == (n["x"], [n["y"]]) and type(node.args) is tuple
    assert node.kwargs == {} and node.kwargs is not empty and type(node.kwargs) is dict
    given = {"k": n["z"]}
    node._update_args_kwargs((), given)
    assert node.kwargs == given and node.kwargs is not given and node.all_input_nodes == [n["z"]]
    assert node not in n["x"].users and node not in n["y"].users and node in n["z"].users


def test_ops_are_compared_by_value_not_identity():
    built = "".join(["call_", "function"])  # equal to "call_function", another object
    assert built == "call_function"
    g = minifx.Graph()
    assert Node(g, "f", built, operator.neg, (), {}).target is operator.neg
    with pytest.raises(ValueError, match="Node n: call_function target 'add' is not callable"):
        Node(g, "n", built, "add", (), {})
