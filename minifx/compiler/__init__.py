"""Compiling with a backend: ``minifx.compile`` and the backends it ships.

- ``compiled.py``: ``compile``, the cache of callables by input signature;
- ``backends.py``: the backend contract, "eager" and "numba";
- ``elementwise.py``: which nodes are elementwise operations;
- ``fusion.py``: grouping them and replacing each group by one node;
- ``kernel.py``: the numba kernel generated for a group.
"""

from .backends import list_backends, register_backend
from .compiled import CompiledModel, compile

__all__ = ["CompiledModel", "compile", "list_backends", "register_backend"]
