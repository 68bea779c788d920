"""The numba backend the tests exercise: the fast layer's, or with ``TENSOR_FAST=0``
the kernels layer's (``tensor/backend/__init__.py``). Kernel tests import it from
here so that one test file checks both layers; tests of the fast layer's own
machinery (threads, allocator, Winograd) import ``tensor.backend.fast`` directly."""

import importlib

import tensor.backend

NUMBA = importlib.import_module(tensor.backend._module_name("numba"))
FAST = NUMBA.__name__.startswith("tensor.backend.fast")


def share_with_workers(monkeypatch, shared: bool) -> None:
    """On the fast layer, share every op with the worker threads from its first
    element-copy on (``shared``) or never; the kernels layer has no workers, and
    runs each op on the caller either way."""
    if FAST:
        monkeypatch.setattr(NUMBA.settings, "SPIN_MIN", 1 if shared else 1 << 60)
