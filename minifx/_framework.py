"""What the FX core asks about a tensor library, behind one small interface.

The core (proxy, tracer, graph module) names no tensor library. Which objects
are modules, parameters and tensors, which modules are leaves and which
functions are really Tensor methods are questions it asks a ``Framework``.
``tensor`` answers them in frameworks/tensor_framework.py; torch answers them
in frameworks/torch_framework.py. This file imports neither: each adapter
registers itself here when its module is imported, and torch's is imported
only when minifx meets an object that comes from torch, so ``import minifx``
never imports torch.
"""

from __future__ import annotations

import abc
import importlib
import sys
from collections.abc import Callable
from typing import Any


# --8<-- [start:framework]
class Framework(abc.ABC):
    """The questions minifx asks of a tensor library (one instance per library)."""

    name: str  # "tensor" or "torch"
    module_class: type  # tensor.nn.Module / torch.nn.Module
    # Values other than tensors that a node may hold as constants (dtypes ...).
    constant_types: tuple[type, ...] = ()

    def is_module(self, obj: Any) -> bool:
        return isinstance(obj, self.module_class)

    @abc.abstractmethod
    def is_leaf_module(self, module: Any, qualname: str) -> bool:
        """Built-in ``nn`` modules are leaves: recorded as ``call_module``."""

    @abc.abstractmethod
    def is_tensor(self, obj: Any) -> bool:
        """Tensors met during tracing become constants or ``get_attr`` nodes."""

    @abc.abstractmethod
    def is_parameter(self, obj: Any) -> bool:
        """Parameters are found on the root by identity and read with ``get_attr``."""

    @abc.abstractmethod
    def method_name(self, func: Callable[..., Any]) -> str | None:
        """The method name under which a dispatched ``func`` is recorded as
        ``call_method`` (``Tensor.neg`` -> ``"neg"``), or None for ``call_function``."""

    @abc.abstractmethod
    def function_prefix(self, fn: Callable[..., Any]) -> str | None:
        """The public module path that spells ``fn`` in code (``"tensor"`` for ``tensor.relu``)."""

    @abc.abstractmethod
    def assert_function(self) -> Callable[[Any, str], Any]:
        """The function recorded to check a value fixed by ``concrete_args``."""

    def check_traced_through(self, module: Any, qualname: str) -> None:
        """Raise if recording ``module``'s forward op by op would lose behaviour
        (torch: forward hooks). ``qualname`` is ``""`` for the root. By default
        nothing is lost."""
        return None
# --8<-- [end:framework]


# --8<-- [start:registry]
# The registry: the interface names no adapter. minifx/frameworks/__init__.py
# says which module holds each library's adapter; that module, once imported,
# registers its Framework here. Adapters are imported on first use, so that
# ``import minifx`` never imports torch.
_adapters: dict[str, Framework] = {}  # library name -> its adapter, once imported
_adapter_modules: dict[str, str] = {}  # library name -> the module that defines it


def register_framework(framework: Framework) -> Framework:
    """Called by an adapter module, at its end, with its one Framework instance."""
    _adapters[framework.name] = framework
    return framework


def register_adapter_module(library: str, module: str) -> None:
    """Name the module that holds ``library``'s adapter, imported when first needed."""
    _adapter_modules[library] = module


def adapter(library: str) -> Framework:
    """The adapter for ``library`` ("tensor", "torch"), importing its module the first
    time (importing torch's adapter imports torch: ImportError when torch is missing)."""
    if library not in _adapters:
        if library not in _adapter_modules:
            raise LookupError(f"minifx has no framework adapter for {library!r}; known: "
                              f"{sorted(_adapter_modules)}")
        importlib.import_module(_adapter_modules[library])  # it registers itself
    return _adapters[library]
# --8<-- [end:registry]


def tensor_framework() -> Framework:
    return adapter("tensor")


_torch: list[Framework | None] = []  # filled on first use: the adapter, or None if missing


def torch_framework() -> Framework:
    """The torch adapter; importing it imports torch."""
    return adapter("torch")


def _loaded_torch_framework() -> Framework | None:
    if not _torch:
        try:
            _torch.append(torch_framework())
        except ImportError:  # the adapter is not installed
            _torch.append(None)
    return _torch[0]


def _comes_from_torch(obj: Any) -> bool:
    for cls in type(obj).__mro__ if not isinstance(obj, type) else obj.__mro__:
        module = cls.__module__
        if module == "torch" or module.startswith("torch."):
            return True
    return False


def framework_of(obj: Any) -> Framework:
    """The framework an object belongs to: torch's for torch objects, else tensor's."""
    if "torch" in sys.modules and _comes_from_torch(obj):
        return torch_framework()
    return tensor_framework()


def _library_of(value: Any) -> str:
    """The top-level package a value comes from ("torch", "tensor", ...), or ""."""
    if isinstance(value, type) or callable(value) or hasattr(value, "__path__"):
        name = getattr(value, "__module__", None) if not hasattr(value, "__path__") \
            else value.__name__
    else:
        name = type(value).__module__
    if not isinstance(name, str):  # some objects set __module__ to None
        name = getattr(value, "__name__", "")
    return name.split(".")[0] if isinstance(name, str) else ""


def framework_of_function(fn: Callable[..., Any]) -> Framework:
    """For a plain function: torch's if the globals and closure values it uses
    come from torch and none from tensor, else tensor's (torch is never imported here)."""
    if "torch" not in sys.modules:
        return tensor_framework()
    fn_globals = getattr(fn, "__globals__", {})
    code = getattr(fn, "__code__", None)
    used = [fn_globals[name] for name in (code.co_names if code else ()) if name in fn_globals]
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            used.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    libraries = {_library_of(value) for value in used}
    if "torch" in libraries and "tensor" not in libraries:
        return torch_framework()
    return tensor_framework()


def loaded_frameworks() -> list[Framework]:
    """The frameworks in play: tensor's always, torch's once torch is imported."""
    frameworks = [tensor_framework()]
    if "torch" in sys.modules:
        torch = _loaded_torch_framework()
        if torch is not None:
            frameworks.append(torch)
    return frameworks
