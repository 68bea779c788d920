"""Wrapped functions, the patcher that installs them for one trace, and the lazy attribute.

Each trace is compared with torch.fx's on the same function: the wrapped
calls, the autowrapped ones (``math`` and ``autowrap_functions``), the
placeholders and the attribute reads give the same graph text.
"""

import inspect
import math
import operator

import pytest
import torch
import torch.fx

import minifx
import tensor
from minifx import wrapping
from minifx.proxy import Attribute, Proxy
from minifx.tracer import Tracer, _Patcher, _recording
from tests.ch02.ch02_wrap_registry import registered


def halve_if_big(x, limit=1.0):
    return x * 0.5 if limit > 0 else x


torch.fx.wrap("halve_if_big")


def triple(x):
    return x * 3


def _hidden_triple(x):
    return x * 3


_alias_triple = triple  # a private name: autowrap passes it over, as torch.fx does
# While a trace patches the globals, the names above are the recording versions.
ORIGINALS = {"triple": triple, "halve_if_big": halve_if_big}


def torch_only_scale(x, k):
    return x * (2.0 if k > 0 else 3.0)


torch.fx.wrap("torch_only_scale")  # in torch.fx's registry only


def torch_uses_its_own_wrapped(x):
    return torch.relu(torch_only_scale(x, 1))


def uses_halve(x):
    return halve_if_big(x, limit=2.0) + halve_if_big(x)


def uses_triples(x):
    return triple(x) + _alias_triple(x) + math.floor(x.size(0) / 2)


@pytest.fixture(autouse=True, scope="module")
def _registered_with_minifx_wrap():
    # minifx.wrap as this module's code, undone when its tests end (ch02_wrap_registry).
    yield from registered(globals(), 'minifx.wrap("halve_if_big")')


def test_wrap_registers_the_callers_globals_and_answers_its_argument():
    assert wrapping._wrapped_fns_to_patch[(id(globals()), "halve_if_big")] is globals()
    namespace = {"minifx": minifx}
    exec("answer = minifx.wrap('some_name')", namespace)
    entry = wrapping._wrapped_fns_to_patch.pop((id(namespace), "some_name"))
    assert entry is namespace and namespace["answer"] == "some_name"


def test_wrap_as_a_decorator_uses_the_code_name():
    namespace = {"minifx": minifx}
    exec("@minifx.wrap\ndef renamed(x):\n    return x\nalias = renamed\n", namespace)
    entry = wrapping._wrapped_fns_to_patch.pop((id(namespace), "renamed"))
    assert entry is namespace and namespace["alias"] is namespace["renamed"]


@pytest.mark.parametrize("bad", [3, None, 2.5])
def test_wrap_refuses_what_is_neither_a_function_nor_a_name(bad):
    with pytest.raises(TypeError) as caught:
        exec("minifx.wrap(bad)", {"minifx": minifx, "bad": bad})
    assert str(caught.value) == f"wrap expects a function or a function name, not {bad!r}"


def test_wrap_inside_a_function_is_refused_with_the_reason():
    def inner():
        minifx.wrap("halve_if_big")

    with pytest.raises(NotImplementedError) as caught:
        inner()
    assert str(caught.value) == "wrap must be called at the top level of a module"
    for fx in (minifx, torch.fx):  # a lambda's frame is no module's either, in both
        with pytest.raises(NotImplementedError, match="top level of a module"):
            (lambda: fx.wrap("halve_if_big"))()


def test_wrapped_calls_trace_like_torch_fx_and_the_globals_come_back():
    ours, theirs = minifx.symbolic_trace(uses_halve), torch.fx.symbolic_trace(uses_halve)
    assert str(ours.graph) == str(theirs.graph)
    assert globals()["halve_if_big"] is halve_if_big
    nodes = ours.graph.find_nodes(op="call_function", target=halve_if_big)
    assert len(nodes) == 2 and all(n.meta["is_wrapped"] is True for n in nodes)
    x = tensor.randn(3)
    tensor.testing.assert_close(ours(x), uses_halve(x))


def test_autowrap_functions_trace_like_torch_fx():
    ours = minifx.Tracer(autowrap_functions=(triple,)).trace(uses_triples)
    theirs = torch.fx.Tracer(autowrap_functions=(triple,)).trace(uses_triples)
    assert str(ours) == str(theirs)
    assert [n.target for n in ours.find_nodes(op="call_function")].count(triple) == 1
    assert math.floor in [n.target for n in ours.nodes]
    assert globals()["triple"] is triple and globals()["_alias_triple"] is triple


def test_each_globals_dict_is_scanned_once_per_trace():
    tracer = Tracer(autowrap_functions=(triple,))
    tracer._autowrap_visited = set()
    patched = []

    class Recorder(_Patcher):
        def patch_dict(self, d, name, value):
            patched.append(name)
            super().patch_dict(d, name, value)

    with Recorder() as patcher:
        tracer._patch_autowrap(patcher, globals())
        tracer._patch_autowrap(patcher, globals())
        assert globals()["triple"] is not ORIGINALS["triple"]
        assert inspect.unwrap(globals()["triple"]) is ORIGINALS["triple"]
    assert patched == ["triple"] and tracer._autowrap_visited == {id(globals())}
    assert globals()["triple"] is triple


def test_a_torch_root_records_what_torch_fx_wrap_registered_like_torch_fx():
    ours = minifx.symbolic_trace(torch_uses_its_own_wrapped)
    theirs = torch.fx.symbolic_trace(torch_uses_its_own_wrapped)
    assert str(ours.graph) == str(theirs.graph)
    assert torch_only_scale in [n.target for n in ours.graph.nodes]
    x = torch.randn(3)
    assert torch.equal(ours(x), torch_uses_its_own_wrapped(x))


def test_a_name_that_is_nowhere_is_a_name_error():
    namespace = {"minifx": minifx}
    exec("minifx.wrap('no_such_function_anywhere')", namespace)
    try:
        with pytest.raises(NameError) as caught:
            minifx.symbolic_trace(uses_halve)
        assert str(caught.value) == (
            "minifx.wrap('no_such_function_anywhere'): no function of that name to wrap")
    finally:
        del wrapping._wrapped_fns_to_patch[(id(namespace), "no_such_function_anywhere")]
    assert "no_such_function_anywhere" not in namespace


def test_a_wrapped_builtin_is_patched_in_the_globals_and_removed_after():
    namespace = {"minifx": minifx}
    exec("minifx.wrap('len')\ndef f(x):\n    return x + len(x)\n", namespace)
    try:
        graph = Tracer().trace(namespace["f"])
        assert len in [n.target for n in graph.nodes]
        assert "len" not in namespace
    finally:
        del wrapping._wrapped_fns_to_patch[(id(namespace), "len")]


def test_the_registries_are_merged_so_each_function_is_patched_once():
    # halve_if_big is in minifx.wrap's registry and in torch.fx.wrap's, under the same key.
    seen = []

    class Recorder(_Patcher):
        def patch_dict(self, d, name, value):
            seen.append(name)
            super().patch_dict(d, name, value)

    tracer = Tracer()
    tracer.framework = minifx._framework.framework_of(torch.ones(1))
    tracer._autowrap_visited = set()
    with Recorder() as patcher:
        tracer._patch_wrapped_functions(patcher, {})
        assert globals()["halve_if_big"].__wrapped__ is ORIGINALS["halve_if_big"]
    assert seen.count("halve_if_big") == 1
    assert "floor" in seen  # the math module's own functions, from _autowrap_search


def test_recording_runs_the_function_without_a_proxy_and_records_with_one():
    calls = []

    def fn(a, b=0, *, c=1):
        calls.append((a, b, c))
        return a + b + c

    recorded = _recording(fn)
    assert recorded.__wrapped__ is fn and inspect.unwrap(recorded) is fn
    assert recorded(1, 2, c=3) == 6 and calls == [(1, 2, 3)]
    graph = minifx.Graph()
    x = Proxy(graph.placeholder("x"))
    out = recorded(5, b=x)
    assert isinstance(out, Proxy) and calls == [(1, 2, 3)]
    assert (out.node.op, out.node.target, out.node.args, out.node.kwargs) == (
        "call_function", fn, (5,), {"b": x.node})
    assert out.node.meta == {"is_wrapped": True}


# -- the patcher ------------------------------------------------------------------

class Base:
    inherited = "base"


def test_patch_attr_restores_own_attributes_and_removes_new_ones():
    class Owner(Base):
        own = "mine"
        also = None

        @staticmethod
        def helper():
            return "static"

    before = dict(vars(Owner))
    with _Patcher() as patcher:
        patcher.patch_attr(Owner, "own", 1)
        patcher.patch_attr(Owner, "inherited", 2)
        patcher.patch_attr(Owner, "helper", 3)
        patcher.patch_attr(Owner, "also", 4)
        patcher.patch_attr(Owner, "own", 5)  # twice: the undo runs last first
        assert (Owner.own, Owner.inherited, Owner.helper, Owner.also) == (5, 2, 3, 4)
    assert dict(vars(Owner)) == before and Owner.inherited == "base"
    assert Owner.helper() == "static" and "inherited" not in vars(Owner)


def test_patch_attr_undoes_even_when_the_body_raises():
    class Owner:
        kept = "kept"

    with pytest.raises(ValueError), _Patcher() as patcher:
        patcher.patch_attr(Owner, "kept", "changed")
        patcher.patch_attr(Owner, "fresh", "new")
        raise ValueError
    assert Owner.kept == "kept" and not hasattr(Owner, "fresh")


def test_patch_dict_restores_values_none_included_and_removes_new_keys():
    d = {"a": 1, "n": None}
    with _Patcher() as patcher:
        patcher.patch_dict(d, "a", 10)
        patcher.patch_dict(d, "n", 11)
        patcher.patch_dict(d, "new", 12)
        patcher.patch_dict(d, "a", 13)
        assert d == {"a": 13, "n": 11, "new": 12}
    assert d == {"a": 1, "n": None}
    with _Patcher() as patcher:
        patcher.patch_dict(d, "gone", 1)
        del d["gone"]  # removed meanwhile: the undo does not fail
    assert d == {"a": 1, "n": None}


# -- placeholders -----------------------------------------------------------------

def with_defaults(x, scale: float = 2.0, bias=None, *rest, key=3, **extra):
    return x * scale


def test_placeholders_and_their_defaults_like_torch_fx():
    ours, theirs = Tracer().trace(with_defaults), torch.fx.Tracer().trace(with_defaults)
    assert str(ours) == str(theirs)
    args = {n.target: n.args for n in ours.find_nodes(op="placeholder")}
    assert args == {"x": (), "scale": (2.0,), "bias": (None,), "key": (3,), "*rest": (),
                    "**extra": ()}
    types = {n.target: n.type for n in ours.find_nodes(op="placeholder")}
    assert types["scale"] is float and types["x"] is None


def test_a_concrete_arg_is_not_a_placeholder_like_torch_fx():
    ours = Tracer().trace(with_defaults, concrete_args={"scale": 3.0})
    theirs = torch.fx.Tracer().trace(with_defaults, concrete_args={"scale": 3.0})
    assert str(ours).replace("minifx.tracer._assert", "torch._assert") == str(theirs)


# -- attributes and create_proxy --------------------------------------------------

def reads_an_attribute_twice(x):
    shape = x.shape
    return x.view(shape) + x.reshape(shape) + x.size(0)


def test_an_attribute_read_twice_is_one_getattr_node_like_torch_fx():
    ours, theirs = Tracer().trace(reads_an_attribute_twice), torch.fx.Tracer().trace(
        reads_an_attribute_twice)
    assert str(ours) == str(theirs)
    assert len(ours.find_nodes(op="call_function", target=getattr)) == 1


def test_attribute_is_lazy_and_keeps_its_node():
    graph = minifx.Graph()
    x = Proxy(graph.placeholder("x"))
    attr = x.shape
    assert isinstance(attr, Attribute) and len(graph.nodes) == 1  # nothing recorded yet
    first = attr.node
    assert attr.node is first and len(graph.nodes) == 2
    assert (first.op, first.target, first.args) == ("call_function", getattr, (x.node, "shape"))
    called = x.size(0)
    assert called.node.op == "call_method" and called.node.target == "size"
    assert len(graph.nodes) == 3


@pytest.mark.parametrize("name", ["__lead", "tail__", "_one_", "mid__dle"])
def test_a_name_with_dunders_on_one_side_only_is_an_attribute(name):
    x = Proxy(minifx.Graph().placeholder("x"))
    attr = getattr(x, name)
    assert isinstance(attr, Attribute) and attr.attr == name and attr.root is x


class AlwaysEqual:
    """Equal to everything: only `is` tells it from inspect.Parameter.empty."""

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


ALWAYS = AlwaysEqual()


def with_an_odd_default(x, d=ALWAYS):
    return x


def test_a_default_is_told_from_no_default_by_identity():
    class Asked(Tracer):
        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                         proxy_factory_fn=None):
            return (kind, target, args)

    signature = inspect.signature(with_an_odd_default)
    assert Asked()._placeholder("d", None, signature) == ("placeholder", "d", (ALWAYS,))
    assert Asked()._placeholder("d", None, signature)[2][0] is ALWAYS
    assert Asked()._placeholder("x", {}, signature) == ("placeholder", "x", ())


@pytest.mark.parametrize("name", ["__deepcopy__", "__array__", "__len_hint__"])
def test_a_dunder_attribute_is_an_attribute_error(name):
    x = Proxy(minifx.Graph().placeholder("x"))
    with pytest.raises(AttributeError) as caught:
        getattr(x, name)
    assert caught.value.args == (name,)
    assert not hasattr(x, name)


def test_create_proxy_records_names_types_and_uses_a_factory():
    graph = minifx.Graph()
    tracer = minifx.proxy.GraphAppendingTracer(graph)
    x = tracer.create_proxy("placeholder", "x", (), {})
    made = []

    class Special(Proxy):
        pass

    def factory(node):
        made.append(node)
        return Special(node, tracer)

    y = tracer.create_proxy("call_function", operator.add, (x, [x, 2]), {"alpha": x},
                            name="total", type_expr=int, proxy_factory_fn=factory)
    assert type(y) is Special and made == [y.node] and y.tracer is tracer
    assert (y.node.name, y.node.type, y.node.args, y.node.kwargs) == (
        "total", int, (x.node, [x.node, 2]), {"alpha": x.node})
    plain = tracer.create_proxy("call_method", "neg", (y,), {})
    assert type(plain) is Proxy and plain.node.args == (y.node,) and plain.node.name == "neg"
