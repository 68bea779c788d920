"""Chapter 12: `_Recorder.as_arg`, a nested value with each Tensor replaced by its node.

A recorder's keyword arguments and make_fx's output go through it. The
oracle for the shape of what it gives is torch's make_fx, whose output node
keeps the nesting of what the function returned (a list stays a list, a
tuple a tuple, a dict its keys) and every value that is not a tensor. On a
recorder itself, each Tensor must become the node `node_of` gives it.
"""

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import tensor
from minifx import Graph
from minifx.experimental.proxy_tensor import _Recorder, make_fx
from minifx.node import Node

MODES = ["real", "fake"]


def _recorder():
    """A recorder of a fresh graph with two inputs bound to placeholders."""
    graph = Graph()
    recorder = _Recorder(graph, {}, {})
    x, y = tensor.randn(3), tensor.randn(3)
    recorder.bind(x, graph.placeholder("x"))
    recorder.bind(y, graph.placeholder("y"))
    return recorder, x, y


def test_each_tensor_at_any_depth_becomes_the_node_node_of_gives():
    recorder, x, y = _recorder()
    c = tensor.randn(2)  # no primitive made it: a constant
    name = "hi"
    value = (x, [y, 2.0, (c,)], {"b": y, "a": 3, "c": [x, None]}, name, None, tensor.float32)
    out = recorder.as_arg(value, tensor.ops.add)

    nodes = {id(t): recorder.node_of(t, tensor.ops.add) for t in (x, y, c)}
    assert [n.op for n in nodes.values()] == ["placeholder", "placeholder", "get_attr"]
    assert out[0] is nodes[id(x)]
    assert out[1][0] is nodes[id(y)] and out[1][2][0] is nodes[id(c)]
    assert out[2]["b"] is nodes[id(y)] and out[2]["c"][0] is nodes[id(x)]
    # the constant got one get_attr node, as node_of makes it, and no other node was made
    assert [n.target for n in recorder.graph.nodes if n.op == "get_attr"] == \
        ["_tensor_constant0"]
    assert len(recorder.graph.nodes) == 3


def test_the_nesting_and_each_containers_type_are_kept():
    recorder, x, y = _recorder()
    value = (x, [y, 2.0, (x, y)], {"b": y, "a": 3, "c": [x, (y,)]})
    out = recorder.as_arg(value, tensor.ops.add)

    assert type(out) is tuple and len(out) == 3
    assert type(out[1]) is list and len(out[1]) == 3
    assert type(out[1][2]) is tuple and len(out[1][2]) == 2
    assert type(out[2]) is dict and list(out[2]) == ["b", "a", "c"]
    assert type(out[2]["c"]) is list and type(out[2]["c"][1]) is tuple
    assert all(isinstance(n, Node) for n in (*out[1][2], out[2]["c"][1][0]))


def test_values_that_are_not_tensors_are_the_same_objects():
    recorder, x, _ = _recorder()
    leaves = [2.5, 3, "a string", None, tensor.float32, slice(1, 2), True]
    out = recorder.as_arg([x, *leaves, {"k": leaves[2]}], tensor.ops.add)
    assert all(a is b for a, b in zip(out[1:-1], leaves, strict=True))
    assert out[-1]["k"] is leaves[2]
    for leaf in leaves:
        assert recorder.as_arg(leaf, tensor.ops.add) is leaf


def test_a_tensor_alone_and_empty_containers():
    recorder, x, _ = _recorder()
    assert recorder.as_arg(x, tensor.ops.add) is recorder.node_of(x, tensor.ops.add)
    assert recorder.as_arg((), tensor.ops.add) == () and \
        type(recorder.as_arg((), tensor.ops.add)) is tuple
    assert type(recorder.as_arg([], tensor.ops.add)) is list
    assert recorder.as_arg({}, tensor.ops.add) == {}


def test_the_value_itself_is_left_unchanged():
    recorder, x, y = _recorder()
    inner, table = [x, y], {"x": x, "pair": (y, x)}
    value = [inner, table]
    out = recorder.as_arg(value, tensor.ops.add)
    assert out is not value and out[0] is not inner and out[1] is not table
    assert value[0] is inner and inner[0] is x and inner[1] is y
    assert table["x"] is x and table["pair"][0] is y and list(table) == ["x", "pair"]


@pytest.mark.parametrize("where", ["list", "dict"])
def test_the_primitive_is_passed_on_to_node_of_at_any_depth(where):
    """A view of traced memory that no primitive made is refused by node_of, naming the
    primitive: the same error from deep inside the value."""
    recorder, x, _ = _recorder()
    view = tensor.Tensor._from_array(x._array[:1])
    value = ([1, (view,)],) if where == "list" else {"a": 1, "b": {"c": [view]}}
    with pytest.raises(RuntimeError) as error:
        recorder.as_arg(value, tensor.ops.sum)
    assert "tensor.ops.sum" in str(error.value)
    assert "shares memory with a traced value" in str(error.value)


def _program(ops):
    relu, neg, sigmoid, tanh, exp = ops

    def nested(x, y):
        return (relu(x), [neg(y), 2.0, (sigmoid(x), y)],
                {"b": tanh(y), "a": 3, "c": [exp(x), None]}, None, "hi")

    return nested


def _plain(value, placeholders):
    """The output's argument with each node as its name (a placeholder as its position,
    as the two name them differently) and each container as its plain type."""
    if isinstance(value, (torch.fx.Node, Node)):
        return ("arg", placeholders.index(value.name)) if value.op == "placeholder" else \
            value.name
    if isinstance(value, tuple):
        return ("tuple", [_plain(v, placeholders) for v in value])
    if isinstance(value, list):
        return ("list", [_plain(v, placeholders) for v in value])
    if isinstance(value, dict):
        return ("dict", [(k, _plain(v, placeholders)) for k, v in value.items()])
    return value


@pytest.mark.parametrize("mode", MODES)
def test_make_fxs_output_keeps_the_nesting_as_torchs(mode):
    ours = make_fx(_program((tensor.relu, tensor.neg, tensor.sigmoid, tensor.tanh,
                             tensor.exp)), tracing_mode=mode)(tensor.randn(3), tensor.randn(3))
    theirs = torch_make_fx(_program((torch.relu, torch.neg, torch.sigmoid, torch.tanh,
                                     torch.exp)), tracing_mode=mode)(torch.randn(3),
                                                                     torch.randn(3))
    outputs = []
    for gm in (ours, theirs):
        placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        (output,) = [n for n in gm.graph.nodes if n.op == "output"]
        outputs.append(_plain(output.args[0], placeholders))
    assert outputs[0] == outputs[1]
    assert outputs[0][1][1] == ("list", ["neg", 2.0, ("tuple", ["sigmoid", ("arg", 1)])])


@pytest.mark.parametrize("mode", MODES)
def test_a_primitives_keyword_arguments_keep_their_types(mode):
    def f(x):
        return tensor.ops.sum(x, dims=(0, 1), keepdim=False)

    gm = make_fx(f, tracing_mode=mode)(tensor.randn(3, 4))
    (node,) = gm.graph.find_nodes(op="call_function")
    assert node.kwargs == {"dims": (0, 1), "keepdim": False}
    assert type(node.kwargs["dims"]) is tuple
