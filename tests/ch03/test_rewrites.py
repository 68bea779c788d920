"""The traversal pattern on traced tensor modules: trace, rewrite, lint, compare with eager.

The same rewrites run on torch modules through torch.fx, and the graphs agree.
"""

import numpy as np
import torch
import torch.fx as tfx

import minifx
import tensor
import tensor.nn as nn


def same(a, b):
    np.testing.assert_allclose(np.asarray(a.numpy()), np.asarray(b.numpy()), rtol=1e-6)


def add_to_mul(model, fx, lib):
    """Seed 003: every call of lib.add becomes lib.mul."""
    graph = fx.Tracer().trace(model)
    for node in graph.nodes:
        if node.op == "call_function" and node.target == lib.add:
            node.target = lib.mul
    graph.lint()
    return fx.GraphModule(model, graph)


def test_add_to_mul():
    class M(nn.Module):
        def forward(self, x, y):
            return tensor.add(x, y)

    class TM(torch.nn.Module):
        def forward(self, x, y):
            return torch.add(x, y)

    gm = add_to_mul(M(), minifx, tensor)
    x, y = tensor.randn(3), tensor.randn(3)
    same(gm(x, y), x * y)
    theirs = add_to_mul(TM(), tfx, torch)
    assert str(gm.graph) == str(theirs.graph).replace("torch", "tensor")
    assert gm.code == theirs.code.replace("torch", "tensor")


def add_to_bitwise_and(gm, fx, lib):
    """Seed 001: insert a bitwise_and after each add, reroute the users, erase the add."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == lib.add:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(lib.bitwise_and, node.args, node.kwargs)
            node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm


def test_add_to_bitwise_and():
    class M(nn.Module):
        def forward(self, x, y):
            return tensor.add(x, y) * 2

    class TM(torch.nn.Module):
        def forward(self, x, y):
            return torch.add(x, y) * 2

    gm = add_to_bitwise_and(minifx.symbolic_trace(M()), minifx, tensor)
    x, y = tensor.tensor([6, 5, 3]), tensor.tensor([3, 4, 1])
    assert gm(x, y).tolist() == [4, 8, 2]
    theirs = add_to_bitwise_and(tfx.symbolic_trace(TM()), tfx, torch)
    assert str(gm.graph) == str(theirs.graph).replace("torch", "tensor")
    assert gm.code == theirs.code.replace("torch", "tensor")


def decompose(model, fx, lib):
    """Seed 003: relu becomes (x > 0) * x, traced through Proxies into a new graph."""
    rules = {lib.nn.functional.relu: lambda x: (x > 0) * x}
    graph = fx.Tracer().trace(model)
    new_graph = fx.Graph()
    env = {}
    tracer = fx.proxy.GraphAppendingTracer(new_graph)
    for node in graph.nodes:
        if node.op == "call_function" and node.target in rules:
            proxy_args = [fx.Proxy(env[a.name], tracer) if isinstance(a, fx.Node) else a
                          for a in node.args]
            env[node.name] = rules[node.target](*proxy_args).node
        else:
            env[node.name] = new_graph.node_copy(node, lambda a: env[a.name])
    new_graph.lint()
    return fx.GraphModule(model, new_graph)


def test_relu_decomposition():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(3, 10)

        def forward(self, x):
            return nn.functional.relu(self.linear(x))

    class TM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 10)

        def forward(self, x):
            return torch.nn.functional.relu(self.linear(x))

    model = M()
    gm = decompose(model, minifx, tensor)
    x = tensor.randn(4, 3)
    same(gm(x), nn.functional.relu(model.linear(x)))
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [
        __import__("operator").gt, __import__("operator").mul]
    theirs = decompose(TM(), tfx, torch)
    assert gm.code == theirs.code


def test_trace_lint_compare_with_eager():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 4)
            self.scale = nn.Parameter(tensor.ones(4))

        def forward(self, x):
            h = tensor.sigmoid(self.fc1(x))
            return self.fc2(h).clamp(min=-1.0, max=1.0) * self.scale + x[:, :4]

    model = Block()
    gm = minifx.symbolic_trace(model)
    gm.graph.lint()
    x = tensor.randn(2, 4)
    same(gm(x), model(x))
