"""The fast layer: what the numba backend has only for speed. Optional reading.

On by default; ``TENSOR_FAST=0`` leaves it out, and the kernels layer
(``tensor/backend/kernels``) computes every op on its own, with the same
answers up to rounding. The modules:

- ``settings``: every tuning constant and environment switch, in one table.
- ``backend``: the numba backend with its fast paths (tiny inputs to NumPy,
  short calls for contiguous operands and Python scalars, threads, in-place
  ops), built on the kernels layer's backend.
- ``threads`` and ``spin``: the one way work runs on several threads, the
  spinning workers (Python side and compiled side).
- ``tasks``: the kernels' loops as short calls and as the workers' tasks.
- ``math32``: float32 exp, log, tanh, GELU and pow that LLVM vectorises.
- ``allocator``: reuses large freed outputs.
- ``blas``: splits matrix products over the threads.
- ``winograd_kernels``: 3x3 convolutions by Winograd's F(2x2, 3x3).
- ``qgemm``: the int8 convolutions, linear layers, adds and max pools of
  ``tensor.nn.quantized`` (chapter 10) on packed weights and channels-last
  activations, through ``int8_simd`` (a 16-lane vector type for numba, the
  ``uint8 x int8`` dot product with or without VNNI) and ``amx`` (Intel
  AMX's tiles). It offers the interface of the kernels layer's ``quantized``;
  ``tensor.backend.int8`` picks one of the two.

The public names that chapter 8's compiler uses (``minifx.compiler``):
``spin.TASK`` and ``spin.array_at`` (a fused kernel is a worker task too),
``threads.spread``, ``threads.thread_count`` and ``threads.in_parallel``,
``allocator.empty``.
"""
