"""numba kernels behind ``tensor.backend.numba_backend``.

Every kernel is a module-level ``@njit(cache=True)`` function, so a second
process loads its machine code from disk instead of compiling it.
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

import contextlib
import hashlib
import os
from pathlib import Path

import numba

_HERE = Path(__file__).parent
_MODULES = ("scalar", "strides", "elementwise", "reduce", "rows", "spatial")


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for name in _MODULES:
        digest.update((_HERE / f"{name}.py").read_bytes())
    return digest.hexdigest()[:16]


@contextlib.contextmanager
def _cache_keyed_by_every_kernel_source():
    """numba checks only a kernel's own file before loading it from the cache, so a
    kernel that inlines ``scalar.exp32`` would keep stale code after ``scalar.py``
    changes. A cache folder named after a digest of all the kernel files makes any
    edit start a fresh cache. numba reads the folder when a kernel is decorated, so
    it is set only while the kernel modules import."""
    base = os.environ.get("NUMBA_CACHE_DIR") or str(_HERE / "__pycache__")
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = os.path.join(base, f"kernels-{_sources_digest()}")
    try:
        yield
    finally:
        numba.config.CACHE_DIR = previous


with _cache_keyed_by_every_kernel_source():
    from . import elementwise, reduce, rows, scalar, spatial, strides  # noqa: E402, F401
