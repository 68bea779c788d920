"""One file per tensor library that minifx can trace: its answers to ``Framework``.

This is the list of adapters. Each is imported the first time minifx needs it
(torch's only when torch is imported, so ``import minifx`` never imports
torch) and then registers itself with ``minifx._framework.register_framework``.
``tensor``'s is the default: it answers for values of no other library.
"""

from .._framework import register_adapter_module

register_adapter_module("tensor", "minifx.frameworks.tensor_framework", default=True)
register_adapter_module("torch", "minifx.frameworks.torch_framework")
