"""Put an exercise's stub in place of the running reference function, and take it out again.

The honesty checks run many exercises' tests in one process (a fresh copy of
the packages per exercise would cost a numba compile each). The stub is the
one ``python -m minifx learn start`` writes (minifx.learn.workspace.stub),
compiled in the module's globals. It replaces the function's ``__code__``,
so every reference to the function (re-exports, dispatch tables, the
``tensor_function`` wrapper) runs the stub; a method whose code has a
``__class__`` cell (it calls ``super()``) is replaced on its class instead.
"""

from __future__ import annotations

import importlib
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

from minifx.learn.exercises import Exercise
from minifx.learn.workspace import stub


def _owner_and_name(exercise: Exercise) -> tuple[Any, str, Any]:
    module = importlib.import_module(
        exercise.file.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
    owner: Any = module
    *path, name = exercise.qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    return module, name, owner


def _function(obj: Any) -> Any:
    if isinstance(obj, property):
        return obj.fget
    if isinstance(obj, (staticmethod, classmethod)):
        return obj.__func__
    return obj


def swap_in_stub(exercise: Exercise) -> Callable[[], None]:
    """Make the exercise's function a stub in this process; returns the undo."""
    module, name, owner = _owner_and_name(exercise)
    static = inspect.getattr_static(owner, name)
    original = _function(static)
    namespace = dict(vars(module))
    exec(compile(textwrap.dedent(stub(exercise)), exercise.file, "exec"), namespace)
    replacement = _function(namespace[name])
    if len(replacement.__code__.co_freevars) == len(original.__code__.co_freevars):
        code = original.__code__
        original.__code__ = replacement.__code__

        def undo() -> None:
            original.__code__ = code
        return undo
    setattr(owner, name, namespace[name])
    return lambda: setattr(owner, name, static)
