"""numba kernels behind ``tensor.backend.numba_backend``.

Every kernel is compiled with ``@njit(cache=True)``, so a second process
loads its machine code from disk instead of compiling it.
The modules, in reading order:

- ``scalar``: the per-element functions (a vectorisable float32 exp, sigmoid,
  ...) that the op table (``tensor/_ops.py``) names.
- ``strides``: how a strided NumPy view becomes (storage, offset, strides),
  and the index math that every strided kernel shares.
- ``elementwise``: the higher-order family map / zip / where over contiguous
  and strided operands, one kernel per op, built on first use.
- ``_cache``: the on-disk cache folder, keyed by every kernel source.
- ``reduce``: sum, mean, amax, amin and argmax over any dims.
- ``rows``: softmax, log_softmax, layer_norm and batch_norm.
- ``spatial``: stride phases and im2col for conv2d, the pools, and embedding.
- ``spin``: worker threads that poll for kernel tasks in compiled code, and
  the calls that share a kernel's range with them; ``elementwise``,
  ``reduce`` and ``rows`` compile their kernels as such tasks too.
"""

from ._cache import keyed_by_every_kernel_source

with keyed_by_every_kernel_source():
    from . import elementwise, reduce, rows, scalar, spatial, strides  # noqa: F401
