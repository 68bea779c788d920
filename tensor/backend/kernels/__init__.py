"""The kernels layer: the numba backend that the book teaches (chapter 0).

Every kernel is compiled with ``@njit(cache=True)``, so a second process
loads its machine code from disk instead of compiling it. The modules, in
reading order:

- ``scalar``: one per-element function per elementwise op, named by the op
  table (``tensor/_ops.py``).
- ``strides``: how a strided NumPy view becomes (storage, offset, strides),
  and the index math that every strided kernel shares.
- ``elementwise``: the higher-order family map / zip / where over strided
  operands, one kernel per op, built on first use.
- ``reduce``: sum, mean, amax, amin and argmax over any dims.
- ``rows``: softmax, log_softmax, layer_norm and batch_norm, a row at a time.
- ``spatial``: stride phases and im2col for conv2d, the pools, and embedding.
- ``quantized``: the integer kernels of chapter 10.
- ``backend``: the numba backend itself, the reference's names computed by
  the modules above.
- ``_cache``: the on-disk cache folder, keyed by every kernel source.

This package is also the public kernel surface for ``minifx.compiler``
(chapter 8): its generated kernels call ``scalar``'s functions and
``reduce``'s row helpers by these module names.
The fast layer (``tensor/backend/fast``) builds on these modules; nothing
here imports it.
"""

from ._cache import keyed_by_every_kernel_source

with keyed_by_every_kernel_source():
    from . import elementwise, quantized, reduce, rows, scalar, spatial, strides  # noqa: F401
