"""The later chapters' tools on torch GraphModules, checked against torch.fx's own."""

import copy

import pytest
import torch
import torch.fx
import torch.fx.experimental.optimization
import torch.fx.passes.shape_prop

import minifx
import minifx.experimental.optimization
import minifx.passes.shape_prop
from minifx.compare import output_difference
from tests.ch09.zoo import ZOO

MODELS = ["my_module", "resnet18", "attention", "transformer_block", "size_and_shape"]


def both(name):
    root, inputs = ZOO[name]()
    return root, inputs, minifx.symbolic_trace(copy.deepcopy(root)), torch.fx.symbolic_trace(root)


@pytest.mark.parametrize("name", MODELS)
def test_interpreter_runs_a_torch_graph_module(name):
    root, inputs, ours, _ = both(name)
    assert output_difference(minifx.Interpreter(ours).run(*inputs), root(*inputs)) is None


@pytest.mark.parametrize("name", MODELS)
def test_transformer_copies_as_torch_fx_does(name):
    _, inputs, ours, theirs = both(name)
    a, b = minifx.Transformer(ours).transform(), torch.fx.Transformer(theirs).transform()
    assert isinstance(a, torch.nn.Module)
    assert str(a.graph) == str(b.graph)
    assert a.code == b.code
    assert output_difference(a(*inputs), b(*inputs)) is None


@pytest.mark.parametrize("name", MODELS)
def test_shape_prop_gives_torch_fx_tensor_meta(name):
    _, inputs, ours, theirs = both(name)
    minifx.passes.shape_prop.ShapeProp(ours).propagate(*inputs)
    torch.fx.passes.shape_prop.ShapeProp(theirs).propagate(*inputs)
    for a, b in zip(ours.graph.nodes, theirs.graph.nodes):
        if "tensor_meta" not in b.meta:
            continue
        if isinstance(b.meta["tensor_meta"], torch.fx.passes.shape_prop.TensorMetadata):
            mine, reference = a.meta["tensor_meta"], b.meta["tensor_meta"]
            assert isinstance(mine.shape, torch.Size)
            assert (mine.shape, mine.dtype, mine.stride) == (
                reference.shape,
                reference.dtype,
                reference.stride,
            ), a.name


def test_conv_bn_fusion_matches_torch_fx():
    root, inputs = ZOO["resnet18"]()
    ours = minifx.experimental.optimization.fuse(copy.deepcopy(root))
    theirs = torch.fx.experimental.optimization.fuse(copy.deepcopy(root))
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in ours.modules())
    torch.testing.assert_close(ours(*inputs), root(*inputs), rtol=1e-4, atol=1e-5)


class TwoCats(torch.nn.Module):
    def forward(self, x, w1, w2):
        m1 = torch.cat([w1, w2]).sum()
        m2 = torch.cat([w1, w2]).sum()
        return x + torch.max(m1) + torch.max(m2)


def cat_sum(w1, w2):
    return torch.cat([w1, w2]).sum()


def stacked(w1, w2):
    return torch.stack([w1, w2])


def test_replace_pattern_matches_torch_fx():
    import torch.fx.subgraph_rewriter

    import minifx.subgraph_rewriter

    ours, theirs = minifx.symbolic_trace(TwoCats()), torch.fx.symbolic_trace(TwoCats())
    found = minifx.subgraph_rewriter.replace_pattern(ours, cat_sum, stacked)
    expected = torch.fx.subgraph_rewriter.replace_pattern(theirs, cat_sum, stacked)
    assert len(found) == len(expected) == 2
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    x, w1, w2 = torch.randn(3), torch.randn(3), torch.randn(3)
    torch.testing.assert_close(ours(x, w1, w2), theirs(x, w1, w2))


def test_drawer_draws_a_torch_graph_module():
    from minifx.passes.graph_drawer import FxGraphDrawer

    _, _, ours, _ = both("my_module")
    dot = FxGraphDrawer(ours, "my_module").get_dot_graph().to_string()
    for node in ours.graph.nodes:
        assert node.name in dot
