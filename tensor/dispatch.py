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


@contextlib.contextmanager
def _kernel():
    """While a primitive's own code runs, the front end computes directly."""
    was = _routing
    if was:
        _route(False)
    try:
        yield
    finally:
        if was:
            _route(True)


def active_modes() -> tuple[TensorDispatchMode, ...]:
    """The dispatch modes now on the stack, bottom first."""
    return tuple(_modes)


def _push(mode: TensorDispatchMode) -> None:
    _modes.append(mode)
    if len(_modes) == 1:
        _route(True)


def _pop() -> TensorDispatchMode:
    mode = _modes.pop()
    if not _modes:
        _route(False)
    return mode


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

    def __enter__(self):
        if self in _modes:
            raise RuntimeError(f"{type(self).__name__} is already active: a mode is entered once")
        _push(self)
        return self

    def __exit__(self, *exc_info) -> None:
        if not _modes or _modes[-1] is not self:
            raise RuntimeError(f"{type(self).__name__} left out of order: modes are a stack")
        _pop()
