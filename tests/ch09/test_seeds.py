"""The seed examples of chapters 1, 2, 3 and 6, in their torch form, through minifx and torch.fx.

Each example is written once as a function of ``fx`` (the module that plays
torch.fx) and returns what it printed; the test runs it with ``minifx`` and
with ``torch.fx`` and asks for the same text. Nothing is compared against a
hand-written string: torch.fx is the oracle.
"""

import contextlib
import io
import operator

import pytest
import torch
import torch.fx
import torch.nn.functional as F

import minifx
from tests.ch09.zoo import MyModule

BOTH = pytest.mark.parametrize("fx", [minifx, torch.fx], ids=["minifx", "torch.fx"])


def printed(example, fx):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        example(fx)
    return buffer.getvalue()


def same_printout(example):
    ours, theirs = printed(example, minifx), printed(example, torch.fx)
    assert ours == theirs
    return ours


# Chapter 1: seed 002's MyModule, traced, its graph and its code printed.
def first_example(fx):
    torch.manual_seed(0)
    module = MyModule()
    symbolic_traced = fx.symbolic_trace(module)
    print(symbolic_traced.graph)
    print(symbolic_traced.code)
    x = torch.rand(3, 4)
    torch.testing.assert_close(symbolic_traced(x), module(x))


def test_first_example_prints_as_torch_fx():
    text = same_printout(first_example)
    assert "call_method[target=clamp](args = (%linear,), kwargs = {min: 0.0, max: 1.0})" in text


@BOTH
def test_first_example_graph_module_is_an_nn_module(fx):
    gm = fx.symbolic_trace(MyModule())
    assert isinstance(gm, torch.nn.Module)
    assert [name for name, _ in gm.named_parameters()] == ["param", "linear.weight", "linear.bias"]


# Chapter 2: symbolic_trace(m) is GraphModule(m, Tracer().trace(m)).
def trace_by_hand(fx):
    torch.manual_seed(0)
    m = MyModule()
    gm = fx.GraphModule(m, fx.Tracer().trace(m))
    print(gm.code)
    print(gm.graph)


def test_graph_module_from_a_tracer_matches_symbolic_trace():
    text = same_printout(trace_by_hand)
    assert text.split("graph():")[0] == minifx.symbolic_trace(MyModule()).code + "\n"


# Chapter 2: a custom Tracer, its hooks logged.
class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.factor = torch.nn.Parameter(torch.tensor(2.0))

    def forward(self, x):
        return x * self.factor


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = Scale()
        self.linear = torch.nn.Linear(4, 4)
        self.bias = torch.nn.Parameter(torch.zeros(4))

    def forward(self, x):
        return torch.relu(self.linear(self.scale(x)) + self.bias)


def custom_tracer(fx):
    class LoggingTracer(fx.Tracer):
        def is_leaf_module(self, m, module_qualified_name):
            return isinstance(m, Scale) or super().is_leaf_module(m, module_qualified_name)

        def call_module(self, m, forward, args, kwargs):
            print("call_module", self.path_of_module(m))
            return super().call_module(m, forward, args, kwargs)

        def getattr(self, attr, attr_val, parameter_proxy_cache):
            print("getattr", attr)
            return super().getattr(attr, attr_val, parameter_proxy_cache)

        def create_args_for_root(self, root_fn, is_module, concrete_args=None):
            fn, args = super().create_args_for_root(root_fn, is_module, concrete_args)
            print("create_args_for_root", [type(a).__name__ for a in args])
            return fn, args

        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                         proxy_factory_fn=None):
            proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                         proxy_factory_fn)
            print("create_proxy", kind, proxy.node.name)
            return proxy

        def create_arg(self, a):
            arg = super().create_arg(a)
            if isinstance(a, torch.nn.Parameter):
                print("create_arg parameter ->", arg)
            return arg

        def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
            node = super().create_node(kind, target, args, kwargs, name, type_expr)
            node.meta["tag"] = f"{kind}:{node.name}"
            return node

    torch.manual_seed(0)
    net = Net()
    tracer = LoggingTracer()
    graph = tracer.trace(net)
    print(graph)
    print([node.meta["tag"] for node in graph.nodes])
    print(tracer.root is net, tracer.graph is graph)
    gm = fx.GraphModule(tracer.root, graph)
    print(gm.code)
    x = torch.randn(2, 4)
    torch.testing.assert_close(gm(x), net(x))


def test_custom_tracer_hooks_run_as_in_torch_fx():
    text = same_printout(custom_tracer)
    assert "call_module scale" in text
    assert "call_module[target=scale]" in text


# Chapter 3: seed 003's transform, every torch.add becomes torch.mul.
class AddModule(torch.nn.Module):
    def forward(self, x, y):
        return torch.add(x, y)


def add_to_mul(fx):
    def transform(m, tracer_class=fx.Tracer):
        graph = tracer_class().trace(m)
        for node in graph.nodes:
            if node.op == "call_function":
                if node.target == torch.add:
                    node.target = torch.mul
        graph.lint()
        return fx.GraphModule(m, graph)

    m = transform(AddModule())
    print(m.graph)
    print(m.code)
    x, y = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(m(x, y), x * y)


def test_add_to_mul():
    text = same_printout(add_to_mul)
    assert "torch.mul(x, y)" in text


# Chapter 3: seed 001's traversal pattern, every add becomes bitwise_and.
class ThreeAdds(torch.nn.Module):
    def forward(self, x, y):
        return x + y, torch.add(x, y), x.add(y)


def add_to_bitwise_and(fx):
    traced = fx.symbolic_trace(ThreeAdds())
    patterns = {operator.add, torch.add, "add"}
    for n in traced.graph.nodes:
        if any(n.target == pattern for pattern in patterns):
            with traced.graph.inserting_after(n):
                new_node = traced.graph.call_function(torch.bitwise_and, n.args, n.kwargs)
                n.replace_all_uses_with(new_node)
            traced.graph.erase_node(n)
    traced.recompile()
    print(traced.graph)
    print(traced.code)
    x, y = torch.tensor([1, 2, 3]), torch.tensor([3, 3, 1])
    for out in traced(x, y):
        torch.testing.assert_close(out, x & y)


def test_add_to_bitwise_and():
    text = same_printout(add_to_bitwise_and)
    assert text.count("torch.bitwise_and") == 6


# Chapter 3: seed 003's relu decomposition through GraphAppendingTracer.
class LinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 10)

    def forward(self, x):
        return torch.nn.functional.relu(self.linear(x))


def relu_decomposition(x):
    return (x > 0) * x


def decomposition(fx):
    decomposition_rules = {F.relu: relu_decomposition}

    def decompose(model, tracer_class=fx.Tracer):
        graph = tracer_class().trace(model)
        new_graph = fx.Graph()
        env = {}
        tracer = fx.proxy.GraphAppendingTracer(new_graph)
        for node in graph.nodes:
            if node.op == "call_function" and node.target in decomposition_rules:
                proxy_args = [
                    fx.Proxy(env[x.name], tracer) if isinstance(x, fx.Node) else x
                    for x in node.args
                ]
                output_proxy = decomposition_rules[node.target](*proxy_args)
                new_node = output_proxy.node
                env[node.name] = new_node
            else:
                new_node = new_graph.node_copy(node, lambda x: env[x.name])
                env[node.name] = new_node
        return fx.GraphModule(model, new_graph)

    torch.manual_seed(0)
    model = LinearRelu()
    decomposed = decompose(model)
    print(decomposed.code)
    print(decomposed.graph)
    x = torch.randn(4, 3)
    torch.testing.assert_close(decomposed(x), model(x))


def test_relu_decomposition():
    text = same_printout(decomposition)
    assert "gt = linear > 0" in text


# Chapter 6: code generation, the source of forward and its regeneration.
def code_generation(fx):
    torch.manual_seed(0)
    gm = fx.symbolic_trace(MyModule())
    code = gm.graph.python_code(root_module="self")
    print(code.src)
    for node in gm.graph.nodes:
        if node.op == "call_method" and node.target == "clamp":
            node.kwargs = {"min": -1.0, "max": 1.0}
    gm.recompile()
    print(gm.code)
    x = torch.rand(3, 4)
    torch.testing.assert_close(gm(x), gm.linear(x + gm.param).clamp(-1.0, 1.0))


def test_code_generation():
    text = same_printout(code_generation)
    assert "clamp = linear.clamp(min = -1.0, max = 1.0);  linear = None" in text


def print_readable(fx):
    torch.manual_seed(0)
    print(fx.symbolic_trace(MyModule()).print_readable(print_output=False))


def test_print_readable():
    same_printout(print_readable)
