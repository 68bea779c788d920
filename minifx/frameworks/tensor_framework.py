"""The ``tensor`` library's answers to the Framework questions.

``tensor`` is minifx's own library and the default framework. It needs no
spelling of its own (its functions' ``__module__`` leads to their public
path) and no extra globals; its tensors have one layout (row-major) and no
quantization, and hold a NumPy array already.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import tensor
import tensor.nn
import tensor.nn.functional
from tensor.nn.utils.fusion import fuse_conv_bn_eval
from tensor.ops import OPS

from .._framework import Framework, FusionPattern, TensorLayout, register_framework
from ..tracer import _assert

# Operators that torch passes to __torch_function__ as the named Tensor method
# (``c + x`` with ``c`` a tensor records ``c.add(x)``); the others keep their
# special name (``c.__getitem__(x)``, ``c.__and__(x)``), as torch.fx records them.
# tensor's op table says which is which.
_OPERATOR_METHODS = {op.operator: op.name for op in OPS if op.operator and op.torch_passes_method}


def _is_tensor_method(func: Callable[..., Any]) -> bool:
    name = getattr(func, "__name__", None)
    if name is None:
        return False
    for cls in tensor.Tensor.__mro__[:-1]:  # all but object, whose methods are not Tensor's
        if cls.__dict__.get(name) is func:
            return True
    return False


_RANDOM_DRAWS = frozenset({tensor.rand, tensor.randn, tensor.rand_like, tensor.randn_like})
# the primitives (chapter 12) with an effect: the in-place writes (copy_, relu_ ...),
# and the draws
_IMPURE_PRIMITIVES = frozenset({tensor.ops.copy_, tensor.ops.rand, tensor.ops.randn,
                                *(p for p in tensor.ops.PRIMITIVES.values()
                                  if p.kind == "inplace")})


class TensorFramework(Framework):
    name = "tensor"
    module_class = tensor.nn.Module
    constant_types = (type(tensor.float32),)

    def is_leaf_module(self, module: Any, qualname: str) -> bool:
        return type(module).__module__.startswith("tensor.nn") and not isinstance(
            module, tensor.nn.Sequential
        )

    def is_tensor(self, obj: Any) -> bool:
        return isinstance(obj, tensor.Tensor)

    def is_parameter(self, obj: Any) -> bool:
        return isinstance(obj, tensor.nn.Parameter)

    def method_name(self, func: Callable[..., Any]) -> str | None:
        if not _is_tensor_method(func):
            return None
        return _OPERATOR_METHODS.get(func.__name__, func.__name__)

    def check_traced_through(self, module: Any, qualname: str) -> None:
        """Refuse hooks on the root: the trace runs ``forward`` itself, so they would be
        lost. (A traced-through submodule is called, so its hooks run and are recorded.)"""
        if qualname == "" and (module._forward_hooks or module._forward_pre_hooks):
            raise RuntimeError(
                f"cannot trace the root module ({type(module).__name__}): it has forward "
                "hooks, which tracing would lose because its forward is recorded op by op. "
                "Remove the hooks, or trace a module that holds this one as a submodule.")

    def assert_function(self) -> Callable[[Any, str], Any]:
        return _assert

    def has_side_effect(self, target: Any, impure_random: bool = True) -> bool:
        # tensor writes into an argument only through Tensor methods (call_method,
        # which DCE never keeps, as in torch.fx); its one global state is the
        # random generator, and a draw nobody reads still moves it on.
        return target in _RANDOM_DRAWS or target in _IMPURE_PRIMITIVES

    def tensor_layout(self, t: Any) -> TensorLayout:
        # No autograd, no quantization, one layout (row-major).
        return TensorLayout(t.stride(), "contiguous_format" if t.is_contiguous() else None,
                            False, {})

    def to_numpy(self, t: Any) -> np.ndarray:
        return t.numpy()

    def from_numpy(self, array: np.ndarray) -> Any:
        return tensor.from_numpy(array)

    def fusion_patterns(self) -> list[FusionPattern]:
        return [(tensor.nn.Conv2d, tensor.nn.BatchNorm2d, fuse_conv_bn_eval)]


TENSOR = register_framework(TensorFramework())
