"""``minifx.compile``: trace on the first call, hand the graph to a backend,
cache what it returns.

This is the front half of the torch.compile pattern. The compiled object
looks at each call's inputs and reduces them to a *signature*: the shape
and dtype of every tensor, the type and value of everything else. The first
call with a new signature traces the model (non-tensor inputs are fixed as
``concrete_args``, so Python control flow on them is allowed), gives the
GraphModule and the call's inputs to the backend, and stores the callable
the backend returns in ``cache[signature]``. Every later call with the same
signature goes straight to that callable.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple

from .._framework import framework_of
from ..tracer import symbolic_trace
from .backends import Backend, lookup_backend


# --8<-- [start:signature]
class TensorSpec(NamedTuple):
    """What the cache remembers about a tensor input."""

    shape: tuple[int, ...]
    dtype: Any  # tensor.float32 / torch.float32 ...


_TENSOR_TYPES: set[type] = set()  # types found to be tensors (a tensor is one by its class)


def _is_tensor(value: Any) -> bool:
    if type(value) in _TENSOR_TYPES:  # every call of a compiled model asks, per input
        return True
    if framework_of(value).is_tensor(value):
        _TENSOR_TYPES.add(type(value))
        return True
    return False
# --8<-- [end:signature]


# --8<-- [start:describe]
def describe(value: Any) -> Hashable:
    """The part of one input that a compiled function depends on."""
    if _is_tensor(value):
        return TensorSpec(tuple(value.shape), value.dtype)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(describe(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, describe(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return (type(value).__name__, repr(value))
    return (type(value).__name__, value)


def _holds_tensor(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_tensor(v) for v in value.values())
    return _is_tensor(value)
# --8<-- [end:describe]


# --8<-- [start:compiled_model]
class CompiledModel:
    """What ``minifx.compile`` returns: called like the model it wraps.

    ``cache`` maps each input signature seen so far (a tuple with one entry
    per parameter of the model's ``forward``) to the backend's callable.
    Attributes the object does not have itself are read from the model,
    so ``compiled.weight`` is ``model.weight``; the model is ``_orig_mod``.
    """

    def __init__(self, model: Callable[..., Any], backend: Backend) -> None:
        self._orig_mod = model
        self.backend = backend
        self.cache: dict[tuple, Callable[..., Any]] = {}
        fn = model.forward if framework_of(model).is_module(model) else model
        self._signature = inspect.signature(fn)
        for p in self._signature.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"minifx.compile: {p} in the signature of "
                                f"{getattr(fn, '__qualname__', fn)}: the inputs must be "
                                "named parameters, not *args or **kwargs")
        # A call that passes every parameter by position needs no binding: its
        # arguments are already the inputs, in order (binding is slow next to a call).
        self._positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                               for p in self._signature.parameters.values())
        if self._positional != len(self._signature.parameters):
            self._positional = -1  # keyword-only parameters: always bind
    # --8<-- [end:compiled_model]

    # --8<-- [start:cache]
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the model on these inputs, through the cache.

        The inputs are the arguments bound to the parameters of the model's
        ``forward`` (``self._signature``), defaults filled in: ``f(x, y)``,
        ``f(y=y, x=x)`` and ``f(x, y, 2.0)`` (2.0 being the default) are the
        same inputs. A call that passes exactly ``self._positional`` arguments
        by position and no keyword is that already, and is not bound. Binding
        raises the TypeError the model would raise for a bad call. The cache
        key is the tuple of ``describe`` of each input, in parameter order; a
        key not yet in ``self.cache`` is compiled once (``_compile``, given the
        bound arguments by name and the inputs as a list) and stored. The
        cached callable then runs on the inputs, by position.
        """
        arguments = None
        if kwargs or len(args) != self._positional:
            bound = self._signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = bound.arguments
            args = tuple(arguments.values())
        key = tuple(map(describe, args))
        compiled = self.cache.get(key)
        if compiled is None:
            if arguments is None:
                arguments = self._signature.bind(*args).arguments
            compiled = self.cache[key] = self._compile(arguments, list(args))
        return compiled(*args)

    def _compile(self, arguments: dict[str, Any], inputs: list[Any]) -> Callable[..., Any]:
        """Trace for these inputs, then let the backend turn the graph into a callable.

        Each argument that holds no tensor (``_holds_tensor``: a list or dict
        of tensors does hold some) is a constant of this cache entry: they go
        to ``symbolic_trace(self._orig_mod, concrete_args=...)`` by name (None
        when there is none), so that Python control flow on them traces. The
        backend is called with the GraphModule and ``inputs``; what it returns
        must be callable, else a TypeError: ``minifx.compile: backend <name>
        returned <type name>, not a callable`` (``<name>``: the backend's
        ``__name__``, or its repr).
        """
        constants = {name: v for name, v in arguments.items() if not _holds_tensor(v)}
        gm = symbolic_trace(self._orig_mod, concrete_args=constants or None)
        compiled = self.backend(gm, inputs)
        if not callable(compiled):
            name = getattr(self.backend, "__name__", repr(self.backend))
            raise TypeError(f"minifx.compile: backend {name} returned "
                            f"{type(compiled).__name__}, not a callable")
        return compiled
    # --8<-- [end:cache]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        model = self.__dict__.get("_orig_mod")
        if model is None:  # half-built (unpickling): nothing to forward to yet
            raise AttributeError(name)
        return getattr(model, name)

    def __repr__(self) -> str:
        name = getattr(self.backend, "__name__", repr(self.backend))
        return f"CompiledModel(backend={name}, model={self._orig_mod!r})"


# --8<-- [start:compile]
def compile(  # noqa: A001 (torch's name: it shadows the builtin in minifx's namespace only)
    model: Callable[..., Any] | None = None, *, backend: str | Backend = "eager",
) -> Any:
    """Compile ``model`` (a module or a function) with ``backend``: "eager",
    "numba", or any callable ``backend(gm, example_inputs) -> callable``.
    Without ``model``, returns a decorator."""
    chosen = lookup_backend(backend)
    if model is None:
        return lambda fn: CompiledModel(fn, chosen)
    if not callable(model):
        raise TypeError(f"minifx.compile: expected a module or a function, "
                        f"got {type(model).__name__}")
    return CompiledModel(model, chosen)
# --8<-- [end:compile]
