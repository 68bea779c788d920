"""GraphModule over tensor modules: copying attributes, recompiling, copying, pickling."""

import copy
import operator
import pickle

import numpy as np
import pytest
import torch
import torch.fx as tfx

import minifx
import tensor
import tensor.nn as nn


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)


class Root(nn.Module):
    def __init__(self):
        super().__init__()
        self.param = nn.Parameter(tensor.randn(3, 4))
        self.linear = nn.Linear(4, 5)
        self.sub = Inner()
        self.unused = nn.Linear(2, 2)
        self.register_buffer("scale", tensor.ones(4))


def graph_for(fx, lib):
    g = fx.Graph()
    x = g.placeholder("x")
    p = g.get_attr("param")
    s = g.get_attr("scale")
    a = g.call_function(operator.add, (x, p))
    m = g.call_function(operator.mul, (a, s))
    lin = g.call_module("sub.lin", (m,))
    r = g.call_function(lib.relu, (lin,))
    out = g.call_module("linear", (r,))
    c = g.call_method("clamp", (out,), {"min": 0.0, "max": 1.0})
    g.output(c)
    return g


def eager(root, x):
    h = (x + root.param) * root.scale
    return root.linear(tensor.relu(root.sub.lin(h))).clamp(min=0.0, max=1.0)


@pytest.fixture
def root():
    return Root()


@pytest.fixture
def gm(root):
    return minifx.GraphModule(root, graph_for(minifx, tensor), "Root")


def close(a, b):
    np.testing.assert_allclose(np.asarray(a.numpy()), np.asarray(b.numpy()), rtol=1e-6)


def test_is_a_tensor_module_and_a_graph_module(gm):
    assert isinstance(gm, minifx.GraphModule) and isinstance(gm, nn.Module)
    assert type(gm).__name__ == "Root"


def test_runs_like_eager(root, gm):
    x = tensor.randn(3, 4)
    close(gm(x), eager(root, x))


def test_copies_only_what_the_graph_names(root, gm):
    names = dict(gm.named_parameters())
    assert set(names) == {"param", "sub.lin.weight", "sub.lin.bias", "linear.weight",
                          "linear.bias"}
    assert gm.sub.lin is root.sub.lin and gm.param is root.param
    assert type(gm.sub) is nn.Module  # an empty parent made for the dotted target
    assert dict(gm.named_buffers()).keys() == {"scale"}
    assert not hasattr(gm, "unused")


def test_dict_root():
    lin = nn.Linear(4, 5)
    g = minifx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("a.b", (x,)))
    gm = minifx.GraphModule({"a.b": lin}, g)
    assert gm.a.b is lin and isinstance(gm.a, nn.Module)
    with pytest.raises(RuntimeError, match=r"node a_b \(call_module\) targets 'a.b'"):
        minifx.GraphModule({}, g)


@pytest.mark.parametrize("fx, lib", [(minifx, tensor), (tfx, torch)], ids=["minifx", "torch.fx"])
def test_dict_root_puts_a_child_inside_its_parent(fx, lib):
    # The graph names "foo.bar" before "foo": the parent must still hold the child.
    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * 2.0

    lin, scale = lib.nn.Linear(3, 3), Scale()
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("foo", (g.call_module("foo.bar", (x,)),)))
    gm = fx.GraphModule({"foo.bar": lin, "foo": scale}, g)
    assert gm.foo is scale and gm.foo.bar is lin
    inp = lib.ones(1, 3)
    assert lib.equal(gm(inp), lin(inp) * 2.0) if lib is torch else \
        np.array_equal(gm(inp).numpy(), (lin(inp) * 2.0).numpy())
    assert [name for name, _ in gm.named_children()] == ["foo"]


def test_dict_root_with_a_tensor_where_a_parent_module_should_be_is_refused():
    g = minifx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(operator.add, (g.call_module("a.b", (x,)), g.get_attr("a"))))
    with pytest.raises(RuntimeError, match="cannot install 'a.b': a non-module is in the way"):
        minifx.GraphModule({"a.b": nn.Linear(2, 2), "a": tensor.ones(2)}, g)

def test_missing_target_named(root):
    g = minifx.Graph()
    g.output(g.get_attr("sub.nothing"))
    with pytest.raises(RuntimeError, match="sub.nothing"):
        minifx.GraphModule(root, g)


def test_graph_setter_recompiles(gm):
    x = tensor.randn(3, 4)
    g = minifx.Graph()
    y = g.placeholder("x")
    g.output(g.call_function(operator.neg, (y,)))
    gm.graph = g
    assert gm.code.strip().endswith("return neg")
    close(gm(x), -x)
    assert g.owning_module is gm


def test_edit_then_recompile(gm):
    for node in gm.graph.nodes:
        if node.target is tensor.relu:
            node.target = tensor.sigmoid
    gm.recompile()
    assert "relu = tensor.sigmoid(sub_lin)" in gm.code and "tensor.relu" not in gm.code


def test_each_graph_module_has_its_own_forward(root):
    a = minifx.GraphModule(root, graph_for(minifx, tensor))
    g = minifx.Graph()
    g.output(g.placeholder("x"))
    b = minifx.GraphModule(root, g)
    x = tensor.randn(3, 4)
    assert b(x) is x
    close(a(x), eager(root, x))
    assert type(a) is not type(b)


def test_instances_share_one_combined_class_and_each_gets_its_own_subclass(root):
    a = minifx.GraphModule(root, graph_for(minifx, tensor))
    b = minifx.GraphModule(root, graph_for(minifx, tensor))
    (shared,) = type(a).__bases__
    assert type(b).__bases__ == (shared,) and type(a) is not type(b)
    assert shared.__bases__ == (minifx.GraphModule, nn.Module) and shared._module_base is nn.Module
    assert shared.__name__ == "GraphModule" and shared.__module__ == minifx.GraphModule.__module__
    assert type(a).__module__ == minifx.GraphModule.__module__

    class MyGraphModule(minifx.GraphModule):
        pass

    mine = MyGraphModule(root, graph_for(minifx, tensor))
    (combined,) = type(mine).__bases__
    assert combined.__bases__ == (MyGraphModule, nn.Module) and combined is not shared
    assert combined.__module__ == __name__
    # A class that already is a module class gets only the per-instance subclass.
    again = MyGraphModule.__new__(combined, root)
    assert type(again).__bases__ == (combined,)
    # Over a torch root, the framework's module class is the base.
    theirs = minifx.GraphModule(torch.nn.Linear(2, 2), minifx.Graph())
    assert type(theirs).__bases__[0]._module_base is torch.nn.Module


def test_code_and_str_match_torch_fx(gm):
    troot = torch.nn.Module()
    troot.param = torch.nn.Parameter(torch.randn(3, 4))
    troot.register_buffer("scale", torch.ones(4))
    troot.linear = torch.nn.Linear(4, 5)
    troot.sub = torch.nn.Module()
    troot.sub.lin = torch.nn.Linear(4, 4)
    tgm = tfx.GraphModule(troot, graph_for(tfx, torch), "Root")
    assert gm.code == tgm.code.replace("torch", "tensor")
    assert gm.print_readable(print_output=False) == tgm.print_readable(
        print_output=False).replace("torch", "tensor")
    assert str(gm).splitlines()[-1] == str(tgm).splitlines()[-1]
    assert str(gm).endswith(gm.code + "\n" + str(tgm).splitlines()[-1])


def test_print_readable_prints(gm, capsys):
    text = gm.print_readable()
    assert capsys.readouterr().out == text + "\n"
    assert text.startswith("class Root(tensor.nn.Module):\n    def forward(self, x):\n")


def test_deepcopy(gm):
    x = tensor.randn(3, 4)
    other = copy.deepcopy(gm)
    assert other.graph is not gm.graph and other.param is not gm.param
    assert type(other).__name__ == "Root" and isinstance(other, minifx.GraphModule)
    close(other(x), gm(x))
    other.graph.output_node().args = (other.graph.find_nodes(op="placeholder")[0],)
    other.recompile()
    assert other(x) is x and gm(x) is not x  # the original keeps its forward
    other.graph.lint()


def test_deepcopy_of_a_graph_edited_since_recompile_runs_the_edited_graph(gm):
    """The copy may reuse compiled code only when its source is the same as the original's."""
    x = tensor.randn(3, 4)
    relu = gm.graph.find_nodes(op="call_function", target=tensor.relu)[0]
    relu.target = tensor.sigmoid  # edited, not recompiled: gm still runs relu
    other = copy.deepcopy(gm)
    assert "tensor.sigmoid" in other.code and "tensor.relu" in gm.code
    close(other(x), eager_with(gm, x, tensor.sigmoid))


def test_a_copy_keeps_its_generated_lines_for_tracebacks_after_the_original_dies(gm):
    import gc
    import linecache
    import traceback

    other = copy.deepcopy(gm)
    del gm
    gc.collect()
    with pytest.raises(RuntimeError) as caught:
        other(tensor.randn(5, 7))  # wrong shape: fails inside the generated forward
    frames = traceback.extract_tb(caught.value.__traceback__)
    generated = [f for f in frames if f.name == "forward" and f.filename.startswith("<")]
    assert generated, [f.filename for f in frames]
    assert linecache.getline(generated[0].filename, generated[0].lineno).strip() == (
        generated[0].line
    )
    assert "=" in generated[0].line  # a real line of the generated forward


def test_each_forward_has_its_own_source_entry_that_goes_with_its_module(root):
    import gc
    import linecache

    def build():
        return minifx.GraphModule(root, graph_for(minifx, tensor))

    a, b = build(), build()
    names = [type(m).forward.__code__.co_filename for m in (a, b)]
    assert names[0] != names[1] and all(n.startswith("<eval_with_key>.minifx.") for n in names)
    size, mtime, lines, name = linecache.cache[names[0]]
    assert (size, mtime, "".join(lines), name) == (len(a.code), None, a.code, names[0])
    assert type(a).forward._fx_compiled[0] == a.code
    assert "forward" not in a.recompile().globals  # run in a copy: its globals stay as they were
    del a
    gc.collect()
    assert names[0] not in linecache.cache and names[1] in linecache.cache


def eager_with(root, x, activation):
    h = (x + root.param) * root.scale
    return root.linear(activation(root.sub.lin(h))).clamp(min=0.0, max=1.0)


def test_pickle_round_trip(gm):
    x = tensor.randn(3, 4)
    back = pickle.loads(pickle.dumps(gm))
    assert isinstance(back, minifx.GraphModule) and isinstance(back, nn.Module)
    assert back.code == gm.code and str(back.graph) == str(gm.graph)
    close(back(x), gm(x))


def test_submodule_api(gm):
    assert gm.add_submodule("extra.deep", nn.ReLU())
    assert isinstance(gm.extra.deep, nn.ReLU)
    assert not gm.add_submodule("param.x", nn.ReLU())  # a parameter is in the way
    assert gm.delete_submodule("extra.deep") and not hasattr(gm.extra, "deep")
    assert not gm.delete_submodule("nothing.here")
    gm.delete_all_unused_submodules()
    assert [n for n, _ in gm.named_modules()] == ["", "sub", "sub.lin", "linear"]
    assert gm.delete_submodule("linear")
    with pytest.raises(RuntimeError, match="linear"):
        gm.graph.lint()


def test_over_a_torch_root_it_is_a_torch_module_matching_torch_fx():
    class TM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.param = torch.nn.Parameter(torch.rand(3, 4))
            self.sub = torch.nn.Sequential(torch.nn.Linear(4, 5))
            self.register_buffer("b", torch.ones(5))

        def forward(self, x):
            return torch.sigmoid(self.sub(x + self.param) * self.b).clamp(min=0.0, max=1.0)

    model = TM().eval()
    ours, theirs = minifx.symbolic_trace(model), tfx.symbolic_trace(model)
    assert isinstance(ours, torch.nn.Module) and isinstance(ours, minifx.GraphModule)
    assert not ours.training
    assert ours.code == theirs.code and str(ours.graph) == str(theirs.graph)
    assert str(ours) == str(theirs)
    assert ours.print_readable(print_output=False) == theirs.print_readable(print_output=False)
    x = torch.rand(3, 4)
    for copy_ in (ours, copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert torch.equal(copy_(x), theirs(x))
        assert isinstance(copy_, torch.nn.Module)


def test_nested_graph_modules_print_readable_like_torch_fx(gm):
    inner_graph = minifx.Graph()
    v = inner_graph.placeholder("v")
    inner_graph.output(inner_graph.call_function(operator.neg, (v,)))
    gm.add_submodule("inner", minifx.GraphModule({}, inner_graph, "Inner"))
    text = gm.print_readable(print_output=False)
    assert "\n    class inner(tensor.nn.Module):\n        def forward(self, v):\n" in text


def test_print_readable_with_stack_traces_matches_torch_fx():
    def build(fx, root):
        g = fx.Graph()
        x = g.placeholder("x")
        a = g.call_function(operator.neg, (x,))
        b = g.call_function(operator.neg, (a,))
        c = g.call_function(operator.abs, (b,))
        a.stack_trace = b.stack_trace = 'File "model.py", line 7, in forward\n    y = -(-x)\n'
        c.stack_trace = 'File "model.py", line 8, in forward\n    return abs(y)\n'
        g.output(c)
        return fx.GraphModule(root, g, "Model")

    ours = build(minifx, nn.Module()).print_readable(print_output=False)
    theirs = build(tfx, torch.nn.Module()).print_readable(print_output=False)
    assert ours == theirs.replace("torch", "tensor")
    assert "# File: model.py:8 in forward, code: return abs(y)" in ours
