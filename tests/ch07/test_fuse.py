"""Conv+BN fusion: minifx's fuse against the unfused model and against torch.fx's fuse."""

import copy

import numpy as np
import pytest
import torch
import torch.fx
from torch.fx.experimental.optimization import fuse as torch_fx_fuse

import minifx
import tensor
import tensor.nn as nn
from minifx.experimental.optimization import fuse, matches_module_pattern, replace_node_module
from tensor.testing import assert_close
from tests.ch07.ch07_models import randomize_batchnorms, twins


@pytest.fixture(scope="module")
def resnets():
    """ResNet-18 (full widths) as a tensor model and its torch twin, in eval mode."""
    return twins(width=64)


@pytest.fixture(scope="module")
def image():
    return np.random.default_rng(1).standard_normal((2, 3, 32, 32)).astype(np.float32)


def batchnorm_nodes(gm, bn_type):
    modules = dict(gm.named_modules())
    return [n for n in gm.graph.nodes
            if n.op == "call_module" and isinstance(modules[n.target], bn_type)]


def test_fused_tensor_resnet18_computes_the_same(resnets, image):
    ours, _ = resnets
    fused = fuse(ours)
    assert isinstance(fused, minifx.GraphModule) and isinstance(fused, nn.Module)
    assert not batchnorm_nodes(fused, nn.BatchNorm2d)
    assert not any(isinstance(m, nn.BatchNorm2d) for m in fused.modules())
    x = tensor.tensor(image)
    assert_close(fused(x), ours(x), rtol=1e-4, atol=1e-4)
    # The BatchNorms really did something: the model is not the identity on them.
    assert float(ours.bn1.running_var.numpy().std()) > 0.1


def test_fused_tensor_resnet18_graph_is_torch_fx_graph(resnets):
    ours, theirs = resnets
    expected = str(torch_fx_fuse(theirs).graph).replace("torch.", "tensor.")
    assert str(fuse(ours).graph) == expected


def test_fused_torch_resnet18_matches_torch_fx(resnets, image):
    _, theirs = resnets
    ours_fused, torch_fused = fuse(theirs), torch_fx_fuse(theirs)
    assert isinstance(ours_fused, torch.nn.Module)
    assert str(ours_fused.graph) == str(torch_fused.graph)
    assert ours_fused.code == torch_fused.code
    assert not batchnorm_nodes(ours_fused, torch.nn.BatchNorm2d)
    x = torch.from_numpy(image)
    with torch.no_grad():
        torch.testing.assert_close(ours_fused(x), theirs(x), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(ours_fused(x), torch_fused(x))


def test_fused_tensor_and_torch_resnet18_agree(resnets, image):
    ours, theirs = resnets
    with torch.no_grad():
        expected = theirs(torch.from_numpy(image)).numpy()
    np.testing.assert_allclose(fuse(ours)(tensor.tensor(image)).numpy(), expected,
                               rtol=1e-4, atol=1e-4)


def test_fuse_copies_unless_inplace():
    model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU()).eval()
    randomize_batchnorms(model)
    before = copy.deepcopy(model.state_dict())
    fused = fuse(model)
    assert isinstance(model[1], nn.BatchNorm2d)  # untouched
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key].numpy())
    assert fused.get_submodule("2") is not model[2]  # a deep copy

    fused_inplace = fuse(model, inplace=True)
    # No copy: the result shares the modules it did not replace (as torch.fx's fuse).
    assert fused_inplace.get_submodule("2") is model[2]
    assert fused_inplace.get_submodule("0") is not model[0]  # the fused conv is new
    x = tensor.randn(1, 2, 5, 5)
    assert_close(fused_inplace(x), fused(x))
    assert_close(fused(x), model(x), rtol=1e-5, atol=1e-5)


class ConvUsedTwice(nn.Module):
    """The conv's output feeds the BatchNorm and the result: folding would change the sum."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 1)
        self.bn = nn.BatchNorm2d(2)

    def forward(self, x):
        y = self.conv(x)
        return self.bn(y) + y


class TorchConvUsedTwice(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 2, 1)
        self.bn = torch.nn.BatchNorm2d(2)

    def forward(self, x):
        y = self.conv(x)
        return self.bn(y) + y


def test_conv_read_elsewhere_is_not_fused():
    model = ConvUsedTwice().eval()
    randomize_batchnorms(model)
    fused = fuse(model)
    assert [n.target for n in batchnorm_nodes(fused, nn.BatchNorm2d)] == ["bn"]
    x = tensor.randn(1, 2, 3, 3)
    assert_close(fused(x), model(x))
    twin = torch.fx.symbolic_trace(model_twin := TorchConvUsedTwice().eval())
    assert str(fused.graph) == str(torch_fx_fuse(model_twin).graph).replace("torch.", "tensor.")
    assert len(list(twin.graph.nodes)) == len(list(fused.graph.nodes))


def test_batchnorm_without_running_stats_is_left_alone():
    for lib in (nn, torch.nn):
        model = lib.Sequential(lib.Conv2d(2, 2, 1), lib.BatchNorm2d(2, track_running_stats=False))
        fused = fuse(model.eval())
        if lib is torch.nn:
            assert str(fused.graph) == str(torch_fx_fuse(model).graph)
        assert len(batchnorm_nodes(fused, lib.BatchNorm2d)) == 1


def test_training_mode_is_refused_as_torch_fx_does():
    for lib in (nn, torch.nn):
        model = lib.Sequential(lib.Conv2d(2, 2, 1), lib.BatchNorm2d(2))  # still training
        with pytest.raises(AssertionError, match="Fusion only for eval") as ours:
            fuse(model)
        assert "model.eval()" in str(ours.value) and "'0'" not in str(ours.value)
        assert "0 (Conv2d) and 1 (BatchNorm2d)" in str(ours.value)
        model[1].eval()  # one module of the pair in training mode is enough to refuse
        with pytest.raises(AssertionError, match="must be in eval mode: Fusion only for eval"):
            fuse(model)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        torch_fx_fuse(torch.nn.Sequential(torch.nn.Conv2d(2, 2, 1), torch.nn.BatchNorm2d(2)))


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_torch_conv_nd_and_linear_pairs_match_torch_fx(dims):
    conv = getattr(torch.nn, f"Conv{dims}d")
    bn = getattr(torch.nn, f"BatchNorm{dims}d")
    model = torch.nn.Sequential(conv(2, 3, 1), bn(3), torch.nn.ReLU(),
                                torch.nn.Flatten(), torch.nn.Linear(3 * 4 ** dims, 5),
                                torch.nn.BatchNorm1d(5))
    randomize_batchnorms(model)
    model.eval()
    ours, theirs = fuse(model), torch_fx_fuse(model)
    assert str(ours.graph) == str(theirs.graph)
    assert [type(m).__name__ for m in ours.modules()] == \
        [type(m).__name__ for m in theirs.modules()]
    x = torch.randn(2, 2, *[4] * dims)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), model(x), rtol=1e-4, atol=1e-4)


def test_no_trace_uses_the_graph_module_as_it_is():
    model = nn.Sequential(nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)).eval()
    traced = minifx.symbolic_trace(model)
    traced.graph.lint()
    fused = fuse(traced, no_trace=True)
    assert [n.op for n in fused.graph.nodes] == ["placeholder", "call_module", "output"]
    # In place too, the rewrite edits a copy of the graph: the given GraphModule keeps its
    # graph, as with torch.fx's fuse.
    fuse(traced, inplace=True, no_trace=True)
    torch_traced = torch.fx.symbolic_trace(
        torch.nn.Sequential(torch.nn.Conv2d(2, 2, 1), torch.nn.BatchNorm2d(2)).eval())
    torch_fx_fuse(torch_traced, inplace=True, no_trace=True)
    assert str(traced.graph) == str(torch_traced.graph)
    assert [n.op for n in traced.graph.nodes] == ["placeholder", *["call_module"] * 2, "output"]


def test_helpers_on_a_traced_graph():
    model = nn.Sequential(nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2), nn.ReLU()).eval()
    gm = minifx.symbolic_trace(model)
    modules = dict(gm.named_modules())
    conv_node, bn_node, relu_node = [n for n in gm.graph.nodes if n.op == "call_module"]
    assert matches_module_pattern((nn.Conv2d, nn.BatchNorm2d), bn_node, modules)
    assert not matches_module_pattern((nn.Conv2d, nn.BatchNorm2d), relu_node, modules)
    assert not matches_module_pattern((nn.Conv2d, nn.BatchNorm2d), conv_node, modules)
    assert not matches_module_pattern((nn.Conv2d, nn.BatchNorm2d), gm.graph.output_node(), {})
    new_conv = nn.Conv2d(2, 2, 1)
    replace_node_module(conv_node, modules, new_conv)
    assert gm.get_submodule("0") is new_conv and modules["0"] is new_conv
    relu_fn = minifx.symbolic_trace(relu_of).graph.find_nodes(op="call_function")[0]
    with pytest.raises(TypeError, match="replace_node_module"):
        replace_node_module(relu_fn, modules, new_conv)


def relu_of(x):
    return tensor.relu(x)


def test_subclass_of_conv_does_not_match():
    class MyConv(nn.Conv2d):
        pass

    class LeafTracer(minifx.Tracer):  # keeps MyConv a call_module node, as Conv2d is
        def is_leaf_module(self, m, qualname):
            return isinstance(m, MyConv) or super().is_leaf_module(m, qualname)

    model = nn.Sequential(MyConv(2, 2, 1), nn.BatchNorm2d(2)).eval()
    gm = minifx.GraphModule(model, LeafTracer().trace(model))
    modules = dict(gm.named_modules())
    conv_node, bn_node = [n for n in gm.graph.nodes if n.op == "call_module"]
    assert type(modules[conv_node.target]) is MyConv
    assert not matches_module_pattern((nn.Conv2d, nn.BatchNorm2d), bn_node, modules)
    assert matches_module_pattern((MyConv, nn.BatchNorm2d), bn_node, modules)
    assert len(batchnorm_nodes(fuse(gm, no_trace=True), nn.BatchNorm2d)) == 1
