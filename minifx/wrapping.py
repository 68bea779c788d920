"""``minifx.wrap``: the functions a trace records as one node, by name.

This is only the registry, kept apart from the tracer so that both sides
can read it without importing each other: the tracer (tracer.py) patches
the registered globals while it traces, and code generation (codegen.py)
writes a ``wrap("name")`` line above ``forward`` for every wrapped call it
prints, so that tracing the generated code keeps the call one node.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

# --8<-- [start:wrap]
# (id of a module's globals, function name) -> those globals: the functions
# that `wrap` asked to record as single call_function nodes.
_wrapped_fns_to_patch: dict[tuple[int, str], dict[str, Any]] = {}


def wrap(fn_or_name: str | Callable[..., Any]) -> Any:
    """Record calls of a global function as one ``call_function`` node.

    Call it at the top level of the module that uses the function, with the
    function's name (``minifx.wrap("my_len")``, builtins such as ``"len"``
    work too) or as a decorator. While tracing, that module's global of this
    name is replaced by a version that records a node whenever a Proxy is
    among its arguments, so the body (which may use control flow) is not
    traced.

    A function gives its name through its code (``__code__.co_name``); a
    str is the name itself; anything else is a TypeError ``wrap expects a
    function or a function name, not <repr of the value>``. The caller's
    frame (``inspect.currentframe().f_back``) must be a module's top level
    (its code's ``co_name`` is ``<module>``), else a NotImplementedError
    ``wrap must be called at the top level of a module``. The registration
    is one entry of ``_wrapped_fns_to_patch``: under ``(id(caller's
    globals), name)``, the caller's globals dict itself. The answer is
    ``fn_or_name`` unchanged, so ``@minifx.wrap`` leaves the function as it
    was.
    """
    if callable(fn_or_name):
        name = fn_or_name.__code__.co_name
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise TypeError(f"wrap expects a function or a function name, not {fn_or_name!r}")
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), name)] = caller.f_globals
    return fn_or_name
# --8<-- [end:wrap]
