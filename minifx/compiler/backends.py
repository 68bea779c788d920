"""Backends: what ``minifx.compile`` hands each traced graph to.

A backend is any function ``backend(gm, example_inputs) -> callable``: it gets
the GraphModule of the model and the inputs of the first call (one value per
placeholder, in order), and returns the function that will run every later
call with inputs of the same shapes and dtypes. That one signature is the
whole contract between the front end (tracing, caching) and the compiler,
the same as torch.compile's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Backend = Callable[[Any, list[Any]], Callable[..., Any]]


# --8<-- [start:builtins]
def eager(gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
    """Run the traced graph as it is: the GraphModule's generated ``forward``."""
    return gm


def numba(gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
    """Fuse each chain of elementwise nodes into one numba kernel generated
    from the graph; everything else (matmul, reductions ...) runs as before."""
    from .fusion import fuse_elementwise  # numpy and numba load only when used

    return fuse_elementwise(gm, example_inputs)


_BACKENDS: dict[str, Backend] = {"eager": eager, "numba": numba}
# --8<-- [end:builtins]


def list_backends() -> list[str]:
    """The names ``backend=`` accepts."""
    return sorted(_BACKENDS)


def register_backend(name: str, backend: Backend) -> Backend:
    """Make ``backend`` available as ``minifx.compile(model, backend=name)``."""
    if not callable(backend):
        raise TypeError(f"register_backend({name!r}): backend must be callable, "
                        f"got {type(backend).__name__}")
    _BACKENDS[name] = backend
    return backend


def lookup_backend(backend: str | Backend) -> Backend:
    """A backend from its name, or the callable itself."""
    if callable(backend):
        return backend
    if isinstance(backend, str) and backend in _BACKENDS:
        return _BACKENDS[backend]
    raise ValueError(f"minifx.compile: unknown backend {backend!r}; "
                     f"expected a callable or one of {list_backends()}")
