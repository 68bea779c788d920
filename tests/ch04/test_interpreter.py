"""Chapter 4: the Interpreter runs a graph node by node, as eager and torch.fx do.

Every model is traced three ways (minifx on `tensor`, minifx on `torch`,
torch.fx on `torch`) and interpreted; the results must equal eager, and the
bookkeeping (which values are freed when, which node an error names) must
equal torch.fx's.
"""

import operator
import pickle
import types

import numpy as np
import pytest
import torch
import torch.fx

import minifx
import tensor
from tests.ch04.ch04_models import (
    EAGER_MODELS,
    assert_same_values,
    build_mlp,
    build_residual,
    build_sigmoid_neg,
    example_input,
    twins,
)


def swap_interpreter(lib, base):
    """The seed's NegSigmSwapInterpreter, written against `lib` on `base` (minifx or torch.fx)."""

    class NegSigmSwapInterpreter(base.Interpreter):
        def call_function(self, target, args, kwargs):
            if target == lib.sigmoid:
                return lib.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                call_self, *args_tail = args
                return call_self.sigmoid(*args_tail, **kwargs)
            return super().call_method(target, args, kwargs)

    return NegSigmSwapInterpreter


# --- the seed's example -------------------------------------------------------

def test_neg_sigmoid_swap_on_tensor():
    gm = minifx.symbolic_trace(build_sigmoid_neg(tensor))
    x, _ = example_input((3, 4))
    result = swap_interpreter(tensor, minifx)(gm).run(x)
    tensor.testing.assert_close(result, tensor.neg(x).sigmoid())
    # The module itself is untouched: it still computes sigmoid(x).neg().
    tensor.testing.assert_close(gm(x), tensor.sigmoid(x).neg())


def test_neg_sigmoid_swap_on_torch_matches_torch_fx():
    fn = build_sigmoid_neg(torch)
    _, x = example_input((3, 4))
    ours = swap_interpreter(torch, minifx)(minifx.symbolic_trace(fn)).run(x)
    theirs = swap_interpreter(torch, torch.fx)(torch.fx.symbolic_trace(fn)).run(x)
    assert isinstance(ours, torch.Tensor)
    torch.testing.assert_close(ours, theirs)
    torch.testing.assert_close(ours, torch.neg(x).sigmoid())


# --- run equals eager --------------------------------------------------------

@pytest.mark.parametrize("name, build, shape", EAGER_MODELS, ids=[m[0] for m in EAGER_MODELS])
def test_run_equals_eager_on_tensor_and_torch(name, build, shape):
    ours, theirs = twins(build)  # eval mode: BatchNorm uses its running statistics
    x, tx = example_input(shape)
    gm = minifx.symbolic_trace(ours)
    gm.graph.lint()
    result = minifx.Interpreter(gm).run(x)
    assert isinstance(result, tensor.Tensor)
    tensor.testing.assert_close(result, ours(x))

    torch_gm = minifx.symbolic_trace(theirs)
    torch_result = minifx.Interpreter(torch_gm).run(tx)
    assert isinstance(torch_result, torch.Tensor)
    torch.testing.assert_close(torch_result, theirs(tx))
    reference = torch.fx.Interpreter(torch.fx.symbolic_trace(theirs)).run(tx)
    torch.testing.assert_close(torch_result, reference)
    # The two libraries agree with each other too.
    assert_same_values(result, torch_result, tol=1e-4)


def test_run_in_training_mode_updates_batchnorm_buffers_like_eager():
    ours, _ = twins(build_residual, train=True)
    reference, _ = twins(build_residual, train=True)
    reference.load_state_dict(ours.state_dict())
    x, _ = example_input((2, 3, 6, 6))
    gm = minifx.symbolic_trace(ours)
    tensor.testing.assert_close(minifx.Interpreter(gm).run(x), reference(x))
    # call_module ran the real BatchNorm modules, which updated their running stats.
    expected = dict(reference.named_buffers())
    for name, buffer in gm.named_buffers():
        tensor.testing.assert_close(buffer, expected[name])


# --- garbage collection ----------------------------------------------------------

class EnvSizes:
    """Mixin: record len(env) after each node, and the names still in env at the end."""

    def run_node(self, n):
        result = super().run_node(n)
        self.sizes.append(len(self.env) + 1)  # +1: the value being stored now
        return result


def env_sizes(base, gm, x, gc):
    cls = type("Recording", (EnvSizes, base.Interpreter), {})
    interp = cls(gm, garbage_collect_values=gc)
    interp.sizes = []
    interp.run(x)
    return interp.sizes, sorted(n.name for n in interp.env)


@pytest.mark.parametrize("build, shape", [(build_mlp, (5, 8)), (build_residual, (2, 3, 6, 6))])
def test_garbage_collection_frees_values_like_torch_fx(build, shape):
    ours, theirs = twins(build)
    x, tx = example_input(shape)
    gm, torch_gm = minifx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    n_nodes = len(gm.graph.nodes)

    sizes, left = env_sizes(minifx, gm, x, gc=True)
    torch_sizes, torch_left = env_sizes(torch.fx, torch_gm, tx, gc=True)
    assert sizes == torch_sizes  # the same value is freed at the same step
    assert left == torch_left == ["output"]  # everything else was freed
    assert max(sizes) < n_nodes / 2

    sizes_no_gc, left_no_gc = env_sizes(minifx, gm, x, gc=False)
    assert sizes_no_gc == list(range(1, n_nodes + 1))  # every value kept
    assert left_no_gc == sorted(n.name for n in gm.graph.nodes)


def test_last_uses_are_computed_once_and_match_torch_fx():
    ours, theirs = twins(build_residual)
    interp = minifx.Interpreter(minifx.symbolic_trace(ours))
    torch_interp = torch.fx.Interpreter(torch.fx.symbolic_trace(theirs))

    def by_name(table):
        return {user.name: [n.name for n in freed] for user, freed in table.items()}

    assert by_name(interp.user_to_last_uses) == by_name(torch_interp.user_to_last_uses)
    table = interp.user_to_last_uses
    x, _ = example_input((2, 3, 6, 6))
    interp.run(x)
    interp.run(x)
    assert interp.user_to_last_uses is table  # not recomputed per run


def test_value_with_two_users_is_freed_after_the_second():
    def fn(x):
        y = x.neg()
        z = y + 1
        return z * y

    gm = minifx.symbolic_trace(fn)
    freed = {user.name: [n.name for n in values]
             for user, values in minifx.Interpreter(gm).user_to_last_uses.items()}
    # neg is read by add and by mul: it stays until mul, its last user, has run.
    assert freed == {"output": ["mul"], "mul": ["add", "neg"], "neg": ["x"]}


# --- placeholders, initial_env, boxed_run -------------------------------------------

def test_placeholders_star_args_and_defaults_like_torch_fx():
    def build(lib):
        def fn(x, y=3, *args):
            return x + y + args[0]
        return fn

    gm, torch_gm = minifx.symbolic_trace(build(tensor)), torch.fx.symbolic_trace(build(torch))
    x, tx = example_input((2,))
    # x, y and the rest (*args) in order, as the placeholders come.
    tensor.testing.assert_close(minifx.Interpreter(gm).run(x, x, 5), x + x + 5)
    torch.testing.assert_close(torch.fx.Interpreter(torch_gm).run(tx, tx, 5), tx + tx + 5)
    # *args takes everything left, as a list.
    seen = {}

    class Spy(minifx.Interpreter):
        def placeholder(self, target, args, kwargs):
            seen[target] = value = super().placeholder(target, args, kwargs)
            return value

    Spy(gm).run(x, 1, 2, 3)
    assert seen["*args"] == [2, 3]
    assert seen["y"] == 1


def test_placeholder_default_used_when_arguments_run_out():
    def fn(x, scale=2.0):
        return x * scale

    gm = minifx.symbolic_trace(fn)
    x, _ = example_input((3,))
    tensor.testing.assert_close(minifx.Interpreter(gm).run(x), x * 2.0)
    tensor.testing.assert_close(minifx.Interpreter(gm).run(x, 5.0), x * 5.0)


def test_missing_argument_names_the_parameter_and_node():
    def fn(x, y):
        return x + y

    x, _ = example_input((3,))
    with pytest.raises(RuntimeError) as ours:
        minifx.Interpreter(minifx.symbolic_trace(fn)).run(x)
    assert "Expected positional argument for parameter y" in str(ours.value)
    assert "While executing %y : [num_users=1] = placeholder[target=y]" in str(ours.value)


def test_initial_env_skips_the_nodes_it_gives():
    gm = minifx.symbolic_trace(build_sigmoid_neg(tensor))
    x, _ = example_input((2, 2))
    ran = []

    class Count(minifx.Interpreter):
        def run_node(self, n):
            ran.append(n.name)
            return super().run_node(n)

    sigmoid = next(n for n in gm.graph.nodes if n.name == "sigmoid")
    given = tensor.ones(2, 2)
    result = Count(gm).run(x, initial_env={sigmoid: given})
    assert ran == ["x", "neg", "output"]  # sigmoid did not run
    tensor.testing.assert_close(result, -given)


def test_boxed_run_clears_the_list():
    gm = minifx.symbolic_trace(build_sigmoid_neg(tensor))
    x, _ = example_input((2, 2))
    args = [x]
    tensor.testing.assert_close(minifx.Interpreter(gm).boxed_run(args), gm(x))
    assert args == []
    with pytest.raises(RuntimeError, match="1 placeholders but 2 arguments"):
        minifx.Interpreter(gm).boxed_run([x, x])


def test_run_another_graph_with_the_module_state():
    ours, _ = twins(build_mlp)
    gm = minifx.symbolic_trace(ours)
    graph = minifx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_module("head", (graph.call_module("fc2", (x,)),)))
    inp, _ = example_input((4, 16))
    result = minifx.Interpreter(gm, graph=graph).run(inp)
    tensor.testing.assert_close(result, ours.head(ours.fc2(inp)))


# --- every opcode goes through its method ------------------------------------------

def test_each_opcode_calls_its_method_once_per_node():
    class WithParam(tensor.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = tensor.nn.Linear(3, 3)
            self.scale = tensor.nn.Parameter(tensor.ones(3))

        def forward(self, x):
            return self.lin(x).relu() * self.scale + tensor.sigmoid(x)

    gm = minifx.symbolic_trace(WithParam())
    calls = []

    class Log(minifx.Interpreter):
        pass

    for op in ("placeholder", "get_attr", "call_function", "call_method", "call_module",
               "output"):
        def method(self, target, args, kwargs, _op=op):
            calls.append(_op)
            return getattr(minifx.Interpreter, _op)(self, target, args, kwargs)
        setattr(Log, op, method)

    x, _ = example_input((2, 3))
    tensor.testing.assert_close(Log(gm).run(x), gm(x))
    assert calls == [n.op for n in gm.graph.nodes]
    assert set(calls) == {"placeholder", "get_attr", "call_function", "call_method",
                          "call_module", "output"}


def test_fetch_attr_and_fetch_args_kwargs_from_env():
    ours, _ = twins(build_residual)
    gm = minifx.symbolic_trace(ours)
    interp = minifx.Interpreter(gm)
    assert interp.fetch_attr("layer.0.bn1.running_mean") is ours.layer[0].bn1.running_mean
    assert interp.submodules["layer.1.conv2"] is gm.get_submodule("layer.1.conv2")
    with pytest.raises(RuntimeError, match="nonexistent target layer.7"):
        interp.fetch_attr("layer.7.conv1")

    node = gm.graph.call_function(operator.add, ((list(gm.graph.nodes)[0],),),
                                  {"k": [list(gm.graph.nodes)[1]]})
    first, second = list(gm.graph.nodes)[:2]
    interp.env = {first: "a", second: "b"}
    assert interp.fetch_args_kwargs_from_env(node) == ((("a",),), {"k": ["b"]})
    interp.env = {first: "a"}
    with pytest.raises(RuntimeError, match=f"referenced nonexistent value {second.name}"):
        interp.fetch_args_kwargs_from_env(node)


# --- errors name the node -----------------------------------------------------------

def build_bad_matmul(lib):
    def fn(x, w):
        y = lib.relu(x)
        return lib.matmul(y, w)
    return fn


def test_error_names_the_failing_node_like_torch_fx():
    x, tx = example_input((2, 3))
    w, tw = example_input((4, 5))
    gm = minifx.symbolic_trace(build_bad_matmul(tensor))
    with pytest.raises(Exception) as ours:
        minifx.Interpreter(gm).run(x, w)
    with pytest.raises(Exception) as theirs:
        torch.fx.Interpreter(torch.fx.symbolic_trace(build_bad_matmul(torch))).run(tx, tw)

    line = "While executing %matmul : [num_users=1] = call_function[target=tensor.matmul]" \
           "(args = (%relu, %w), kwargs = {})"
    assert line in str(ours.value)
    assert line.replace("tensor", "torch") in str(theirs.value)
    # The original message comes first, then the node.
    assert str(ours.value).index("matmul") < str(ours.value).index("While executing")


def test_error_keeps_the_exception_type():
    class Boom(ValueError):
        pass

    def explode(x):
        raise Boom("bad value")

    graph = minifx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(explode, (x,)))
    gm = minifx.GraphModule(tensor.nn.Module(), graph)
    with pytest.raises(Boom) as info:
        minifx.Interpreter(gm).run(1)
    assert str(info.value).startswith("bad value\n\nWhile executing %explode")


def test_key_error_becomes_runtime_error_naming_the_node():
    graph = minifx.Graph()
    d = graph.placeholder("d")
    graph.output(graph.call_function(operator.getitem, (d, "missing")))
    gm = minifx.GraphModule(tensor.nn.Module(), graph)
    with pytest.raises(RuntimeError, match="While executing %getitem") as info:
        minifx.Interpreter(gm).run({"present": 1})
    assert isinstance(info.value.__cause__, KeyError)


def test_extra_traceback_off_lets_the_error_through_unchanged():
    x, _ = example_input((2, 3))
    w, _ = example_input((4, 5))
    interp = minifx.Interpreter(minifx.symbolic_trace(build_bad_matmul(tensor)))
    interp.extra_traceback = False
    with pytest.raises(Exception) as info:
        interp.run(x, w)
    assert "While executing" not in str(info.value)


def test_error_shows_the_user_line_when_stack_traces_are_recorded():
    tracer = minifx.Tracer()
    tracer.record_stack_traces = True
    fn = build_bad_matmul(tensor)
    graph = tracer.trace(fn)
    gm = minifx.GraphModule(tracer.root, graph)
    x, _ = example_input((2, 3))
    w, _ = example_input((4, 5))
    with pytest.raises(Exception) as info:
        minifx.Interpreter(gm).run(x, w)
    assert "Original traceback:" in str(info.value)
    assert "return lib.matmul(y, w)" in str(info.value)


# --- the opcode methods, one by one --------------------------------------------------

def build_keywords(lib):
    class Inner(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.ones(3) * 2.0)

    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = Inner()
            self.lin = lib.nn.Linear(3, 3)

        def forward(self, x):
            y = self.lin(input=x) * self.sub.scale
            return lib.sum(y, dim=1, keepdim=True) + y.mean(dim=0, keepdim=True)

    return M()


def test_opcodes_pass_keywords_and_follow_dotted_paths_like_torch_fx():
    ours, theirs = twins(build_keywords)
    gm, reference = minifx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    assert str(gm.graph) == str(reference.graph).replace("torch", "tensor")
    assert "get_attr[target=sub.scale]" in str(gm.graph)
    x, tx = example_input((2, 3))
    assert_same_values(minifx.Interpreter(gm).run(x), ours(x))
    assert_same_values(torch.fx.Interpreter(reference).run(tx), theirs(tx))
    assert_same_values(minifx.Interpreter(gm).run(x), theirs(tx))


def test_call_module_runs_the_modules_hooks_like_torch_fx():
    for base, lib in ((minifx, tensor), (torch.fx, torch)):
        gm = base.symbolic_trace(build_keywords(lib))
        seen = []
        gm.lin.register_forward_hook(
            lambda mod, args, out, seen=seen: seen.append(type(mod).__name__))
        x = lib.ones(2, 3)
        base.Interpreter(gm).run(x)
        assert seen == ["Linear"], base


def test_call_method_calls_the_values_own_method():
    class Shout(str):
        def upper(self):
            return "shout:" + str.upper(self)

    graph = minifx.Graph()
    s = graph.placeholder("s")
    graph.output(graph.call_method("upper", (s,)))
    graph2 = minifx.Graph()
    t = graph2.placeholder("t")
    graph2.output(graph2.call_method("split", (t,), {"sep": ",", "maxsplit": 1}))
    root = tensor.nn.Module()
    assert minifx.Interpreter(minifx.GraphModule(root, graph)).run(Shout("hi")) == "shout:HI"
    assert minifx.Interpreter(minifx.GraphModule(root, graph2)).run("a,b,c") == ["a", "b,c"]
    # The method is the value's attribute, even one that only the instance has.
    graph3 = minifx.Graph()
    graph3.output(graph3.call_method("shout", (graph3.placeholder("o"), 2)))
    value = types.SimpleNamespace(shout=lambda times: "hey" * times)
    assert minifx.Interpreter(minifx.GraphModule(root, graph3)).run(value) == "heyhey"


def test_a_missing_target_is_a_runtime_error_without_context():
    gm = minifx.symbolic_trace(build_keywords(tensor))
    interp = minifx.Interpreter(gm)
    with pytest.raises(RuntimeError) as info:
        interp.fetch_attr("sub.nothing")
    assert str(info.value).startswith("Node referenced nonexistent target sub.nothing")
    assert info.value.__cause__ is None and info.value.__suppress_context__
    graph = minifx.Graph()
    graph.output(graph.get_attr("sub.gone"))
    with pytest.raises(RuntimeError, match="nonexistent target sub.gone"):
        minifx.Interpreter(gm, graph=graph).run()


def test_an_error_without_a_message_still_names_the_node():
    def silent(x):
        raise ValueError()

    graph = minifx.Graph()
    x = graph.placeholder("x")
    call = graph.call_function(silent, (x,))
    graph.output(call)
    with pytest.raises(ValueError) as info:
        minifx.Interpreter(minifx.GraphModule(tensor.nn.Module(), graph)).run(1)
    assert str(info.value) == "While executing " + call.format_node()
    assert str(info.value).startswith("While executing %silent : [num_users=1] = call_function")


def test_boxed_run_leaves_a_wrong_list_alone_and_keeps_the_order():
    def fn(a, b):
        return a - b

    gm = minifx.symbolic_trace(fn)
    args = [5, 3, 1]
    with pytest.raises(RuntimeError, match="the graph has 2 placeholders but 3 arguments"):
        minifx.Interpreter(gm).boxed_run(args)
    assert args == [5, 3, 1]
    few = [5]
    with pytest.raises(RuntimeError, match="the graph has 2 placeholders but 1 arguments"):
        minifx.Interpreter(gm).boxed_run(few)  # too few is as wrong as too many
    assert few == [5]
    assert minifx.Interpreter(gm).boxed_run([5, 3]) == 2


# --- what the mutation tests asked for (scripts/mutation.py) -------------------------

def _boxing_codegen(codegen_module):
    class Boxing(codegen_module.CodeGen):
        """Doubles every input and boxes the output, as a pytree codegen reshapes them."""

        def process_inputs(self, *args):
            return tuple(a * 2 for a in args)

        def process_outputs(self, out):
            return (out, "boxed")

    return Boxing()


@pytest.mark.parametrize("io", [True, False])
def test_the_code_generators_input_and_output_processing_like_torch_fx(io):
    x, tx = example_input((2, 3))
    results = []
    for base, lib, codegen in ((minifx, tensor, minifx.codegen),
                               (torch.fx, torch, torch.fx.graph)):
        gm = base.symbolic_trace(build_sigmoid_neg(lib))
        if base is torch.fx:
            gm.graph.set_codegen(_boxing_codegen(codegen))
        else:
            gm.graph._codegen = _boxing_codegen(codegen)  # minifx's graphs have no set_codegen
        results.append(base.Interpreter(gm).run(x if base is minifx else tx,
                                                enable_io_processing=io))
    ours, theirs = results
    eager = build_sigmoid_neg(tensor)(x * 2 if io else x)
    if io:
        assert ours[1] == theirs[1] == "boxed"
        ours, theirs = ours[0], theirs[0]
    tensor.testing.assert_close(ours, eager)
    assert_same_values(ours, theirs)


@pytest.mark.parametrize("kind, args", [(KeyError, ("k", "extra")), (ValueError, ("bad", 7))])
def test_an_errors_other_arguments_are_kept_like_torch_fx(kind, args):
    def raises(x):
        raise kind(*args)  # a fresh one per run: the Interpreter rewrites its args

    caught = []
    for base, lib in ((minifx, tensor), (torch.fx, torch)):
        graph = base.Graph()
        graph.output(graph.call_function(raises, (graph.placeholder("x"),)))
        with pytest.raises(Exception) as info:
            base.Interpreter(base.GraphModule(lib.nn.Module(), graph)).run(1)
        caught.append(info.value)
    ours, theirs = caught
    assert type(ours) is type(theirs)
    assert ours.args[1:] == theirs.args[1:] == args[1:]
    assert ours.args[0].startswith(f"{args[0]}\n\nWhile executing %raises")


def test_an_unpickled_module_runs():
    # Unpickled node ops are equal to "output" and the rest, but not the same objects.
    gm = pickle.loads(pickle.dumps(minifx.symbolic_trace(build_sigmoid_neg(tensor))))
    x, _ = example_input((2, 3))
    tensor.testing.assert_close(minifx.Interpreter(gm).run(x), build_sigmoid_neg(tensor)(x))


def test_fetch_path_returns_any_value_even_one_that_compares_oddly():
    # A NumPy array compares elementwise: the lookup must test identity, not equality.
    holder = tensor.nn.Module()
    holder.inner = tensor.nn.Module()
    holder.inner.table = np.arange(3)
    assert minifx.node.fetch_path(holder, "inner.table") is holder.inner.table
    assert minifx.node.fetch_path(holder, "inner.missing", default=None) is None
    table = np.arange(2)
    assert minifx.node.fetch_path(holder, "inner.missing", default=table) is table


@pytest.mark.parametrize("path, missing", [("gone.weight", "gone"),
                                           ("inner.deeper.gone.weight", "inner.deeper.gone")])
def test_fetch_path_names_the_path_up_to_the_missing_atom(path, missing):
    holder = tensor.nn.Sequential()
    holder.inner = tensor.nn.Module()
    holder.inner.deeper = tensor.nn.Linear(2, 2)
    owner = "Sequential" if missing == "gone" else "Linear"
    with pytest.raises(AttributeError) as info:
        minifx.node.fetch_path(holder, path)
    assert str(info.value) == f"{missing}: {owner} has no attribute 'gone'"
