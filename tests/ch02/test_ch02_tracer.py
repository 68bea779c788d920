"""Chapter 2: the Tracer, its hooks, concrete_args, wrap and leaf modules.

torch.fx's own idiom: trace, lint, compare with eager, and here also compare
the graph and code with torch.fx on the torch twin of each module.
"""

import enum
import math
import operator
import types

import pytest
import torch
import torch.fx

import minifx
import tensor
from minifx.tracer import Tracer
from tests.ch02.ch02_twins import assert_same_trace
from tests.ch02.ch02_wrap_registry import registered
from tests.helpers import copy_weights, to_torch


# Functions recorded as single call_function nodes (registered at module level).
def clip_if_big(x, limit):
    if x.sum() > limit:  # control flow on a traced value: fine inside a wrapped function
        return x.clamp(max=limit)
    return x


torch.fx.wrap("clip_if_big")
torch.fx.wrap("len")


def scale_rows(x, factor):
    return x * factor if factor > 0 else x


@pytest.fixture(autouse=True, scope="module")
def _registered_with_minifx_wrap():
    # minifx.wrap as this module's code, undone when its tests end (ch02_wrap_registry).
    yield from registered(globals(), "\n".join([
        'minifx.wrap("clip_if_big")',
        'minifx.wrap("len")',
        'minifx.wrap(scale_rows)',
    ]))


def trace_lint_run(module, *inputs):
    """Trace, lint, and check the GraphModule against eager; return it."""
    gm = minifx.symbolic_trace(module)
    gm.graph.lint()
    tensor.testing.assert_close(gm(*inputs), module(*inputs))
    return gm


def build_mlp(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = lib.nn.Linear(4, 4)
            self.act = lib.nn.ReLU()

        def forward(self, x):
            return self.act(self.linear(x)) + x

    class MLP(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.seq = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Tanh())
            self.register_buffer("shift", lib.ones(4))

        def forward(self, x):
            return self.seq(self.block(x)) - self.shift

    return MLP()


def test_leaves_are_call_module_and_others_traced_through():
    ours, theirs = assert_same_trace(build_mlp)
    modules = [n.target for n in ours.graph.find_nodes(op="call_module")]
    assert modules == ["block.linear", "block.act", "seq.0", "seq.1"]
    assert [n.target for n in ours.graph.find_nodes(op="get_attr")] == ["shift"]


def test_mlp_runs_like_eager_and_like_torch():
    module = build_mlp(tensor)
    gm = trace_lint_run(module, tensor.randn(2, 4))
    twin = build_mlp(torch)
    copy_weights(module, twin)
    x = tensor.randn(2, 4)
    expected = torch.fx.symbolic_trace(twin)(to_torch(x))
    tensor.testing.assert_close(gm(x), tensor.from_numpy(expected.detach().numpy()),
                                rtol=1e-5, atol=1e-6)


def build_params(lib):
    class Inner(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = lib.nn.Parameter(lib.randn(4))

        def forward(self, x):
            return x * self.weight

    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.scale = lib.nn.Parameter(lib.randn(4))
            self.constant = lib.ones(4)

        def forward(self, x):
            # each parameter is read twice but gets one get_attr; the inner
            # module's parameter is also read from outside it; the plain
            # tensor attribute is found by identity
            y = self.inner(x) + self.scale + self.inner.weight
            return y * self.scale + self.constant

    return M()


def test_parameters_buffers_and_tensor_attributes_are_get_attr():
    ours, _ = assert_same_trace(build_params)
    targets = [n.target for n in ours.graph.find_nodes(op="get_attr")]
    assert targets == ["inner.weight", "scale", "constant"]
    module = build_params(tensor)
    trace_lint_run(module, tensor.randn(3, 4))


def build_fresh_constant(lib):
    class M(lib.nn.Module):
        def forward(self, x):
            return x + lib.ones(3) * 2.0

    return M()


def test_tensor_made_during_trace_becomes_tensor_constant():
    ours, _ = assert_same_trace(build_fresh_constant)
    (node,) = ours.graph.find_nodes(op="get_attr")
    assert node.target == "_tensor_constant0"
    assert isinstance(ours._tensor_constant0, tensor.Tensor)
    x = tensor.randn(2, 3)
    tensor.testing.assert_close(ours(x), x + 2.0)


def build_signature(lib):
    def program(x, y=3, *args, **kwargs):
        return x + y, args, kwargs
    return program


def test_placeholders_follow_the_signature():
    ours, _ = assert_same_trace(build_signature)
    placeholders = ours.graph.find_nodes(op="placeholder")
    assert [n.target for n in placeholders] == ["x", "y", "*args", "**kwargs"]
    assert placeholders[1].args == (3,)
    x = tensor.randn(2)
    out, args, kwargs = ours(x, 1, 5, 6, k=7)
    tensor.testing.assert_close(out, x + 1)
    assert args == (5, 6) and kwargs == {"k": 7}


def build_keyword_only(lib):
    def program(x, bias=1.0, *, scale=2.0):
        return x * scale + bias
    return program


def build_one_keyword_only(lib):
    def program(x, *, scale=2.0):
        return x * scale
    return program


def build_keywords_only(lib):
    def program(x, **options):
        return x * 2
    return program


def test_keyword_only_parameters_and_bare_kwargs_add_no_star_args():
    ours, _ = assert_same_trace(build_keyword_only)
    assert [n.target for n in ours.graph.find_nodes(op="placeholder")] == ["x", "bias", "scale"]
    ours, _ = assert_same_trace(build_one_keyword_only)
    assert [n.target for n in ours.graph.find_nodes(op="placeholder")] == ["x", "scale"]
    ours, _ = assert_same_trace(build_keywords_only)
    assert [n.target for n in ours.graph.find_nodes(op="placeholder")] == ["x", "**options"]


def branchy(x, flag):
    if flag:
        return x + 1
    return x - 1


def test_concrete_args_specialise_the_trace():
    gm = minifx.symbolic_trace(branchy, concrete_args={"flag": True})
    gm.graph.lint()
    theirs = torch.fx.symbolic_trace(branchy, concrete_args={"flag": True})
    summary = [(n.op, n.name) for n in gm.graph.nodes]
    assert summary == [(n.op, n.name) for n in theirs.graph.nodes]
    assert ("placeholder", "flag_1") in summary
    x = tensor.randn(3)
    tensor.testing.assert_close(gm(x, True), x + 1)
    with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
        gm(x, False)


def test_concrete_args_none_is_checked_at_run_time():
    def program(x, bias):
        return x if bias is None else x + bias

    gm = minifx.symbolic_trace(program, concrete_args={"bias": None})
    gm.graph.lint()
    x = tensor.randn(3)
    tensor.testing.assert_close(gm(x, None), x)
    with pytest.raises(AssertionError, match="specialized to have value None"):
        gm(x, 1.0)


def uses_wrapped(x):
    return clip_if_big(x, 1.0) + len(x)


def test_wrap_by_name_records_one_call():
    gm = minifx.symbolic_trace(uses_wrapped)
    gm.graph.lint()
    theirs = torch.fx.symbolic_trace(uses_wrapped)
    assert str(gm.graph) == str(theirs.graph)
    targets = [n.target for n in gm.graph.find_nodes(op="call_function")]
    assert clip_if_big in targets
    x = tensor.randn(4, 2)
    tensor.testing.assert_close(gm(x), uses_wrapped(x))
    # after the trace the global is the plain function again
    assert globals()["clip_if_big"] is clip_if_big
    assert "len" not in globals()


def uses_decorated(x):
    return scale_rows(x, 2.0).relu()


def test_wrap_as_decorator():
    gm = minifx.symbolic_trace(uses_decorated)
    (node,) = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert node.target is scale_rows
    x = tensor.randn(3, 3)
    tensor.testing.assert_close(gm(x), uses_decorated(x))


def test_wrap_refuses_to_run_inside_a_function():
    with pytest.raises(NotImplementedError, match="top level"):
        minifx.wrap("clip_if_big")


def test_symbolic_trace_equals_graph_module_of_tracer():
    module = build_mlp(tensor)
    by_hand = minifx.GraphModule(module, Tracer().trace(module))
    assert by_hand.code == minifx.symbolic_trace(module).code
    assert type(minifx.symbolic_trace(module)).__name__ == "MLP"
    assert type(minifx.symbolic_trace(branchy, {"flag": False})).__name__ == "branchy"


def test_tracer_attributes_root_and_graph():
    module = build_mlp(tensor)
    tracer = Tracer()
    graph = tracer.trace(module)
    assert tracer.root is module and tracer.graph is graph
    assert tracer.submodule_paths is None  # the trace's table is gone, as in torch.fx
    torch_tracer = torch.fx.Tracer()
    torch_tracer.trace(build_mlp(torch))
    assert torch_tracer.submodule_paths is None


def annotated(x) -> "tuple":
    return (x + 1,)


def test_a_function_root_is_an_empty_module_and_the_return_annotation_types_the_output():
    for lib, fx in ((tensor, minifx), (torch, torch.fx)):
        tracer = fx.Tracer()
        graph = tracer.trace(annotated)
        assert type(tracer.root) is lib.nn.Module and not list(tracer.root.children())
        assert graph.output_node().type == "tuple"
    # A tensor function traced twice gives the same graph: nothing stays patched between.
    assert str(minifx.Tracer().trace(annotated)) == str(minifx.Tracer().trace(annotated))


def test_module_classes_are_patched_only_during_the_trace():
    seen = []

    class Peek(tensor.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = tensor.nn.Linear(2, 2)

        def forward(self, x):
            seen.append(tensor.nn.Module.__dict__["__getattr__"])
            return self.lin(x)

    before = tensor.nn.Module.__dict__["__getattr__"], tensor.nn.Module.__dict__["__call__"]
    gm = minifx.symbolic_trace(Peek())
    after = tensor.nn.Module.__dict__["__getattr__"], tensor.nn.Module.__dict__["__call__"]
    assert after == before and seen[0] is not before[0]  # patched inside, restored after
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_module", "output"]


class CountingTracer(Tracer):
    def __init__(self):
        super().__init__()
        self.kinds = []

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        self.kinds.append(kind)
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        node.meta["counted"] = len(self.kinds)
        return node


def test_create_node_hook_sees_every_node():
    tracer = CountingTracer()
    graph = tracer.trace(build_mlp(tensor))
    assert tracer.kinds == [n.op for n in graph.nodes]
    assert [n.meta["counted"] for n in graph.nodes] == list(range(1, len(graph.nodes) + 1))


class TraceEverything(Tracer):
    def is_leaf_module(self, m, module_qualified_name):
        return False


class Scaler(tensor.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # untraceable: must stay a leaf
            return x * 2
        return x


class UsesScaler(tensor.nn.Module):
    def __init__(self):
        super().__init__()
        self.scaler = Scaler()
        self.linear = tensor.nn.Linear(3, 3)

    def forward(self, x):
        return self.scaler(self.linear(x))


class ScalerIsLeaf(Tracer):
    def is_leaf_module(self, m, module_qualified_name):
        return isinstance(m, Scaler) or super().is_leaf_module(m, module_qualified_name)


def test_custom_is_leaf_module_keeps_untraceable_code_out():
    module = UsesScaler()
    graph = ScalerIsLeaf().trace(module)
    graph.lint()
    assert [n.target for n in graph.find_nodes(op="call_module")] == ["linear", "scaler"]
    gm = minifx.GraphModule(module, graph)
    x = tensor.randn(2, 3)
    tensor.testing.assert_close(gm(x), module(x))


def test_is_leaf_module_false_traces_into_builtin_layers():
    module = build_mlp(tensor)
    graph = TraceEverything().trace(module)
    graph.lint()
    assert not graph.find_nodes(op="call_module")
    gm = minifx.GraphModule(module, graph)
    x = tensor.randn(2, 4)
    tensor.testing.assert_close(gm(x), module(x))


class RecordingCallModule(Tracer):
    def __init__(self):
        super().__init__()
        self.calls = []

    def call_module(self, m, forward, args, kwargs):
        self.calls.append(self.path_of_module(m))
        return super().call_module(m, forward, args, kwargs)


def test_call_module_hook_sees_every_submodule_call():
    tracer = RecordingCallModule()
    tracer.trace(build_mlp(tensor))
    assert tracer.calls == ["block", "block.linear", "block.act", "seq", "seq.0", "seq.1"]


class NoGetAttr(Tracer):
    """Reads of parameters inside forward stay real values until used."""

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        return attr_val


def test_getattr_hook_decides_parameter_reads():
    module = build_params(tensor)
    graph = NoGetAttr().trace(module)
    graph.lint()
    # every use of `scale` now goes through create_arg: one get_attr per use
    targets = [n.target for n in graph.find_nodes(op="get_attr")]
    assert targets.count("scale") == 2


class ConstantsAsValues(Tracer):
    """create_arg hook: keep small constant tensors inline instead of get_attr."""

    def create_arg(self, a):
        if isinstance(a, tensor.Tensor) and not isinstance(a, tensor.nn.Parameter) \
                and a.numel() == 3:
            return a
        return super().create_arg(a)


def test_create_arg_hook_controls_constants():
    module = build_fresh_constant(tensor)
    graph = ConstantsAsValues().trace(module)
    assert not graph.find_nodes(op="get_attr")


class TwoInputs(Tracer):
    """create_args_for_root hook: name every placeholder with a prefix."""

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        fn, args = super().create_args_for_root(root_fn, is_module, concrete_args)
        for node in self.graph.find_nodes(op="placeholder"):
            node.meta["input"] = True
        return fn, args


def test_create_args_for_root_hook():
    graph = TwoInputs().trace(build_signature(tensor))
    assert all(n.meta.get("input") for n in graph.find_nodes(op="placeholder"))


class DoubleProxy(minifx.Proxy):
    pass


class ProxyClassTracer(Tracer):
    def proxy(self, node):
        return DoubleProxy(node, self)


def test_proxy_hook_chooses_the_proxy_class():
    seen = []

    def program(x):
        seen.append(type(x))
        y = x + 1
        seen.append(type(y))
        return y

    ProxyClassTracer().trace(program)
    assert seen == [DoubleProxy, DoubleProxy]


def test_create_proxy_hook_can_rename_nodes():
    class Renaming(Tracer):
        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                         proxy_factory_fn=None):
            if kind == "call_function":
                name = f"step_{len(self.graph.find_nodes(op=kind))}"
            return super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                        proxy_factory_fn)

    graph = Renaming().trace(lambda x: (x + 1) * 2)
    assert [n.name for n in graph.find_nodes(op="call_function")] == ["step_0", "step_1"]


class Unregistered(tensor.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = [tensor.nn.Linear(2, 2)]  # a plain list: not a submodule

    def forward(self, x):
        return self.hidden[0](x)


def test_path_of_module_names_the_stray_module():
    with pytest.raises(NameError, match="Linear is not installed as a submodule"):
        minifx.symbolic_trace(Unregistered())


def test_stack_traces_only_when_asked():
    module = build_mlp(tensor)
    graph = Tracer().trace(module)
    assert all(n.stack_trace is None for n in graph.nodes)
    tracer = Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(module)
    add = graph.find_nodes(op="call_function")[0]
    assert __file__ in add.stack_trace
    assert "return self.act(self.linear(x)) + x" in add.stack_trace


def double_it(x):
    return x * 2


def uses_double_it(x):
    return double_it(x) + 1


def test_autowrap_functions_are_leaves():
    graph = Tracer(autowrap_functions=(double_it,)).trace(uses_double_it)
    assert [n.target for n in graph.find_nodes(op="call_function")][0] is double_it
    assert globals()["double_it"] is double_it
    plain = Tracer().trace(uses_double_it)
    assert double_it not in [n.target for n in plain.nodes]


def uses_math(x):
    return x * math.sqrt(x.size(1))


def test_math_functions_are_wrapped_by_default():
    gm = minifx.symbolic_trace(uses_math)
    theirs = torch.fx.symbolic_trace(uses_math)
    assert str(gm.graph) == str(theirs.graph)
    assert math.sqrt in [n.target for n in gm.graph.nodes]
    assert math.sqrt.__module__ == "math"  # the original is back after the trace
    x = tensor.randn(2, 4)
    tensor.testing.assert_close(gm(x), x * 2.0)


def build_buffer_reuse(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("running", lib.ones(3))

        def forward(self, x):
            running = self.running  # a buffer read stays a tensor until an op uses it
            return x * running + running

    return M()


def test_buffer_reads_follow_torch_fx_default():
    ours, _ = assert_same_trace(build_buffer_reuse)
    assert [n.target for n in ours.graph.find_nodes(op="get_attr")] == ["running", "running"]


def test_a_graph_module_traces_to_the_same_code():
    gm = minifx.symbolic_trace(build_params(tensor))
    again = minifx.symbolic_trace(gm)
    again.graph.lint()
    assert again.code == gm.code
    x = tensor.randn(2, 4)
    tensor.testing.assert_close(again(x), gm(x))


def test_a_traced_tensor_function_is_a_tensor_module_even_with_torch_imported():
    gm = minifx.symbolic_trace(uses_decorated)
    assert isinstance(gm, tensor.nn.Module) and not isinstance(gm, torch.nn.Module)
    assert type(gm).__name__ == "uses_decorated"


def test_concrete_args_keep_defaults_and_check_each_value_like_torch_fx():
    def build(lib):
        def program(x, scale, shift=2.5, bias=None, mode="fast"):
            out = x * scale + shift
            return out if bias is None else out + bias
        return program

    concrete = {"scale": 3, "shift": 0.5, "bias": None, "mode": "slow"}
    ours = minifx.symbolic_trace(build(tensor), concrete_args=concrete)
    theirs = torch.fx.symbolic_trace(build(torch), concrete_args=concrete)
    # tensor has no _assert: minifx checks with its own (torch.fx with torch._assert).
    assert str(ours.graph) == str(theirs.graph).replace(
        "torch.fx._symbolic_trace", "minifx.tracer").replace(
        "torch._assert", "minifx.tracer._assert").replace("torch", "tensor")
    placeholders = [(n.name, n.args) for n in ours.graph.nodes if n.op == "placeholder"]
    assert placeholders == [("x", ()), ("scale_1", ()), ("shift_1", (2.5,)),
                            ("bias_1", (None,)), ("mode_1", ("fast",))]
    x = tensor.randn(3)
    tensor.testing.assert_close(ours(x, 3, 0.5, None, "slow"), x * 3 + 0.5)
    with pytest.raises(AssertionError, match="shift has been specialized to have value 0.5"):
        ours(x, 3, 0.25, None, "slow")
    with pytest.raises(AssertionError, match="bias has been specialized to have value None"):
        ours(x, 3, 0.5, 1.0, "slow")
    with pytest.raises(AssertionError, match="mode has been specialized to have value slow"):
        ours(x, 3, 0.5, None, "fast")


def test_a_concrete_container_gets_one_placeholder_per_value():
    def program(x, cfg):
        scale, shift = cfg["scale"], cfg["shift"]
        return x * scale + shift[0]

    gm = minifx.symbolic_trace(program, concrete_args={"cfg": {"scale": 3, "shift": [0.5]}})
    gm.graph.lint()
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    assert names == ["x", "cfg_1", "cfg_2"]
    checks = [n for n in gm.graph.nodes if n.op == "call_function" and n.args
              and isinstance(n.args[-1], str) and "specialized" in n.args[-1]]
    assert len(checks) == 2
    x = tensor.randn(3)
    tensor.testing.assert_close(gm(x, 3, 0.5), x * 3 + 0.5)
    with pytest.raises(AssertionError, match="cfg has been specialized to have value 3"):
        gm(x, 4, 0.5)


def test_a_concrete_arg_that_cannot_be_checked_warns_like_torch_fx():
    def build(lib):
        def program(x, opts):
            return x * opts.scale
        return program

    opts = types.SimpleNamespace(scale=2.0)
    with pytest.warns(UserWarning, match="Was not able to add assertion") as ours_warned:
        ours = minifx.symbolic_trace(build(tensor), concrete_args={"opts": opts})
    with pytest.warns(UserWarning, match="Was not able to add assertion"):
        theirs = torch.fx.symbolic_trace(build(torch), concrete_args={"opts": opts})
    assert "correct input opts to specialized function" in str(ours_warned[0].message)
    assert str(ours.graph) == str(theirs.graph).replace("torch", "tensor")
    assert [n.name for n in ours.graph.nodes if n.op == "placeholder"] == ["x", "opts_1"]
    assert not [n for n in ours.graph.nodes if n.op == "call_function"
                and n.target is not operator.mul]


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def test_a_subclass_of_a_constant_type_is_not_checked_like_torch_fx():
    def build(lib):
        def program(x, level):
            return x * int(level)
        return program

    with pytest.warns(UserWarning, match="correct input level to specialized function"):
        ours = minifx.symbolic_trace(build(tensor), concrete_args={"level": Level.HIGH})
    with pytest.warns(UserWarning, match="correct input level to specialized function"):
        theirs = torch.fx.symbolic_trace(build(torch), concrete_args={"level": Level.HIGH})
    assert str(ours.graph) == str(theirs.graph).replace("torch", "tensor")
    assert [n.op for n in ours.graph.nodes] == ["placeholder", "placeholder", "call_function",
                                               "output"]


def build_direct_tensors(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = lib.nn.Linear(4, 4)
            self.register_buffer("shift", lib.ones(4))

        def forward(self, x):
            weight = next(iter(self.parameters()))  # not read as an attribute
            fresh = lib.ones(4) * 3.0
            return lib.matmul(x, weight) + fresh + fresh + self.shift
    return M()


def test_tensors_met_as_arguments_become_get_attr_like_torch_fx():
    ours, _ = assert_same_trace(build_direct_tensors)
    reads = [n.target for n in ours.graph.find_nodes(op="get_attr")]
    # The parameter and the buffer by their names; the fresh tensor once stored, read twice.
    assert reads == ["inner.weight", "_tensor_constant0", "_tensor_constant0", "shift"]
    x = tensor.randn(2, 4)
    module = build_direct_tensors(tensor)
    gm = minifx.symbolic_trace(module)
    tensor.testing.assert_close(gm(x), module(x))


def test_a_stray_parameter_or_module_is_a_name_error_like_torch_fx():
    def uses_stray(lib):
        stray = lib.nn.Parameter(lib.ones(3))

        class UsesStray(lib.nn.Module):
            def forward(self, x):
                return lib.add(x, stray)

        return UsesStray()

    for lib, base in ((tensor, minifx), (torch, torch.fx)):
        with pytest.raises(NameError, match="parameter is not a member of this module"):
            base.symbolic_trace(uses_stray(lib))
    # A module is looked up among the root's submodules (torch.fx has no such case).
    tracer = minifx.Tracer()
    tracer.root = tensor.nn.Module()
    with pytest.raises(NameError, match="module is not installed as a submodule"):
        tracer.create_arg(tensor.nn.ReLU())
    # The root's own submodule is found by identity, as a get_attr of its path.
    tracer = minifx.Tracer()
    root = build_direct_tensors(tensor)
    tracer.root, tracer.graph = root, minifx.Graph()
    node = tracer.create_arg(root.inner)
    assert (node.op, node.target) == ("get_attr", "inner")


@pytest.mark.parametrize("lib, base", [(tensor, minifx), (torch, torch.fx)])
def test_forward_without_self_is_refused_and_without_inputs_traces(lib, base):
    class Starred(lib.nn.Module):
        def forward(*args):
            return args

    class Constant(lib.nn.Module):
        def forward(self):
            return 3

    with pytest.raises(RuntimeError, match=r"``self`` argument cannot be part of \*args"):
        base.symbolic_trace(Starred())
    assert base.symbolic_trace(Constant())() == 3


@pytest.mark.filterwarnings("ignore:Was not able to add assertion")  # ints are specialised
def test_concrete_args_as_a_tuple_need_one_value_per_parameter():
    def scaled(n, factor):
        return n * factor

    gm = minifx.symbolic_trace(scaled, concrete_args=(2, 3))
    assert gm(2, 3) == 6
    for values in ((2,), (2, 3, 4)):
        with pytest.raises(RuntimeError, match=f"expected 2 concrete arguments but got "
                                               f"{len(values)}"):
            minifx.symbolic_trace(scaled, concrete_args=values)


def test_path_of_module_searches_the_root_once_the_trace_is_over():
    root = tensor.nn.Sequential(tensor.nn.Linear(2, 2), tensor.nn.ReLU())
    tracer = minifx.Tracer()
    tracer.trace(root)
    assert tracer.submodule_paths is None  # the table lives only while tracing
    assert tracer.path_of_module(root[1]) == "1"
    with pytest.raises(NameError, match="module ReLU is not installed as a submodule"):
        tracer.path_of_module(tensor.nn.ReLU())


@pytest.mark.parametrize("lib, base", [(tensor, minifx), (torch, torch.fx)])
def test_proxy_buffer_attributes_makes_a_buffer_read_a_get_attr(lib, base):
    class Offset(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("offset", lib.ones(3))

        def forward(self, x):
            return x + self.offset

    tracer = base.Tracer()
    tracer.proxy_buffer_attributes = True
    graph = tracer.trace(Offset())
    assert [(n.op, n.target) for n in graph.find_nodes(op="get_attr")] == [
        ("get_attr", "offset")]


def test_path_of_module_finds_the_very_module_not_an_equal_one():
    class Same(tensor.nn.Module):
        """Every Same equals every other (as a module comparing its settings might)."""

        def __eq__(self, other):
            return isinstance(other, Same)

        __hash__ = tensor.nn.Module.__hash__

    root = tensor.nn.Sequential(Same(), Same())
    tracer = minifx.Tracer()
    tracer.root = root
    assert tracer.path_of_module(root[1]) == "1"
