"""The CodeWriter's parts: annotations, paths, keyword arguments, the def line, globals.

Each program is written twice, once per library, and the generated code is
compared with torch.fx's where torch.fx has the same behaviour; where minifx
goes further (a parameter that shadows a global or a builtin), the code must
run and give the right answer.
"""

import operator
import typing

import pytest
import torch
import torch.fx

import minifx
import tensor
from minifx.codegen import CodeGen, CodeWriter, _package_path


def _annotated(a: typing.List[int], b: "int | None", c: int | None, d: typing.Tuple[()],  # noqa: UP006
               e: dict[str, typing.Any], f: list[tuple[()]], g: "float", h: torch.Tensor,
               *args: int):
    return a


def test_annotations_are_spelled_like_torch_fx():
    ours, theirs = minifx.symbolic_trace(_annotated), torch.fx.symbolic_trace(_annotated)
    assert ours.code == theirs.code
    assert "a : typing_List[int], b : _int_None_, c : int|NoneType" in ours.code
    assert "int" not in ours.forward.__globals__  # a builtin class is written, not bound
    assert "f : list[tuple], g : _float_, h : torch.Tensor, *args):" in ours.code


def _paths_and_keywords(fx, lib):
    root = lib.nn.Module()
    root.lin = lib.nn.Linear(3, 3)
    root.blocks = lib.nn.ModuleList([lib.nn.Linear(3, 3)])
    g = fx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("blocks.0.weight", type_expr=lib.Tensor)
    y = g.call_module("lin", (), {"input": x}, type_expr=lib.Tensor)
    z = g.call_module("blocks.0", (y,))
    g.output(g.call_function(operator.add, (z, g.call_function(lib.sum, (w,), {"dim": 0}))))
    return fx.GraphModule(root, g)


def test_get_attr_and_call_module_lines_like_torch_fx():
    ours, theirs = _paths_and_keywords(minifx, tensor), _paths_and_keywords(torch.fx, torch)
    assert ours.code == theirs.code.replace("torch", "tensor")
    assert "getattr(self.blocks, \"0\").weight" in ours.code
    assert "lin : tensor.Tensor = self.lin(input = x)" in ours.code
    x = tensor.randn(2, 3)
    block = ours.get_submodule("blocks.0")
    expected = block(ours.lin(x)) + tensor.sum(block.weight, dim=0)
    tensor.testing.assert_close(ours(x), expected)


def test_a_parameter_named_getattr_leaves_the_builtin_usable():
    root = tensor.nn.Module()
    root.blocks = tensor.nn.ModuleList([tensor.nn.Linear(2, 2)])
    g = minifx.Graph()
    shadow = g.placeholder("getattr")
    w = g.get_attr("blocks.0.bias")
    out = g.call_module("blocks.0", (shadow,))
    g.output((out, w))
    gm = minifx.GraphModule(root, g)
    assert "= getattr(" not in gm.code  # the parameter's name, not the builtin
    assert gm.code.count("getattr_2(self.blocks, \"0\")") == 2
    x = tensor.randn(1, 2)
    result, bias = gm(x)
    assert bias is root.blocks[0].bias
    tensor.testing.assert_close(result, root.blocks[0](x))


def test_a_body_transformer_sees_the_body_and_leading_newlines_go_like_torch_fx():
    codes = []
    for fx in (minifx, torch.fx):
        g = fx.Graph()
        x = g.placeholder("x")
        g.output(g.call_function(operator.neg, (x,)))
        g.on_generate_code(lambda current: lambda body: ["\n", "\n", "# note\n", *body])
        codes.append(g.python_code("self").src)
    assert codes[0] == codes[1]
    assert "def forward(self, x):\n    # note\n    neg = -x" in codes[0]


def _wrapped_helper(x):
    return x + 1


minifx.wrap("_wrapped_helper")
torch.fx.wrap("_wrapped_helper")


def test_wrapped_calls_are_wrapped_again_above_forward_like_torch_fx():
    def fn(x):
        return _wrapped_helper(x) * 2

    ours, theirs = minifx.symbolic_trace(fn), torch.fx.symbolic_trace(fn)
    assert ours.code == theirs.code.replace("torch.fx._symbolic_trace.wrap", "wrap")
    assert ours.code.startswith('\nwrap("tests_ch06_test_codegen_writer__wrapped_helper")\n\n'
                                'def forward(self, x):')
    assert ours.forward.__globals__["wrap"] is minifx.wrap


def test_an_empty_graph_passes():
    codes = [fx.Graph().python_code("self").src for fx in (minifx, torch.fx)]
    assert codes[0] == codes[1] and "def forward(self):\n    pass" in codes[0]


def test_a_global_name_taken_by_another_object_is_refused():
    writer = CodeWriter(CodeGen(), minifx.Graph(), "self")
    first, second = object(), object()
    assert writer.add_global(first, "thing") == "thing"
    assert writer.add_global(first, "other hint") == "thing"  # the same object, the same name
    writer.globals["clash"] = first
    with pytest.raises(RuntimeError, match="global clash is already bound to another object"):
        writer.add_global(second, "clash")
    assert writer.add_global(tensor.sigmoid) == "tensor.sigmoid"
    assert writer.globals["tensor"] is tensor


def test_a_star_parameter_named_like_a_package_renames_the_package():
    g = minifx.Graph()
    rest = g.create_node("placeholder", "*tensor", name="rest")
    g.output(g.call_function(tensor.sigmoid, (g.call_function(operator.getitem, (rest, 0)),)))
    gm = minifx.GraphModule(tensor.nn.Module(), g)
    assert "def forward(self, *tensor):" in gm.code and "tensor_1.sigmoid" in gm.code
    x = tensor.randn(3)
    tensor.testing.assert_close(gm(x), tensor.sigmoid(x))


def test_node_names_must_be_unique_identifiers():
    g = minifx.Graph()
    a = g.placeholder("a")
    b = g.call_function(operator.neg, (a,))
    g.output(b)
    b.name = "a"  # set by hand: two nodes now share a name
    with pytest.raises(ValueError, match="node 'a' .call_function.: a node's name must be a "
                                         "unique Python identifier"):
        g.python_code("self")
    b.name = "not a name"
    with pytest.raises(ValueError, match="must be a unique Python identifier"):
        g.python_code("self")


class _Callable:
    def __call__(self, x):
        return x


def test_only_a_callable_reachable_by_its_own_path_prints_as_a_path(monkeypatch):
    assert _package_path(tensor.sigmoid) == "tensor.sigmoid"
    assert _package_path(tensor.nn.functional.relu) == "tensor.nn.functional.relu"
    assert _package_path(int) is None and _package_path(tensor.float32) is None
    assert _package_path(operator.add) is None  # not a printed package

    def shadow(x):
        return x

    shadow.__module__, shadow.__qualname__ = "tensor", "nn.0"
    assert _package_path(shadow) is None  # an atom that is no identifier
    shadow.__qualname__ = "made up"
    monkeypatch.setattr(tensor, "made up", shadow, raising=False)
    assert _package_path(shadow) is None  # reachable, but not by a path code can spell
    shadow.__qualname__ = "made_up"
    assert _package_path(shadow) is None  # tensor has no made_up: no path leads to it
    monkeypatch.setattr(tensor, "made_up", shadow, raising=False)
    assert _package_path(shadow) == "tensor.made_up"
    monkeypatch.setattr(tensor, "made_up", _Callable())
    assert _package_path(shadow) is None  # the path leads to another object


def test_infinities_and_nan_are_spelled_as_globals_even_when_a_parameter_hides_them():
    for hidden in ("x", "inf", "nan"):
        g = minifx.Graph()
        p = g.placeholder(hidden)
        scaled = g.call_function(operator.mul, (p, -float("inf")))
        g.output((g.call_function(operator.add, (scaled, float("nan"))), 1.5, -0.25))
        gm = minifx.GraphModule(tensor.nn.Module(), g)
        inf_name = gm.code.split("* -")[1].split(";")[0]
        nan_name = gm.code.split("mul + ")[1].split(";")[0]
        assert (inf_name == "inf") == (hidden != "inf")  # renamed only when hidden
        assert (nan_name == "nan") == (hidden != "nan")
        assert gm.forward.__globals__[inf_name] == float("inf")
        assert gm.forward.__globals__[nan_name] != gm.forward.__globals__[nan_name]
        assert "(add, 1.5, -0.25)" in gm.code
        value, *rest = gm(2.0)
        assert value != value and rest == [1.5, -0.25]  # nan
