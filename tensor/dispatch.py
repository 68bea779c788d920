"""Dispatch modes: a hook one level below the public API, at the primitives.

`tensor.overrides` lets a type, or a `TensorFunctionMode`, take over a
*public* call (`tensor.nn.functional.linear`, `Tensor.permute`). Below that
level every public op ends in calls to a few primitives, the named objects
of `tensor.ops` (`tensor.ops.linear`, `tensor.ops.add`, ...). A
`TensorDispatchMode`, like torch's `TorchDispatchMode`, sees those calls:

    class Log(TensorDispatchMode):
        def __tensor_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)                      # tensor.ops.linear
            return func(*args, **(kwargs or {}))

    with Log():
        tensor.nn.Linear(3, 2)(tensor.randn(4, 3))

Modes stack, newest on top. A primitive called while the stack is not
empty goes to the top mode; while that mode's handler runs, the mode is
taken off the stack, so calling `func(*args, **kwargs)` inside the handler
runs the primitive *beneath* the mode (the next mode, or the real kernel
when none is left). That is torch's re-entrancy rule, and it is what lets a
handler log, count or record a call and still compute it.

This module holds only the stack and the protocol; `tensor.ops` holds the
primitives, and puts its router in front of the backend while the stack is
not empty (`_set_router`), which is how a mode sees the calls the front end
makes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

__all__ = ["TensorDispatchMode", "active_modes", "primitive"]

_modes: list[TensorDispatchMode] = []  # the stack; the last one is on top
# True while a mode is on and no primitive's own code (kernel or meta) is running:
# the front end's view, copy and creation hooks then call their primitive.
_routing = False
_router_on: Callable[[bool], None] | None = None  # set by tensor.ops
_primitives: dict[str, Any] = {}


def _set_router(switch: Callable[[bool], None], primitives: dict) -> None:
    """Called once by `tensor.ops`: ``switch(True)`` routes the front end's backend
    calls to the primitives, ``switch(False)`` hands them back to the kernels."""
    global _router_on
    _router_on = switch
    _primitives.update(primitives)


def primitive(name: str) -> Any:
    """The `tensor.ops` primitive called `name` (for the front end's hooks)."""
    return _primitives[name]


def _route(on: bool) -> None:
    global _routing
    _routing = on
    if _router_on is not None:
        _router_on(on)


# --8<-- [start:kernel]
@contextlib.contextmanager
def _kernel():
    """While a primitive's own code runs, the front end computes directly.

    A context manager (a generator under ``contextlib.contextmanager``). When
    the router is on as the block starts (``_routing``), it is switched off
    with ``_route(False)`` for the block and on again with ``_route(True)``
    after it, also when the block raises. When it is off, nothing is
    switched, neither before nor after: a primitive that runs inside another
    one's kernel leaves the router as the outer one set it.
    """
    was = _routing
    if was:
        _route(False)
    try:
        yield
    finally:
        if was:
            _route(True)
# --8<-- [end:kernel]


def active_modes() -> tuple[TensorDispatchMode, ...]:
    """The dispatch modes now on the stack, bottom first."""
    return tuple(_modes)


# --8<-- [start:push]
def _push(mode: TensorDispatchMode) -> None:
    """Put ``mode`` on top of the stack (the end of ``_modes``). When it is the only
    mode there, switch the router on with ``_route(True)``: from then on the
    front end's backend calls are primitives, which the modes see. Pushing onto
    a stack that already holds a mode switches nothing."""
    _modes.append(mode)
    if len(_modes) == 1:
        _route(True)
# --8<-- [end:push]


# --8<-- [start:pop]
def _pop() -> TensorDispatchMode:
    """Take the top mode off the stack and return it. When the stack is left empty,
    switch the router off with ``_route(False)``, handing the front end back to
    the kernels; while a mode is left, switch nothing. An empty stack raises
    IndexError, as ``list.pop`` does."""
    mode = _modes.pop()
    if not _modes:
        _route(False)
    return mode
# --8<-- [end:pop]


# --8<-- [start:call_with_modes]
def call_with_modes(func: Any, types: tuple, args: tuple, kwargs: dict) -> Any:
    """Hand one primitive call to the top mode, with that mode off the stack while
    its handler runs (so the handler's own calls go beneath it).

    - The top mode is the last one on the stack (`_modes`). Its
      ``__tensor_dispatch__(func, types, args, kwargs)`` receives the call,
      and what it returns is returned.
    - While the handler runs, that mode is off the stack: a primitive the
      handler calls (``func`` itself or another) goes to the next mode down,
      or to the kernel when the stack is empty. Take it off and put it back
      with `_pop` and `_push`, which also switch the router off and on when
      the stack empties and fills (a bare ``list.pop`` would leave the front
      end routing to primitives with no mode to receive them).
    - Afterwards the mode is back on top, also when the handler raises: the
      stack is as it was before the call.
    """
    mode = _pop()
    try:
        return mode.__tensor_dispatch__(func, types, args, kwargs)
    finally:
        _push(mode)
# --8<-- [end:call_with_modes]


class TensorDispatchMode:
    """Base class of dispatch modes; a subclass defines `__tensor_dispatch__`.

    ``__tensor_dispatch__(self, func, types, args=(), kwargs=None)`` receives
    `func`, the `tensor.ops` primitive, `types`, the Tensor types among the
    arguments, and the arguments themselves (Tensors, numbers, tuples). What
    it returns is the primitive's result. Use the mode as a context manager;
    entering one that is already on the stack is an error, as in torch.
    """

    def __tensor_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} does not define __tensor_dispatch__")

    # --8<-- [start:enter]
    def __enter__(self):
        """Push this mode (`_push`) and return it. A mode already on the stack raises
        RuntimeError("{class name} is already active: a mode is entered once")."""
        if self in _modes:
            raise RuntimeError(f"{type(self).__name__} is already active: a mode is entered once")
        _push(self)
        return self
    # --8<-- [end:enter]

    # --8<-- [start:exit]
    def __exit__(self, *exc_info) -> None:
        """Pop this mode (`_pop`), which must be the top one. An empty stack, or another
        mode on top, raises RuntimeError("{class name} left out of order: modes are
        a stack") and leaves the stack as it is."""
        if not _modes or _modes[-1] is not self:
            raise RuntimeError(f"{type(self).__name__} left out of order: modes are a stack")
        _pop()
    # --8<-- [end:exit]
