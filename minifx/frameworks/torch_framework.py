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
  exactly as torch.fx spells it (``torch.relu``, ``torch._C._nn.linear``), and
  the global ``device`` that lets a device constant print as source;
- which functions torch.fx records whole (those registered with ``torch.fx.wrap``);
- which forward hooks a trace would silently lose, to refuse them;
- what ShapeProp records about a torch tensor (memory format, quantization),
  how the numba kernels read and make one (NumPy), and which layer pairs
  ``fuse`` folds with torch's own arithmetic.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import torch
import torch.fx._symbolic_trace
import torch.nn.functional
from torch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

from .._framework import Framework, FusionPattern, TensorLayout, register_framework

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
    return f"{module.replace('torch._ops', 'torch.ops')}.{name}"  # torch._ops is not public
# --8<-- [end:spelling]


# --8<-- [start:layout]
_MEMORY_FORMATS = (torch.contiguous_format, torch.channels_last, torch.channels_last_3d)


def torch_layout(t: torch.Tensor) -> TensorLayout:
    """Strides, memory format and quantization parameters, as torch.fx's ShapeProp
    reads them (a sparse tensor has neither strides nor a memory format).

    The memory format is the first of ``_MEMORY_FORMATS`` (contiguous,
    channels_last, channels_last_3d) that ``t.is_contiguous(memory_format=...)``
    accepts, or None; a sparse tensor gets None and the stride ``()``, any other
    ``t.stride()``. A quantized tensor's qparams hold ``qscheme``; a per-tensor
    scheme (affine or symmetric) adds ``scale`` and ``zero_point`` (its
    ``q_scale()`` and ``q_zero_point()``); a per-channel one adds them as lists
    (``q_per_channel_scales().tolist()``, ``q_per_channel_zero_points().tolist()``)
    and ``axis``. A tensor that is not quantized has empty qparams. Returns
    ``TensorLayout(stride, memory_format, is_quantized, qparams)``.
    """
    memory_format = None
    if not t.is_sparse:
        memory_format = next(
            (f for f in _MEMORY_FORMATS if t.is_contiguous(memory_format=f)), None)
    qparams: dict[str, Any] = {}
    if t.is_quantized:
        qscheme = qparams["qscheme"] = t.qscheme()
        if qscheme in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            qparams["scale"] = t.q_scale()
            qparams["zero_point"] = t.q_zero_point()
        else:  # one scale and zero point per channel along an axis
            qparams["scale"] = t.q_per_channel_scales().tolist()
            qparams["zero_point"] = t.q_per_channel_zero_points().tolist()
            qparams["axis"] = t.q_per_channel_axis()
    stride = () if t.is_sparse else t.stride()
    return TensorLayout(stride, memory_format, t.is_quantized, qparams)
# --8<-- [end:layout]


# --8<-- [start:hooks]
def _hooks_of(module: torch.nn.Module) -> list[str]:
    """The names of the forward hooks and pre-hooks registered on ``module``.

    The pre-hooks first (``_forward_pre_hooks``), then the hooks
    (``_forward_hooks``), each in the order registered, as ``forward pre-hook
    <label>`` or ``forward hook <label>``. The label is the hook's
    ``__qualname__`` (``Net.__init__.<locals>.save``), or its type's name for a
    hook without one (a callable object, a ``functools.partial``).
    """
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

    ``qualname`` is the module's path in the root; "" is the root itself. A
    module with hooks (``_hooks_of``) is a RuntimeError: ``cannot trace
    submodule '<qualname>' (<type>)`` (``the root module (<type>)`` for the
    root) ``: it has <the hooks, joined by ', '>, which tracing would lose
    because its forward is recorded op by op. Remove the hook, or make the
    module a leaf (override Tracer.is_leaf_module) so that the GraphModule calls
    it and its hooks run.`` A module without hooks passes.
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


# --8<-- [start:side_effects]
# torch's functions that DCE keeps though nobody reads their result, as
# torch.fx keeps them: checks, random draws (torch.fx keeps these whatever
# ``impure_random`` says), grad and autocast switches, and aten's asserts.
_SIDE_EFFECT_NAMES = (
    "_assert", "_assert_async", "_C._set_grad_enabled",
    "amp.autocast_mode._enter_autocast", "amp.autocast_mode._exit_autocast",
    "rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "randperm",
    "normal", "bernoulli", "poisson", "multinomial",
    "ops.aten._assert_async.msg", "ops.aten._assert_scalar.default",
    "ops.aten._assert_tensor_metadata.default", "ops.aten.sym_constrain_range.default",
    "ops.aten.sym_constrain_range_for_size.default",
)


def _torch_objects(names: Iterable[str]) -> frozenset[Any]:
    """The objects that dotted names in torch name; a name this torch lacks is skipped.

    Each name is a path from the ``torch`` module (``amp.autocast_mode._enter_autocast``,
    ``ops.aten._assert_async.msg``), followed one attribute at a time; a missing
    attribute anywhere on the path skips that name. The answer is a frozenset.
    """
    found = []
    for name in names:
        obj: Any = torch
        for atom in name.split("."):
            obj = getattr(obj, atom, None)
        if obj is not None:
            found.append(obj)
    return frozenset(found)


@functools.cache
def _side_effects() -> frozenset[Any]:
    """The objects ``_SIDE_EFFECT_NAMES`` name in this torch, looked up once."""
    return _torch_objects(_SIDE_EFFECT_NAMES)
# --8<-- [end:side_effects]


# --8<-- [start:framework]
class TorchFramework(Framework):
    """torch's answers: ``torch.nn.Module``, ``torch.Tensor`` and torch.fx's rules."""

    name = "torch"
    module_class = torch.nn.Module
    constant_types = (torch.dtype, torch.device, torch.memory_format, torch.layout)
    repr_literal_types = (torch.device,)  # prints as ``device(type='cpu')``

    def is_leaf_module(self, module: Any, qualname: str) -> bool:
        module_path = type(module).__module__
        return (
            module_path.startswith("torch.nn") or module_path.startswith("torch.ao.nn")
        ) and not isinstance(module, torch.nn.Sequential)

    def is_tensor(self, obj: Any) -> bool:
        return isinstance(obj, torch.Tensor)

    def is_parameter(self, obj: Any) -> bool:
        return isinstance(obj, torch.nn.Parameter)

    def assert_function(self) -> Callable[[Any, str], Any]:
        return torch._assert

    def wrapped_functions(self) -> Mapping[tuple[int, str], dict[str, Any]]:
        # torch.fx keeps what ``torch.fx.wrap`` registered in this dict, in the same
        # shape as minifx.wrap's (torchvision's stochastic_depth and swin's helpers).
        return torch.fx._symbolic_trace._wrapped_fns_to_patch

    def check_traced_through(self, module: Any, qualname: str) -> None:
        refuse_lost_hooks(module, qualname)

    def qualified_name(self, target: Any) -> str | None:
        return torch_qualified_name(target)

    def code_globals(self) -> dict[str, Any]:
        # A device argument prints as torch.fx prints it, ``x.to(device(type='cpu'))``.
        return {"device": torch.device}

    def tensor_layout(self, t: Any) -> TensorLayout:
        return torch_layout(t)

    def to_numpy(self, t: Any) -> np.ndarray:
        return t.detach().numpy()  # leave autograd behind, share memory

    def from_numpy(self, array: np.ndarray) -> Any:
        return torch.from_numpy(array)

    def fusion_patterns(self) -> list[FusionPattern]:
        nn = torch.nn
        return [
            (nn.Conv1d, nn.BatchNorm1d, fuse_conv_bn_eval),
            (nn.Conv2d, nn.BatchNorm2d, fuse_conv_bn_eval),
            (nn.Conv3d, nn.BatchNorm3d, fuse_conv_bn_eval),
            (nn.Linear, nn.BatchNorm1d, fuse_linear_bn_eval),
        ]
    # --8<-- [end:framework]

    # --8<-- [start:answers]
    def method_name(self, func: Callable[..., Any]) -> str | None:
        """The method name when ``func`` is a torch.Tensor method or property getter, else None.

        A Tensor method is a member of ``_TENSOR_METHODS`` (what
        ``torch.overrides.get_overridable_functions()`` lists for ``torch.Tensor``); a
        property getter is any callable whose ``__name__`` is ``__get__`` (``x.shape``).
        The answer is ``func.__name__`` (``add``, ``__add__``, ``__get__``). Anything else,
        a callable without a ``__name__`` too, gives None.
        """
        # torch hands __torch_function__ the Tensor method itself (Tensor.add for
        # ``c + x``, Tensor.size for ``x.size()``, a property's __get__ for ``x.shape``).
        # This is torch.overrides.is_tensor_method_or_property, with its set kept
        # here: the public function re-enters a warnings filter on every call.
        if func in _TENSOR_METHODS or getattr(func, "__name__", None) == "__get__":
            return func.__name__
        return None

    def has_side_effect(self, target: Any, impure_random: bool = True) -> bool:
        """Whether DCE must keep a call of ``target`` that nobody reads, as torch.fx keeps it.

        Anything in ``_side_effects()`` (checks, random draws, grad and autocast
        switches) has one. An aten op packet (``torch.ops.aten.add_``) answers as its
        ``default`` overload (none: no side effect). An aten op overload has one when
        its schema says it writes into an argument (``_schema.is_mutable``: ``add_``,
        ``copy_``), when it is in ``_side_effects()``, or, only with
        ``impure_random``, when it draws random numbers
        (``_nondeterministic_seeded``). Anything else has none.
        """
        if target in _side_effects():
            return True
        if isinstance(target, torch._ops.OpOverloadPacket):
            target = getattr(target, "default", None)  # an op packet answers as its default
        if isinstance(target, torch._ops.OpOverload):
            # An aten op says in its schema whether it writes into an argument
            # (``add_``, ``copy_``), and whether it draws random numbers.
            return (target._schema.is_mutable or target in _side_effects()
                    or (impure_random and getattr(target, "_nondeterministic_seeded", False)))
        return False
    # --8<-- [end:answers]


TORCH = register_framework(TorchFramework())
