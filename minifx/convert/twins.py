"""Module twins: a torch ``nn`` leaf rebuilt as its ``tensor.nn`` class, weights copied.

torch keeps a layer's settings as attributes named like its constructor's
arguments (``Conv2d(3, 8, 3, stride=2)`` has ``in_channels``, ``stride`` ...),
and ``tensor.nn`` takes the same arguments. So one rule builds every twin:
call the ``tensor.nn`` class with each of its constructor's arguments read
from the torch module's attribute of that name. Then the parameters and
buffers are copied in (BatchNorm's running statistics and
``num_batches_tracked`` with them), and ``training`` is set as it was.

A setting that the torch module uses and the ``tensor`` class cannot take
(``Conv2d(padding_mode="reflect")``, ``MaxPool2d(return_indices=True)``) is
refused by name rather than dropped.
"""

from __future__ import annotations

import inspect
from typing import Any

from .table import ConversionTable
from .values import ValueConverter

_NOT_SETTINGS = {"self", "device", "dtype"}  # how a module is built, not what it computes

# Constructor arguments that torch does not keep under their own name: what the
# module holds tells them (MultiheadAttention(bias=False) keeps in_proj_bias None).
_READ_FROM = {
    ("MultiheadAttention", "bias"): lambda module: module.in_proj_bias is not None,
    ("MultiheadAttention", "add_bias_kv"): lambda module: module.bias_k is not None,
}


class TwinError(Exception):
    """Why a torch module has no faithful tensor twin (one line)."""


# --8<-- [start:make_twin]
def make_twin(module: Any, table: ConversionTable, values: ValueConverter) -> Any:
    """The ``tensor.nn`` twin of a torch ``nn`` leaf, with its weights and mode.

    The twin's class is ``table.modules`` of the module's class; none is a
    TwinError ``tensor.nn has no <class name>``. Settings the twin could not
    take are refused first (``refuse_lost_settings``). The twin is built with
    one keyword per constructor argument of its class (``_settings``) that the
    module has as an attribute, read by ``setting``; the few that torch keeps
    elsewhere are read by ``_READ_FROM``'s functions for the module's class. A
    TypeError or ValueError of the constructor is a TwinError
    ``tensor.nn.<class> refuses its settings: <error>``. Then every layer's
    weights are copied (``copy_weights_of_every_layer``) and the twin, its own
    layers too, takes the module's training mode.
    """
    torch_class = type(module)
    twin_class = table.modules.get(torch_class)
    if twin_class is None:
        raise TwinError(f"tensor.nn has no {torch_class.__name__}")
    refuse_lost_settings(module, twin_class)
    settings = {
        name: setting(module, name, parameter)
        for name, parameter in _settings(twin_class).items()
        if hasattr(module, name)
    }
    for (class_name, name), read in _READ_FROM.items():
        if class_name == torch_class.__name__:
            settings[name] = read(module)
    try:
        twin = twin_class(**settings)
    except (TypeError, ValueError) as exc:  # a setting tensor's class refuses
        raise TwinError(f"tensor.nn.{twin_class.__name__} refuses its settings: {exc}") from None
    copy_weights_of_every_layer(module, twin, values)
    twin.train(module.training)  # its own layers too (MultiheadAttention.out_proj)
    return twin
# --8<-- [end:make_twin]


# --8<-- [start:settings]
def _settings(cls: type) -> dict[str, inspect.Parameter]:
    """A class's constructor arguments that describe the computation."""
    return {
        name: parameter
        for name, parameter in inspect.signature(cls.__init__).parameters.items()
        if name not in _NOT_SETTINGS and not name.startswith("_")
        and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    }


def setting(module: Any, name: str, parameter: inspect.Parameter) -> Any:
    """The torch module's value for a constructor argument.

    ``bias=True`` is stored by torch as the bias Parameter itself (or None):
    a flag argument whose attribute is a tensor or None is read as "is it there".
    """
    value = getattr(module, name)
    if isinstance(parameter.default, bool) and not isinstance(value, bool):
        return value is not None
    return value
# --8<-- [end:settings]


# --8<-- [start:refuse]
def refuse_lost_settings(module: Any, twin_class: type) -> None:
    """Refuse a torch setting that the twin's class has no argument for, unless
    it is left at torch's default (then the twin computes the same thing).

    The settings are the constructor arguments of each class (``_settings``).
    For each of the torch class's, in order, that the twin's class lacks and the
    module has as an attribute: a value different from the argument's default,
    or any value of an argument without one, is lost, spelled ``name=value!r``.
    Lost settings are one TwinError ``tensor.nn.<twin class> has no <the lost
    settings, joined by ', '>``.
    """
    twin_settings = _settings(twin_class)
    lost = []
    for name, parameter in _settings(type(module)).items():
        if name in twin_settings or not hasattr(module, name):
            continue
        value = getattr(module, name)
        if parameter.default is inspect.Parameter.empty or value != parameter.default:
            lost.append(f"{name}={value!r}")
    if lost:
        raise TwinError(
            f"tensor.nn.{twin_class.__name__} has no {', '.join(lost)}")
# --8<-- [end:refuse]


# --8<-- [start:copy_state]
# --8<-- [start:copy_layers]
def copy_weights_of_every_layer(module: Any, twin: Any, values: ValueConverter) -> None:
    """``copy_state`` for the leaf and for each layer it holds, matched by name: a leaf
    may hold layers of its own (MultiheadAttention's ``out_proj``)."""
    ours, theirs = dict(module.named_modules()), dict(twin.named_modules())
    if set(ours) != set(theirs):
        raise TwinError(f"tensor.nn.{type(twin).__name__} holds the layers {sorted(theirs)}, "
                        f"the torch module {sorted(ours)}")
    for name, layer in ours.items():
        copy_state(layer, theirs[name], values)
# --8<-- [end:copy_layers]


def copy_state(module: Any, twin: Any, values: ValueConverter) -> None:
    """Give ``twin`` copies of ``module``'s own parameters and buffers, by name."""
    ours = dict(module.named_parameters(recurse=False))
    ours.update(module.named_buffers(recurse=False))
    theirs = dict(twin.named_parameters(recurse=False))
    theirs.update(twin.named_buffers(recurse=False))
    if set(ours) != set(theirs):
        raise TwinError(
            f"tensor.nn.{type(twin).__name__} holds {sorted(theirs)}, "
            f"the torch module holds {sorted(ours)}")
    for name, value in ours.items():
        if tuple(value.shape) != tuple(theirs[name].shape):
            raise TwinError(
                f"{name} has shape {tuple(value.shape)} in torch but "
                f"{tuple(theirs[name].shape)} in tensor.nn.{type(twin).__name__}")
        setattr(twin, name, values.tensor(value))  # a Parameter stays a Parameter
# --8<-- [end:copy_state]
