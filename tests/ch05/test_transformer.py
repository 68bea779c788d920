"""Chapter 5: the Transformer writes the graph that torch.fx's Transformer writes.

Each rewrite runs three ways: minifx on `tensor`, minifx on `torch` and
torch.fx on `torch`. The new graphs must print the same (with `torch` read as
`tensor` for the first), generate the same code, and compute what the
rewrite promises.
"""

import copy
import operator
import pickle

import pytest
import torch
import torch.fx

import minifx
import tensor
from tests.ch04.ch04_models import (
    EAGER_MODELS,
    assert_same_values,
    build_residual,
    build_sigmoid_neg,
    build_split,
    example_input,
    output_of,
    twins,
)


def swap_transformer(lib, base):
    """The seed's NegSigmSwapXformer (its `super()` calls repaired), on `base`."""

    class NegSigmSwapXformer(base.Transformer):
        def call_function(self, target, args, kwargs):
            if target == lib.sigmoid:
                return lib.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                call_self, *args_tail = args
                return call_self.sigmoid(*args_tail, **kwargs)
            return super().call_method(target, args, kwargs)

    return NegSigmSwapXformer


def transform_three_ways(build, make_transformer=None):
    """Transform `build`'s twins with minifx (tensor, torch) and torch.fx (torch)."""
    ours, theirs = twins(build)
    make = make_transformer or (lambda lib, base: base.Transformer)
    gm = minifx.symbolic_trace(ours)
    on_torch = minifx.symbolic_trace(theirs)
    reference = torch.fx.symbolic_trace(theirs)
    results = (make(tensor, minifx)(gm).transform(),
               make(torch, minifx)(on_torch).transform(),
               make(torch, torch.fx)(reference).transform())
    for result in results[:2]:
        result.graph.lint()
    return (gm, on_torch, reference), results


def assert_same_as_torch_fx(new, new_on_torch, expected):
    assert str(new.graph) == str(expected.graph).replace("torch", "tensor")
    assert new.code == expected.code.replace("torch", "tensor")
    assert str(new_on_torch.graph) == str(expected.graph)
    assert new_on_torch.code == expected.code


# --- the seed's example ------------------------------------------------------------

def test_neg_sigmoid_swap_on_tensor():
    gm = minifx.symbolic_trace(build_sigmoid_neg(tensor))
    transformed = swap_transformer(tensor, minifx)(gm).transform()
    x, _ = example_input((3, 4))
    tensor.testing.assert_close(transformed(x), tensor.neg(x).sigmoid())
    assert isinstance(transformed, tensor.nn.Module)
    assert isinstance(transformed, minifx.GraphModule)
    assert str(transformed.graph) == """\
graph():
    %x : [num_users=1] = placeholder[target=x]
    %neg : [num_users=1] = call_function[target=tensor.neg](args = (%x,), kwargs = {})
    %sigmoid : [num_users=1] = call_method[target=sigmoid](args = (%neg,), kwargs = {})
    return sigmoid"""
    # The input module is left as it was.
    tensor.testing.assert_close(gm(x), tensor.sigmoid(x).neg())


def test_neg_sigmoid_swap_matches_torch_fx():
    (_, _, _), (new, new_on_torch, expected) = transform_three_ways(
        build_sigmoid_neg, swap_transformer)
    assert_same_as_torch_fx(new, new_on_torch, expected)
    assert isinstance(new_on_torch, torch.nn.Module)
    assert not isinstance(new_on_torch, tensor.nn.Module)
    _, tx = example_input((3, 4))
    torch.testing.assert_close(new_on_torch(tx), expected(tx))
    torch.testing.assert_close(new_on_torch(tx), torch.neg(tx).sigmoid())


# --- the identity transform keeps the graph (and its names) ----------------------------

MODELS = [*EAGER_MODELS, ("split", build_split, (4, 6))]


@pytest.mark.parametrize("name, build, shape", MODELS, ids=[m[0] for m in MODELS])
def test_identity_transform_reproduces_the_graph(name, build, shape):
    (gm, on_torch, reference), (new, new_on_torch, expected) = transform_three_ways(build)
    assert_same_as_torch_fx(new, new_on_torch, expected)
    assert str(new.graph) == str(gm.graph)  # same nodes, same names
    assert type(new).__name__ == type(expected).__name__ == "GraphModule"
    x, tx = example_input(shape)
    assert_same_values(new(x), gm(x))
    assert_same_values(new_on_torch(tx), reference(tx))


def test_placeholders_keep_defaults_and_star_args():
    def build(lib):
        def fn(x, scale=2.0, *rest, bias=None):
            return x * scale + rest[0]
        return fn

    (_, _, _), (new, new_on_torch, expected) = transform_three_ways(build)
    assert_same_as_torch_fx(new, new_on_torch, expected)
    x, _ = example_input((3,))
    # As in torch.fx, the keyword-only parameter comes before *rest in the signature.
    tensor.testing.assert_close(new(x, 3.0, None, 1.0), x * 3.0 + 1.0)


# --- rewrites ----------------------------------------------------------------------------

def add_to_mul(lib, base):
    class AddToMul(base.Transformer):
        def call_function(self, target, args, kwargs):
            if target is operator.add:
                target = operator.mul
            return super().call_function(target, args, kwargs)

    return AddToMul


def relu_decomposed(lib, base):
    """relu(x) becomes (x > 0) * x: one node out, three in."""

    class DecomposeRelu(base.Transformer):
        def call_module(self, target, args, kwargs):
            if isinstance(self.fetch_attr(target), lib.nn.ReLU):
                (x,) = args
                return (x > 0) * x
            return super().call_module(target, args, kwargs)

        def call_function(self, target, args, kwargs):
            if target is lib.relu:
                (x,) = args
                return (x > 0) * x
            return super().call_function(target, args, kwargs)

    return DecomposeRelu


@pytest.mark.parametrize("rule", [add_to_mul, relu_decomposed])
@pytest.mark.parametrize("build, shape", [(build_residual, (2, 3, 6, 6)),
                                          (EAGER_MODELS[0][1], (5, 8))], ids=["residual", "mlp"])
def test_rewrites_match_torch_fx(rule, build, shape):
    (gm, _, reference), (new, new_on_torch, expected) = transform_three_ways(build, rule)
    assert_same_as_torch_fx(new, new_on_torch, expected)
    x, tx = example_input(shape)
    assert_same_values(new(x), expected(tx), tol=1e-4)
    if rule is relu_decomposed:  # the same function, written differently
        assert_same_values(new(x), gm(x), tol=1e-5)
        assert not [n for n in new.graph.nodes if "relu" in str(n.target)]


def test_module_rule_with_parameters_and_constants_matches_torch_fx():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)
                self.w = lib.nn.Parameter(lib.ones(3))
                self.act = lib.nn.ReLU()

            def forward(self, x, *, flag=None):
                return self.act(self.lin(x)) * self.w + x.sum(dim=1, keepdim=True)

        return M()

    def rule(lib, base):
        class Rewrite(base.Transformer):
            def call_module(self, target, args, kwargs):
                if isinstance(self.fetch_attr(target), lib.nn.ReLU):
                    return lib.relu(*args)
                return super().call_module(target, args, kwargs)

            def call_function(self, target, args, kwargs):
                if target is operator.add:  # drop the sum, scale by a constant instead
                    return lib.mul(args[0], lib.tensor([2.0, 3.0, 4.0]))
                return super().call_function(target, args, kwargs)

        return Rewrite

    (gm, _, _), (new, new_on_torch, expected) = transform_three_ways(build, rule)
    assert_same_as_torch_fx(new, new_on_torch, expected)
    # Only what the new graph names was copied: lin, w and the new constant.
    assert [name for name, _ in new.named_children()] == ["lin"]
    tensor.testing.assert_close(new._tensor_constant0, tensor.tensor([2.0, 3.0, 4.0]))
    assert new.w is gm.w
    x, tx = example_input((2, 3))
    assert_same_values(new(x), expected(tx))


def test_transformed_module_can_be_interpreted_copied_and_pickled():
    (_, _, _), (new, _, _) = transform_three_ways(build_residual, add_to_mul)
    x, _ = example_input((2, 3, 6, 6))
    expected = new(x)
    tensor.testing.assert_close(minifx.Interpreter(new).run(x), expected)
    tensor.testing.assert_close(copy.deepcopy(new)(x), expected)
    tensor.testing.assert_close(pickle.loads(pickle.dumps(new))(x), expected)
    # Transforming a transformed module works too.
    again = minifx.Transformer(new).transform()
    assert str(again.graph) == str(new.graph)


def test_transform_keeps_the_source_lines_and_output_meta():
    tracer = minifx.Tracer()
    tracer.record_stack_traces = True
    ours, _ = twins(build_residual)
    graph = tracer.trace(ours)
    gm = minifx.GraphModule(tracer.root, graph)
    output_of(gm).meta["note"] = "kept"
    new = add_to_mul(tensor, minifx)(gm).transform()
    old_traces = {n.name: n.stack_trace for n in gm.graph.nodes if n.op != "placeholder"}
    new_traces = {n.name: n.stack_trace for n in new.graph.nodes if n.op != "placeholder"}
    # add became mul (a new name) but still points at `out += identity`.
    assert "out += identity" in new_traces["mul"]
    assert old_traces["add"] == new_traces["mul"]
    assert new_traces["layer_0_conv1"] == old_traces["layer_0_conv1"]
    assert output_of(new).meta["note"] == "kept"


def test_transformer_leaves_the_input_graph_alone():
    ours, _ = twins(build_residual)
    gm = minifx.symbolic_trace(ours)
    before, code_before = str(gm.graph), gm.code
    new = relu_decomposed(tensor, minifx)(gm).transform()
    assert str(gm.graph) == before and gm.code == code_before
    assert new.graph is not gm.graph
    assert all(n.graph is new.graph for n in new.graph.nodes)


def test_errors_in_a_rule_name_the_node():
    class Broken(minifx.Transformer):
        def call_method(self, target, args, kwargs):
            raise ValueError(f"no rule for {target}")

    gm = minifx.symbolic_trace(build_sigmoid_neg(tensor))
    with pytest.raises(ValueError) as info:
        Broken(gm).transform()
    assert str(info.value).startswith("no rule for neg\n\nWhile executing %neg : [num_users=1]")


def test_the_new_graph_shares_the_code_generator():
    def mark(current):
        return lambda body: ["print('generated')\n", *body]

    results = []
    for base, lib in ((minifx, tensor), (torch.fx, torch)):
        gm = base.symbolic_trace(build_sigmoid_neg(lib))
        gm.graph.on_generate_code(mark)
        gm.recompile()
        results.append(base.Transformer(gm).transform().code)
    assert "print('generated')" in results[0]
    assert results[0] == results[1].replace("torch", "tensor")


# --- the opcode methods and the tracer of the new graph --------------------------------

def _scaled(x):
    """A wrapped function: a trace records one call of it, never its body."""
    return x * 2.0 if x.dim() > 0 else x


minifx.wrap("_scaled")
torch.fx.wrap("_scaled")


def test_get_attr_stays_a_read_of_the_same_parameter_like_torch_fx():
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(3) * 0.5)
                self.t = lib.ones(3)  # a plain tensor attribute, neither parameter nor buffer

            def forward(self, x):
                return x * self.w + self.t + self.w.sum()

        return M()

    (gm, _, _), (new, new_on_torch, expected) = transform_three_ways(build)
    assert_same_as_torch_fx(new, new_on_torch, expected)
    reads = [n for n in new.graph.nodes if n.op == "get_attr"]
    assert [n.target for n in reads] == ["w", "t"]
    assert new.w is gm.w and new.t is gm.t and not hasattr(new, "_tensor_constant0")
    x, _ = example_input((2, 3))
    gm.w.data.mul_(3.0)  # read when the new module runs, not computed by the transform
    tensor.testing.assert_close(new(x), x * 1.5 + 1.0 + 4.5)


class _Leafy(minifx.Tracer):
    """Keeps the custom `Scale` module as one call_module node."""

    def is_leaf_module(self, m, qualname):
        return type(m).__name__ == "Scale" or super().is_leaf_module(m, qualname)


class _TorchLeafy(torch.fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return type(m).__name__ == "Scale" or super().is_leaf_module(m, qualname)


def _with_scale(lib):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * 3.0 + 1.0

    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = lib.nn.Sequential(Scale(), lib.nn.ReLU())

        def forward(self, x):
            return self.inner(x) - x

    return M()


def test_a_leaf_module_stays_one_call_module_like_torch_fx():
    ours, theirs = twins(_with_scale)
    gm = minifx.GraphModule(ours, _Leafy().trace(ours))
    expected_in = torch.fx.GraphModule(theirs, _TorchLeafy().trace(theirs))
    new = minifx.Transformer(gm).transform()
    expected = torch.fx.Transformer(expected_in).transform()
    assert str(new.graph) == str(expected.graph).replace("torch", "tensor")
    assert [(n.op, n.target) for n in new.graph.nodes if n.op == "call_module"] == [
        ("call_module", "inner.0"), ("call_module", "inner.1")]
    assert new.get_submodule("inner.0") is gm.get_submodule("inner.0")
    x, _ = example_input((2, 4))
    tensor.testing.assert_close(new(x), gm(x))


def test_the_source_node_is_set_while_a_node_runs_and_cleared_after():
    seen = []

    class Watch(minifx.Transformer):
        def call_function(self, target, args, kwargs):
            seen.append(self.tracer.source_node.name)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            raise ValueError("stop")

    gm = minifx.symbolic_trace(build_sigmoid_neg(tensor))
    watch = Watch(gm)
    with pytest.raises(ValueError):
        watch.transform()
    assert seen == ["sigmoid"]
    assert watch.tracer.source_node is None  # cleared although the node raised
    plain = minifx.Transformer(gm)
    plain.transform()
    assert plain.tracer.source_node is None


def test_a_wrapped_call_stays_wrapped_unless_a_rule_replaces_it():
    def fn(x):
        return _scaled(x) + 1.0

    gm = minifx.symbolic_trace(fn)
    (call,) = [n for n in gm.graph.nodes if n.target is _scaled]
    assert call.meta["is_wrapped"]
    new = minifx.Transformer(gm).transform()
    (kept,) = [n for n in new.graph.nodes if n.target is _scaled]
    assert kept.meta.get("is_wrapped") is True
    assert "_scaled" in new.code
    x, _ = example_input((3,))
    # Traced again, the new code still records one call of the wrapped function.
    again = minifx.symbolic_trace(new)
    assert [n.target for n in again.graph.nodes if n.op == "call_function"][0] is _scaled
    tensor.testing.assert_close(again(x), x * 2.0 + 1.0)

    class Replace(minifx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is _scaled:
                return super().call_function(tensor.neg, args, kwargs)
            return super().call_function(target, args, kwargs)

    replaced = Replace(gm).transform()
    (neg,) = [n for n in replaced.graph.nodes if n.target is tensor.neg]
    assert "is_wrapped" not in neg.meta
    assert not [n for n in replaced.graph.nodes if n.meta.get("is_wrapped")]


def test_a_rule_keeps_a_stack_trace_the_new_node_already_has():
    tracer = minifx.Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(build_sigmoid_neg(tensor))
    gm = minifx.GraphModule(tracer.root, graph)

    class Own(minifx.Transformer):
        def __init__(self, module):
            super().__init__(module)
            self.tracer.record_stack_traces = True  # the rule's own line is recorded

    new = Own(gm).transform()
    traces = {n.name: n.stack_trace for n in new.graph.nodes if n.op != "placeholder"
              and n.op != "output"}
    old = {n.name: n.stack_trace for n in gm.graph.nodes if n.op != "placeholder"
           and n.op != "output"}
    assert set(traces) == set(old)
    # Each new node has the line of this test that ran the transform, not the old one.
    assert all("Own(gm).transform()" in traces[k] for k in traces), traces
    assert not any("Own(gm).transform()" in old[k] for k in old)


def test_get_attr_keeps_the_name_the_graph_reads_like_torch_fx():
    # One tensor known under two names: the new graph reads the name the old one read.
    results = []
    for lib, base in ((tensor, minifx), (torch, torch.fx)):
        root = lib.nn.Module()
        shared = lib.ones(2)
        root.register_buffer("a", shared)
        root.register_buffer("b", shared)
        graph = base.Graph()
        x = graph.placeholder("x")
        graph.output(graph.call_function(operator.add, (x, graph.get_attr("b"))))
        new = base.Transformer(base.GraphModule(root, graph)).transform()
        results.append(str(new.graph))
    assert "get_attr[target=b]" in results[0]
    assert results[0] == results[1]


def test_keyword_arguments_are_recorded_again_like_torch_fx():
    def build(lib):
        def fn(x):
            return lib.sum(x, dim=1, keepdim=True) * x.mean(dim=0, keepdim=True)
        return fn

    (gm, _, _), (new, new_on_torch, expected) = transform_three_ways(build)
    assert_same_as_torch_fx(new, new_on_torch, expected)
    assert "kwargs = {dim: 1, keepdim: True}" in str(new.graph)
    x, _ = example_input((2, 3))
    assert_same_values(new(x), gm(x))
