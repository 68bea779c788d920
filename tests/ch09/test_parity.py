"""The parity zoo: minifx and torch.fx trace each model to the same graph, code and outputs."""

import copy

import pytest
import torch
import torch.fx

import minifx
from minifx.compare import output_difference
from tests.ch09.zoo import ZOO


def test_the_zoo_is_big_enough():
    assert len(ZOO) >= 30


def trace_both(name):
    root, inputs = ZOO[name]()
    ours = minifx.symbolic_trace(copy.deepcopy(root) if isinstance(root, torch.nn.Module) else root)
    theirs = torch.fx.symbolic_trace(root)
    return root, inputs, ours, theirs


@pytest.mark.parametrize("name", sorted(ZOO))
def test_same_graph_text(name):
    _, _, ours, theirs = trace_both(name)
    assert str(ours.graph) == str(theirs.graph)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_same_code(name):
    _, _, ours, theirs = trace_both(name)
    assert ours.code == theirs.code


@pytest.mark.parametrize("name", sorted(ZOO))
def test_same_module_printout(name):
    _, _, ours, theirs = trace_both(name)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_same_outputs(name):
    root, inputs, ours, theirs = trace_both(name)
    ours.graph.lint()
    expected = root(*copy.deepcopy(inputs))
    assert output_difference(ours(*copy.deepcopy(inputs)), expected) is None
    assert output_difference(theirs(*copy.deepcopy(inputs)), expected) is None


@pytest.mark.parametrize("name", ["my_module", "resnet18", "direct_buffers", "function"])
def test_graph_module_is_a_torch_module(name):
    root, inputs, ours, _ = trace_both(name)
    assert isinstance(ours, torch.nn.Module)
    assert isinstance(ours, minifx.GraphModule)
    torch.testing.assert_close(ours(*inputs), root(*inputs))


def test_parameters_state_dict_and_eval():
    root, inputs, ours, theirs = trace_both("resnet18")
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in root.state_dict().items():
        torch.testing.assert_close(ours.state_dict()[key], value)
    ours.train()
    assert all(m.training for m in ours.modules())
    ours.eval()
    assert not any(m.training for m in ours.modules())
    torch.testing.assert_close(ours(*inputs), root(*inputs))


def test_load_state_dict_round_trip():
    root, inputs, ours, _ = trace_both("convnet")
    fresh = minifx.symbolic_trace(ZOO["convnet"]()[0])
    with torch.no_grad():
        for p in fresh.parameters():
            p.add_(1.0)
    fresh.load_state_dict(ours.state_dict())
    torch.testing.assert_close(fresh(*inputs), root(*inputs))


def test_deepcopy_and_pickle_of_a_torch_graph_module():
    import pickle

    root, inputs, ours, _ = trace_both("attention")
    for clone in (copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert isinstance(clone, torch.nn.Module)
        assert clone.code == ours.code
        torch.testing.assert_close(clone(*inputs), root(*inputs))
