"""Chapter 12: how make_fx finds each argument's node, and what it hands back.

The oracle is torch's make_fx where the two agree by design: a tensor the
traced function captures becomes a ``get_attr`` constant, numbered as
torch numbers them (``_tensor_constant0``, ``_param_constant0``, ...),
and the GraphModule is named after the function. Where minifx differs on
purpose (a Module's parameters keep their qualified names; a constant met
twice is one node) the test says so.
"""

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import tensor
from minifx.experimental.proxy_tensor import make_fx

MODES = ["real", "fake"]


def _attrs(gm):
    return [n.target for n in gm.graph.nodes if n.op == "get_attr"]


def _program(add, c, p, c2):
    def captured(x):
        # The parameter reaches the primitive itself: through a public op, the front end
        # hands the primitive a plain Tensor around the parameter's array.
        return add(x * c, p) + c2

    return captured


@pytest.mark.parametrize("mode", MODES)
def test_captured_tensors_are_numbered_constants_as_torch_numbers_them(mode):
    c, c2 = tensor.randn(3), tensor.randn(3)
    p = tensor.nn.Parameter(tensor.randn(3))
    ours = make_fx(_program(tensor.ops.add, c, p, c2), tracing_mode=mode)(tensor.randn(3))
    tc, tc2 = torch.randn(3), torch.randn(3)
    tp = torch.nn.Parameter(torch.randn(3))
    theirs = torch_make_fx(_program(torch.ops.aten.add, tc, tp, tc2))(torch.randn(3))
    assert _attrs(ours) == _attrs(theirs) == ["_tensor_constant0", "_param_constant0",
                                              "_tensor_constant1"]
    # what the graph reads is the captured data itself, no copy
    assert ours._tensor_constant0._array is c._array and ours._param_constant0 is p
    assert ours._tensor_constant1._array is c2._array
    assert [n.name for n in ours.graph.nodes if n.op == "get_attr"] == _attrs(ours)
    assert type(ours).__name__ == type(theirs).__name__ == "captured"


@pytest.mark.parametrize("mode", MODES)
def test_a_constant_met_twice_is_one_node(mode):
    c = tensor.randn(3)
    gm = make_fx(lambda x: x * c + c, tracing_mode=mode)(tensor.randn(3))
    assert _attrs(gm) == ["_tensor_constant0"]
    (node,) = gm.graph.find_nodes(op="get_attr")
    assert len(node.users) == 2
    x = tensor.randn(3)
    tensor.testing.assert_close(gm(x), x * c + c)


class _Shared(tensor.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = tensor.nn.Linear(3, 2)
        self.again = self.fc  # the same layer under a second name
        self.register_buffer("shift", tensor.ones(2))

    def forward(self, x):
        return self.again(x) + self.fc(x) + self.shift


@pytest.mark.parametrize("mode", MODES)
def test_a_modules_parameters_and_buffers_keep_their_first_names(mode):
    model = _Shared()
    gm = make_fx(model, tracing_mode=mode)(tensor.randn(4, 3))
    assert _attrs(gm) == ["fc.weight", "fc.bias", "shift"]
    assert [n.name for n in gm.graph.find_nodes(op="get_attr")] == ["fc_weight", "fc_bias",
                                                                    "shift"]
    assert gm.fc.weight is model.fc.weight and gm.shift is model.shift
    assert type(gm).__name__ == "_Shared"
    x = tensor.randn(4, 3)
    tensor.testing.assert_close(gm(x), model(x))


def test_a_view_made_outside_the_primitives_is_refused():
    def sneaky(x):
        y = x.relu()
        view = tensor.Tensor._from_array(y._array[:1])  # NumPy's view: no primitive saw it
        return view + 1.0

    with pytest.raises(RuntimeError) as error:
        make_fx(sneaky)(tensor.randn(3))
    assert "tensor.ops.add" in str(error.value)
    assert "shares memory with a traced value" in str(error.value)


def test_a_tensor_sharing_no_memory_with_a_traced_one_is_a_constant():
    data = tensor.randn(4)

    def reads(x):
        return x + tensor.Tensor._from_array(data._array[1:])  # a view, of a constant

    gm = make_fx(reads)(tensor.randn(3))
    assert _attrs(gm) == ["_tensor_constant0"]


def test_the_name_of_a_callable_without_one_and_of_a_function():
    class Callable_:
        def __call__(self, x):
            return x + 1.0

    assert type(make_fx(Callable_())(tensor.randn(2))).__name__ == "GraphModule"
    assert type(make_fx(tensor.relu)(tensor.randn(2))).__name__ == "relu"


def test_tracing_mode_is_checked_at_once():
    with pytest.raises(ValueError) as error:
        make_fx(tensor.relu, tracing_mode="symbolic")
    assert str(error.value) == "make_fx: tracing_mode must be 'real' or 'fake', got 'symbolic'"


@pytest.mark.parametrize("mode", MODES)
def test_each_call_traces_afresh(mode):
    traced = make_fx(lambda x: x.relu() if x.shape[0] == 2 else x.neg(), tracing_mode=mode)
    first, second = traced(tensor.randn(2)), traced(tensor.randn(3))
    assert first.graph is not second.graph
    assert [str(n.target) for n in first.graph.find_nodes(op="call_function")] == \
        ["tensor.ops.relu"]
    assert [str(n.target) for n in second.graph.find_nodes(op="call_function")] == \
        ["tensor.ops.neg"]


@pytest.mark.parametrize("mode", MODES)
def test_placeholders_and_arguments_that_are_not_tensors(mode):
    gm = make_fx(lambda x, n, y: x * n + y, tracing_mode=mode)(
        tensor.randn(2), 3.0, tensor.randn(2))
    assert [n.name for n in gm.graph.find_nodes(op="placeholder")] == ["arg0_1", "arg1_1",
                                                                       "arg2_1"]
    (mul,) = gm.graph.find_nodes(op="call_function", target=tensor.ops.mul)
    assert mul.args[0].name == "arg0_1" and mul.args[1] == 3.0
    (add,) = gm.graph.find_nodes(op="call_function", target=tensor.ops.add)
    assert add.args[1].name == "arg2_1"
    out = gm.graph.output_node()
    assert out.args[0] is add


def test_fake_mode_traces_fake_twins_and_leaves_the_inputs_alone():
    seen = []

    def fn(x):
        seen.append(type(x).__name__)
        return x.relu()

    x = tensor.randn(2)
    gm = make_fx(fn, tracing_mode="fake")(x)
    assert seen == ["FakeTensor"] and type(x) is tensor.Tensor
    make_fx(fn)(x)
    assert seen == ["FakeTensor", "Tensor"]
    tensor.testing.assert_close(gm(x), x.relu())
    assert tensor.dispatch.active_modes() == ()


def test_decompositions_of_public_ops_and_of_primitives_apply_together():
    def relu_as_where(x):
        return tensor.where(x > 0, x, tensor.zeros_like(x))

    def gelu_as_sigmoid(x):
        return x * tensor.sigmoid(1.702 * x)

    gm = make_fx(lambda t: tensor.nn.functional.gelu(t).relu(),
                 decomposition_table={tensor.ops.relu: relu_as_where,
                                      tensor.nn.functional.gelu: gelu_as_sigmoid})(
        tensor.randn(4))
    targets = [n.target.name for n in gm.graph.find_nodes(op="call_function")]
    assert "gelu" not in targets and "relu" not in targets
    assert "sigmoid" in targets and "where" in targets


def test_the_mode_is_compared_by_value():
    seen = []
    fake = "".join(["fa", "ke"])  # equal to "fake", not the same object
    make_fx(lambda x: seen.append(type(x).__name__) or x.relu(), tracing_mode=fake)(
        tensor.randn(2))
    assert seen == ["FakeTensor"]


class _Unused(tensor.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = tensor.nn.Linear(2, 2)
        self.register_buffer("output", tensor.ones(2))  # named as the output node
        self.register_buffer("arg0_1", tensor.ones(2))  # named as the placeholder

    def forward(self, x):
        return self.fc(x)


@pytest.mark.parametrize("mode", MODES)
def test_only_the_tensors_a_get_attr_reads_are_kept(mode):
    gm = make_fx(_Unused(), tracing_mode=mode)(tensor.randn(3, 2))
    assert sorted(name for name, _ in gm.named_buffers()) == []
    assert sorted(name for name, _ in gm.named_parameters()) == ["fc.bias", "fc.weight"]
