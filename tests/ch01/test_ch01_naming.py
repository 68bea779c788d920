"""How a node's line names things: targets, annotations and arguments, as torch.fx does.

The oracle for a target's name is torch.fx's own (`torch.fx.node._get_qualified_name`);
for whole lines, the same program traced by torch.fx.
"""

import abc
import functools
import math
import operator
import sys
import types
import typing
from unittest import mock

import pytest
import torch
import torch.fx
from torch.fx.node import _get_qualified_name, _type_repr

import minifx
import tensor
from minifx.node import _format_arg, qualified_name, type_repr


def _outer():
    def inner(x):
        return x
    return inner


NAMED = [math.sqrt, operator.add, operator.getitem, len, getattr, _outer(), torch.sigmoid,
         torch.nn.functional.relu, torch.Tensor.add, tensor.sigmoid, tensor.nn.functional.relu,
         tensor.Tensor, torch.Tensor, functools.reduce, typing.List]  # noqa: UP006


@pytest.mark.parametrize("obj", NAMED, ids=lambda o: getattr(o, "__name__", repr(o)))
def test_qualified_names_are_torch_fx_names(obj):
    assert qualified_name(obj) == _get_qualified_name(obj)


def test_what_has_no_path_is_named_anyway_or_refused():
    assert qualified_name(_outer()) == f"{__name__}.inner"
    assert qualified_name(lambda x: x) == f"{__name__}.lambda_"
    with pytest.raises(RuntimeError, match="cannot name target functools.partial.*has no "
                                           "__name__"):
        qualified_name(functools.partial(operator.add, 1))
    assert qualified_name(dict.get) == "__unknown__.dict.get"  # a descriptor has no module
    impostor = _outer()
    impostor.__name__ = "len"  # named like a builtin, but not the builtin
    assert qualified_name(impostor) == f"{__name__}.len"

    class Kernel:
        __fx_name__ = "fused_kernel_0"

    assert qualified_name(Kernel()) == "fused_kernel_0"


def _helper(x):
    return x


def test_a_hidden_class_in_the_qualname_falls_back_to_the_name(monkeypatch):
    monkeypatch.setattr(_helper, "__qualname__", "_Hidden.helper_impl")
    monkeypatch.setattr(_helper, "__name__", "_helper")
    assert qualified_name(_helper) == f"{__name__}._helper"
    monkeypatch.setattr(_helper, "__name__", "missing_name")
    assert qualified_name(_helper) == f"{__name__}._Hidden.helper_impl"


def test_private_modules_are_dropped_while_the_parent_exposes_the_object(monkeypatch):
    package = types.ModuleType("pkgx")
    inner = types.ModuleType("pkgx.sub._impl")
    sub = types.ModuleType("pkgx.sub")

    def f(x):
        return x

    f.__module__, f.__qualname__ = "pkgx.sub._impl", "f"
    inner.f = f
    for module in (package, sub, inner):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    assert qualified_name(f) == "pkgx.sub._impl.f"  # nobody above re-exports it
    sub.f = f
    assert qualified_name(f) == "pkgx.sub.f"
    package.f = f  # only private segments are dropped: pkgx.sub is public
    assert qualified_name(f) == "pkgx.sub.f"
    sub.f = _helper  # the parent gives another object: stay private
    assert qualified_name(f) == "pkgx.sub._impl.f"
    # a private segment right after the top package goes too
    top, impl = types.ModuleType("pkgy"), types.ModuleType("pkgy._impl")
    # a private top package is kept: only the segments after the first count
    private_top, public = types.ModuleType("_pkgz"), types.ModuleType("_pkgz.pub")

    def g(x):
        return x

    def h(x):
        return x

    g.__module__, g.__qualname__ = "pkgy._impl", "g"
    h.__module__, h.__qualname__ = "_pkgz.pub", "h"
    impl.g = top.g = g
    public.h = private_top.h = h
    for module in (top, impl, private_top, public):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    assert qualified_name(g) == "pkgy.g"
    assert qualified_name(h) == "_pkgz.pub.h"


def test_type_annotations_print_like_torch_fx():
    def build(lib):
        def program(a: int, b: lib.Tensor, c: list[int], d: typing.List[int],  # noqa: UP006
                    e: "float", f: typing.Optional[lib.Tensor], g: tuple[int, ...]):  # noqa: UP045
            return a
        return program

    ours = str(minifx.symbolic_trace(build(tensor)).graph)
    theirs = str(torch.fx.symbolic_trace(build(torch)).graph)
    assert ours == theirs.replace("torch", "tensor")
    assert "%a : int [num_users=1]" in ours and "%b : tensor.Tensor [" in ours
    assert "%c : list[int] [" in ours and "%d : typing.List[int] [" in ours
    assert type_repr(...) == "..." and type_repr(_helper) == "_helper"
    assert type_repr(int) == "int" and type_repr(tensor.Tensor) == "tensor.Tensor"
    assert type_repr(type(None)) == "NoneType"  # a builtin class that builtins does not name
    assert type_repr("float") == "'float'"
    # against torch.fx: a class of a module that sorts before "builtins", and an
    # object equal to everything (it is not the ellipsis)
    for obj in (abc.ABC, mock.ANY):
        assert type_repr(obj) == _type_repr(obj)


def test_arguments_print_like_torch_fx():
    def build(lib):
        def program(x):
            parts = x.split([1, 2], dim=0)
            pair = (parts[0],)
            return lib.cat([*pair, parts[1]], dim=0)[1:], x.view(()), {"k": (x,), "s": "text"}
        return program

    ours = str(minifx.symbolic_trace(build(tensor)).graph)
    theirs = str(torch.fx.symbolic_trace(build(torch)).graph)
    assert ours == theirs.replace("torch", "tensor")
    graph = minifx.Graph()
    x = graph.placeholder("x")
    assert _format_arg((x,)) == "(%x,)" and _format_arg(()) == "()"
    assert _format_arg([x, (x, 2)]) == "[%x, (%x, 2)]"
    assert _format_arg({"dim": 1, "out": [x]}) == "{dim: 1, out: [%x]}"
    assert _format_arg("text") == "text" and _format_arg(slice(None, 2)) == "slice(None, 2, None)"
