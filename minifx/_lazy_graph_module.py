"""_LazyGraphModule: a GraphModule that writes and compiles its code on first use.

A GraphModule turns its graph into Python source and compiles it as soon as
it is made, and again at each ``recompile()``. Generating the source and
Python's ``compile()`` of it grow with the node count, and a capture often
makes a graph that no one runs as it is: a pass rewrites it first, and
recompiles. torch.fx has a class of this name for that reason (its compiler
pipeline turns it on with ``_use_lazy_graph_module``); ``make_fx`` here
always makes one, because the graph it records is mostly the parameters'
``get_attr`` nodes, and compiling those lines is the dearest step of a
capture.

What is deferred, and what is not:

- ``recompile()`` only marks the module: its class's ``forward`` becomes a
  stand-in. It answers None (GraphModule's answers the ``PythonCode``), as
  torch's does.
- The real work (``GraphModule.recompile``) happens the first time anyone
  reads ``forward`` (calling the module does; so does a tracer that reads
  ``type(gm).forward`` to trace it again), ``gm.code`` or ``str(gm)``.
  The source is then exactly the one an eager GraphModule would have, and
  ``forward`` is the compiled function from then on.
- ``print_readable()`` writes its own source from the graph, compiled or not.

torch's stand-in is a ``forward`` method that compiles and then calls the
module again; ours is a descriptor that compiles when ``forward`` is read,
so that whatever reads it (``Module.__call__``, ``Tracer.trace``,
``inspect.signature``) gets the generated function itself. That works
because each GraphModule has a class of its own (graph_module.py,
``_instance_class``): the class knows its one instance.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any

from .graph_module import GraphModule

__all__: list[str] = []  # private, as torch's (torch.fx._lazy_graph_module)

_use_lazy_graph_module_flag = False


@contextlib.contextmanager
def _use_lazy_graph_module(should_use: bool) -> Iterator[None]:
    """While on, `_make_graph_module` makes lazy GraphModules (torch's switch of that name)."""
    global _use_lazy_graph_module_flag
    prior = _use_lazy_graph_module_flag
    _use_lazy_graph_module_flag = should_use
    try:
        yield
    finally:
        _use_lazy_graph_module_flag = prior


def _get_graph_module_cls() -> type[GraphModule]:
    return _LazyGraphModule if _use_lazy_graph_module_flag else GraphModule


def _make_graph_module(*args: Any, graph_module_cls: type[GraphModule] | None = None,
                       **kwargs: Any) -> GraphModule:
    """A GraphModule, lazy when `_use_lazy_graph_module` is on or ``graph_module_cls`` says so."""
    return (graph_module_cls or _get_graph_module_cls())(*args, **kwargs)


class _CompileOnRead:
    """The ``forward`` of a lazy module's class while it has no code: reading it compiles.

    ``GraphModule.recompile`` then puts the compiled function in its place on
    the class, and the read answers that function (bound to the module when
    read through it).
    """

    def __get__(self, instance: Any, owner: type) -> Any:
        gm = instance if instance is not None else owner.__dict__.get("_lazy_instance", _dead)()
        if gm is None:  # _LazyGraphModule.forward itself, or a module that is gone
            return self
        gm.real_recompile()
        return type(gm).forward if instance is None else gm.forward


def _dead() -> None:
    return None


_COMPILE_ON_READ = _CompileOnRead()


class _LazyGraphModule(GraphModule):
    """See the module docstring. Behaves as GraphModule; only *when* the code is made differs."""

    forward = _COMPILE_ON_READ

    @classmethod
    def from_graphmodule(cls, gm: GraphModule) -> GraphModule:
        """``gm`` itself when it is lazy, else a lazy module over its attributes and graph."""
        return gm if isinstance(gm, _LazyGraphModule) else _LazyGraphModule(gm, gm.graph)

    @staticmethod
    def force_recompile(gm: Any) -> None:
        """Make ``gm``'s code now if it is a lazy module that has none (anything else: nothing)."""
        if isinstance(gm, _LazyGraphModule):
            gm.real_recompile()

    def real_recompile(self) -> None:
        """Generate and compile the code, unless that is done already."""
        if self._needs_recompile():
            GraphModule.recompile(self)

    @classmethod
    def _needs_recompile(cls) -> bool:
        return cls.__dict__.get("forward", _COMPILE_ON_READ) is _COMPILE_ON_READ

    def recompile(self, reuse: Any = None) -> None:
        """Mark the code as stale; it is made again on first use (see the module docstring).
        ``reuse`` is GraphModule's speed-only argument, of no use when nothing compiles now."""
        cls = type(self)
        cls.forward = _COMPILE_ON_READ
        cls._lazy_instance = weakref.ref(self)

    @property
    def code(self) -> str:
        self.real_recompile()
        return self._code

    def __str__(self) -> str:
        self.real_recompile()
        return super().__str__()
