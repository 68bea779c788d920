"""_LazyGraphModule: the code is made on first use, and is the code an eager module has.

make_fx returns one. The oracle for the text is GraphModule itself (the same
root and graph, compiled at once); the oracle for when the code is made is
torch.fx's own _LazyGraphModule, stepped through the same sequence.
"""

import copy
import operator
import pickle

import pytest
import torch
import torch.fx
from torch.fx._lazy_graph_module import _LazyGraphModule as TorchLazy

import minifx
import tensor
from minifx import GraphModule
from minifx._lazy_graph_module import (
    _LazyGraphModule,
    _make_graph_module,
    _use_lazy_graph_module,
)
from minifx.experimental.proxy_tensor import make_fx


def block():
    tensor.manual_seed(0)
    return tensor.nn.Sequential(tensor.nn.Linear(4, 3), tensor.nn.ReLU(), tensor.nn.Linear(3, 2))


def traced():
    model = block()
    x = tensor.randn(5, 4)
    return model, x, make_fx(model)(x)


def test_make_fx_returns_a_lazy_module_whose_code_is_the_eager_modules():
    model, x, gm = traced()
    assert isinstance(gm, _LazyGraphModule) and isinstance(gm, GraphModule)
    assert gm._needs_recompile()
    readable = gm.print_readable(print_output=False)  # from the graph: compiles nothing
    assert gm._needs_recompile()
    eager = GraphModule(gm, gm.graph, "Sequential")
    assert gm.code == eager.code and not gm._needs_recompile()
    assert readable == eager.print_readable(print_output=False)
    assert str(gm) == str(eager)
    tensor.testing.assert_close(gm(x), model(x))


def test_the_first_call_compiles_and_runs_once():
    model, x, gm = traced()
    calls = []
    gm.register_forward_hook(lambda module, args, out: calls.append(out))
    tensor.testing.assert_close(gm(x), model(x))
    assert len(calls) == 1 and not gm._needs_recompile()


def test_when_the_code_is_made_follows_torch():
    """The same steps on torch's lazy module and ours: made, code read, recompiled, called."""
    theirs = TorchLazy.from_graphmodule(torch.fx.symbolic_trace(torch.nn.Linear(4, 3)))
    _, x, ours = traced()
    seen = []
    for gm, arg in ((theirs, torch.randn(2, 4)), (ours, x)):
        states = [gm._needs_recompile()]
        assert "def forward" in gm.code
        states.append(gm._needs_recompile())
        gm.recompile()
        states.append(gm._needs_recompile())
        gm(arg)
        states.append(gm._needs_recompile())
        seen.append(states)
    assert seen[0] == seen[1] == [True, False, True, False]
    assert theirs.recompile() is None and ours.recompile() is None


def test_an_edited_graph_gives_new_code_after_recompile():
    model, x, gm = traced()
    assert "relu" in gm.code
    relu = gm.graph.find_nodes(op="call_function", target=tensor.ops.relu)[0]
    with gm.graph.inserting_after(relu):
        doubled = gm.graph.call_function(operator.mul, (relu, 2.0))
    relu.replace_all_uses_with(doubled, delete_user_cb=lambda user: user is not doubled)
    gm.recompile()
    assert gm._needs_recompile()
    assert "mul = relu * 2.0" in gm.code
    expected = model[2](model[1](model[0](x)) * 2.0)
    tensor.testing.assert_close(gm(x), expected)


def test_reading_forward_compiles_so_tracing_again_works():
    model = block()
    eager = minifx.symbolic_trace(model)
    lazy = _LazyGraphModule.from_graphmodule(minifx.symbolic_trace(model))
    assert lazy._needs_recompile()
    assert minifx.symbolic_trace(lazy).code == minifx.symbolic_trace(eager).code
    x = tensor.randn(5, 4)
    tensor.testing.assert_close(minifx.compile(_LazyGraphModule.from_graphmodule(eager))(x),
                                model(x))


@pytest.mark.parametrize("copier", [copy.deepcopy, copy.copy,
                                    lambda gm: pickle.loads(pickle.dumps(gm))])
def test_copies_stay_lazy_and_compute_the_same(copier):
    model, x, gm = traced()
    twin = copier(gm)
    assert isinstance(twin, _LazyGraphModule) and twin._needs_recompile()
    tensor.testing.assert_close(twin(x), model(x))
    assert gm._needs_recompile()  # the original is untouched
    assert twin.code == gm.code


def test_the_switch_picks_the_class():
    model = block()
    graph = minifx.symbolic_trace(model).graph
    assert not isinstance(_make_graph_module(model, graph), _LazyGraphModule)
    with _use_lazy_graph_module(True):
        assert isinstance(_make_graph_module(model, graph), _LazyGraphModule)
    assert not isinstance(_make_graph_module(model, graph), _LazyGraphModule)
    assert isinstance(_make_graph_module(model, graph, graph_module_cls=_LazyGraphModule),
                      _LazyGraphModule)
