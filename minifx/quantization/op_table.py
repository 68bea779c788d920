"""How each op takes part in quantization: the rows of torch.ao's x86 BackendConfig we mirror.

torch decides, for every op it can meet, an *observation type* (does the
output get an observer of its own, or share its input's?) and a lowering
(which int8 op replaces the float one). minifx keeps those answers here, in
one table of names, read by ``prepare.py`` and ``lower.py`` alike:

========  ==============================================  =================================
kind      prepare_fx, then convert_fx                     torch's x86 config entries mirrored
========  ==============================================  =================================
weighted  observe inputs and output; quantized module     ``_get_conv_configs``,
          (the backend's ``quantized_modules``)           ``_get_linear_configs``
binary    observe both inputs and the output (after the   ``_get_binary_op_configs``
          ReLU that may follow); ``quantized.add``,       (with two tensor inputs)
          ``add_relu``, ``mul``, ``mul_relu``
shares    the output observer *is* the input's; the op    ``_get_share_qparams_op_configs``
          runs on the integers
cat       every input and the output share the first      ``_get_cat_config``
          input's observer; ``cat`` of the integers
own       observe input and output; quantized module      ``_get_default_op_configs``
          built with the output's qparams                 (its modules Dropout, Hardswish)
fixed     the output observer has fixed qparams (1/256    ``_get_fixed_qparams_op_configs``,
          and 0 over [0, 1]; 2/256 and 128 over [-1, 1]   ``_FIXED_QPARAMS_OP_TO_OBSERVER``
          for tanh); the op runs on the integers          of the default qconfig mapping
info      not observed; reads the quantized tensor        ``_get_tensor_info_op_configs``
          itself (``x.size()``)                           (``size``)
relu      (fuse) a Conv2d or Linear followed by one of    the ``(conv, nn.ReLU)``,
          these becomes one ConvReLU2d or LinearReLU      ``(conv, F.relu)`` patterns of
                                                          the conv and linear configs
========  ==============================================  =================================

Names are written once, relative to the framework's top module (``torch`` or
``tensor``), and resolved for each framework by ``resolve_op_table``. The
"shares" rows keep three of minifx's earlier extras that torch's config does
not list (``torch.relu``, ``torch.reshape`` and the ``flatten`` method).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

__all__ = ["FIXED_QPARAMS", "KINDS", "OpSet", "resolve_op_table"]


@dataclass(frozen=True)
class OpSet:
    """The ops of one kind: module classes, functions, and Tensor method names."""

    modules: tuple[Any, ...] = ()
    functions: tuple[Any, ...] = ()
    methods: tuple[str, ...] = ()


# Module classes live under ``nn.``; functions are named from the framework's top module.
_TABLE: dict[str, dict[str, tuple[str, ...]]] = {
    "binary": {"functions": ("add", "mul")},  # plus operator.add / operator.mul, below
    "shares": {
        "modules": ("nn.AdaptiveAvgPool2d", "nn.Hardtanh", "nn.Identity", "nn.MaxPool2d",
                    "nn.ReLU", "nn.ReLU6"),
        "functions": ("nn.functional.adaptive_avg_pool2d", "nn.functional.hardtanh",
                      "nn.functional.max_pool2d", "nn.functional.relu",
                      "nn.functional.relu6", "flatten", "transpose", "relu", "reshape"),
        "methods": ("contiguous", "flatten", "mean", "relu", "reshape", "transpose", "view"),
    },
    "cat": {"functions": ("cat",)},
    "own": {"modules": ("nn.Dropout", "nn.Hardswish")},
    "fixed": {
        "modules": ("nn.Hardsigmoid", "nn.Sigmoid", "nn.Tanh"),
        "functions": ("nn.functional.hardsigmoid", "sigmoid", "tanh"),
        "methods": ("hardsigmoid", "sigmoid", "tanh"),
    },
    "info": {"methods": ("size",)},
    "relu": {"modules": ("nn.ReLU",), "functions": ("nn.functional.relu",)},
}

KINDS = tuple(_TABLE)

# The fixed (scale, zero point) of a "fixed" op's output, by the range of its values.
FIXED_QPARAMS = {"0to1": (1.0 / 256.0, 0), "neg1to1": (2.0 / 256.0, 128)}
_NEG1TO1 = ("nn.Tanh", "tanh")


def _lookup(root: ModuleType, dotted: str) -> Any:
    value: Any = root
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def resolve_op_table(root: ModuleType) -> tuple[dict[str, OpSet], dict[Any, str]]:
    """The table for one framework (``torch`` or ``tensor``): {kind: OpSet}, and for every
    "fixed" op (class, function or method name) its range, '0to1' or 'neg1to1'."""
    import operator

    table: dict[str, OpSet] = {}
    fixed_range: dict[Any, str] = {}
    for kind, names in _TABLE.items():
        modules = tuple(_lookup(root, n) for n in names.get("modules", ()))
        functions = tuple(_lookup(root, n) for n in names.get("functions", ()))
        if kind == "binary":
            functions += (operator.add, operator.mul)
        table[kind] = OpSet(modules, functions, names.get("methods", ()))
        if kind == "fixed":
            for name in names.get("modules", ()) + names.get("functions", ()):
                fixed_range[_lookup(root, name)] = "neg1to1" if name in _NEG1TO1 else "0to1"
            for name in names.get("methods", ()):
                fixed_range[name] = "neg1to1" if name in _NEG1TO1 else "0to1"
    return table, fixed_range
