"""The conversion pass node by node, on small torch models: each converted graph against
the torch.fx graph it came from (torch read as tensor), each output against torch's, and
what each rule does with what it cannot convert."""

import copy
import operator

import numpy as np
import pytest
import torch
import torch.fx
import torch.nn.functional as F
from torch import nn

import minifx
import tensor
from minifx.convert import ConversionError, torch_to_tensor
from minifx.convert.graph_pass import GraphConverter, tensor_valued_nodes
from minifx.convert.table import conversion_table


class Mixed(nn.Module):
    """Modules (one called twice), functions with keywords, a list argument, a dtype
    argument, a method, an operator and an annotation."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor, y):
        a = self.act(self.bn(self.conv(x)))
        b = self.act(a * 2)
        c = torch.cat([a, b], dim=1).to(dtype=torch.float64)
        return F.softmax(c.flatten(1), dim=-1) + y


def _inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((2, 3, 5, 5)).astype(np.float32),
            rng.standard_normal((2, 200)).astype(np.float64))


def test_every_node_is_copied_in_order_with_its_name_kind_and_arguments():
    torch.manual_seed(0)
    model = Mixed().eval()
    converted = torch_to_tensor(model)
    theirs = torch.fx.symbolic_trace(model)
    assert str(converted.graph) == str(theirs.graph).replace("torch.", "tensor.")
    assert converted.code == theirs.code.replace("torch.", "tensor.")
    placeholder = next(iter(converted.graph.nodes))
    assert placeholder.type is tensor.Tensor  # the annotation torch.Tensor became tensor's
    assert all("stack_trace" in n.meta for n in converted.graph.nodes
               if n.op not in ("placeholder", "output"))
    (to,) = [n for n in converted.graph.nodes if n.target == "to"]
    assert to.kwargs == {"dtype": tensor.float64}
    x, y = _inputs()
    expected = model(torch.from_numpy(x), torch.from_numpy(y)).detach().numpy()
    got = converted(tensor.from_numpy(x), tensor.from_numpy(y)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)


def test_a_module_called_twice_has_one_twin_with_copied_weights():
    torch.manual_seed(0)
    model = Mixed().eval()
    converted = torch_to_tensor(model)
    assert [name for name, _ in converted.named_children()] == ["conv", "bn", "act"]
    assert type(converted.conv) is tensor.nn.Conv2d and type(converted.act) is tensor.nn.ReLU
    np.testing.assert_array_equal(converted.conv.weight.numpy(), model.conv.weight.detach().numpy())
    tracer = minifx.Tracer()
    graph = tracer.trace(model)
    converter = GraphConverter(tracer.root)
    converter.convert(graph)
    assert sorted(converter.attributes) == ["act", "bn", "conv"] and not converter.problems


class Problems(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 4)
        self.conv = nn.Conv2d(1, 1, 3, padding_mode="circular", padding=1)
        self.act = nn.ELU()

    def forward(self, x):
        h = x.to(torch.device("cpu"))
        return self.rnn(h), self.conv(h[None]), self.rnn(self.act(h))


def test_what_cannot_convert_is_noted_for_each_node_and_the_walk_goes_on():
    with pytest.raises(ConversionError) as caught:
        torch_to_tensor(Problems())
    problems = caught.value.problems
    assert caught.value.model_name == "Problems"
    assert [p.what for p in problems] == [  # each node at fault: the GRU's twice
        "an argument of to", "call_module rnn (GRU)", "call_module conv (Conv2d)",
        "call_module act (ELU)", "call_module rnn (GRU)"]
    assert problems[0].reason == "argument device(type='cpu'): tensor has no device"
    assert problems[1].reason == "tensor.nn has no GRU"
    assert problems[2].reason.startswith("tensor.nn.Conv2d refuses its settings: Conv2d: "
                                         "padding_mode 'circular' is not supported")
    assert problems[0].code == 'h = x.to(torch.device("cpu"))'
    assert problems[0].hint == GraphConverter(nn.Module()).hint("device")
    assert problems[3].reason == "tensor.nn has no ELU"
    assert problems[3].hint == "tensor has tensor.nn.GELU"  # a near name, for the class


def test_tensor_valued_nodes_are_found_by_running_copies():
    class Sizes(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(3)

        def forward(self, x):
            n = x.size(0) // 2
            return self.bn(x)[:n] * 2, n

    model = Sizes().train()
    before = model.bn.running_mean.clone()
    gm = minifx.symbolic_trace(model)
    x = torch.randn(4, 3)
    names = tensor_valued_nodes(model, gm.graph, (x,))
    assert names == {"x", "bn", "getitem", "mul"}
    assert tensor_valued_nodes(model, gm.graph, x) == names  # one input, not in a tuple
    torch.testing.assert_close(model.bn.running_mean, before)  # the model did not run
    assert model.training


def test_an_operator_on_tensors_needs_the_special_method_tensor_lacks():
    table = conversion_table()
    g = minifx.Graph()
    x, n = g.placeholder("x"), g.placeholder("n")
    nodes = [g.call_function(op, args) for op, args in [
        (operator.floordiv, (x, 2)), (operator.floordiv, (n, 2)), (operator.pow, (2, x)),
        (operator.iadd, (x, x)), (operator.add, (x, x)), (operator.rshift, (x, 1)),
        (operator.ipow, (x, 2)), (operator.floordiv, (2, x)), (copy.copy, (x,))]]
    g.output(tuple(nodes))
    converter = GraphConverter(nn.Module(), table)
    converter.tensor_nodes = {"x"}
    for node in nodes[:-1]:
        converter.check_operator(node)
    assert [(p.what, p.reason) for p in converter.problems] == [
        ("operator floordiv (__floordiv__)", "tensor.Tensor has no __floordiv__"),
        ("operator rshift (__rshift__)", "tensor.Tensor has no __rshift__"),
        # x **= 2 may fall back on __pow__; 2 // x needs x.__rfloordiv__
        ("operator floordiv (__rfloordiv__)", "tensor.Tensor has no __rfloordiv__")]
    assert converter.problems[0].hint == converter.hint("floordiv")
    converter.problems.clear()
    converter.tensor_nodes = set()  # nothing known about the operands: Python's business
    for node in nodes[:-1]:
        converter.check_operator(node)
    assert converter.problems == []
    # A function that is not torch's (copy.copy) passes as it is.
    assert converter.call_function(nodes[-1]) is copy.copy and converter.problems == []


def test_not_a_model_is_refused_and_the_users_model_is_left_as_it_was():
    with pytest.raises(TypeError, match="^torch_to_tensor converts a torch.nn.Module or a "
                       "function over torch tensors, not a int$"):
        torch_to_tensor(3)

    class Constant(nn.Module):
        def forward(self, x):
            return x + torch.tensor([1.0, 2.0])

    model = Constant()
    before = set(vars(model))
    converted = torch_to_tensor(model.eval())
    assert set(vars(model)) == before  # the trace's _tensor_constant0 went again
    assert isinstance(converted._tensor_constant0, tensor.Tensor)
    assert converted.training is False and isinstance(converted, minifx.GraphModule)
    assert type(converted).__name__ == "Constant"

    def fn(x):
        return torch.relu(x) * 2

    converted = torch_to_tensor(fn)
    np.testing.assert_allclose(converted(tensor.ones(2)).numpy(), [2.0, 2.0])
    assert type(converted).__name__ == "fn"


def test_copies_and_the_mode_of_a_twin():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)).train()
    model[1].eval()
    converted = torch_to_tensor(copy.deepcopy(model))
    assert converted.training is True
    assert converted.get_submodule("0").training and not converted.get_submodule("1").training


def test_attributes_read_by_get_attr_are_copied_once_and_must_be_tensors():
    root = nn.Module()
    root.scale = nn.Parameter(torch.full((2,), 3.0))
    root.table = {"k": 1}
    g = minifx.Graph()
    x = g.placeholder("x")
    a, b = g.get_attr("scale"), g.get_attr("scale")
    c = g.get_attr("table")
    g.output((g.call_function(operator.mul, (x, a)), b, c))
    converter = GraphConverter(root)
    converter.convert(g)
    scale = converter.attributes["scale"]
    assert isinstance(scale, tensor.nn.Parameter) and scale.numpy().tolist() == [3.0, 3.0]
    assert list(converter.attributes) == ["scale"]
    (problem,) = converter.problems
    assert (problem.what, problem.reason) == ("get_attr table", "it names a dict, not a tensor")


def test_a_twin_is_made_once_per_submodule(monkeypatch):
    from minifx.convert import graph_pass

    made = []
    real = graph_pass.make_twin
    monkeypatch.setattr(graph_pass, "make_twin", lambda m, *a: made.append(m) or real(m, *a))
    model = Mixed().eval()
    torch_to_tensor(model)
    assert made == [model.conv, model.bn, model.act]  # act is called twice


class _TorchLike:
    """A torch-like module class: its settings are constructor arguments kept as
    attributes (``c`` is not kept)."""

    def __init__(self, a, b=2, c=None, flag=False):
        self.a, self.b, self.flag = a, b, flag


class _TwinLike:
    def __init__(self, b=2):
        self.b = b


def test_a_setting_only_torch_has_is_lost_unless_it_holds_its_default():
    from minifx.convert.twins import TwinError, refuse_lost_settings

    with pytest.raises(TwinError, match=r"^tensor.nn._TwinLike has no a=5$"):
        refuse_lost_settings(_TorchLike(5), _TwinLike)  # a has no default: always lost
    lost = _TorchLike(5, b=9, flag=True)
    with pytest.raises(TwinError, match=r"^tensor.nn._TwinLike has no a=5, flag=True$"):
        refuse_lost_settings(lost, _TwinLike)  # b: the twin takes it; c: not kept

    class TwinWithA(_TwinLike):
        def __init__(self, a, b=2):
            super().__init__(b)

    refuse_lost_settings(_TorchLike(5), TwinWithA)  # flag at its default: nothing lost
    refuse_lost_settings(_TorchLike("x", flag=False), TwinWithA)


def test_a_keyword_at_torchs_default_that_tensor_lacks_is_dropped_from_the_node():
    class Pool(nn.Module):
        def forward(self, x):
            return F.max_pool2d(x, 2, return_indices=False, ceil_mode=False)

    converted = torch_to_tensor(Pool())
    (pool,) = [n for n in converted.graph.nodes if n.op == "call_function"]
    assert "return_indices" not in pool.kwargs and pool.kwargs["ceil_mode"] is False
    x = np.random.default_rng(0).standard_normal((1, 1, 4, 4)).astype(np.float32)
    np.testing.assert_array_equal(converted(tensor.from_numpy(x)).numpy(),
                                  Pool()(torch.from_numpy(x)).numpy())


def test_a_keyword_tensor_lacks_is_a_problem_on_a_method_and_off_torchs_default():
    def to_double(x):  # a method: no torch default to drop it at
        return x.to(torch.float64, non_blocking=False)

    def pool(x):  # divisor_override's default is None
        return F.avg_pool2d(x, 2, divisor_override=3)

    name = "tensor.nn.functional.avg_pool2d"
    for fn, what, reason in [
            (to_double, "call_method Tensor.to",
             "tensor's Tensor.to has no argument non_blocking="),
            (pool, f"call_function {name}", f"tensor's {name} has no argument divisor_override=")]:
        with pytest.raises(ConversionError) as info:
            torch_to_tensor(fn)
        (problem,) = info.value.problems
        assert (problem.what, problem.reason) == (what, reason)


def test_a_submodule_named_like_a_tensor_method_keeps_its_keywords():
    """Only a call_method node's keywords are checked against a Tensor method: the
    call_module ``flatten`` calls the twin of nn.Flatten, whose forward takes
    ``input=`` as torch's does (Tensor.flatten has no ``input``)."""

    class Named(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()

        def forward(self, x):
            return self.flatten(input=x)

    model = Named()
    converted = torch_to_tensor(model)
    theirs = torch.fx.symbolic_trace(model)
    assert str(converted.graph) == str(theirs.graph)  # kwargs = {input: %x} kept
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(converted(tensor.from_numpy(x)).numpy(),
                                  model(torch.from_numpy(x)).numpy())


def test_only_what_the_trace_added_is_taken_off_the_users_model():
    class Pending(nn.Module):
        """A shift queued for the next call only: forward deletes it once used."""

        def __init__(self):
            super().__init__()
            self.pending = 3.0

        def forward(self, x):
            if hasattr(self, "pending"):
                x = x + self.pending
                del self.pending
            return x * torch.tensor([1.0, 2.0])

    model, theirs = Pending(), Pending()
    converted = torch_to_tensor(model)
    torch.fx.symbolic_trace(theirs)  # stores _tensor_constant0 on it, deletes pending
    assert "pending" not in vars(theirs) and "_tensor_constant0" in vars(theirs)
    assert set(vars(model)) == set(vars(theirs)) - {"_tensor_constant0"}
    np.testing.assert_allclose(converted(tensor.ones(2)).numpy(), [4.0, 8.0])


def test_a_buffer_sliced_in_forward_stays_a_buffer_of_the_converted_model():
    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mask", torch.arange(4.0))

        def forward(self, x):
            return x + self.mask[:2]

    model = Masked()
    converted = torch_to_tensor(model)
    tracer = torch.fx.Tracer()
    tracer.proxy_buffer_attributes = True  # else the slice is frozen as _tensor_constant0
    assert str(converted.graph) == str(tracer.trace(model))  # get_attr mask, then getitem
    np.testing.assert_array_equal(converted(tensor.ones(2)).numpy(), [1.0, 2.0])
