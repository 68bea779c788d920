"""Code generation: torch.fx's exact format, safe names, globals, linecache."""

import enum
import functools
import math
import operator
import traceback
from collections import namedtuple

import pytest
import torch.fx as tfx

import minifx
from minifx.codegen import format_target
from minifx.namespace import Namespace, snake_case

Pair = namedtuple("Pair", "a b")


def build_returns(fx):
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=None)
    a = g.call_function(operator.add, (x, 1))
    b = g.call_function(operator.mul, (a, a))
    g.call_function(operator.neg, (x,))  # dead, but kept: freed on its own line
    s = g.call_function(operator.getitem, (y, slice(1, None, None)))
    g.output({"sum": b, "rest": [s, (x,)], "f": 2.5, "s": "text"})
    return g


def test_code_matches_torch_fx_with_dicts_and_dead_values():
    assert build_returns(minifx).python_code("self").src == build_returns(tfx).python_code(
        "self").src


def test_golden_code():
    g = minifx.Graph()
    x = g.placeholder("x")
    w = g.get_attr("param")
    a = g.call_function(operator.add, (x, w))
    lin = g.call_module("linear", (a,))
    c = g.call_method("clamp", (lin,), {"min": 0.0, "max": 1.0})
    g.output(c)
    assert g.python_code("self").src == (
        "\n\n\ndef forward(self, x):\n"
        "    param = self.param\n"
        "    add = x + param;  x = param = None\n"
        "    linear = self.linear(add);  add = None\n"
        "    clamp = linear.clamp(min = 0.0, max = 1.0);  linear = None\n"
        "    return clamp\n    "
    )


def test_empty_graph_and_single_return():
    g = minifx.Graph()
    g.output(None)
    assert g.python_code().src == "\n\n\ndef forward(self):\n    return None\n    "


def test_generated_code_runs_and_frees_values():
    g = build_returns(minifx)
    gm = minifx.GraphModule({}, g)
    assert gm(2, [1, 2, 3]) == {"sum": 9, "rest": [[2, 3], (2,)], "f": 2.5, "s": "text"}


def test_globals_are_interned_under_unique_names():
    g = minifx.Graph()
    x = g.placeholder("x")
    a = g.call_function(math.sqrt, (x,))
    b = g.call_function(math.sqrt, (a,))
    node_named_like_global = g.create_node("call_function", math.floor, (b,), name="math_sqrt")
    g.output(node_named_like_global)
    code = g.python_code()
    assert code.globals["math_sqrt_1"] is math.sqrt
    assert code.src.count("math_sqrt_1(") == 2
    assert "math_sqrt = math_floor(" in code.src
    assert minifx.GraphModule({}, g)(16.0) == 2


def test_namedtuple_constant_and_other_objects_become_globals():
    g = minifx.Graph()
    x = g.placeholder("x")
    marker = object()
    a = g.call_function(operator.getitem, ((Pair(1, 2), marker), x))
    g.output(a)
    code = g.python_code()
    assert "Pair(1, 2)" in code.src and "<object" not in code.src
    gm = minifx.GraphModule({}, g)
    assert gm(0) == Pair(1, 2) and gm(1) is marker


def test_type_annotations_when_simple():
    g = minifx.Graph()
    x = g.placeholder("x", type_expr=int)
    y = g.call_function(operator.add, (x, 1), type_expr=Pair)
    g.output(y, type_expr=Pair)
    src = g.python_code().src
    spelled = Pair.__module__.replace(".", "_") + "_Pair"  # tests_ch06_test_codegen_Pair
    assert f"def forward(self, x : int) -> {spelled}:" in src
    assert f"add : {spelled} = x + 1" in src


def test_snake_case_and_namespace():
    assert snake_case("MyConvLayer") == "my_conv_layer"
    assert snake_case("ALL_CAPS") == "all_caps"
    ns = Namespace()
    names = [ns.create_name(c) for c in ["add", "add", "add_1", "getattr", "class", "1x", "a b",
                                         "", "inf"]]
    assert names == ["add", "add_1", "add_2", "getattr_1", "class_1", "_1x", "a_b", "_unnamed",
                     "inf_1"]
    obj = object()
    assert ns.create_name("thing", obj) == ns.create_name("other", obj) == "thing"


def test_node_names_from_camel_case_module_paths_match_torch():
    for fx in (minifx, tfx):
        g = fx.Graph()
        x = g.placeholder("x")
        g.output(g.call_module("encoder.SelfAttn.0", (x,)))
    assert [n.name for n in g.nodes] == ["x", "encoder_self_attn_0", "output"]


@pytest.mark.parametrize("evil", ["x; import os", "__import__('os')", "a\nimport os", "for",
                                  'q"); import os; ("'])
def test_names_cannot_inject_code(evil):
    g = minifx.Graph()
    x = g.placeholder("x")
    m = g.call_method(evil, (x,))
    a = g.call_function(getattr, (m, evil))
    c = g.create_node("call_function", operator.add, (a, evil), name=evil)
    g.get_attr(evil)
    g.call_module(f"sub.{evil}", (c,))
    g.output(c)
    src = g.python_code().src
    compile(src, "<test>", "exec")  # still one valid function
    assert "import os" not in src.replace(repr(evil), "").replace(f'"{evil}"', "")
    for n in g.nodes:
        assert n.name.isidentifier()


def test_format_target_uses_getattr_for_non_identifiers():
    assert format_target("self", "a.b") == "self.a.b"
    assert format_target("self", "layers.0") == 'getattr(self.layers, "0")'
    assert format_target("self", "if") == 'getattr(self, "if")'
    assert format_target("self", "x'y") == "getattr(self, \"x'y\")"
    assert format_target("self", 'x"y') == "getattr(self, 'x\"y')"


def test_placeholder_must_be_an_identifier():
    g = minifx.Graph()
    g.placeholder("x, y=__import__('os')")
    g.output(None)
    with pytest.raises(ValueError, match="not a Python identifier"):
        g.python_code()


def test_traceback_shows_the_generated_line():
    g = minifx.Graph()
    x = g.placeholder("x")
    d = g.call_function(operator.truediv, (x, 0))
    g.output(d)
    gm = minifx.GraphModule({}, g)
    with pytest.raises(ZeroDivisionError) as info:
        gm(1)
    text = "".join(traceback.format_exception(info.value))
    assert "truediv = x / 0;  x = None" in text
    assert "<eval_with_key>." in text


class Color(enum.Enum):
    RED = 1
    ODD = 2


def pick(color, items):
    return items[color.value - 1]


def build_spelled(fx):
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(pick, (Color.RED, [x, 2]))
    b = g.call_function(pick, (Color.ODD, (a,)))
    c = g.call_function(operator.getitem, ([x, b], (Ellipsis, slice(0, 1, None))))
    g.output(Pair(c, {"k": (x, -math.inf)}))
    return g


def test_spelling_of_enums_containers_and_builtins_matches_torch_fx():
    ours, theirs = build_spelled(minifx), build_spelled(tfx)
    code = ours.python_code("self")
    assert code.src == theirs.python_code("self").src
    assert "_pick(Color.RED, [x, 2])" in code.src and "_pick(Color.ODD, (pick,))" in code.src
    assert "[x, pick_1][(Ellipsis, slice(0, 1, None))]" in code.src
    assert "_Pair(getitem, {'k': (x, -inf)})" in code.src
    assert code.globals["Color"] is Color and code.globals["tests_ch06_test_codegen_Pair"] is Pair


def test_an_enum_member_without_an_identifier_name_is_indexed():
    Odd = enum.Enum("Odd", {"not ok": 1})
    g = minifx.Graph()
    g.output(g.call_function(pick, (Odd["not ok"], [g.placeholder("x")])))
    code = g.python_code("self")
    assert '_pick(Odd["not ok"], [x])' in code.src
    assert minifx.GraphModule({}, g)(5) == 5


def test_a_placeholder_named_apart_from_its_parameter_gets_its_own_line():
    def build(fx):
        g = fx.Graph()
        x = g.create_node("placeholder", "x", name="renamed")
        y = g.create_node("placeholder", "y", (3,), name="y")
        g.output(g.call_function(operator.add, (x, y)))
        return g

    ours = build(minifx).python_code("self").src
    assert ours == build(tfx).python_code("self").src
    assert "def forward(self, x, y = 3):\n    renamed = x\n" in ours
    gm = minifx.GraphModule({}, build(minifx))
    assert gm(4) == 7 and gm(4, 5) == 9


def read_named(obj, name):  # spelled tests_ch06_..._read_named: after "getattr" in order
    return obj


def build_inplace_and_attribute_reads(fx):
    """In-place operators and getattr calls: each has a spelling of its own."""
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    g.call_function(operator.iadd, (x, y))  # x += y;  iadd = x
    g.call_function(operator.imul, (y, 3))  # the second operand is a constant
    shape = g.call_function(getattr, (x, "shape"))  # x.shape
    keyword = g.call_function(getattr, (x, "a b"))  # no identifier: getattr(x, 'a b')
    fallback = g.call_function(getattr, (y, "dtype", None))  # a default: the call itself
    named = g.call_function(getattr, (x, "T"), {})
    computed = g.call_function(getattr, (y, x))  # a name that is no string
    # two other calls with a name for their second argument stay calls; functools_reduce
    # is spelled before "getattr" in sorted order
    before = g.call_function(functools.reduce, (x, "shape"))
    after = g.call_function(read_named, (x, "shape"))
    g.output((shape, keyword, fallback, named, computed, before, after))
    return g


def test_inplace_operators_and_attribute_reads_are_spelled_as_torch_fx():
    ours = build_inplace_and_attribute_reads(minifx).python_code("self").src
    assert ours == build_inplace_and_attribute_reads(tfx).python_code("self").src
    assert "x += y;  iadd = x" in ours and "y *= 3;  imul = y" in ours
    assert "getattr_1 = x.shape" in ours and "getattr_5 = getattr(y, x)" in ours
    assert ours.count("x.shape") == 1 and ours.count("(x, 'shape')") == 2
