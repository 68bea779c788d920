"""Compiling with a backend: ``minifx.compile`` and the backends it ships.

- ``compiled.py``: ``compile``, the cache of callables by input signature;
- ``backends.py``: the backend contract, "eager" and "numba";
- ``elementwise.py``: which nodes are elementwise operations (and last-dim reductions);
- ``fusion.py``: grouping them, replacing each group by one node, planning buffers;
- ``kernel.py``: the numba kernel generated for a group;
- ``rows.py``: the row kernel of a group around reductions over the last dim.
"""

from .backends import list_backends, register_backend
from .compiled import CompiledModel, compile

__all__ = ["CompiledModel", "compile", "list_backends", "register_backend"]
