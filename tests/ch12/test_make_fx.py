"""Chapter 12: make_fx records the primitives a run calls, and its graph computes the same.

Checked on chapter 4's models, chapter 7's ResNet twin and the random
programs of tests/generators.py, in both tracing modes: outputs equal
eager's, the graph holds only placeholder / get_attr / call_function /
output nodes whose targets are `tensor.ops` primitives, parameters are
get_attr nodes, control flow is specialised, decompositions apply.
"""

import numpy as np
import pytest
from hypothesis import given, settings

import tensor
from minifx.experimental.proxy_tensor import make_fx
from tests.ch04.ch04_models import EAGER_MODELS, build_sigmoid_neg, build_split, example_input
from tests.ch07 import ch07_models
from tests.generators import NO_MODE, as_numpy, build, leaves, plans

MODES = ["real", "fake"]


def assert_graph_is_primitive(gm):
    for node in gm.graph.nodes:
        assert node.op in ("placeholder", "get_attr", "call_function", "output"), node.format_node()
        if node.op == "call_function":
            assert isinstance(node.target, tensor.ops.OpOverload), node.format_node()


def assert_same_outputs(actual, expected):
    a, e = leaves(actual), leaves(expected)
    assert len(a) == len(e)
    for x, y in zip(a, e):
        np.testing.assert_allclose(as_numpy(x), as_numpy(y), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, builder, shape", EAGER_MODELS)
def test_ch04_models_equal_eager(name, builder, shape, mode):
    model = builder(tensor).eval()
    x, _ = example_input(shape)
    gm = make_fx(model, tracing_mode=mode)(x)
    assert_graph_is_primitive(gm)
    assert_same_outputs(gm(x), model(x))
    other, _ = example_input(shape, seed=1)  # no branch: the graph holds for other inputs
    assert_same_outputs(gm(other), model(other))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("builder, shape", [(build_sigmoid_neg, (3, 4)), (build_split, (3, 6))])
def test_ch04_functions_equal_eager(builder, shape, mode):
    fn = builder(tensor)
    x, _ = example_input(shape)
    gm = make_fx(fn, tracing_mode=mode)(x)
    assert_graph_is_primitive(gm)
    out = gm(x)
    expected = fn(x)
    if builder is build_split:  # (sigmoid(a) * b, (a.neg(), b.shape)): the shape is a constant
        assert out[1][1] == expected[1][1]
        out, expected = (out[0], out[1][0]), (expected[0], expected[1][0])
    assert_same_outputs(out, expected)


@pytest.mark.parametrize("mode", MODES)
def test_resnet_twin_equal_eager_parameters_as_get_attr(mode):
    model, _ = ch07_models.twins(width=8)
    x = tensor.randn(2, 3, 32, 32)
    gm = make_fx(model, tracing_mode=mode)(x)
    assert_graph_is_primitive(gm)
    tensor.testing.assert_close(gm(x), model(x))
    targets = {n.target for n in gm.graph.nodes if n.op == "get_attr"}
    names = {name for name, _ in (*model.named_parameters(), *model.named_buffers())}
    assert targets <= names and "conv1.weight" in targets and "bn1.running_mean" in targets
    ops = [n.target.name for n in gm.graph.nodes if n.op == "call_function"]
    kinds = [type(m).__name__ for m in model.modules()]
    assert ops.count("conv2d") == kinds.count("Conv2d")
    assert ops.count("batch_norm") == kinds.count("BatchNorm2d")
    assert type(gm).__name__ == type(model).__name__


def test_linear_shows_its_primitive_and_names_follow_torch():
    model = tensor.nn.Sequential(tensor.nn.Linear(3, 4), tensor.nn.ReLU(), tensor.nn.Linear(4, 2))
    gm = make_fx(model)(tensor.randn(5, 3))
    assert [n.name for n in gm.graph.nodes] == [
        "arg0_1", "_0_weight", "_0_bias", "linear", "relu", "_2_weight", "_2_bias", "linear_1",
        "output"]
    assert str(gm.graph.find_nodes(op="call_function")[0].target) == "tensor.ops.linear"
    assert "tensor.ops.linear(arg0_1, _0_weight, _0_bias)" in gm.code


@pytest.mark.parametrize("mode", MODES)
def test_control_flow_is_specialised(mode):
    def fn(x, flag):
        if flag:  # a Python value: evaluated, in both modes
            return tensor.relu(x) * 2.0
        return x - 1.0

    x = tensor.randn(3, 4)
    taken = make_fx(fn, tracing_mode=mode)(x, True)
    assert [n.target.name for n in taken.graph.find_nodes(op="call_function")] == ["relu", "mul"]
    other = tensor.randn(3, 4)
    tensor.testing.assert_close(taken(other, False), fn(other, True))  # the flag was fixed


def test_branch_on_a_value_is_specialised_in_real_mode_and_refused_in_fake_mode():
    def fn(x):
        return x * 2.0 if x.sum() > 0 else x - 1.0

    x = tensor.ones(2, 2)
    gm = make_fx(fn)(x)
    assert [n.target.name for n in gm.graph.find_nodes(op="call_function")] == ["mul"]
    tensor.testing.assert_close(gm(-x), -x * 2.0)  # specialised: the other branch is gone
    with pytest.raises(RuntimeError, match="no data"):
        make_fx(fn, tracing_mode="fake")(x)


def test_decomposition_of_a_public_op_and_of_a_primitive():
    def linear_from_matmul(x, w, b=None):
        out = tensor.matmul(x, w.t())
        return out if b is None else out + b

    model = tensor.nn.Linear(3, 2)
    x = tensor.randn(4, 3)
    for key in (tensor.nn.functional.linear, tensor.ops.linear):
        gm = make_fx(model, decomposition_table={key: linear_from_matmul})(x)
        assert [n.target.name for n in gm.graph.find_nodes(op="call_function")] == [
            "t", "matmul", "add"]
        tensor.testing.assert_close(gm(x), model(x))


@pytest.mark.parametrize("mode", MODES)
def test_in_place_relu_is_recorded(mode):
    model = tensor.nn.Sequential(tensor.nn.Linear(3, 3), tensor.nn.ReLU(inplace=True))
    x = tensor.randn(4, 3)
    gm = make_fx(model, tracing_mode=mode)(x)
    assert [n.target.name for n in gm.graph.find_nodes(op="call_function")] == [
        "linear", "relu_"]  # ATen's in-place relu_, not a relu and a copy back
    tensor.testing.assert_close(gm(x), model(x))


@pytest.mark.parametrize("mode", MODES)
def test_arange_is_recorded_as_a_creation_primitive(mode):
    """As ATen's arange: a node of its own, its bounds and dtype as arguments,
    not a constant tensor baked into the module."""

    def positions(x):
        return x + tensor.arange(0, x.shape[-1], 1, dtype=tensor.float32)

    x = tensor.randn(2, 5)
    gm = make_fx(positions, tracing_mode=mode)(x)
    (node,) = [n for n in gm.graph.find_nodes(op="call_function") if n.target.name == "arange"]
    assert node.args == (0, 5, 1, tensor.float32)
    assert not list(gm.named_buffers()) and "_tensor_constant" not in gm.code
    tensor.testing.assert_close(gm(x), positions(x))


def test_fake_mode_allocates_no_activation():
    import tracemalloc

    model = tensor.nn.Sequential(tensor.nn.Conv2d(3, 8, 3, padding=1), tensor.nn.ReLU())
    x = tensor.randn(64, 3, 128, 128)  # the activation would be 32 MB
    tracemalloc.start()
    try:
        make_fx(model, tracing_mode="fake")(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4e6


@settings(max_examples=40, deadline=None)
@given(plans())
def test_random_programs_equal_eager(plan):
    model, args, _ = build(plan, tensor)
    if plan.mode != NO_MODE:
        inputs = args
    else:
        inputs = args
    for mode in MODES:
        gm = make_fx(model, tracing_mode=mode)(*inputs)
        assert_graph_is_primitive(gm)
        assert_same_outputs(gm(*inputs), model(*inputs))


@pytest.mark.parametrize("mode", MODES)
def test_pieces_and_views_are_primitives(mode):
    def fn(x):
        a, b = x.chunk(2, dim=1)
        first, *_ = x.unbind(0)
        return a * b, first.expand(2, 4).T.contiguous(), x.mT.reshape(-1)[::3]

    x, other = tensor.randn(3, 4), tensor.randn(3, 4)
    gm = make_fx(fn, tracing_mode=mode)(x)
    assert_graph_is_primitive(gm)
    assert_same_outputs(gm(other), fn(other))


@pytest.mark.parametrize("target", ["fc.weight", "0.weight", "layer1.0.conv1.weight",
                                    "Conv.Weight", "x.1", "a..b", "__dunder__.w", "_0.w",
                                    "layer1.0.conv1.weight_1", "class.bias", "len"])
def test_get_attr_names_are_the_graphs(target):
    """make_fx names a get_attr node as graph.get_attr would (it works the name out once
    per target, for speed): twice, so that the second is numbered as the graph numbers it."""
    from minifx import Graph
    from minifx.experimental.proxy_tensor import _attr_node_name

    ours, theirs = Graph(), Graph()
    for _ in range(2):
        assert ours.create_node("get_attr", target, name=_attr_node_name(target)).name == \
            theirs.get_attr(target).name


@pytest.mark.parametrize("mode", MODES)
def test_a_primitive_called_with_keywords_keeps_them(mode):
    def f(x):
        return tensor.ops.sum(x, dims=(1,), keepdim=True)

    x = tensor.randn(3, 4)
    gm = make_fx(f, tracing_mode=mode)(x)
    (node,) = gm.graph.find_nodes(op="call_function")
    assert node.kwargs == {"dims": (1,), "keepdim": True}
    np.testing.assert_allclose(as_numpy(gm(x)), x.numpy().sum(axis=1, keepdims=True),
                               rtol=1e-6)


def test_a_view_made_outside_the_primitives_is_refused_and_a_constant_is_kept():
    """A view of a traced value that no primitive made would be lost from the graph:
    make_fx names the primitive that met it. Data of its own is a constant."""

    def hidden_view(x):
        y = x + 1.0
        return tensor.from_numpy(y.numpy()[::2]) * 2.0  # NumPy's view, not tensor.ops'

    def own_data(x):
        return x * tensor.from_numpy(np.arange(4, dtype=np.float32))

    x = tensor.randn(4)
    with pytest.raises(RuntimeError, match=r"argument of tensor\.ops\.mul shares memory"):
        make_fx(hidden_view)(x)
    gm = make_fx(own_data)(x)
    assert [n.target for n in gm.graph.find_nodes(op="get_attr")] == ["_tensor_constant0"]
    tensor.testing.assert_close(gm(x), own_data(x))


@pytest.mark.parametrize("mode", MODES)
def test_a_primitive_called_directly_with_a_tuple_of_tensors(mode):
    """cat's first argument, a tuple of Tensors, becomes a tuple of nodes; the sizes and
    dims of other primitives stay as they were written."""

    def joined(x, y):
        return tensor.ops.sum(tensor.ops.cat((x, tensor.ops.relu(y)), 0), (1,), False)

    x, y = tensor.randn(2, 3), tensor.randn(4, 3)
    gm = make_fx(joined, tracing_mode=mode)(x, y)
    cat, total = [n for n in gm.graph.nodes if n.op == "call_function" and n.target.name != "relu"]
    assert isinstance(cat.args[0], tuple) and cat.args[0][0].op == "placeholder"
    assert total.args[1:] == ((1,), False)
    tensor.testing.assert_close(gm(x, y), joined(x, y))
