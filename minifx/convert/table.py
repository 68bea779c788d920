"""The one table: which torch function, method, attribute and module becomes which ``tensor`` one.

``tensor`` spells its API as torch does, so the table is not typed out entry
by entry: it is read off ``tensor``'s own public lists. A ``tensor`` function
is the twin of the torch function of the same name in the matching namespace
(``tensor.relu`` of ``torch.relu``, ``tensor.nn.functional.relu`` of
``torch.nn.functional.relu``), a ``Tensor`` method of the torch method of the
same name, a ``tensor.nn`` module class of the ``torch.nn`` class of the same
name. When ``tensor`` gains an op, the converter can convert it the next time
it runs; the chapter 11 tests check that every public ``tensor`` name is
either in the table or in ``NOT_TWINS`` with the reason.

Two small hand-written lists complete it: ``NOT_TWINS`` (``tensor`` names
that are not twins of torch's same-named function) and ``GAPS`` (torch ops
that models often use and ``tensor`` lacks, with what to write instead; the
error report shows that advice).
"""

from __future__ import annotations

import builtins
import difflib
import functools
import inspect
import math
import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._framework import tensor_framework
from ..magic_methods import dunder, inplace_methods, magic_methods, reflectable_magic_methods
from ..node import qualified_name
from .published import TWINS

# --8<-- [start:lists]
# (torch namespace, tensor namespace): a function is matched by name within a pair.
NAMESPACES = (
    ("torch", "tensor"),
    ("torch.nn.functional", "tensor.nn.functional"),
)

# Public tensor names that are not the twin of torch's function of the same name.
NOT_TWINS = {
    "broadcast_shapes": "tensor's helper takes (op, a, b), torch's takes *shapes",
    "manual_seed": "seeds the random generator when a program starts, not an op of a model",
    "Size": "a type: a torch.Size argument becomes a tuple",
    "Module": "the base class: a model's own modules are traced through, not twinned",
    "Sequential": "a container: tracing goes through it, so it never reaches a graph",
    "ModuleList": "a container: tracing goes through it, so it never reaches a graph",
    "ModuleDict": "a container: tracing goes through it, so it never reaches a graph",
    "Parameter": "a value: a torch Parameter becomes a tensor Parameter",
}

# torch ops that models often use and tensor lacks: what to write instead.
GAPS = {
    "masked_fill": "tensor.where(mask, value, x) computes x.masked_fill(mask, value)",
    "tril": "build the mask once in __init__ and register it as a buffer",
    "triu": "build the mask once in __init__ and register it as a buffer",
    "mish": "x * tensor.tanh(tensor.log(1 + tensor.exp(x)))",
    "Mish": "x * tensor.tanh(tensor.log(1 + tensor.exp(x)))",
    "roll": "tensor.cat of the two slices: x[..., -s:] before x[..., :-s]",
    "erf": "tensor.nn.functional.gelu is there, if erf was for GELU",
    "BatchNorm1d": "reshape to (N, C, L, 1) and use BatchNorm2d",
    "Conv1d": "unsqueeze to (N, C, 1, L) and use Conv2d with a (1, k) kernel",
    "device": "tensor computes on the CPU only: drop the device argument or .to(device)",
    "to": "tensor's Tensor.to takes a dtype only: drop the device",
}

# torch dtypes that tensor has, by name (torch.float32 -> tensor.float32).
DTYPES = ("float32", "float64", "int32", "int64", "bool")
# --8<-- [end:lists]

# Operators the tracer records as call_method when a real tensor comes first
# (``c.__and__(x)``): the dunder spelling of every entry of the operator table.
_OPERATOR_DUNDERS = frozenset(
    [dunder(name) for name in magic_methods]
    + [f"__r{name.rstrip('_')}__" for name in reflectable_magic_methods]
    + [f"__{name}__" for name in inplace_methods]
)


@dataclass(frozen=True)
class ConversionTable:
    """Everything the pass looks up, built once from torch's and tensor's public names."""

    functions: dict[Any, Callable[..., Any]]  # torch callable -> tensor callable
    methods: frozenset[str]  # Tensor method names that both libraries have
    attributes: frozenset[str]  # Tensor attributes (``x.shape``) that tensor has
    modules: dict[type, type]  # torch.nn class -> tensor.nn class
    dtypes: dict[Any, Any]  # torch.float32 -> tensor.float32 ...

    def offers(self) -> list[str]:
        """Every name tensor offers, spelled for a learner (for "did you mean")."""
        names = {qualified(fn) for fn in self.functions.values()}
        names |= {f"Tensor.{name}" for name in self.methods if not name.startswith("_")}
        names |= {f"Tensor.{name}" for name in self.attributes}
        names |= {f"tensor.nn.{cls.__name__}" for cls in self.modules.values()}
        return sorted(names)

    # --8<-- [start:nearby]
    def nearby(self, name: str, limit: int = 3) -> list[str]:
        """What tensor offers whose last part is spelled like ``name`` (difflib)."""
        offers = self.offers()
        by_last = {}
        for full in offers:
            by_last.setdefault(full.rpartition(".")[2], []).append(full)
        close = difflib.get_close_matches(name, list(by_last), n=limit, cutoff=0.7)
        return [full for last in close for full in by_last[last]][:limit]
    # --8<-- [end:nearby]


def qualified(fn: Any) -> str:
    """``tensor.relu``, ``tensor.nn.functional.relu``: the name a learner writes
    (the public namespace, as generated code spells it, not the defining file)."""
    return qualified_name(fn)


# --8<-- [start:table]
def conversion_table() -> ConversionTable:
    """The table, read off ``tensor``'s public lists (imports torch on first call)."""
    return _table_for(frozenset(m for m in _PUBLISHED_MODULES if m in sys.modules))


@functools.cache
def _table_for(published_modules: frozenset[str]) -> ConversionTable:
    """The table, built once for each set of imported libraries whose functions torch.fx
    records whole (a model that imports torchvision later gets a table with its twins)."""
    import importlib

    import torch

    import tensor
    import tensor.nn

    functions: dict[Any, Callable[..., Any]] = {}
    for torch_path, tensor_path in NAMESPACES:
        torch_ns = importlib.import_module(torch_path)
        tensor_ns = importlib.import_module(tensor_path)
        for name in public_functions(tensor_ns):
            torch_fn = getattr(torch_ns, name, None)
            if callable(torch_fn):
                functions[torch_fn] = getattr(tensor_ns, name)
    functions[torch._assert] = _tensor_assert()  # what concrete_args records
    functions.update(published_twins(published_modules))

    methods = frozenset(
        name for name in tensor_methods() if callable(getattr(torch.Tensor, name, None)))
    attributes = frozenset(
        name for name in tensor_attributes() if hasattr(torch.Tensor, name))
    modules = {
        getattr(torch.nn, name): getattr(tensor.nn, name)
        for name in tensor.nn.__all__
        if name not in NOT_TWINS and isinstance(getattr(torch.nn, name, None), type)
    }
    dtypes = {getattr(torch, name): getattr(tensor, name) for name in DTYPES}
    return ConversionTable(functions, methods, attributes, modules, dtypes)
# --8<-- [end:table]


_PUBLISHED_MODULES = frozenset(name.rpartition(".")[0] for name in TWINS)


def published_twins(modules: frozenset[str]) -> dict[Any, Callable[..., Any]]:
    """Library functions that torch.fx records whole (``published.TWINS``), with their
    twins: only those of ``modules``, libraries the program has imported, so that the
    table imports none."""
    found = {}
    for name, twin in TWINS.items():
        module_name, _, attribute = name.rpartition(".")
        function = getattr(sys.modules.get(module_name), attribute, None)
        if module_name in modules and callable(function):
            found[function] = twin
    return found


def public_functions(namespace: Any) -> list[str]:
    """The names in a tensor namespace's ``__all__`` that are functions to convert."""
    return [
        name for name in namespace.__all__
        if name not in NOT_TWINS and callable(getattr(namespace, name))
        and not isinstance(getattr(namespace, name), type)
    ]


def tensor_methods() -> list[str]:
    """Tensor's methods a graph can call: the public ones and the operator dunders."""
    import tensor

    names = []
    for name in dir(tensor.Tensor):
        if name.startswith("_") and name not in _OPERATOR_DUNDERS and name != "__getitem__":
            continue
        if not isinstance(inspect.getattr_static(tensor.Tensor, name), property):
            names.append(name)
    return sorted(names)


def tensor_attributes() -> list[str]:
    """What ``getattr`` nodes may read on tensor's values: Tensor's properties
    (``shape``, ``dtype``, ``T`` ...) and the fields of its named results
    (``torch.max(x, dim=1).values``)."""
    import tensor

    names = {
        name for name in dir(tensor.Tensor)
        if not name.startswith("_")
        and isinstance(inspect.getattr_static(tensor.Tensor, name), property)
    }
    for result_type in vars(tensor.return_types).values():
        names.update(result_type._fields)
    return sorted(names)


def _tensor_assert() -> Callable[..., Any]:
    return tensor_framework().assert_function()


# --8<-- [start:passes_through]
def passes_through(target: Any) -> bool:
    """Targets that are not torch's and run unchanged on tensor: Python's
    operators (``operator.add``, ``operator.getitem``), builtins (``getattr``)
    and ``math``, which work on any tensor library's values."""
    module = getattr(target, "__module__", None)
    return (
        module in ("_operator", "operator", "math")
        or getattr(operator, getattr(target, "__name__", ""), None) is target
        or getattr(builtins, getattr(target, "__name__", ""), None) is target
        or getattr(math, getattr(target, "__name__", ""), None) is target
    )
# --8<-- [end:passes_through]
