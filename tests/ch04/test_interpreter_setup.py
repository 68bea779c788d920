"""What an Interpreter holds before it runs, and what its output step gives, as torch.fx."""

import operator

import pytest
import torch
import torch.fx

import minifx
import tensor
from tests.ch04.ch04_models import build_mlp, build_residual, twins


def _interpreters(build, **kwargs):
    ours, theirs = twins(build)
    return (minifx.Interpreter(minifx.symbolic_trace(ours), **kwargs),
            torch.fx.Interpreter(torch.fx.symbolic_trace(theirs), **kwargs))


def _table(interp):
    return {user.name: [n.name for n in freed] for user, freed in interp.user_to_last_uses.items()}


@pytest.mark.parametrize("build", [build_mlp, build_residual], ids=["mlp", "residual"])
def test_a_new_interpreter_holds_what_torch_fx_s_holds(build):
    ours, theirs = _interpreters(build)
    assert ours.module is not None and ours.graph is ours.module.graph
    assert list(ours.submodules) == list(theirs.submodules)
    assert all(ours.submodules[name] is module for name, module in ours.module.named_modules())
    assert ours.env == theirs.env == {}
    assert ours.name == theirs.name == "Interpreter"
    assert ours.garbage_collect_values is theirs.garbage_collect_values is True
    assert ours.extra_traceback is theirs.extra_traceback is True
    assert _table(ours) == _table(theirs)


def test_without_garbage_collection_there_is_no_last_use_table_like_torch_fx():
    ours, theirs = _interpreters(build_mlp, garbage_collect_values=False)
    assert ours.garbage_collect_values is theirs.garbage_collect_values is False
    assert not hasattr(theirs, "user_to_last_uses")
    assert not hasattr(ours, "user_to_last_uses")


def test_the_given_graph_runs_and_its_own_last_uses_are_kept():
    ours, _ = twins(build_mlp)
    gm = minifx.symbolic_trace(ours)
    graph = minifx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_module("head", (graph.call_module("fc2", (x,)),)))
    interp = minifx.Interpreter(gm, graph=graph)
    assert interp.graph is graph and interp.module is gm
    assert _table(interp) == {"fc2": ["x"], "head": ["fc2"], "output": ["head"]}


def test_the_submodules_are_taken_when_the_interpreter_is_made():
    ours, _ = twins(build_mlp)
    gm = minifx.symbolic_trace(ours)
    interp = minifx.Interpreter(gm)
    gm.add_submodule("late", tensor.nn.ReLU())
    assert "late" not in interp.submodules and interp.submodules["fc1"] is gm.fc1
    assert isinstance(interp.submodules, dict)


def test_the_last_uses_are_computed_once_not_per_run(monkeypatch):
    ours, _ = twins(build_mlp)
    gm = minifx.symbolic_trace(ours)
    calls = []
    real = minifx.interpreter.last_uses

    def counting(graph):
        calls.append(graph)
        return real(graph)

    monkeypatch.setattr(minifx.interpreter, "last_uses", counting)
    interp = minifx.Interpreter(gm)
    x = tensor.randn(2, 8)
    interp.run(x)
    interp.run(x)
    assert calls == [gm.graph]


@pytest.mark.parametrize("fx", [minifx, torch.fx], ids=["minifx", "torch.fx"])
@pytest.mark.parametrize("value", [(1, 2), {"a": 1}, 5, [3]], ids=["tuple", "dict", "int", "list"])
def test_output_gives_its_argument_as_it_is(fx, value):
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(operator.getitem, (x, 0)))
    interp = fx.Interpreter(fx.GraphModule(torch.nn.Module() if fx is torch.fx else {}, g))
    assert interp.output("output", (value,), {}) is value
    assert interp.output("output", (value, "more"), {}) is value  # the first, always
    assert interp.run([value]) is value
