"""The torch adapter: torch's answers to the Framework questions.

minifx imports this file only when it meets an object that comes from torch
(see ``_framework.framework_of``), so ``import minifx`` never imports torch.
Everything torch-specific that minifx needs lives here, and it is little:

- which modules are leaves: torch's own ``nn`` modules, except ``Sequential``;
- which dispatched functions are Tensor methods: ``c + x`` and ``c.add(x)``
  (with ``c`` a real tensor and ``x`` a Proxy) reach ``Proxy.__torch_function__``
  as ``Tensor.add`` and are recorded as ``call_method``, everything else
  (``torch.relu``, ``torch.nn.functional.relu``) as ``call_function``;
- how a torch function is spelled in ``str(graph)`` and in generated code,
  exactly as torch.fx spells it (``torch.relu``, ``torch._C._nn.linear``);
- which forward hooks a trace would silently lose, to refuse them.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional

from .. import codegen, namespace, node
from .._framework import Framework, register_framework

# --8<-- [start:spelling]
_DESCRIPTOR_TYPES = (types.MethodDescriptorType, types.WrapperDescriptorType)


def torch_qualified_name(func: Any) -> str | None:
    """How torch.fx names a torch callable, or None when it is not torch's.

    torch.fx builds the name from ``__module__`` and ``__name__`` (never
    ``__qualname__``: ``torch.relu`` is ``_VariableFunctionsClass.relu`` by
    that), keeps private modules as they are (``torch._C._nn.linear``), and
    names Tensor methods ``torch.Tensor.add``.
    """
    name = getattr(func, "__name__", None)
    if name is None:
        return None
    if isinstance(func, _DESCRIPTOR_TYPES):
        if getattr(torch.Tensor, name, None) is func:
            return f"torch.Tensor.{name}"
        return None
    module = getattr(func, "__module__", None)
    if module is None:  # some builtins forget their module: find them where torch.fx looks
        for guess in (torch, torch.nn.functional):
            if getattr(guess, name, None) is func:
                module = guess.__name__
                break
    if module is None or module.split(".")[0] != "torch":
        return None
    if module == "torch" and name == "segment_reduce":  # exported under a private name
        name = "_segment_reduce"
    return f"{module.replace('torch._ops', 'torch.ops')}.{name}"
# --8<-- [end:spelling]


# --8<-- [start:hooks]
def _hooks_of(module: torch.nn.Module) -> list[str]:
    """The names of the forward hooks and pre-hooks registered on ``module``."""
    found = []
    for kind, hooks in (
        ("forward pre-hook", module._forward_pre_hooks),
        ("forward hook", module._forward_hooks),
    ):
        for hook in hooks.values():
            label = getattr(hook, "__qualname__", None) or type(hook).__name__
            found.append(f"{kind} {label}")
    return found


def refuse_lost_hooks(module: torch.nn.Module, qualname: str) -> None:
    """Refuse a module whose hooks a trace would drop.

    A module that is traced through (the root, or a submodule that is not a
    leaf) has its ``forward`` recorded op by op; its hooks never run and are
    not in the graph, so the GraphModule would compute something else.
    torch.fx drops them silently; minifx says so. Hooks on leaf modules are
    fine: the GraphModule calls the leaf, and the leaf runs its hooks.
    """
    hooks = _hooks_of(module)
    if hooks:
        where = f"submodule {qualname!r}" if qualname else "the root module"
        raise RuntimeError(
            f"cannot trace {where} ({type(module).__name__}): it has {', '.join(hooks)}, "
            "which tracing would lose because its forward is recorded op by op. Remove the "
            "hook, or make the module a leaf (override Tracer.is_leaf_module) so that the "
            "GraphModule calls it and its hooks run."
        )
# --8<-- [end:hooks]


# Every Tensor method and property getter that __torch_function__ may be handed.
_TENSOR_METHODS = frozenset(torch.overrides.get_overridable_functions()[torch.Tensor])


# --8<-- [start:framework]
class TorchFramework(Framework):
    """torch's answers: ``torch.nn.Module``, ``torch.Tensor`` and torch.fx's rules."""

    name = "torch"
    module_class = torch.nn.Module
    constant_types = (torch.dtype, torch.device, torch.memory_format, torch.layout)

    def is_leaf_module(self, module: Any, qualname: str) -> bool:
        module_path = type(module).__module__
        return (
            module_path.startswith("torch.nn") or module_path.startswith("torch.ao.nn")
        ) and not isinstance(module, torch.nn.Sequential)

    def is_tensor(self, obj: Any) -> bool:
        return isinstance(obj, torch.Tensor)

    def is_parameter(self, obj: Any) -> bool:
        return isinstance(obj, torch.nn.Parameter)

    def method_name(self, func: Callable[..., Any]) -> str | None:
        """The method name when ``func`` is a torch.Tensor method or property getter, else None."""
        # torch hands __torch_function__ the Tensor method itself (Tensor.add for
        # ``c + x``, Tensor.size for ``x.size()``, a property's __get__ for ``x.shape``).
        # This is torch.overrides.is_tensor_method_or_property, with its set kept
        # here: the public function re-enters a warnings filter on every call.
        if func in _TENSOR_METHODS or getattr(func, "__name__", None) == "__get__":
            return func.__name__
        return None

    def function_prefix(self, fn: Callable[..., Any]) -> str | None:
        path = torch_qualified_name(fn)
        return path.rpartition(".")[0] if path else None

    def assert_function(self) -> Callable[[Any, str], Any]:
        return torch._assert

    def check_traced_through(self, module: Any, qualname: str) -> None:
        refuse_lost_hooks(module, qualname)
# --8<-- [end:framework]


# str(graph) and the generated code spell torch targets as torch.fx does, and
# the generated code reaches them through the global ``torch``.
node.qualified_name_hooks.append(torch_qualified_name)
node.path_printed_packages.add("torch")
namespace.reserve_name("torch", torch)
# A device argument prints as torch.fx prints it, ``x.to(device(type='cpu'))``.
namespace.custom_builtins["device"] = torch.device
namespace.reserve_name("device", torch.device)
codegen.repr_literal_types.append(torch.device)

TORCH = register_framework(TorchFramework())
