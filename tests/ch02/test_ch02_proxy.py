"""Chapter 2: the Proxy records operators, methods, attributes and tensor functions."""

import operator

import pytest
import torch
import torch.fx

import minifx
import tensor
from minifx.magic_methods import magic_methods, reflectable_magic_methods
from minifx.proxy import GraphAppendingTracer, Proxy, TraceError
from tests.ch02.ch02_twins import assert_same_trace

BINARY = sorted(set(reflectable_magic_methods) - {"div", "getitem"})


def operator_program(name, reflected=False):
    fn = getattr(operator, name)

    def program(x, y):
        return fn(2, x) if reflected else fn(x, y)

    return program


@pytest.mark.parametrize("name", BINARY)
def test_binary_operator_recorded_as_torch_fx(name):
    assert_same_trace(lambda lib: operator_program(name))


@pytest.mark.parametrize("name", BINARY)
def test_reflected_operator_recorded_as_torch_fx(name):
    assert_same_trace(lambda lib: operator_program(name, reflected=True))


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "gt", "le", "ge", "neg", "pos", "invert"])
def test_comparison_and_unary_operators(name):
    fn = getattr(operator, name)
    unary = name in ("neg", "pos", "invert")

    def build(lib):
        def program(x, y):
            return fn(x) if unary else fn(x, y)
        return program

    ours, _ = assert_same_trace(build)
    (node,) = ours.graph.find_nodes(op="call_function")
    assert node.target is fn


def test_table_covers_every_operator():
    graph = minifx.Graph()
    x = Proxy(graph.placeholder("x"))  # the first Proxy: the operators are installed by now
    for name in magic_methods:
        if name == "div":
            continue
        dunder = f"__{name.rstrip('_')}__"
        assert getattr(Proxy, dunder).__name__ == dunder, name
    for name in reflectable_magic_methods:
        if name in ("div", "getitem"):
            continue
        dunder = f"__r{name.rstrip('_')}__"
        assert getattr(Proxy, dunder).__name__ == dunder, name
    assert not hasattr(Proxy, "__rgetitem__")
    # Each method records its own operator, on the operands in the order written.
    for name in BINARY:
        fn = getattr(operator, name)
        dunder = name.rstrip("_")
        assert getattr(x, f"__{dunder}__")(3).node.target is fn, name
        reflected = getattr(x, f"__r{dunder}__")(3).node
        assert (reflected.target, reflected.args) == (fn, (3, x.node)), name
        assert reflected.kwargs == {}
    assert (x / 2).node.target is operator.truediv and (2 / x).node.args == (2, x.node)


def test_a_graph_appending_proxy_records_operators_into_its_graph():
    graph = minifx.Graph()
    x = Proxy(graph.placeholder("x"))
    y = -(x[1:] @ x) ** 2 != ~x
    graph.output(y.node)
    ours = str(graph)
    theirs = torch.fx.Graph()
    tx = torch.fx.Proxy(theirs.placeholder("x"))
    theirs.output((-(tx[1:] @ tx) ** 2 != ~tx).node)
    assert ours == str(theirs)


def test_indexing_with_slices_none_and_ellipsis():
    def build(lib):
        def program(x):
            return x[0, 1:2, ..., None] + x[:, -1]
        return program

    assert_same_trace(build)


def test_method_call_is_call_method_and_attribute_read_is_getattr():
    def build(lib):
        def program(x):
            unused = x.shape  # never used as a value: no node
            del unused
            return x.size(0), x.clamp(min=0.0, max=1.0), x.T
        return program

    ours, _ = assert_same_trace(build)
    ops = [(n.op, n.target) for n in ours.graph.nodes]
    assert ("call_method", "size") in ops
    assert ("call_function", getattr) in ops
    assert all(t != "shape" for _, t in ops)


def test_tensor_function_becomes_call_function_with_public_target():
    def build(lib):
        def program(x):
            return lib.sigmoid(lib.add(x, 1.0)) * lib.tanh(x)
        return program

    ours, _ = assert_same_trace(build)
    targets = [n.target for n in ours.graph.find_nodes(op="call_function")]
    assert tensor.sigmoid in targets and tensor.add in targets and tensor.tanh in targets


def test_functional_relu_and_tensor_method_dispatch():
    def program(x):
        return tensor.nn.functional.relu(tensor.Tensor.neg(x))

    gm = minifx.symbolic_trace(program)
    nodes = list(gm.graph.nodes)
    assert (nodes[1].op, nodes[1].target) == ("call_method", "neg")
    assert (nodes[2].op, nodes[2].target) == ("call_function", tensor.nn.functional.relu)
    x = tensor.randn(3, 4)
    tensor.testing.assert_close(gm(x), program(x))


def test_tensor_on_the_left_of_an_operator_is_a_method_call():
    """`c + x` with `c` a real tensor: Tensor.__add__ dispatches to the Proxy,
    which records `c.add(x)`, as torch.fx does for torch."""

    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.c = lib.ones(4)

            def forward(self, x):
                return (self.c + x, self.c * x, self.c - x, self.c > x, self.c[x > 0])

        return M()

    assert_same_trace(build)


def test_unpacking_reads_the_count_from_bytecode():
    def build(lib):
        def program(x):
            values, indices = x.max(dim=1)
            return values * 2, indices
        return program

    ours, _ = assert_same_trace(build)
    assert [n.target for n in ours.graph.find_nodes(op="call_function")][:2] == [
        operator.getitem, operator.getitem]
    x = tensor.randn(6, 2)
    values, indices = x.max(dim=1)
    got_values, got_indices = ours(x)
    tensor.testing.assert_close(got_values, values * 2)
    tensor.testing.assert_close(got_indices, indices)


def test_unpacking_three_ways():
    graph = minifx.Graph()
    x = Proxy(graph.placeholder("x"))
    a, b, c = x.chunk(3)
    graph.output((a, b, c))
    assert [n.args[1] for n in graph.find_nodes(op="call_function")] == [0, 1, 2]


def test_call_on_a_proxy_is_call_method():
    def build(lib):
        def program(x):
            return x(1, key=2)
        return program

    assert_same_trace(build)


def test_graph_appending_tracer_builds_a_graph_through_proxies():
    graph = minifx.Graph()
    x = Proxy(graph.placeholder("x"), GraphAppendingTracer(graph))
    y = tensor.relu(x * 2 - 1)
    graph.output(y.node)
    graph.lint()

    theirs = torch.fx.Graph()
    tx = torch.fx.Proxy(theirs.placeholder("x"), torch.fx.proxy.GraphAppendingTracer(theirs))
    theirs.output(torch.relu(tx * 2 - 1).node)
    assert str(graph) == str(theirs).replace("torch", "tensor")


def test_proxy_without_tracer_appends_to_the_node_graph():
    graph = minifx.Graph()
    x = Proxy(graph.placeholder("x"))
    graph.output((x + 1).node)
    assert [n.op for n in graph.nodes] == ["placeholder", "call_function", "output"]


def test_proxy_is_hashable_and_repr_names_its_node():
    graph = minifx.Graph()
    x = Proxy(graph.placeholder("x"))
    assert repr(x) == "Proxy(x)"
    assert {x: 1}[x] == 1


def test_trace_error_is_a_value_error():
    assert issubclass(TraceError, ValueError)
    assert issubclass(minifx.proxy.TraceError, RuntimeError)


def test_find_proxy_finds_the_first_proxy_in_written_order():
    from minifx.proxy import find_proxy

    graph = minifx.Graph()
    x, y = Proxy(graph.placeholder("x")), Proxy(graph.placeholder("y"))
    assert find_proxy((1, x, y), {}) is x
    assert find_proxy((1, [2, (3, y)], x), {}) is y  # inside the container that comes first
    assert find_proxy((1, 2), {"k": x, "j": y}) is x
    assert find_proxy((1,), {"k": {"a": [y]}}) is y
    assert find_proxy((slice(None, y),), {}) is y
    assert find_proxy((1, "s", None), {"k": [2]}) is None


def test_a_proxy_inside_a_list_argument_records_the_call_like_torch_fx():
    def build(lib):
        def program(x):
            return lib.cat([lib.ones(2), x], dim=0), lib.stack(tensors=[x, x])
        return program

    ours, _ = assert_same_trace(build)
    assert [n.target for n in ours.graph.find_nodes(op="call_function")][-2:] == [
        tensor.cat, tensor.stack]
