"""numba kernels behind ``tensor.backend.numba_backend``.

Every kernel is a module-level ``@njit(cache=True)`` function, so a second
process loads its machine code from ``__pycache__`` instead of compiling it.
The modules, in reading order:

- ``scalar``: the per-element functions (a vectorisable float32 exp, sigmoid,
  ...) and the opcode tables that name them.
- ``strides``: how a strided NumPy view becomes (storage, offset, strides),
  and the index math that every strided kernel shares.
- ``elementwise``: the higher-order family map / zip / where over contiguous
  and strided operands.
- ``reduce``: sum, mean, amax, amin and argmax over any dims.
- ``rows``: softmax, log_softmax, layer_norm and batch_norm.
- ``spatial``: stride phases and im2col for conv2d, the pools, and embedding.
"""
