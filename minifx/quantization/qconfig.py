"""QConfig and QConfigMapping: which observers watch which part of a model.

A ``QConfig`` is a pair of observer constructors: one for activations (the
values on the graph's edges) and one for weights. A ``QConfigMapping`` says
which QConfig applies where: a qualified module name wins over a module type
or function, which wins over the global default; ``None`` keeps that part in
float. ``get_default_qconfig_mapping()`` is torch's ``"x86"`` choice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import tensor

from .observer import HistogramObserver, PerChannelMinMaxObserver

__all__ = ["QConfig", "QConfigMapping", "get_default_qconfig", "get_default_qconfig_mapping"]


class QConfig(NamedTuple):
    """Observer constructors for a layer's output (``activation``) and its ``weight``."""

    activation: Callable[..., Any]
    weight: Callable[..., Any]


class QConfigMapping:
    """Where each QConfig applies: by module name, by module type or function, or globally."""

    def __init__(self) -> None:
        self.global_qconfig: QConfig | None = None
        self.object_type_qconfigs: dict[Any, QConfig | None] = {}
        self.module_name_qconfigs: dict[str, QConfig | None] = {}

    def set_global(self, qconfig: QConfig | None) -> QConfigMapping:
        self.global_qconfig = qconfig
        return self

    def set_object_type(self, object_type: Any, qconfig: QConfig | None) -> QConfigMapping:
        """For every module of this type, or every call of this function."""
        self.object_type_qconfigs[object_type] = qconfig
        return self

    def set_module_name(self, module_name: str, qconfig: QConfig | None) -> QConfigMapping:
        """For the module at this qualified name and everything inside it."""
        self.module_name_qconfigs[module_name] = qconfig
        return self

    # --8<-- [start:qconfig_for]
    def qconfig_for(self, module_name: str | None, object_type: Any) -> QConfig | None:
        """The QConfig of a node: its module name (or a parent's), then its type, then global."""
        if module_name is not None:
            name = module_name
            while True:
                if name in self.module_name_qconfigs:
                    return self.module_name_qconfigs[name]
                if not name:
                    break
                name = name.rpartition(".")[0]
        if object_type in self.object_type_qconfigs:
            return self.object_type_qconfigs[object_type]
        return self.global_qconfig
    # --8<-- [end:qconfig_for]

    def __repr__(self) -> str:
        lines = [f" global_qconfig\n  {self.global_qconfig}"]
        for title, table in (("object_type_qconfigs", self.object_type_qconfigs),
                             ("module_name_qconfigs", self.module_name_qconfigs)):
            lines.append(f" {title}")
            lines += [f"  {key}: {value}" for key, value in table.items()]
        return "QConfigMapping (\n" + "\n".join(lines) + "\n)"


def get_default_qconfig(backend: str = "x86") -> QConfig:
    """torch's x86 QConfig: quint8 activations from a histogram with one bit less of range
    (x86's int8 kernels add pairs of products in int16, which must not overflow), qint8
    per-channel symmetric weights."""
    if backend != "x86":
        raise ValueError(f"get_default_qconfig: only the 'x86' backend is built, not {backend!r}")
    return QConfig(
        activation=HistogramObserver.with_args(reduce_range=True),
        weight=PerChannelMinMaxObserver.with_args(
            dtype=tensor.qint8, qscheme=tensor.per_channel_symmetric
        ),
    )


def get_default_qconfig_mapping(backend: str = "x86") -> QConfigMapping:
    """torch's ``get_default_qconfig_mapping("x86")`` for the ops minifx quantizes."""
    return QConfigMapping().set_global(get_default_qconfig(backend))
