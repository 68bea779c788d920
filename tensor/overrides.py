"""The `__tensor_function__` protocol: how a type takes over `tensor`'s functions.

Every public function and every `Tensor` method is wrapped by
`tensor_function`. The wrapper looks at the arguments (inside lists, tuples
and dicts too). When none of them has a type that defines
`__tensor_function__`, other than `Tensor` itself, it runs the implementation
at once: that is the fast path every ordinary call takes. Otherwise it hands
the call, with the public callable that was called, to the handlers of those
types (`dispatch`). The binary arithmetic ops (operators and functions such
as `tensor.add`) do the same test themselves and call `dispatch` directly.
This is the door a tracer walks through: a Proxy that defines
`__tensor_function__` sees `tensor.sigmoid(proxy)` as a call to record
instead of a computation to do.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "TensorFunctionMode",
    "disable_subclass_dispatch",
    "dispatch",
    "handle_tensor_function",
    "has_tensor_function",
    "relevant_args",
    "tensor_function",
]

# How each argument type is treated, decided once per type.
_INERT, _CONTAINER, _MAPPING, _HANDLER, _SUBCLASS = range(5)
_KIND: dict[type, int] = {
    int: _INERT,
    float: _INERT,
    bool: _INERT,
    complex: _INERT,
    str: _INERT,
    type(None): _INERT,
    slice: _INERT,
    type(Ellipsis): _INERT,
    tuple: _CONTAINER,
    list: _CONTAINER,
    dict: _MAPPING,
}
_base_tensor: type | None = None  # set by tensor._tensor when Tensor exists
_subclass_dispatch_off = 0  # > 0 while Tensor's default handler runs the real function
_function_modes: list = []  # the TensorFunctionMode stack, newest last


def _register_base_tensor(cls: type) -> None:
    global _base_tensor
    _base_tensor = cls
    _KIND[cls] = _INERT


def _count_as_plain(cls: type, plain: bool) -> None:
    """Speed only: the Tensor subclass ``cls`` takes a plain Tensor's fast path, its
    handler unasked, while ``plain`` (a FakeTensor's while a fake mode is on: tensor.fake)."""
    _KIND[cls] = _INERT if plain else _SUBCLASS


# --8<-- [start:kind_of]
def _kind_of(t: type) -> int:
    """How the protocol treats an argument of type ``t``: decided, recorded in
    ``_KIND[t]`` and returned. The first that fits, in this order:

    - ``_CONTAINER`` for a tuple or a list, their subclasses too (a named tuple);
    - ``_MAPPING`` for a dict or a subclass of dict;
    - ``_INERT`` when ``t`` has no ``__tensor_function__`` (or it is None);
    - ``_SUBCLASS`` for a subclass of Tensor (``_base_tensor``, once
      registered) that has one;
    - ``_HANDLER`` for any other type that has one.
    """
    if isinstance(t, type) and issubclass(t, (tuple, list)):
        kind = _CONTAINER
    elif isinstance(t, type) and issubclass(t, dict):
        kind = _MAPPING
    elif getattr(t, "__tensor_function__", None) is None:
        kind = _INERT
    elif _base_tensor is not None and issubclass(t, _base_tensor):
        kind = _SUBCLASS
    else:
        kind = _HANDLER
    _KIND[t] = kind
    return kind
# --8<-- [end:kind_of]


# --8<-- [start:collect]
def _collect(items: Iterable, found: list) -> None:
    """Append to ``found``, in order, every item (inside lists, tuples and dict values
    too, at any depth) whose type takes over a call: a handler type always, a Tensor
    subclass unless ``disable_subclass_dispatch`` is on. Numbers, strings, None,
    slices, Ellipsis, plain Tensors and types without ``__tensor_function__`` are
    skipped. Each type's kind is decided once: ``_KIND`` holds it, and
    ``_kind_of`` decides (and records) a type it does not hold yet."""
    for item in items:
        t = type(item)
        kind = _KIND.get(t)
        if kind is None:
            kind = _kind_of(t)
        if kind == _INERT:
            continue
        if kind == _CONTAINER:
            _collect(item, found)
        elif kind == _MAPPING:
            _collect(item.values(), found)
        elif kind == _HANDLER or not _subclass_dispatch_off:
            found.append(item)
# --8<-- [end:collect]


# --8<-- [start:relevant_args]
def relevant_args(args: Iterable, kwargs: dict | None = None) -> list:
    """The arguments (searched through lists, tuples and dicts) whose type has a handler.

    A new list, found with `_collect`: those among ``args`` first, then those
    among the values of ``kwargs`` (None or empty: no keyword arguments).
    """
    found: list = []
    _collect(args, found)
    if kwargs:
        _collect(kwargs.values(), found)
    return found
# --8<-- [end:relevant_args]


def has_tensor_function(args: Iterable) -> bool:
    """True when some argument (nested ones included) would take over a call."""
    return bool(relevant_args(args))


# --8<-- [start:ordered_types]
def _ordered_types(args: Iterable) -> list[type]:
    """The types of ``args``' items, each once, in order of first appearance, except
    that a type goes just before the first earlier type it is a subclass of: so a
    subclass is asked before its parents."""
    ordered: list[type] = []
    for arg in args:
        t = type(arg)
        if t in ordered:
            continue
        for i, earlier in enumerate(ordered):
            if issubclass(t, earlier):
                ordered.insert(i, t)
                break
        else:
            ordered.append(t)
    return ordered
# --8<-- [end:ordered_types]


def _describe(func: Callable) -> str:
    module = getattr(func, "__module__", None)
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    return f"{module}.{name}" if module else name


# --8<-- [start:handle]
def handle_tensor_function(
    public_func: Callable, relevant: Iterable, *args: Any, **kwargs: Any
) -> Any:
    """Ask each handler in turn, subclasses first; the first answer that is not
    `NotImplemented` wins.

    The handlers are the types of ``relevant``, ordered by ``_ordered_types``;
    each is called as ``t.__tensor_function__(public_func, types, args,
    kwargs)``, with ``types`` the tuple of all of them and ``args`` and
    ``kwargs`` the call's tuple and dict. When every one declines, a
    TypeError says "no implementation found for '{_describe(public_func)}'
    on types that implement __tensor_function__: [T1, T2]", each type
    written module.qualname.
    """
    types = _ordered_types(relevant)
    types_tuple = tuple(types)
    for t in types:
        result = t.__tensor_function__(public_func, types_tuple, args, kwargs)
        if result is not NotImplemented:
            return result
    names = ", ".join(f"{t.__module__}.{t.__qualname__}" for t in types)
    raise TypeError(
        f"no implementation found for '{_describe(public_func)}' on types that implement "
        f"__tensor_function__: [{names}]"
    )


# --8<-- [end:handle]


# --8<-- [start:disable_subclass_dispatch]
@contextlib.contextmanager
def disable_subclass_dispatch():
    """Treat Tensor subclasses as plain tensors for a while (torch's
    DisableTorchFunctionSubclass): the default handler uses it to run the real
    function without asking the subclass again. Other handler types still count.

    Inside the block ``_subclass_dispatch_off`` is one higher; after it, also when
    the block raises, it is back to what it was. A counter, not a flag, so that
    blocks nest: the inner one's end leaves the outer one's in force.
    """
    global _subclass_dispatch_off
    _subclass_dispatch_off += 1
    try:
        yield
    finally:
        _subclass_dispatch_off -= 1
# --8<-- [end:disable_subclass_dispatch]


# --8<-- [start:tensor_function]
def tensor_function(impl: Callable) -> Callable:
    """Make `impl` a public, overridable function (or method).

    The returned wrapper is the callable handlers receive as `func`; the
    implementation stays reachable as `wrapper.__wrapped__`.
    """

    kinds = _KIND

    modes = _function_modes

    @functools.wraps(impl)
    def public(*args, **kwargs):
        # fast path: no mode, every argument a Tensor, a number, None, ..., no kwargs
        if not modes:
            for arg in args:
                if kinds.get(type(arg)) != _INERT:
                    break
            else:
                if not kwargs:
                    return impl(*args)
        return dispatch(public, impl, args, kwargs)

    return public
# --8<-- [end:tensor_function]


# --8<-- [start:dispatch]
def dispatch(func: Callable, impl: Callable, args: tuple, kwargs: dict | None = None) -> Any:
    """The protocol's general path: the handlers of the arguments' types, asked
    with ``func`` (the public callable), or ``impl`` when none takes over.
    ``tensor_function``'s wrapper comes here once its fast path fails; so do
    the binary arithmetic ops, which test for plain operands themselves and
    skip the wrapper (``tensor._functions._plain_first``).

    - ``kwargs`` None means no keyword arguments; the arguments that take
      over are found once, with `relevant_args`.
    - While a `TensorFunctionMode` is on, the top one (the last of
      ``_function_modes``) is asked first:
      ``mode.__tensor_function__(func, types, args, kwargs)``, with ``types``
      the found arguments' types in `_ordered_types` order as a tuple, or,
      when none was found, the Tensor types among the arguments
      (`_tensor_types`). The mode is off the stack while it runs, so what it
      calls runs beneath it, and back on top afterwards, also when it
      raises. Its answer, unless `NotImplemented`, is the result.
    - Else, when some argument takes over: `handle_tensor_function` with
      ``func``, the found arguments, and the call's arguments.
    - Else the implementation: ``impl(*args, **kwargs)``.
    """
    kwargs = kwargs or {}
    found = relevant_args(args, kwargs)
    if _function_modes:
        mode = _function_modes.pop()  # off the stack while its handler runs (re-entrancy)
        try:
            types = tuple(_ordered_types(found)) or _tensor_types(args, kwargs)
            result = mode.__tensor_function__(func, types, args, kwargs)
        finally:
            _function_modes.append(mode)
        if result is not NotImplemented:
            return result
    if found:
        return handle_tensor_function(func, found, *args, **kwargs)
    return impl(*args, **kwargs)
# --8<-- [end:dispatch]


# --8<-- [start:tensor_types]
def _tensor_types(args: tuple, kwargs: dict) -> tuple:
    """The Tensor types among the arguments (a mode's ``types`` for plain tensors).

    A tuple, each type once, in order of first appearance: the positional
    arguments, then the values of ``kwargs``; a tuple or list argument is
    looked into, one level deep (not deeper, and not into dicts). An item
    counts when it is an instance of Tensor (``_base_tensor``), under its own
    type (a subclass's); before Tensor is registered nothing counts.
    """
    types: list[type] = []
    for value in (*args, *kwargs.values()):
        for item in value if isinstance(value, (tuple, list)) else (value,):
            t = type(item)
            if _base_tensor is not None and isinstance(item, _base_tensor) and t not in types:
                types.append(t)
    return tuple(types)
# --8<-- [end:tensor_types]


# --8<-- [start:function_mode]
class TensorFunctionMode:
    """A context manager that sees every public call (torch's TorchFunctionMode).

    A subclass defines ``__tensor_function__(self, func, types, args=(),
    kwargs=None)``; inside ``with mode:`` every public `tensor` function and
    Tensor method (operators included) goes to it, with `func` the public
    callable, as the per-type protocol above would receive it. While the
    handler runs, the mode is off the stack, so ``func(*args, **kwargs)``
    runs the call beneath it: the next mode, the argument types' handlers,
    then the implementation. Returning `NotImplemented` passes the call on
    the same way. Modes stack; the newest is asked first.
    """

    def __tensor_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} does not define __tensor_function__")

    def __enter__(self):
        _function_modes.append(self)
        return self

    def __exit__(self, *exc_info) -> None:
        if not _function_modes or _function_modes[-1] is not self:
            raise RuntimeError(f"{type(self).__name__} left out of order: modes are a stack")
        _function_modes.pop()


# --8<-- [end:function_mode]
