"""Graph.lint raises RuntimeError naming the node at fault, one test per fault."""

import ast
import operator
import pickle
import re
from pathlib import Path

import pytest

import minifx


def small():
    g = minifx.Graph()
    x = g.placeholder("x")
    a = g.call_function(operator.add, (x, 1))
    b = g.call_function(operator.mul, (a, 2))
    out = g.output(b)
    return g, x, a, b, out


def test_a_good_graph_passes():
    small()[0].lint()


def test_used_before_defined():
    g, x, a, b, out = small()
    x.prepend(b)  # mul now comes before add
    with pytest.raises(RuntimeError, match=r"Node mul .*reads add, which is defined later"):
        g.lint()


def test_node_from_another_graph():
    g, x, a, b, out = small()
    other = minifx.Graph()
    y = other.placeholder("y")
    b.args = (y, 2)  # assigning args is not checked; lint catches it
    with pytest.raises(RuntimeError, match=r"Node mul .*reads y, a node of another graph"):
        g.lint()


def test_unknown_op():
    g, x, a, b, out = small()
    a.op = "call_everything"
    with pytest.raises(RuntimeError, match=r"Node add .*unknown op 'call_everything'"):
        g.lint()


def test_missing_output():
    g, x, a, b, out = small()
    g.erase_node(out)
    with pytest.raises(RuntimeError, match="no output node"):
        g.lint()


def test_duplicate_name():
    g, x, a, b, out = small()
    b.name = "add"
    with pytest.raises(RuntimeError, match="duplicate node name 'add'"):
        g.lint()


def test_users_out_of_sync():
    g, x, a, b, out = small()
    del a.users[b]
    with pytest.raises(RuntimeError, match=r"Node mul .*reads add but is not among its users"):
        g.lint()
    g, x, a, b, out = small()
    a.users[out] = None
    with pytest.raises(RuntimeError, match=r"Node add .*lists output as a user"):
        g.lint()


def test_erased_input():
    g, x, a, b, out = small()
    b.args = (x, 2)
    g.erase_node(a)
    b._input_nodes[a] = None  # simulate a stale reference to the erased node
    b._args = (a, 2)
    with pytest.raises(RuntimeError, match=r"Node mul .*reads add, which was erased"):
        g.lint()


def test_second_output_caught_by_lint():
    g, x, a, b, out = small()
    g.create_node("output", "output", (a,))  # create_node bypasses Graph.output's check
    with pytest.raises(RuntimeError, match=r"Node output_1: a graph has one output node"):
        g.lint()


def test_output_not_last():
    g, x, a, b, out = small()
    with g.inserting_after(out):
        g.call_function(operator.neg, (b,))
    with pytest.raises(RuntimeError, match="Node output: the output node must be the last"):
        g.lint()


def test_missing_attribute_on_owning_module():
    g = minifx.Graph()
    w = g.get_attr("layer.weight")
    g.output(w)

    class Owner:
        layer = object()

    g.owning_module = Owner()
    with pytest.raises(RuntimeError, match=r"Node layer_weight .*targets layer.weight.*'weight'"):
        g.lint()


# The phrases the tests above match, each stated in lint's docstring (the stub's
# task): a learner writing lint from the docstring can pass every test.
PHRASES = (
    "which is defined later", "a node of another graph", "unknown op", "no output node",
    "duplicate node name", "but is not among its users", "as a user",
    "which was erased", "a graph has one output node", "the output node must be the last",
    "belongs to another graph", "targets",
)


def test_lint_docstring_states_every_phrase_the_tests_match():
    source = Path(__file__).read_text()
    matched = re.findall(r'match=r?"([^"]+)"', source)
    assert len(matched) >= 11  # the tests above; a new one should add its phrase here
    for pattern in matched:
        assert any(p in pattern.replace("\\", "") for p in PHRASES), pattern
    # The checkout's docstring (the stub's), not a workspace's copy of it.
    tree = ast.parse((Path(__file__).resolve().parents[2] / "minifx/graph.py").read_text())
    graph = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Graph")
    lint = next(n for n in graph.body if isinstance(n, ast.FunctionDef) and n.name == "lint")
    doc = " ".join(ast.get_docstring(lint).split())
    for phrase in PHRASES:
        assert phrase in doc, phrase


def test_a_user_in_another_graph_is_reported():
    g, x, a, b, out = small()
    other = minifx.Graph()
    other.create_node("call_function", operator.neg, (x,))  # reads x from outside its graph
    with pytest.raises(RuntimeError, match=r"Node x .*lists neg as a user, but it does not read x"):
        g.lint()


def test_an_unpickled_graph_passes():
    # Unpickled node ops equal "output" and the rest, but are not the same string objects.
    gm = minifx.symbolic_trace(lambda x: x.relu() + 1)
    pickle.loads(pickle.dumps(gm)).graph.lint()
