"""What the FX core asks about a tensor library, behind one small interface.

The core (proxy, tracer, graph module, codegen, the passes) names no tensor
library. Which objects are modules, parameters and tensors, which modules are
leaves, which functions are really Tensor methods, how a library's functions
are spelled in code, which globals that code needs, what ShapeProp records
about a tensor, how a tensor becomes a NumPy array and back, and which layer
pairs ``fuse`` folds: all are questions it asks a ``Framework``. ``tensor``
answers them in frameworks/tensor_framework.py; torch answers them in
frameworks/torch_framework.py. This file imports neither: each adapter
registers itself here when its module is imported, and an adapter is imported
only when minifx meets an object from its library (torch's only once torch is
imported), so ``import minifx`` never imports torch.
"""

from __future__ import annotations

import abc
import importlib
import sys
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import numpy as np


class TensorLayout(NamedTuple):
    """How a tensor lies in memory, as torch.fx's ShapeProp records it."""

    stride: tuple[int, ...]
    memory_format: Any  # torch.contiguous_format ...; "contiguous_format" or None for tensor
    is_quantized: bool
    qparams: dict[str, Any]  # qscheme, scale, zero_point (and axis per channel)


# (first layer type, BatchNorm type, the function that folds the BatchNorm into the layer)
FusionPattern = tuple[type, type, Callable[[Any, Any], Any]]


# --8<-- [start:framework]
class Framework(abc.ABC):
    """The questions minifx asks of a tensor library (one instance per library)."""

    name: str  # the library's top-level package, "tensor" or "torch"
    module_class: type  # tensor.nn.Module / torch.nn.Module
    # Values other than tensors that a node may hold as constants (dtypes ...).
    constant_types: tuple[type, ...] = ()
    # Constants whose repr() is source once code_globals() binds their class
    # (torch.device prints as ``device(type='cpu')``).
    repr_literal_types: tuple[type, ...] = ()

    # Tracing: what to record, and how.
    def is_module(self, obj: Any) -> bool:
        """Modules are traced through (or kept as leaves), never recorded as values."""
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
    def assert_function(self) -> Callable[[Any, str], Any]:
        """The function recorded to check a value fixed by ``concrete_args``."""

    def has_side_effect(self, target: Any, impure_random: bool = True) -> bool:
        """Whether a ``call_function`` of ``target`` must survive dead-code
        elimination though nobody reads its result: it checks something
        (torch's ``_assert``), draws from the random generator (``randn``;
        counted only when ``impure_random``), or writes into its inputs (an
        in-place operator). By default, nothing the library has does."""
        return False

    def wrapped_functions(self) -> Mapping[tuple[int, str], dict[str, Any]]:
        """The library's own ``wrap`` registry, read when a root of this library
        is traced: (id of a module's globals, function name) -> those globals,
        as ``minifx.wrap`` keeps them. A library's code registers its helpers
        with its own tracer (torchvision calls ``torch.fx.wrap``), and a trace
        must record them whole just as that tracer does. By default, none."""
        return {}

    def check_traced_through(self, module: Any, qualname: str) -> None:
        """Raise if recording ``module``'s forward op by op would lose behaviour
        (torch: forward hooks). ``qualname`` is ``""`` for the root. By default
        nothing is lost."""
        return None

    # Spelling: str(graph) and the generated code.
    def qualified_name(self, target: Any) -> str | None:
        """The dotted name of ``target`` when the library must spell it itself
        (torch's C functions do not say where torch.fx finds them), or None to
        let the general rule (``__module__`` and ``__qualname__``) spell it.
        A path that starts with ``name`` prints as it is, the package bound as
        a global of the code: ``tensor.sigmoid(x)``."""
        return None

    def code_globals(self) -> dict[str, Any]:
        """Names every generated code binds, whatever the graph, so that a
        constant prints as source (torch: ``device``). They and ``name`` are
        reserved: no node or other global takes them."""
        return {}

    # Running: what passes and backends need to know about a tensor.
    @abc.abstractmethod
    def tensor_layout(self, t: Any) -> TensorLayout:
        """Strides, memory format and quantization of ``t``, for ShapeProp's metadata."""

    @abc.abstractmethod
    def to_numpy(self, t: Any) -> np.ndarray:
        """``t``'s values as a NumPy array (sharing memory where it can), for
        backends that compute on arrays (the numba kernels)."""

    @abc.abstractmethod
    def from_numpy(self, array: np.ndarray) -> Any:
        """A tensor of this library holding ``array``: a kernel's result."""

    @abc.abstractmethod
    def fusion_patterns(self) -> list[FusionPattern]:
        """The (layer, BatchNorm, fold) triples that ``fuse`` looks for in this
        library's models, with the library's own folding arithmetic."""
# --8<-- [end:framework]


# --8<-- [start:registry]
# The registry: the interface names no adapter. minifx/frameworks/__init__.py
# says which module holds each library's adapter; that module, once imported,
# registers its Framework here. Adapters are imported on first use, so that
# ``import minifx`` never imports torch.
_adapters: dict[str, Framework] = {}  # library name -> its adapter, once imported
_adapter_modules: dict[str, str] = {}  # library name -> the module that defines it
_default: list[str] = []  # the library of values that come from none of the others


def register_framework(framework: Framework) -> Framework:
    """Called by an adapter module, at its end, with its one Framework instance."""
    _adapters[framework.name] = framework
    return framework


def register_adapter_module(library: str, module: str, default: bool = False) -> None:
    """Name the module that holds ``library``'s adapter, imported when first needed.
    The ``default`` library's adapter answers for values of no known library
    (plain Python functions, numbers)."""
    _adapter_modules[library] = module
    if default:
        _default[:] = [library]


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
    """The adapter of minifx's own library, the default one."""
    return adapter(_default[0])


_missing: set[str] = set()  # libraries that are imported but whose adapter failed to import


def _imported_libraries() -> list[str]:
    """The libraries other than the default whose package the program has imported."""
    return [lib for lib in _adapter_modules
            if lib != _default[0] and lib in sys.modules and lib not in _missing]


def comes_from(obj: Any, library: str) -> bool:
    """Whether ``obj`` (or, for a class, itself) is of a class defined in ``library``."""
    for cls in type(obj).__mro__ if not isinstance(obj, type) else obj.__mro__:
        module = cls.__module__
        if module == library or module.startswith(library + "."):
            return True
    return False


def framework_of(obj: Any) -> Framework:
    """The framework an object belongs to: the one whose package defines its class
    (torch's for torch objects), else the default (tensor's)."""
    for library in _imported_libraries():
        if comes_from(obj, library):
            return adapter(library)
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
    """For a plain function: another library's (torch's) if the globals and closure
    values it uses come from that library and none from the default one, else the
    default's (no library is imported here)."""
    others = _imported_libraries()
    if not others:
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
    if _default[0] not in libraries:
        for library in others:
            if library in libraries:
                return adapter(library)
    return tensor_framework()


def loaded_frameworks() -> list[Framework]:
    """The frameworks in play: the default (tensor's) always, another (torch's) once
    its package is imported (and its adapter imports)."""
    frameworks = [tensor_framework()]
    for library in _imported_libraries():
        try:
            frameworks.append(adapter(library))
        except ImportError:  # the adapter's own imports are missing
            _missing.add(library)
    return frameworks


# --8<-- [start:asking]
# What codegen, str(graph) and the namespace ask of all the frameworks in play.
def library_packages() -> Collection[str]:
    """The top-level package of every library minifx has an adapter for, imported or
    not: frames of their code are library code, not the user's, and their
    functions print by their path (``tensor.sigmoid``)."""
    return _adapter_modules.keys()


def spell_target(target: Any) -> str | None:
    """The first framework's own spelling of ``target`` (``torch._C._nn.linear``), or None."""
    for framework in loaded_frameworks():
        name = framework.qualified_name(target)
        if name is not None:
            return name
    return None


def has_side_effect(target: Any, impure_random: bool = True) -> bool:
    """Whether any framework in play says a call of ``target`` has a side effect."""
    return any(fw.has_side_effect(target, impure_random) for fw in loaded_frameworks())


class _Merged(NamedTuple):
    """What all the frameworks in play answer together, for codegen and Namespace."""

    code_globals: dict[str, Any]
    reserved_names: dict[str, Any]
    repr_literal_types: tuple[type, ...]


_merged: dict[tuple[str, ...], _Merged] = {}  # names of the frameworks in play -> answers


def _merged_answers() -> _Merged:
    """Worked out once per set of frameworks in play (every Namespace asks; the set
    changes only when torch is imported)."""
    frameworks = loaded_frameworks()
    key = tuple(framework.name for framework in frameworks)
    if key not in _merged:
        globals_ = {k: v for fw in frameworks for k, v in fw.code_globals().items()}
        reserved = {fw.name: sys.modules[fw.name] for fw in frameworks} | globals_
        repr_types = tuple(t for fw in frameworks for t in fw.repr_literal_types)
        _merged[key] = _Merged(globals_, reserved, repr_types)
    return _merged[key]


def code_globals() -> dict[str, Any]:
    """The names every generated code binds for the frameworks in play (``device``)."""
    return _merged_answers().code_globals


def reserved_names() -> dict[str, Any]:
    """Names no node or global may take unless it is the object named: each framework's
    package and its code globals."""
    return _merged_answers().reserved_names


def repr_literal_types() -> tuple[type, ...]:
    """Constant types whose repr() is source, once ``code_globals()`` are bound."""
    return _merged_answers().repr_literal_types
# --8<-- [end:asking]
