"""Where the compiled kernels are cached on disk: a folder keyed by every kernel source.

numba checks only a kernel's own file before loading it from the cache, so a
kernel that inlines ``scalar.exp32`` would keep stale code after ``scalar.py``
changes. A cache folder named after a digest of all the kernel files makes any
edit start a fresh cache. numba reads the folder when a kernel is decorated, so
it is set only while a kernel module imports or a kernel factory builds a kernel.
"""

import contextlib
import hashlib
import os
from pathlib import Path

import numba

_HERE = Path(__file__).parent
_MODULES = ("scalar", "strides", "elementwise", "reduce", "rows", "spatial", "spin")


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for name in _MODULES:
        digest.update((_HERE / f"{name}.py").read_bytes())
    return digest.hexdigest()[:16]


_FOLDER = f"kernels-{_sources_digest()}"


@contextlib.contextmanager
def keyed_by_every_kernel_source():
    """numba's cache folder set to ``<cache>/kernels-<digest>`` for the ``with`` body."""
    base = os.environ.get("NUMBA_CACHE_DIR") or str(_HERE / "__pycache__")
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = os.path.join(base, _FOLDER)
    try:
        yield
    finally:
        numba.config.CACHE_DIR = previous
