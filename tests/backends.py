"""The numba backend the tests exercise: the fast layer's, or with ``TENSOR_FAST=0``
the kernels layer's (``tensor/backend/__init__.py``). Kernel tests import it from
here so that one test file checks both layers; tests of the fast layer's own
machinery (threads, allocator, Winograd) import ``tensor.backend.fast`` directly."""

import importlib

import tensor.backend

NUMBA = importlib.import_module(tensor.backend._module_name("numba"))
FAST = NUMBA.__name__.startswith("tensor.backend.fast")
