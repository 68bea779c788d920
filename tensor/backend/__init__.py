"""The backend switch: which module computes the arrays behind every tensor op.

A backend is a module of array-in, array-out functions with the names listed
in ARCHITECTURE.md (`unary`, `binary`, `reduce`, `matmul`, ...). The public
functions in `tensor` check arguments, pick dtypes and shapes, then call
`ops().<name>(...)`, so switching backends switches every operation at once.

The backends live in three layers, each importing only the ones before it:

- ``reference``: NumPy, the oracle (backend "numpy");
- ``kernels``: the numba kernels the book teaches (backend "numba" with
  ``TENSOR_FAST=0``);
- ``fast``: the same answers sooner, for speed only (backend "numba", the
  default).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["available", "get_backend", "int8", "on_switch", "ops", "set_backend"]

_NAMES = ("numpy", "numba")
_modules: dict[str, ModuleType] = {}
_watchers: list = []
_failures: dict[str, str] = {}
_active: ModuleType
_active_name: str


def _module_name(name: str) -> str:
    """Where backend ``name`` lives: the numba backend is the fast layer's unless
    ``TENSOR_FAST=0`` asks for the kernels layer alone."""
    if name == "numpy":
        return f"{__name__}.reference"
    from .fast import settings  # the one place TENSOR_FAST is read (and documented)

    return f"{__name__}.{'fast' if settings.FAST else 'kernels'}.backend"


def int8() -> ModuleType:
    """The int8 kernels behind ``tensor.nn.quantized``: the fast layer's ``fast.qgemm``,
    or with ``TENSOR_FAST=0`` the kernels layer's ``kernels.quantized`` (chapter 10's),
    picked as `_module_name` picks the numba backend.

    Both modules offer one interface (``pack``, ``conv2d``, ``linear``, ``max_pool2d``,
    ``adaptive_avg_pool2d``, ``add_requant``) and give the same integers; whichever
    backend `ops()` is, the int8 ops run on numba."""
    global _int8
    if _int8 is None:
        from .fast import settings

        _int8 = importlib.import_module(
            f"{__name__}.{'fast.qgemm' if settings.FAST else 'kernels.quantized'}")
    return _int8


_int8: ModuleType | None = None


def _load(name: str) -> ModuleType | None:
    if name in _modules:
        return _modules[name]
    if name in _failures:
        return None
    try:
        module = importlib.import_module(_module_name(name))
    except Exception as error:  # an absent or broken backend is simply not available
        _failures[name] = f"{type(error).__name__}: {error}"
        return None
    _modules[name] = module
    return module


def available() -> list[str]:
    """The backends that import on this machine, in order of preference."""
    return [name for name in _NAMES if _load(name) is not None]


def set_backend(name: str) -> None:
    """Make `name` ("numpy" or "numba") compute every tensor operation from now on."""
    global _active_name
    if name not in _NAMES:
        raise ValueError(f"unknown tensor backend {name!r}: choose one of {list(_NAMES)}")
    module = _load(name)
    if module is None:
        raise RuntimeError(f"tensor backend {name!r} is not available ({_failures[name]})")
    routed = "_active" in globals() and not isinstance(_active, ModuleType)
    _active_name = name
    if not routed:  # while a dispatch mode is on, the router stays (tensor.ops)
        _make_active(module)


def get_backend() -> str:
    """The name of the active backend."""
    return _active_name


def ops() -> ModuleType:
    """The active backend module (while a dispatch mode is on: `tensor.ops`'s router,
    which turns each call into its primitive)."""
    return _active


def on_switch(callback) -> None:
    """Call ``callback(module)`` with the module that `ops()` returns, now and every
    time it changes (`set_backend`, a dispatch mode's router going on or off).

    The front end keeps that module in a global of its own this way: on the path
    of every small op, reading a global is quicker than calling `ops()`."""
    _watchers.append(callback)
    callback(_active)


def _make_active(module) -> None:
    """``module`` answers `ops()` from now on; every `on_switch` callback is told."""
    global _active
    _active = module
    for callback in _watchers:
        callback(module)


def _default_name() -> str:
    """TENSOR_BACKEND if set, else the numba kernels, else NumPy where numba won't import."""
    chosen = os.environ.get("TENSOR_BACKEND")
    if chosen:
        return chosen
    return "numba" if _load("numba") is not None else "numpy"


set_backend(_default_name())
